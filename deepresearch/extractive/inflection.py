"""Word forms the planner and the report write with: whether a phrase is plural ("What are ..." or "What is
..."), a verb's -ing form ("What are the limitations of *creating* ..."), names listed ("A, B and C"), and a
clause as a question."""

from __future__ import annotations

import re

from deepresearch.extractive.asking.wordclasses import (
    AUX_BE,
    AUX_DO,
    AUX_HAVE,
    CAUSATIVES,
    CONJUNCTIONS,
    DETERMINERS,
    FUNCTION_WORDS,
    OBJECT_PRONOUNS,
    PARTICLES,
    POSSESSIVES,
    SUBORDINATORS,
    manner_adverb,
)

_CODE_NAME = re.compile(r"^[a-z][\w]*[._(]|^[a-z]+[A-Z]")


# nouns that end in a single "s" and are singular: "What is the lens?", not "What are the lens?"
_SINGULAR_IN_S = frozenset(
    ["lens", "alias", "atlas", "bias", "canvas", "gas", "chaos", "news", "series", "species"]
)


def plural_word(text: str) -> bool:
    """Whether the phrase's last word looks plural (an -s that is not -ss, -us, -is nor a singular noun)."""
    words = text.split()
    last = words[-1].lower() if words else ""
    if any(word.startswith("-") for word in words):
        return False  # a command line ("git merge -s ours") is one thing
    if words and words[-1].isupper():
        return False  # a name in capitals: "NFS", "git LFS" (not "APIs")
    return (
        last.endswith("s")
        and not last.endswith(("ss", "us", "is"))
        and not any(mark in last for mark in "._")  # "os.path", "lamp_gas": a name, not a plural
        and last not in _SINGULAR_IN_S
    )


def ends_in_s(word: str) -> bool:
    """A verb's third person ("handles", "rewrites") or a plural: an -s that is not -ss."""
    return word.lower().endswith("s") and not word.lower().endswith("ss")


def instead_of_one(head: str, before: str) -> str:
    """A phrase that ends on "one" or "ones" after a modifier, with the noun it stands for: the last noun
    of the phrase `before` it ("update the existing one" after "insert a row": "existing row"; "remote
    ones" after "local branches": "remote branches"); "" when it is no such phrase."""
    words, nouns = head.split(), before.split()
    if len(words) < 2 or words[-1].lower() not in ("one", "ones") or not nouns:
        return ""
    noun = nouns[-1]
    if noun.lower() in ("one", "ones") or not noun.isalpha() or noun.endswith("ly") or noun[0].isupper():
        return ""  # "locally" is no noun; "a new one" after "SQLite" is no new SQLite
    if words[-1].lower() == "ones" and not plural_word(noun):
        noun = third_person(noun)  # the same endings: "branch" -> "branches", "entry" -> "entries"
    elif words[-1].lower() == "one" and plural_word(noun):
        noun = (
            re.sub(r"ies$", "y", noun)
            if noun.endswith("ies")
            else re.sub(r"(?<=sh|ch|ss|.x)es$|s$", "", noun)
        )
    return " ".join([*words[:-1], noun])


def third_person(verb: str) -> str:
    """handle -> handles, push -> pushes, verify -> verifies, play -> plays."""
    stem = re.sub(r"(?<=[^aeiou])y$", "ie", verb)
    return stem + ("es" if verb.endswith(("s", "sh", "ch", "x")) else "s")


# what may stand between "Can I" and the verb: "Can I just move the tag", "How do I safely delete a branch"
_BEFORE_VERB = frozenset(
    re.split(
        r"\s+",
        "just simply really actually also still even only first then quickly safely easily automatically"
        " manually permanently temporarily completely entirely ever never always",
    )
)


def gerund_phrase(words: list[str]) -> str:
    """A task as a gerund phrase: its first word that is no adverb takes -ing ("just move the tag" -> "just
    moving the tag", "safely delete a branch" -> "safely deleting a branch"), and so does a verb coordinated
    with it ("stage some changes and *leave* the rest" -> "... and leaving the rest")."""
    if not words:
        return ""
    k = next(
        (i for i, word in enumerate(words) if word.lower() not in _BEFORE_VERB and not manner_adverb(word)),
        len(words) - 1,
    )  # "carefully trim the wick" (read "carefullying trim")
    rest = " ".join(words[k:])
    if series := _VERB_SERIES.match(rest):  # "clone, configure and write X" (it read "clone,ing configure")
        listed = re.sub(r"[a-z]+", lambda w: w[0] if w[0] in ("and", "or") else gerund(w[0]), series[0])
        return " ".join([*words[:k], listed + rest[series.end() :]])
    bare = words[k].rstrip(",;:")  # "clone, say, a repo": "cloning, say, ..."
    out = [*words[:k], gerund(bare) + words[k][len(bare) :], *words[k + 1 :]]
    # after a causative the second verb may be the agent's ("make git blame look past X and attribute Y")
    if words[k].lower() not in CAUSATIVES:
        for i in range(k + 2, len(words) - 1):
            if _opens_clause(words, i - 1):
                break  # a verb after it is that clause's: "the commits that add or remove", "to copy X and Y"
            if _coordinated_verb(words, i):
                out[i] = gerund(words[i])
    return " ".join(out)


def _opens_clause(words: list[str], i: int) -> bool:
    """``words[i]`` opens a clause with a verb of its own: a subordinator or relative ("that", "which",
    "who", "when", "if") or an infinitive's "to" ("use rsync to copy files and preserve ...")."""
    word = words[i].lower()
    after = words[i + 1] if i + 1 < len(words) else ""
    infinitive = word == "to" and after.isalpha() and after.islower() and after not in FUNCTION_WORDS
    return word in SUBORDINATORS or word in ("which", "who") or infinitive


# a task's verbs listed by commas and a last "and" or "or", each one word: "read, write, and delete files"
_VERB_SERIES = re.compile(r"(?:[a-z]+, )+[a-z]+,? (?:and|or) [a-z]+(?= |$)")
_OBJECT_OPENS = DETERMINERS | POSSESSIVES | OBJECT_PRONOUNS | {"it", "everything", "something", "anything"}


def _coordinated_verb(words: list[str], i: int) -> bool:
    """A bare verb after "and", "or", "but" or a comma whose object follows ("... and *mail* them", "... but
    *keep* the file"): a plain lower-case word, not a past or -ing form nor a third person's -s ("the commit
    that added or *removed* a call" is no task), with a determiner, a possessive or an object pronoun after it
    (or after its particle: "... and *copy* out a single file")."""
    word, before, after = words[i], words[i - 1].lower(), words[i + 1].lower()
    if after in PARTICLES and i + 2 < len(words):
        after = words[i + 2].lower()
    # a noun with a clause after it ("the date and *time* a file was modified"), compared ("the owner and
    # *group* the same as ..."), or with a manner after it ("a table or *column* the safe way")
    clause = any(w.lower() in AUX_BE | AUX_HAVE | AUX_DO for w in words[i + 1 : i + 5])
    return (
        not clause
        and words[i + 2 : i + 3] != ["same"]
        and "way" not in words[i + 2 : i + 4]
        and (before in CONJUNCTIONS or before.endswith(","))  # "install nginx, configure it and run it"
        and word.isalpha()
        and word.islower()
        and word not in FUNCTION_WORDS
        and not word.endswith(("ed", "ing"))
        and not (word.endswith("s") and not word.endswith("ss"))
        and after in _OBJECT_OPENS
    )


def gerund(verb: str) -> str:
    """use -> using, run -> running, create -> creating, bind -> binding, set -> setting."""
    lower = verb.lower()
    if lower.endswith("ie"):
        return verb[:-2] + "ying"
    if lower.endswith("e") and not lower.endswith(("ee", "ye", "oe")):
        return verb[:-1] + "ing"
    one_syllable = len(re.findall(r"[aeiouy]+", lower)) == 1
    if (
        (one_syllable or lower.endswith(_STRESSED_LAST))
        and len(lower) >= 3
        and lower[-1] not in "aeiouwxy"
        and lower[-2] in "aeiou"
        and lower[-3] not in "aeiou"
    ):
        return verb + verb[-1] + "ing"  # run -> running, split -> splitting, commit -> committing
    return verb + "ing"


# verbs of two syllables stressed on the last, whose final consonant doubles (edit -> editing does not)
_STRESSED_LAST = (
    "commit", "submit", "omit", "permit", "emit", "admit", "transmit", "forget", "begin", "refer", "prefer",
    "transfer", "occur", "recur", "control", "patrol", "compel", "expel", "forbid", "regret", "rebut",
    "upset", "reset", "unset", "embed", "format", "reformat", "unzip", "rerun", "subset", "offset", "debug",
    "defer", "deter", "infer", "confer", "outrun", "unplug", "unwrap", "rewrap", "acquit",
)  # fmt: skip


def listed(names: list[str]) -> str:
    """ "A", "A and B", "A, B and C"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def as_question(clause: str) -> str:
    """The clause as a question: a capital first, unless it opens on a name written in code's case
    ("typing.Protocol", "mod_proxy", "sqlite3_open()"), which keeps it."""
    clause = clause.strip(" ?.,")
    first = clause.split()[0] if clause.split() else ""
    return (clause if _CODE_NAME.search(first) else clause[:1].upper() + clause[1:]) + "?"
