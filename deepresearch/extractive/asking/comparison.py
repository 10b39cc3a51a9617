"""What a question compares: the members of "X or Y", "X vs Y", "X, Y and Z", and the two sides of "Is X
safer than Y?", "How does X compare to Y?", "the advantages of X over Y" - each asked about and searched
for on its own (extractive/asking/planning.py). A comparison of two noun phrases is read as the coordination
"X or Y", so one rule names its members whatever the wording."""

from __future__ import annotations

import itertools
import re
from dataclasses import replace

from deepresearch.extractive.asking.phrases import Phrase
from deepresearch.extractive.asking.wordclasses import (
    ARTICLES,
    COMPARATIVES,
    DETERMINERS,
    LIKE_VERBS,
    POSSESSIVES,
    tokens,
)
from deepresearch.extractive.inflection import plural_word

__all__ = [
    "COMPARATIVE", "COMPARES", "EITHER", "VERSUS", "WEIGHS", "article", "aside", "avoided", "bare",
    "compared", "compared_members", "exemplified", "member_questions", "members", "named_alone", "only",
    "plural_item", "quoted_whole", "weighed",
]  # fmt: skip

VERSUS = re.compile(r"\s+(?:[vV]s\.?|[vV]ersus)\s+")
EITHER = re.compile(r"\s+or\s+")  # not "OR": "INSERT OR REPLACE" is a name
COMPARATIVE = re.compile(r"\s+(?:" + "|".join(sorted(COMPARATIVES)) + r")$", re.IGNORECASE)
# the words of a question that weighs one thing against another: "Which is faster for lookups, a dict or a
# set?" is about the dict and the set, not the lookups
_WEIGHING = r"differ|differs|differences?|different\s+from|compar\w*|versus|vs\.?|better|worse|than"
WEIGHS = re.compile(rf"\b(?:{_WEIGHING}|" + "|".join(sorted(COMPARATIVES)) + r")\b", re.IGNORECASE)
# the words of a question whose coordination's members are asked about one by one (not those of "my
# username and password"): it weighs them or offers a choice
# "different" compares only with what it differs from ("different from Y"), not in "load different settings"
COMPARES = re.compile(
    r"\b(?:differ(?:s|ed|ing|ences?)?|different(?:ly)?\s+(?:from|than|to)|compar\w*|versus|vs\.?|better|worse|"
    r"than|or)\b",
    re.IGNORECASE,
)
# a question that asks how, why or what offers no choice by an "or" in passing ("export it as a tar or zip
# file"), unless it asks which to take ("How should I store dates, as TEXT or INTEGER?")
_OPEN_QUESTION = re.compile(r"^(?:how|why|what)\b", re.IGNORECASE)
_CHOOSES = re.compile(r"\b(?:should|between|choose|choosing|decide|pick|prefer)\b", re.IGNORECASE)
# what a question does without: "serve them without a VirtualHost block", "host names instead of IP
# addresses", "back up without stopping the application" (a gerund between)
_AVOIDING = re.compile(r"\b(?:without|instead\s+of|rather\s+than)(?:\s+[a-z]+ing)?$", re.IGNORECASE)
# "policies like CMP0048", "an expression such as lower(name)": after a noun, what stands for its kind (not
# after a verb: "would like the server to", "looks like the cache")
_EXAMPLE = re.compile(r"\b([a-z]{3,})\s+(?:like|such\s+as)$", re.IGNORECASE)
# ... after a noun, not a verb or an adverb (LIKE_VERBS): "would really like Postgres to", "works like Nginx"
_VERSION = re.compile(r"[vV]?\d+(?:\.(?:\d+|x))*[a-z]?")  # "3.12", "16", "v2", "2.4", "3.x"
_UNIT = re.compile(
    r"(?:[KMGT]i?B|bytes?|ms|seconds?|minutes?|hours?|days?|%|percent|rows|cores|threads)\b", re.I
)
# what stands between the two sides of a comparison: "X is more secure than Y", "X compares to Y", "X
# stacks up against Y", "X differs from Y" ("X versus Y" is a coordination already)
_LINK = re.compile(
    r"(?:(?:is|are|was|were|be|get|gets|run|runs)\s+)?(?:(?:much|far|a lot|any)\s+)?"
    r"(?:(?:more|less)\s+[a-z]+|[a-z]+er|better|worse)\s+than"
    r"|(?:compares?|compared|stacks?\s+up)\s+(?:to|with|against)"
    r"|(?:(?:is|are)\s+)?(?:differs?|different)\s+(?:from|than|to)",
    re.IGNORECASE,
)
# what a thing is measured against, not a thing compared: "older than 7 days", "better than expected", "more
# space than the sum of their layers", "more data than the file size"
_MEASURE = re.compile(
    r"(?:\d|(?:one|two|three|four|five|ten|a|an)\s+(?:second|minute|hour|day|week|month|year)s?\b"
    r"|(?:expected|usual|needed|necessary|required|before|ever|normal|anything|nothing|everything|others?"
    r"|that|this|it|the\s+(?:\w+\s+)?(?:sum|total|rest|size|limit|default|amount|number))\b)",
    re.IGNORECASE,
)
# a list the clause weighs: "the difference between X and Y", "How do X, Y and Z compare?"
_BETWEEN = re.compile(r"\b(?:differ\w*|compar\w*|between)\b", re.IGNORECASE)
_OVER = re.compile(
    r"\b(?:advantages?|benefits?|disadvantages?|drawbacks?|pros|cons|prefer\w*|choos\w*|chose|pick\w*|"
    r"recommend\w*|favou?r\w*)\b",
    re.IGNORECASE,
)


def compared(clause: str, phrases: list[Phrase]) -> list[Phrase]:
    """The clause's phrases with the two sides of a comparison joined into one coordination: "WAL mode"
    and "a rollback journal" of "Is WAL mode more secure than a rollback journal?" become "WAL mode or a
    rollback journal", whose members are the two. Other phrases are kept as they are."""
    lower = clause.lower()
    for first, second in itertools.pairwise(phrases):
        sides = (*(first.items or (first.text,)), *(second.items or (second.text,)))
        versions = _VERSION.fullmatch(second.text.split()[0]) and _VERSION.fullmatch(first.text.split()[-1])
        if len(sides) > 3 or (_MEASURE.match(second.text) and not versions):
            continue  # "older than 7 days" (but "Is Python 3.12 faster than 3.11?")
        at = lower.find(first.text.lower())
        after = _find(lower, second.text, at + len(first.text)) if at >= 0 else -1
        if after < 0:
            continue
        between = lower[at + len(first.text) : after].strip()
        over = between == "over" and bool(_OVER.search(lower[:at]))
        # "Is X faster than Y" compares its subject; "delete files older than a week" filters an object
        linked = first.role in ("subject", "which", "named") and _LINK.fullmatch(between) is not None
        if over or linked:
            joined = replace(first, text=f"{first.text} or {second.text}", items=sides, joined=True)
            return [joined if p is first else p for p in phrases if p is not second]
    return phrases


def _find(lower: str, text: str, start: int) -> int:
    """Where a phrase stands in the (lower-case) clause, from `start`, or -1; a phrase whose "one" reads as
    the noun it stands for ("the old one" is "the old lamp": phrases.noun_phrases) by the words written."""
    words = [re.escape(word) for word in text.lower().split()] or [""]
    words[-1] = f"(?:{words[-1]}|ones?)"
    match = re.compile(r"\s+".join(words)).search(lower, start)
    return match.start() if match else -1


def weighed(clause: str, phrase: Phrase) -> bool:
    """The phrase is the things the clause weighs against each other: the two sides of a comparison, or a
    choice ("Which is faster for lookups, a dict or a set?") - not "static files and images" in "How do I
    make nginx faster for static files and images?"."""
    offered = EITHER.search(phrase.text) or VERSUS.search(phrase.text) or _BETWEEN.search(clause)
    # ... or a choice it offers: "Should we use the malloc or the file storage backend?"
    weighs = WEIGHS.search(clause) or (EITHER.search(phrase.text) and _CHOOSES.search(clause))
    return phrase.joined or (bool(phrase.items) and bool(offered) and weighs is not None)


def only(clause: str, phrase: Phrase) -> bool:
    """The clause is the phrase alone (no question word, no verb): "git rebase or git merge?"."""
    stripped = re.sub(r"\b(vs)\.", r"\1", clause.strip(" ?.,"), flags=re.IGNORECASE)  # tokens drop the dot
    return stripped.lower() == phrase.text.lower()


def compared_members(question: str, phrase: Phrase) -> list[str]:
    """The members of a coordinated phrase that the question compares, each asked about and searched for on
    its own: the two sides of a comparison, or a coordination in a question that weighs or offers a choice
    (COMPARES). Not the alternatives a how, why or what question names in passing inside a prepositional
    phrase: "How do I export the files as a tar or zip file?" asks how to export, not what a zip file is
    ("How should I store dates, as TEXT or INTEGER?" and "decide between X or Y" still choose)."""
    if phrase.joined:
        return members(phrase)
    asks = _OPEN_QUESTION.match(question.strip()) is not None and _CHOOSES.search(question) is None
    passing = phrase.role == "pp" and asks
    rest = question.replace(phrase.text, " ") if passing else question
    return members(phrase) if COMPARES.search(rest) else []


_QUALIFIER = re.compile(
    r"\s+((?:in|within)\s+(?!(?:practice|general|short|brief|detail|particular|theory)\b)[^\s?,;:]+(?:\s+[^\s?,;:]+){0,3})\s*\??\s*$"
)


def member_questions(question: str, phrase: Phrase, items: list[str]) -> list[str]:
    """ "What is X?" of each compared member, with what they are compared within when a difference between
    them is asked ("the difference between a merge and a rebase in git": "What is a merge in git?") - "What
    is PRIVATE?" had been answered from the PRIVATE_HEADER property's page, not target_link_libraries'; not
    the use's ("use the oil lamp versus the gas lamp in fog")."""
    compared = f"between {phrase.text}"
    at = question.find(compared)
    where = _QUALIFIER.match(question[at + len(compared) :]) if at >= 0 else None
    within = f" {where.group(1)}" if where else ""
    return [f"What {'are' if plural_item(item) else 'is'} {item}{within}?" for item in items]


def plural_item(text: str) -> bool:
    return " and " in text or plural_word(text)


def members(phrase: Phrase) -> list[str]:
    """The members of a coordinated topic, each named in full: "the prefork, worker and event
    multi-processing modules" -> "the prefork multi-processing module", ...; "loggers, handlers and
    formatters" stay as they are."""
    # "Is X or Y better ...?": the comparative is what is asked of the members, not a word of the last one
    items = [COMPARATIVE.sub("", item).strip() for item in phrase.items]
    if not 2 <= len(items) <= 3 or any(len(bare(item).split()) > 4 for item in items):
        return []
    first = items[0].split()
    if len(first) == 2 and _VERSION.fullmatch(first[-1]) and not _UNIT.match(" ".join(items[-1].split()[1:])):
        # "Python 3.11 vs 3.12 performance": a bare version is one of the same name, and what follows the
        # last one is asked of each when the others are bare ("Debian 11 vs 12 vs Ubuntu 22.04" names its own)
        name, after = " ".join(first[:-1]), " ".join(items[-1].split()[1:])
        bare_versions = [_VERSION.fullmatch(item.split()[0]) is not None for item in items[1:]]
        if all(bare_versions) and all(len(item.split()) == 1 for item in items[1:-1]):
            versions = [first[-1], *(item.split()[0] for item in items[1:])]
            return [" ".join(filter(None, (name, version, after))) for version in versions]
        if any(bare_versions):
            return [
                items[0],
                *(f"{name} {i}" if b else i for i, b in zip(items[1:], bare_versions, strict=True)),
            ]
    if phrase.joined:
        return items  # "Are symlinks faster than hard links?": each side as written, no noun shared
    option = next((k for k, word in enumerate(first) if k and word.startswith("-")), None)
    if option is not None:
        # "git reset --soft and --hard": a bare option is one of the same command
        return [f"{' '.join(first[:option])} {item}" if item.startswith("-") else item for item in items]
    last = items[-1].split()
    if last[0].lower() in ("a", "an", "the") and first[0].lower() not in ("a", "an", "the"):
        return items  # "cancel or a second Ctrl-C": the last member has its own article, so its own noun
    if first[0].lower() in ("a", "an", "the") and len(bare(items[-1]).split()) > 1:
        # "a lightweight and an annotated tag": the members share the last one's noun
        head = bare(items[-1]).split()[1:]
        if all(len(bare(item).split()) == 1 for item in items[:-1]):
            return [f"{item} {' '.join(head)}" for item in items[:-1]] + [items[-1]]
        return items
    single_words = all(len(item.split()) == 1 and not plural_word(item) for item in items[:-1])
    own_name = last[0][:1].isupper() and not last[0].isupper()  # "Apache httpd" is a name of its own
    if len(last) > 1 and single_words and not own_name:
        # "the prefork, worker and event MPMs", "TCP or UDP sockets" (not "nginx or Apache httpd", not
        # "symlinks or hard links")
        head = " ".join(last[1:])
        single = head[:-1] if plural_word(head) else head
        lead = phrase.text.split()[0].lower() if phrase.text.split()[0].lower() in ("the",) else ""
        named = [*items[:-1], last[0]]
        return [f"{lead or article(item)} {item} {single}" for item in named]
    return items


def bare(item: str) -> str:
    """The phrase without its leading article."""
    return re.sub(r"^(?:the|a|an)\s+", "", item, flags=re.IGNORECASE)


_SPELLED = re.compile(
    r"(?!bl|br|ch|cl|cr|dr|dw|fl|fr|gh|gl|gn|gr|kl|kn|kr|ph|pl|pr|ps|qu|s[chklmnpqtw]|th|tr|tw|wh|wr)"
    r"[b-df-hj-np-tv-xz]{2}"
)
"""A lower-case name opening with two consonants no word opens with ("ffmpeg", "nginx", "xml", "rsync"; not
"string", "php"...) is said letter by letter, so its first letter's name decides its article."""


def article(word: str) -> str:
    """ "a" or "an" by the sound the word opens with: "an HTTP proxy", "an SQLite table", "a user", "a JSON
    value" (an initialism is read letter by letter)."""
    first = re.split(r"[\s\-/]", word.strip(), maxsplit=1)[0]
    if re.fullmatch(r"[B-DF-HJ-NP-TV-Z][AEIOU][B-DF-HJ-NP-TV-Z]s?", first):
        return "a"  # said as a word: "a LAN", "a NAT gateway", "a RAM disk"
    if first[:2].isupper():
        return "an" if first[0] in "AEFHILMNORSX" else "a"
    lower = first.lower()
    if lower.startswith(("uni", "use", "usa", "usu", "uti", "eu", "one", "once")):
        return "a"
    if _SPELLED.match(lower):  # "an ffmpeg job", "an xml file"
        return "an" if lower[0] in "fhlmnrsx" else "a"
    return "an" if lower[:1] in "aeiou" or lower.startswith(("hour", "honest", "honor")) else "a"


def named_alone(phrase: Phrase, shown: str, clause: str) -> str:
    """A singular phrase as a sub-question of its own names it ("What is X?"): with "a" or "an" where the
    question's determiner cannot go with it - "my long-lived branch" is "a long-lived branch", "decide
    which name-based virtual host answers" asks about "a name-based virtual host"."""
    words = shown.split()
    if phrase.plural or not words or words[0].lower() in ARTICLES | DETERMINERS:
        return shown
    said = tokens(clause)
    own = 0 < phrase.start <= len(said) and said[phrase.start : phrase.start + 1] == phrase.text.split()[:1]
    before = said[phrase.start - 1].lower() if own else ""
    lost = before in ("which", "what") or phrase.text.split()[0].lower() in POSSESSIVES
    return f"{article(shown)} {shown}" if lost else shown


def avoided(clause: str, phrase: Phrase) -> bool:
    """The phrase is what the clause does without ("can Apache serve them without a VirtualHost block?"):
    the asker's way around it is the subject matter, not it."""
    return bool(_AVOIDING.search(" ".join(tokens(clause)[: phrase.start])))


def exemplified(clause: str, phrase: Phrase) -> bool:
    """The phrase is an example of the noun before it ("Why does CMake warn me about policies like
    CMP0048?"): the kind is asked about, the example only shows which - a search for it finds its own page,
    not the pages about its kind."""
    kind = _EXAMPLE.search(" ".join(tokens(clause)[: phrase.start]))
    return kind is not None and kind[1].lower() not in LIKE_VERBS and not kind[1].lower().endswith("ly")


def aside(clause: str, phrase: Phrase) -> bool:
    """The phrase is one bare noun in lower case that says what for or how, not what is asked about: ending
    its clause after "for" ("... and mail them to a project's mailing list for review"; a name is asked
    about: "Is there a library for JSON?"), or in an idiom ("manage the keys by hand", "in practice")."""
    if phrase.text != phrase.head:
        return False
    match = _FOR_END.search(clause)
    return (match is not None and phrase.text == match.group(1)) or any(
        idiom.group(1) == phrase.text for idiom in _IDIOM.finditer(clause)
    )


_FOR_END = re.compile(r"\bfor\s+([a-z]+)[\s?.!]*$")
_IDIOM = re.compile(
    r"\b(?:by|in|on|at|for|so)\s+(hand|practice|general|purpose|fact|once|least|most|all|now|far)\b"
)


_QUOTED = re.compile(r"(?<!\w)(['\"“‘])([^'\"“”‘’]*?\s[^'\"“”‘’]*?)(['\"”’])(?!\w)")


def quoted_whole(question: str, phrase: Phrase) -> Phrase:
    """The phrase, or the whole quotation it is part of: the topic of "Why do I get 'Working outside of
    application context' when ...?" is the message, not "Working outside"."""
    words = re.compile(rf"(?<!\w){re.escape(phrase.text)}(?!\w)")  # whole words: not "app" of "application"
    for match in _QUOTED.finditer(question):
        quoted = match.group(2).strip()
        if words.search(quoted) and phrase.text != quoted and len(quoted.split()) <= 8:
            return replace(phrase, text=f"{match.group(1)}{quoted}{match.group(3)}", head=quoted, items=())
    return phrase
