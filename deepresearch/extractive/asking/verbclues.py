"""Verbs told by where they stand, for the chunker (asking/phrases.py): after the word before them (a
participle after "has", an infinitive after a verb, a verb after "does not" or after its agent), or at the
end of a "What do ... mean?" or a "How does X made with Y work?" question. Each takes the question's words
(``lower``: lower-cased) and which of them are content words, and returns the positions it takes for verbs."""

from __future__ import annotations

import re
from itertools import pairwise, takewhile

from deepresearch.extractive.asking.wordclasses import (
    ADVERBS,
    AFTER_A_VERB,
    AUX_BE,
    AUX_DO,
    AUX_HAVE,
    BE_CONTRACTED,
    CAUSATIVES,
    CLOSES,
    COMPARATIVES,
    CONJUNCTIONS,
    DETERMINERS,
    GERUND_VERBS,
    NUMBERS,
    OBJECT_PRONOUNS,
    OPENERS,
    PARTICIPLES,
    PARTICLES,
    PERFECT,
    POSSESSIVES,
    PREPOSITIONS,
    PRONOUNS,
    QUANTIFIERS,
    QUANTITY_NOUNS,
    SUBJECT_PRONOUNS,
    SUBORDINATORS,
    WH,
    manner_adverb,
)
from deepresearch.extractive.inflection import ends_in_s

__all__ = [
    "CAPITALS",
    "asked_verb",
    "chained_verbs",
    "closing_verb",
    "does_itself",
    "listed_verbs",
    "placed_verbs",
    "spoken_verbs",
    "subjectless",
    "verb_after_a_list",
    "verb_after_subject",
    "verb_before_a_name",
    "verb_of_subject",
    "verb_past_a_phrase",
    "what_it_is",
]

CAPITALS = re.compile(r"^[A-Z][A-Z_]+$")  # "WITHOUT ROWID", "VACUUM": a keyword written in capitals

_NEXT_CLAUSE = frozenset(("and", "or", "but", "what", "how", "why", "when", "where", "which", "who"))
_WHEN_WORDS = frozenset(
    [
        *("first", "second", "third", "last", "next", "early", "late", "previous", "recent", "old", "new"),
        *("older", "newer", "spring", "summer", "autumn", "fall", "winter"),
    ]
)
_KEEPS_FROM = frozenset(("stop", "keep", "prevent", "block", "bar", "protect", "save", "exclude", "prohibit"))
_INTRANSITIVE = frozenset(("work", "behave", "function", "differ", "compare", "interact", "fail", "happen"))
"""Verbs that end a "How does X ... work?" question with no object after them."""
_CATENATIVE_PAST = frozenset(("stopped", "started", "kept", "avoided", "finished"))
_CATENATIVE = frozenset(("stop", "start", "keep", "avoid", "quit", "finish")) | _CATENATIVE_PAST
_TAKEN = DETERMINERS | POSSESSIVES | PRONOUNS | PREPOSITIONS | CONJUNCTIONS | CLOSES
_NOT_GERUNDS = frozenset(
    ("string", "thing", "something", "nothing", "anything", "everything", "spring", "ring")
)
_CATENATIVE_S = frozenset(("keeps", "stops", "starts", "avoids", "quits", "finishes"))
_GERUND_TAKERS = _CATENATIVE | _CATENATIVE_S | GERUND_VERBS
_LINKING = frozenset(("get", "gets", "got", "become", "becomes", "stay", "stays", "remain", "remains"))
_MANNER = frozenset(
    ("fine", "well", "ok", "okay", "smoothly", "properly", "correctly", "slowly", "normally", "forever")
)  # "rsyslog runs fine", "my program hangs forever when ..."


def placed_verbs(words: list[str], lower: list[str], content: list[bool], i: int) -> set[int]:
    """A verb known by the words before it: after "does not" ("if the commit does not *apply*"), a bare verb
    after a causative's agent, a name or a pronoun ("make Git *treat* one commit"), or a verb in -s that ends
    a clause of its own after its subject ("when the table *grows*")."""
    found: set[int] = set()
    nxt = i + 1
    causative = lower[i] in CAUSATIVES and nxt + 2 < len(words) and content[nxt + 1]
    causative = causative and words[nxt + 1].islower()
    agent = causative and (words[nxt][:1].isupper() or lower[nxt] in OBJECT_PRONOUNS | {"it"})
    if agent and lower[nxt + 2] in DETERMINERS | POSSESSIVES | PRONOUNS | NUMBERS:
        found.add(nxt + 1)
    # "make the exported target *use* the installed include directory": an agent of two words or more its
    # determiner opens, then a bare verb before its own object's determiner (with one word, "make the default
    # value the same" and "make the build type a cache entry" make their object something)
    if lower[i] in CAUSATIVES and nxt < len(words) and lower[nxt] in DETERMINERS | POSSESSIVES:
        end = nxt + 1
        while end < len(words) and content[end]:
            end += 1
        verb = end - 1
        # ... or before a manner adverb, after an agent of one word too: "make a Celery task *retry*
        # automatically", "make the tests *run* quickly"
        adverb = end < len(words) and (manner_adverb(lower[end]) or lower[end] == "automatically")
        bare = verb > nxt + 1 + (not adverb) and words[verb].isalpha() and words[verb].islower()
        bare = bare and not ends_in_s(words[verb])
        if bare and end < len(words) and (lower[end] in DETERMINERS | POSSESSIVES or adverb):
            found.add(verb)
    if lower[i] in ("not", "n't") and i > 0 and lower[i - 1] in AUX_DO and nxt < len(words) and content[nxt]:
        found.add(nxt)
    # "when the table grows", "slower as the offset grows": a clause of its own, of a noun and its verb in -s
    # (not "if the cache holds stale entries": a longer run may hold the verb and its object; nor before "in",
    # "when the error messages in the log fill up")
    opens = lower[i] in SUBORDINATORS or (lower[i] == "as" and i > 0 and lower[i - 1] in COMPARATIVES)
    # ... or a question's noun: "tell R which encoding the file *uses*"
    asked = lower[i] in ("which", "what", "whose") and nxt + 1 < len(words) and content[nxt]
    det = nxt + int(asked and lower[nxt + 1] in DETERMINERS | POSSESSIVES)
    if (opens or asked) and det < len(words) and lower[det] in DETERMINERS | POSSESSIVES:
        end = det + 1
        while end < len(words) and content[end]:
            end += 1
        last = end - 1
        # a comma ends it only before the next clause ("..., and why"), not inside a list or an aside ("if
        # the user settings, the cache and ...", "the default settings, not the hardware, limit ...")
        after = lower[end + 1] if end + 1 < len(words) else ""
        closes = end == len(words) or (words[end] in CLOSES and (words[end] != "," or after in _NEXT_CLAUSE))
        plain = words[last].isalpha() and words[last].islower() and ends_in_s(words[last])
        # ... and "since the early days", "until the first frosts", "since the 3.x releases" name a time
        then = lower[det + 1] if det + 1 < len(lower) else ""  # ("which encoding the": no word after it)
        timely = not then or then in _WHEN_WORDS or any(c.isdigit() for c in then)
        if closes and last == det + 2 and plain and not timely:
            found.add(last)
    # "... at a fixed size and rotate it without logrotate", "to rotate it": "it" is the object of the word
    # before it when a preposition or the clause's end follows (not "... and it works")
    then = lower[nxt + 1] if nxt + 1 < len(words) else ""
    ends = not then or then in PREPOSITIONS | CLOSES | CONJUNCTIONS
    joined = i > 0 and lower[i - 1] in ("and", "or", "to") and content[i] and words[i].islower()
    if joined and nxt < len(words) and lower[nxt] == "it" and ends:
        found.add(i)
    # "Will my changes get lost?": a verb that links its subject to a participle
    if lower[i] in _LINKING and nxt < len(words) and (lower[nxt] in PARTICIPLES or lower[nxt].endswith("ed")):
        found.add(i)
    # "Why did Celery stop using pickle": a verb in -ing after one that takes it ("using pickle" is no thing)
    # (after a past form any: "some domains stopped resolving"; after a base form only one followed by what a
    # verb takes - not "avoid naming conflicts", "keep caching headers", "avoid string concatenation")
    catenative = i > 0 and lower[i - 1] in _CATENATIVE and lower[i].endswith("ing") and content[i]
    following = lower[nxt] if nxt < len(words) else ""
    takes = lower[i] == "using" or lower[i - 1] in _CATENATIVE_PAST or following in _TAKEN | {""}
    if catenative and takes and lower[i] not in _NOT_GERUNDS:
        found.add(i)
    # "My server keeps getting flooded", "the queue keeps growing": a verb in -s after its subject, then the
    # verb in -ing it takes (not "keeps" as a noun)
    gerund = following.endswith("ing") and following not in _NOT_GERUNDS
    # ... or without its -s after a plural subject ("Users keep filling up the disk")
    plural = i > 0 and ends_in_s(lower[i - 1]) and f"{lower[i]}s" in _CATENATIVE_S
    if i > 0 and content[i - 1] and (lower[i] in _CATENATIVE_S or plural) and gerund:
        found |= {i, nxt}
    # "My Django list page runs hundreds of SQL queries": after a subject its possessive opens, a word in -s
    # before a quantity or a determiner is its verb (the chunker read "My Django list page runs hundreds")
    # ... or before a keyword in capitals ("how do I confirm my BIND resolver returns SERVFAIL"), the
    # possessive opening the clause or standing after its verb (not after a preposition: "in my project runs")
    opener = next((k for k in range(i - 1, -1, -1) if not content[k]), -1)
    owned = 0 <= opener < i - 1 and lower[opener] in POSSESSIVES and words[i].islower()
    owned = owned and (opener == 0 or lower[opener - 1] not in PREPOSITIONS)
    counted = following in DETERMINERS | NUMBERS | QUANTIFIERS | QUANTITY_NOUNS or following.isdigit()
    keyword = nxt < len(words) and CAPITALS.match(words[nxt]) is not None and len(words[nxt]) > 2
    if owned and ends_in_s(lower[i]) and (counted or keyword):
        found.add(i)
    # "find_package fails with ...": a verb in -s after a name in code, before a preposition or a determiner
    # (not "of": "the find_package calls of my project"; nor after a possessive: "mod_session's options for")
    coded = i > 0 and content[i - 1] and _CODE_NAME.search(words[i - 1]) is not None and words[i].isalpha()
    coded = coded and not words[i - 1].endswith(("'s", "’s"))
    if coded and words[i].islower() and ends_in_s(lower[i]) and following in _TAKES_AFTER_CODE:
        found.add(i)
    # "rsyslog runs fine but ...": a verb in -s after its subject, then how it does that, closing the clause
    if i > 0 and content[i - 1] and ends_in_s(lower[i]) and nxt < len(words) and lower[nxt] in _MANNER:
        # ... or before a question word (the tokens drop a dash: "mail drains slowly — how do I ..."), or a
        # preposition ("my program hangs forever in curl_easy_perform")
        ends = CLOSES | CONJUNCTIONS | SUBORDINATORS | WH | PREPOSITIONS
        found |= {i, nxt} if not then or then in ends else set()
    return found


def chained_verbs(lower: list[str], content: list[bool], i: int, verbs: set[int]) -> set[int]:
    """Verbs known by the word before them: a participle after a noun or a form of "have" or "be", or
    joined to a verb; an infinitive or a gerund after a verb."""
    found: set[int] = set()
    nxt = i + 1
    participle = lower[i].endswith("ed") or lower[i] in PARTICIPLES
    ends = nxt >= len(lower) or lower[nxt] in PREPOSITIONS | SUBORDINATORS | {",", "?"}
    if content[i] and participle and i > 0 and content[i - 1] and ends:
        found.add(i)  # "a value stored in", "commits made while"
    before = i - 1
    while before > 0 and lower[before] in ADVERBS:
        before -= 1
    if content[i] and participle and i > 0 and lower[before] in PERFECT:
        found.add(i)  # "that's already been made", "has changed"
    if content[i] and participle and i > 1 and lower[i - 1] in CONJUNCTIONS and i - 2 in verbs:
        found.add(i)  # "has been pushed and pulled by others"
    catenative = i - 1 in verbs and lower[i].endswith("ing") and content[i]
    # ... a verb's object when it ends the clause ("How do I configure forwarding?") unless the verb takes
    # a gerund ("I keep resolving?", "I tried restarting, and ...")
    last = nxt >= len(lower) or lower[nxt] in CLOSES | CONJUNCTIONS
    takes_one = not last or lower[i - 1] in _GERUND_TAKERS
    if catenative and (nxt >= len(lower) or not content[nxt]) and takes_one:
        found.add(i)  # "I keep resolving the same conflict" (not "use caching headers")
    joined = content[i] and i > 1 and lower[i - 1] in CONJUNCTIONS and any(v < i - 1 for v in verbs)
    if joined and nxt < len(lower) and lower[nxt] in DETERMINERS | POSSESSIVES:
        found.add(i)  # "search the columns efficiently and rank the best matches first"
    infinitive = content[i] and i > 1 and lower[i - 1] == "to" and i - 2 in verbs
    # "refuse to remove a file", "seem to use it", "need to call g_init()" (not "push to origin")
    named = nxt < len(lower) and (
        lower[nxt] in DETERMINERS | POSSESSIVES | PRONOUNS or _CALL.search(lower[nxt])
    )
    if infinitive and named:
        found.add(i)
    return found


_CODE_NAME = re.compile(r"\w[._]\w|\w\(\)|[a-z][A-Z]")  # "find_package", "asyncio.gather", "run()"
_TAKES_AFTER_CODE = (PREPOSITIONS - {"of"}) | DETERMINERS | POSSESSIVES
_CALL = re.compile(r"\w\(|_\w")  # a function's or a symbol's name ("g_thread_init()", "SQLITE_BUSY")


def closing_verb(words: list[str], lower: list[str], content: list[bool]) -> set[int]:
    """ "What do the letters in front of each path in git status --short *mean*?": after "what does" and a
    subject that runs on through a preposition, a plain word that ends the question is its verb (the
    chunker drops the subject's word it had taken for the verb)."""
    last = len(words) - 1
    while last > 0 and words[last] in CLOSES:
        last -= 1
    if last < 4 or lower[1] not in AUX_DO or lower[2] in SUBJECT_PRONOUNS:
        return set()
    # "How does a partial clone *made* with --filter *work*?": after "how does", a verb that needs no object
    # ends the question past a participle that opens a clause of the subject's own (in "How does SQLite
    # handle rows inserted in WAL mode?" the verb stands where it is expected, "mode" is its object's)
    participles = [k for k in range(3, last - 1) if lower[k].endswith("ed") or lower[k] in PARTICIPLES]
    reduced = any(content[k - 1] and lower[k + 1] in PREPOSITIONS for k in participles)
    start = last - 1
    while start > 0 and content[start]:
        start -= 1  # the run the word ends: after a preposition, not a determiner ("in the logging module")
    # ... or past a subject that runs on through a preposition and its object ("How do the soft and hard
    # limits of a process *differ*?": not "limits", nor "a process differ")
    object_of = lower[start] in DETERMINERS | POSSESSIVES and lower[start - 1] in PREPOSITIONS
    closes = lower[0] == "how" and lower[last] in _INTRANSITIVE and (reduced or object_of)
    if lower[0] not in ("what", "why") and not closes:
        return set()
    plain = words[last].isalpha() and words[last].islower() and not ends_in_s(words[last])
    through = (lower[start] in PREPOSITIONS or closes) and any(
        lower[k] in PREPOSITIONS for k in range(3, last)
    )
    return {last} if plain and through and content[last] and content[last - 1] else set()


def verb_past_a_phrase(words: list[str], lower: list[str], content: list[bool]) -> set[int]:
    """ "How does lazy evaluation of function arguments *work* in R?", "How does a graceful reload *work* in
    HAProxy?": after "how does" and a subject that runs on through a preposition, or of two words or more, a
    verb that needs no object before a preposition (not "evaluation", not "reload": the subject's nouns)."""
    if len(lower) < 5 or lower[0] != "how" or lower[1] not in AUX_DO:
        return set()
    for k in range(4, len(lower) - 1):
        # ... a preposition in lower case: not the keyword "ROLLBACK TO" in "How do SAVEPOINT ... differ"
        through = any(lower[m] in PREPOSITIONS and words[m].islower() for m in range(3, k))
        nouns = content[k - 1] and content[k - 2] and lower[2] not in SUBJECT_PRONOUNS
        if lower[k] in _INTRANSITIVE and lower[k + 1] in PREPOSITIONS and (through or nouns):
            return {k}
        # ... or one that asks its own question: "How does a disk-assisted queue in rsyslog *decide* when ..."
        # (not after "How do I": its verb came after "I" - "retry ... with exponential backoff when ...")
        plain = content[k] and words[k].isalpha() and words[k].islower() and not ends_in_s(words[k])
        plain = plain and lower[2] not in SUBJECT_PRONOUNS
        if through and plain and lower[k + 1] in WH | {"whether"} and content[k - 1]:
            return {k}
    return set()


def does_itself(lower: list[str], content: list[bool], i: int) -> bool:
    """ "Can one BIND server *do* split DNS?", "Why does my app *do* a full scan?": "do" after an auxiliary
    and its subject, with its object after it, is the verb itself, not the auxiliary of the word after it."""
    if lower[i] not in ("do", "does", "did") or i < 2 or not content[i - 1] or i + 1 >= len(lower):
        return False
    if not (content[i + 1] or lower[i + 1] in DETERMINERS | POSSESSIVES):
        return False
    start = i - 1
    while start > 0 and (content[start - 1] or lower[start - 1] in DETERMINERS | POSSESSIVES | NUMBERS):
        start -= 1
    return start > 0 and lower[start - 1] in AUX_DO


def verb_after_subject(lower: list[str], content: list[bool], i: int, after: int) -> set[int]:
    """The verb at ``after`` when the auxiliary at ``i`` follows its subject ("what a patch would change
    before ...": no topic "change"); not in "which proxies does it trust", where the auxiliary comes first."""
    if lower[i] not in AUX_DO or i < 2 or not content[i - 1] or after >= len(lower) or not content[after]:
        return set()
    start = i - 1
    while start > 0 and content[start - 1]:
        start -= 1
    return {after} if start == 0 or lower[start - 1] not in WH else set()


def spoken_verbs(words: list[str], lower: list[str], content: list[bool], i: int, after: int) -> set[int]:
    """Verbs of questions as people write them: a progressive after "is", a verb with its particle at the
    clause's end, a statement opening on a name and its verb."""
    found: set[int] = set()
    nxt = i + 1
    progressive = after + 1 < len(words) and lower[after].endswith("ing") and content[after]
    declarative = lower[i] in AUX_DO and i > 0 and content[i - 1] and not set(lower[:i]) & WH
    if declarative and after < len(words) and content[after]:
        # "my query doesn't seem", "git rm can remove": the subject stands before it (not in "Which files
        # does git track?", where the subject follows)
        found.add(after)
    if (
        lower[i] in AUX_BE
        and (i > 0 or lower[i] in BE_CONTRACTED)
        and progressive
        and words[after + 1] not in CLOSES
    ):
        found.add(after)  # "What is going wrong", "is eating all the CPU" (not "What is caching?")
    if content[i] and i > 0 and nxt < len(words) and lower[nxt] in PARTICLES:
        ends = nxt + 1 == len(words) or lower[nxt + 1] in PREPOSITIONS | DETERMINERS | POSSESSIVES | CLOSES
        ends = ends or (ends_in_s(lower[i]) and lower[nxt + 1] in CONJUNCTIONS)  # "the window pops up and"
        if ends and lower[nxt : nxt + 2] != ["out", "of"]:  # "keep the password out of the code": a noun
            found.add(i)  # "what does the RETURNING clause give back in SQLite", "how do I clean up the"
    last = nxt + 1 == len(words) or (nxt + 2 == len(words) and words[-1] in "?!.")
    if content[i] and i > 0 and nxt < len(words) and lower[nxt] in PREPOSITIONS and last:
        found.add(i)  # "come from", "be careful about": a verb and its particle end the clause
    opens_object = nxt < len(words) and (
        lower[nxt] in DETERMINERS | POSSESSIVES | OBJECT_PRONOUNS or CAPITALS.match(words[nxt]) is not None
    )
    if content[i] and words[i].islower() and i > 1 and opens_object:
        if lower[i - 1] == "to" and CAPITALS.match(words[nxt]):
            # "is it safe to run VACUUM" (not "get Apache to gzip the pages": there the rare word is the
            # verb, and what the question is about)
            found.add(i)
        if lower[i - 1] in ("but", "and", "or") and content[i - 2]:
            found.add(i)  # "undo the last commit but keep my changes"
    if i == 0 and content[0] and words[0][:1].isupper() and nxt < len(words) and content[nxt]:
        third = lower[nxt].endswith("s") and not lower[nxt].endswith("ss")
        opens = nxt + 1 < len(words) and lower[nxt + 1] in PREPOSITIONS | DETERMINERS | POSSESSIVES
        if third and opens:
            found.add(nxt)  # a statement opening "Git asks for my password": a name and its verb
    return found


def subjectless(sentence: str) -> bool:
    """ "Specifies the maximum age ...", "Run the command ...": a sentence of a page that opens on its verb,
    its subject in the heading (extractive/reading/sentences.py quotes it only under one)."""
    words = sentence.split()
    return len(words) > 1 and words[0].lower() not in OPENERS and words[1].lower() in AFTER_A_VERB


_QUALIFIES = PREPOSITIONS | SUBJECT_PRONOUNS | SUBORDINATORS | WH | {"whom"}


def verb_of_subject(sentence: str, within: int = 8) -> bool:
    """An auxiliary after the subject a sentence opens on, before any phrase or clause that qualifies it:
    "the dispose function is supposed to ..." has one; "the path to the directory you are interested in",
    "the object whose signal handlers are sought" (noun phrases, gtk-doc's parameters) none."""
    words = takewhile(lambda word: word not in _QUALIFIES, sentence.lower().split()[1:within])
    return any(word in AUX_BE | AUX_DO | AUX_HAVE for word in words)


def verb_before_a_name(words: list[str], run: list[int]) -> set[int]:
    """ "Which configuration choices slow Apache httpd down": a lower-case word before a name in a run of 3+
    is its verb - not a coordination's ("the event and worker MPMs") nor a keyword's ("WITHOUT ROWID")."""
    for a, b in pairwise(run):
        if (
            len(run) >= 3
            and b == a + 1
            and a != run[0]
            and a - 1 in run
            and words[a].islower()
            and words[b][:1].isupper()
            and not CAPITALS.match(words[b])
        ):
            return {a}
    return set()


def listed_verbs(lower: list[str], content: list[bool], verb: int) -> list[int]:
    """The verbs listed after a subject's verb, one word each, by commas and a last "and" or "or": "I create
    and activate", "I clone, configure and write shell hooks" (not a topic "configure and write ...")."""
    series, at = [], verb
    while at + 2 < len(lower) and lower[at + 1] == "," and content[at + 2]:
        series.append(at := at + 2)
    oxford = at + 3 < len(lower) and lower[at + 1] == "," and lower[at + 2] in CONJUNCTIONS  # ", and delete"
    last = at + 2 + oxford
    if last < len(lower) and lower[last - 1] in CONJUNCTIONS and content[last]:
        return [*series, last]
    return []


def verb_after_a_list(words: list[str], lower: list[str], content: list[bool], i: int) -> bool:
    """A verb after a comma or "and" with "it" or, after a comma, a determiner after it: "install nginx,
    configure it and run it", "create a branch, push the branch" (topics had run across the comma); or a
    call after it: "removed them with rm() and ran gc()"."""
    if not (content[i] and i and lower[i - 1] in CONJUNCTIONS | {","} and words[i].islower()):
        return False
    then = lower[i + 1] if i + 1 < len(words) else ""
    past_it = lower[i + 2] if i + 2 < len(words) else ""
    it = then == "it" and (not past_it or past_it in CLOSES | CONJUNCTIONS)
    called = i > 1 and _CALL.search(lower[i - 2]) is not None and then.endswith("()")
    # ... or with its particle before a preposition and its object: "... through the ISP's server and log
    # in to it" (the phrase had been "the ISP's server and log")
    beyond = lower[i + 3] if i + 3 < len(words) else ""
    phrasal = (
        then in PARTICLES | {"in", "on"}
        and past_it in PREPOSITIONS
        and beyond in {"it", "them"} | DETERMINERS
    )
    return it or (lower[i - 1] == "," and then in DETERMINERS | POSSESSIVES) or called or phrasal


_COUNTED = re.compile(
    r"\b(?:two|three|four|five|six|seven|eight|nine|ten|several|\d+)\s+(?:[\w-]+\s+)?\w+s\.$"
)
_MODALS = frozenset(("can", "could", "may", "might", "must", "shall", "should", "will", "would"))


def names_the_counted(before: str, sentence: str) -> bool:
    """ "This can be done through three mechanisms. HTTP purging, banning and forced cache misses.": a short
    list without an auxiliary, after a sentence that counts things, names them - it leans on that sentence."""
    words = sentence.lower().rstrip(".").split()
    listed = "," in sentence or "and" in words or "or" in words
    said = {word.strip(",") for word in words}
    verbless = not said & (AUX_BE | AUX_DO | AUX_HAVE | _MODALS | SUBJECT_PRONOUNS)
    return bool(_COUNTED.search(before)) and listed and verbless and len(words) <= 12


_STATES = frozenset(("stuck", "broken", "wrong", "missing", "slow", "busy", "locked", "open", "full"))


def what_it_is(words: list[str], lower: list[str], i: int) -> set[int]:
    """ "see what is stuck in the queue", "What is broken in my config?": after "what is" a participle or a
    state in lower case says how the thing is (a predicate), not what it is - but "What is PRIVATE in ...?"
    and "What is a hook?" ask for a thing."""
    after = i + 1
    if not (lower[i] in AUX_BE and i > 0 and lower[i - 1] in ("what", "who") and after < len(words)):
        return set()
    word, following = words[after], lower[after + 1] if after + 1 < len(words) else ""
    state = word in _STATES or word in PARTICIPLES or (word.endswith("ed") and not word.endswith("eed"))
    return {after} if state and (not following or following in PREPOSITIONS | CLOSES) else set()


def asked_verb(lower: list[str], content: list[bool]) -> set[int]:
    """The verb right after "What", "Who" or "Which" ("What happens when", "What goes wrong", "What actually
    happens to"), or after the one noun "Which" asks for: "Which timeout applies to WebSocket connections"
    was the phrase "timeout applies" (not "Which HTTP methods are ...", "Which file formats does X read");
    and an infinitive after what it asks anywhere in the clause."""
    # "decide when to write messages to disk", "whether to fetch": an infinitive after what it asks (not "get
    # Apache to gzip the pages": a verb, but the topic the question names)
    found = {i for i in range(2, len(lower)) if lower[i - 1] == "to" and lower[i - 2] in WH | {"whether"}}
    found = {i for i in found if content[i] and lower[i].isalpha()}
    # "What can stop rsyslog from writing ...": the word after "what" and a modal keeps its object from doing
    stop = next((m for m in range(4, min(len(lower) - 1, 7)) if lower[m] == "from"), 0)
    keeps = bool(stop) and lower[2] in _KEEPS_FROM and lower[stop + 1].endswith("ing")  # not "learn from"
    if keeps and lower[0] == "what" and lower[1] in AUX_DO:
        found.add(2)
    k = 1
    while k < len(lower) and lower[k] in ADVERBS:
        k += 1
    if len(lower) <= k or lower[0] not in ("what", "who", "which") or not content[k]:
        return found
    if lower[k].endswith("s") and (
        len(lower) == k + 1 or not content[k + 1] or lower[k + 1] in ("wrong", "on")
    ):
        return found | {k}
    # ... "applies to", "trims the": not "Which lamp oils in the store burn" (no verb lexicon to tell)
    verb, after = k + 1, lower[k + 2] if k + 2 < len(lower) else ""
    noun = lower[0] == "which" and not ends_in_s(lower[k]) and after in DETERMINERS | POSSESSIVES | {"to"}
    if noun and content[verb] and ends_in_s(lower[verb]) and not set(lower) & (AUX_BE | AUX_DO | AUX_HAVE):
        return found | {verb}
    return found
