"""The noun phrases of a question and the part each plays: a small chunker, not a parser.

Words are told apart by closed classes (question words, auxiliaries, pronouns, determiners, prepositions,
conjunctions, adverbs); what is left is content. A verb is recognised by where it stands, not by a word
list: right after a subject pronoun ("How do I *rotate* ..."), at the end of the subject that follows "does"
or a modal ("How does SQLite *decide* the type ..."), after an adverb that follows the subject ("... still
*loop*"). Runs of content words between these are the noun phrases; each keeps its determiner for display
("the json module") and records its role: subject, object, what a "What is ..." question names, or one
inside a prepositional phrase or a subordinate clause.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from deepresearch.extractive.inflection import ends_in_s, instead_of_one, plural_word

__all__ = ["COMPARATIVES", "Phrase", "asker_condition", "noun_phrases", "tokens", "verbs"]


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_TOKEN = re.compile(r"\[[^\]\s]{1,20}\]|(?<![\w-])--?[A-Za-z][\w-]*|\.?\w[\w.\-+#/'’]*(?:\(\))?|[,;:?!]")
_WH = _set("what how which why when where who whose")
_AUX_DO = _set("do does did can could should would will may might must shall")
_AUX_BE = _set("is are was were be been being am")
_AUX_HAVE = _set("has have had")
_SUBJECT_PRONOUNS = _set("i you we they he she it nobody somebody someone anyone everyone nothing something")
_PRONOUNS = _set("me us them him her itself themselves this these those") | _SUBJECT_PRONOUNS
_POSSESSIVES = _set("my your our their his its")
_DETERMINERS = _set("the a an some any each every all no another both either neither")
_PREPOSITIONS = _set(
    "of in on at to for from by with about into onto over under after before without between against "
    "during through across via per than as like within upon behind beyond instead"
)
_CONJUNCTIONS = _set("and or but nor")
_VERSUS = _set("vs versus")  # joins the things a question compares ("X vs Y"), never two verbs
_COORDINATORS = _set("and or vs versus")  # what joins the members of a coordination
_SUBORDINATORS = _set("when while if whether because although though unless until since once that")
_ADVERBS = _set(
    "not n't never still really actually too very also just only even ever always already yet then there "
    "here now again together usually often sometimes automatically anymore more most less least wrong right "
    "instead so"
)
_PARTICLES = _set("up down out off away back")
_CLOSES = frozenset(",;:?!")  # punctuation that ends a phrase or a clause (tokens() keeps it as words)
_OBJECT_PRONOUNS = _set("me us them him")  # never a subject: the word before them is a verb
# "has been made", "should be used": a participle after one of them is a verb
_PERFECT = _set("be been being has have had")
_PARTICIPLES = _set("made done built written kept found lost held sent left given taken seen known shown")
_IDENTIFIER = re.compile(r"[._()\[\]]|[a-z][A-Z]")
_CAPITALS = re.compile(r"^[A-Z][A-Z_]+$")
_QUANTIFIERS = frozenset(["two", "three", "four", "many", "several", "multiple", "same", "other"])
# "thousands of sites", "a couple of directories": a quantity, the noun after "of" is what is asked about
_QUANTITY_NOUNS = _set(
    "couple lot lots bunch handful dozen dozens hundreds thousands millions billions tons plenty"
)
_ARTICLES = _set("a an the")
_RELATING = ("compar", "differ", "relat", "interact", "correspond")  # verbs of "how does X ... to Y"
COMPARATIVES = _set(
    "faster slower larger smaller bigger better worse safer easier harder cheaper quicker longer shorter"
    " higher lower"
)
# a comparative's "-er" before "than" ("is git merge safer than"), not a noun's ("a better web server than",
# "a rootless container than"): the nouns in "-er" that documentation names most
_NOUN_ER = _set(
    "server container user computer player driver manager handler worker buffer header footer folder"
    " filter layer parser compiler browser router cluster controller provider consumer writer reader"
    " number member master character balancer scheduler listener logger loader installer wrapper helper"
    " runner trigger counter pointer marker identifier owner customer order register adapter converter"
    " formatter renderer interpreter debugger profiler tracker linter bundler transformer encoder decoder"
    " other rather another"
)
_PLAIN_VERB = re.compile(r"[a-z]*[aeiouy][a-z]*")
_NUMBERS = _set("one two three four five six seven eight nine ten hundred thousand million")
# "the difference between X and Y", "the drawbacks of X": a relation, what it relates is what is asked about
_RELATION_NOUNS = _set(
    "difference differences distinction distinctions relationship comparison tradeoffs tradeoff trade-offs"
    " trade-off advantages advantage disadvantages benefits drawbacks downsides upsides pros cons strengths"
    " weaknesses limitations limits pitfalls caveats risks"
) | {"pros and cons", "advantages and disadvantages", "benefits and drawbacks", "strengths and weaknesses"}
FUNCTION_WORDS = (
    _WH | _AUX_DO | _AUX_BE | _AUX_HAVE | _PRONOUNS | _POSSESSIVES | _DETERMINERS | _PREPOSITIONS
    | _CONJUNCTIONS | _VERSUS | _SUBORDINATORS | _ADVERBS | _PARTICLES
)  # fmt: skip
# "the with statement", "for loops": a keyword named as such is a content word there
_KEYWORD_KIND = _set("statement statements keyword keywords clause clauses loop loops operator operators")


@dataclass(frozen=True, slots=True)
class Phrase:
    """A noun phrase of the question: ``text`` as written (with its determiner), ``head`` without
    determiner, possessive or quantifier, ``role`` one of subject, object, named (what "What is" asks
    about), which (the noun after "Which"), pp, clause; ``items`` the members of a coordination."""

    text: str
    head: str
    role: str
    start: int
    items: tuple[str, ...] = ()
    subordinate: bool = False  # in a clause of its own ("when I can edit the main server configuration")
    joined: bool = False  # the two sides of a comparison, joined by extractive/comparison.py

    @property
    def plural(self) -> bool:
        return bool(self.items) or plural_word(self.head)


def tokens(text: str) -> list[str]:
    return [t.rstrip(".'’") if not t.startswith(".") or len(t) > 1 else t for t in _TOKEN.findall(text)]


def _named_am(word: str, previous: str, following: str) -> bool:
    """ "am" is the verb only next to "I" ("I am", "Am I", "how am I"): elsewhere it is a name ("git am
    stops"). extractive/text.py's stopwords say the same for the tokens."""
    return word.lower() == "am" and "i" not in (previous.lower(), following.lower())


def _lowered(words: list[str]) -> list[str]:
    """The words in lower case, "am" that is a name marked so no word list takes it for the verb."""
    return [
        "am:name"
        if _named_am(w, words[i - 1] if i else "", words[i + 1] if i + 1 < len(words) else "")
        else w.lower()
        for i, w in enumerate(words)
    ]


def _is_content(word: str, following: str, previous: str = "") -> bool:
    lower = word.lower()
    if _named_am(word, previous, following):
        return True
    if lower in _VERSUS and (word[:2] == "VS" or not previous or previous.lower() in FUNCTION_WORDS):
        return True  # "VS Code", "does vs code": a name, not "versus" (which follows a thing compared)
    if lower in FUNCTION_WORDS or lower in _AUX_DO | _AUX_BE | _AUX_HAVE:
        # "WITHOUT ROWID", "INSERT OR REPLACE": a capitalised keyword before another is part of a name
        keyword = _CAPITALS.match(word) is not None and _CAPITALS.match(following) is not None
        return keyword or (
            lower in ("with", "for", "while", "if", "as", "from", "in") and following.lower() in _KEYWORD_KIND
        )
    if following.lower() == "than" and (
        lower in COMPARATIVES or (lower.endswith("er") and lower not in _NOUN_ER)
    ):
        return False  # "Is git merge faster than git rebase?": what is asked of the two, not a word of one
    return word not in _CLOSES


def _run(words: list[str], start: int, content: list[bool]) -> tuple[list[int], int]:
    """The content words from ``start`` on (through a coordination's commas and "and"), and where it ends."""
    run: list[int] = []
    j = start
    while j < len(words) and (content[j] or (words[j].lower() in ("and", "or", ",") and run)):
        if content[j]:
            run.append(j)
        j += 1
    # ... up to its last content word: "WAL mode or a journal" is two phrases, not "mode" and its object
    return run, run[-1] + 1 if run else j


def _verbs(words: list[str]) -> set[int]:
    """Positions of the words taken for verbs (see the module docstring)."""
    verbs: set[int] = set()
    guessed: dict[int, int] = {}  # a verb taken as the last word of the run after "does", and where it ends
    lower = _lowered(words)
    content = [
        _is_content(w, words[i + 1] if i + 1 < len(words) else "", words[i - 1] if i else "")
        for i, w in enumerate(words)
    ]
    aux = _AUX_DO | _AUX_BE | _AUX_HAVE
    for i, word in enumerate(lower):
        nxt = i + 1
        if word in _SUBJECT_PRONOUNS and nxt < len(words):
            # "I rotate", "I can edit", "it actually change", "it is stale" (a predicate, no noun), "I have"
            verb = nxt
            while verb + 1 < len(words) and lower[verb] in aux | _ADVERBS and content[verb + 1]:
                verb += 1
            if content[verb] or lower[verb] in aux:
                verbs.add(verb)
            if verb + 2 < len(words) and lower[verb + 1] in _CONJUNCTIONS and content[verb + 2]:
                verbs.add(verb + 2)  # "I create and activate"
        after = nxt
        while after < len(words) and lower[after] in _ADVERBS:
            after += 1
        if word in _AUX_BE and i > 1 and content[i - 1] and after < len(words) and content[after]:
            run, _ = _run(words, after, content)
            verbs.update(run)  # "HEAD is detached", "is still fresh": a predicate, no noun
        predicate = word in _AUX_BE and after + 1 < len(words) and lower[after] in COMPARATIVES
        if predicate and not content[after + 1]:  # not "Is faster storage better?"
            verbs.add(after)  # "Which is faster, X or Y?": what is asked of X and Y, not a thing compared
            verbs.add(after + 2 if lower[after + 1] == "to" else after)  # "easier to configure, X or Y"
        # "the commit that introduced a bug" (after a verb, "decide which berth", "which" names a noun)
        relative = word in ("that", "which", "who") and i > 1 and nxt + 1 < len(words) and content[nxt]
        relative = relative and content[i - 1] and i - 1 not in verbs
        if relative and lower[nxt + 1] in _DETERMINERS | _POSSESSIVES | _PRONOUNS:
            verbs.add(nxt)  # "the commit that introduced a bug"
        gerund = after + 1 < len(words) and lower[after].endswith("ing") and content[after]
        if word in _PREPOSITIONS and gerund:
            verbs.add(after)  # "without restarting the server", "from just serving them"
        if content[i] and nxt < len(words) and lower[nxt] in _OBJECT_PRONOUNS:
            verbs.add(i)  # "or load them as shared objects"
        verbs |= _spoken_verbs(words, lower, content, i, after)
        if i > 0 and (
            word in _AUX_DO or (word in _AUX_BE and (i < 2 or lower[i - 1] in _WH | _SUBORDINATORS))
        ):
            chosen, end = _after_auxiliary(words, lower, content, i)
            verbs.add(chosen)
            if chosen >= 0 and end < len(words) and lower[end] in _PREPOSITIONS:
                guessed[chosen] = end  # "does the RETURNING clause on ... give back": see below
        elif content[i] and (i == 0 or not content[i - 1]):
            run, end = _run(words, i, content)
            # a bare noun run ending where a new noun phrase starts: "host answers a request", "call exceeds
            # its timeout" (a run after "a" or "the" is an object, "give a field a default")
            # ... unless its last word has a verb's -s ("an EventEmitter emits an 'error' event")
            third_person = (
                lower[run[-1]].endswith("s") and not lower[run[-1]].endswith("ss") if run else False
            )
            boundary = end < len(words) and lower[end] in _POSSESSIVES | (
                _DETERMINERS if i == 0 or lower[i - 1] not in _DETERMINERS or third_person else frozenset()
            )
            if len(run) >= 2 and boundary and not verbs & set(run):
                verbs.add(run[-1])
            # "Which configuration choices slow Apache httpd down": a lower-case word before a name
            for a, b in itertools.pairwise(run):
                if (
                    len(run) >= 3
                    and b == a + 1
                    and a != run[0]
                    # not the first word of a coordination's member ("the event and worker MPMs")
                    and a - 1 in run
                    and words[a].islower()
                    and words[b][:1].isupper()
                    and not _CAPITALS.match(words[b])  # "a table WITHOUT ROWID": a keyword, not a name
                ):
                    verbs.add(a)
                    break
        if word in _ADVERBS and i > 1 and nxt < len(words) and content[nxt] and content[i - 1]:
            verbs.add(nxt)  # "... flag still loop", "... constraints not enforced"
        participle = lower[i].endswith("ed") or lower[i] in _PARTICIPLES
        ends = nxt >= len(words) or lower[nxt] in _PREPOSITIONS | _SUBORDINATORS | {",", "?"}
        if content[i] and participle and i > 0 and content[i - 1] and ends:
            verbs.add(i)  # "a value stored in", "commits made while"
        before = i - 1
        while before > 0 and lower[before] in _ADVERBS:
            before -= 1
        if content[i] and participle and i > 0 and lower[before] in _PERFECT:
            verbs.add(i)  # "that's already been made", "has changed"
        catenative = i - 1 in verbs and lower[i].endswith("ing") and content[i]
        if catenative and (nxt >= len(words) or not content[nxt]):
            verbs.add(i)  # "I keep resolving the same conflict" (not "use caching headers")
    k = 1
    while k < len(words) and lower[k] in _ADVERBS:
        k += 1
    wh_verb = (
        len(words) > k and lower[0] in ("what", "who", "which") and content[k] and lower[k].endswith("s")
    )
    if wh_verb and (len(words) == k + 1 or not content[k + 1] or lower[k + 1] in ("wrong", "on")):
        verbs.add(k)  # "What happens when", "What goes wrong", "What actually happens to"
    verbs.discard(-1)
    return verbs - _subjects(verbs, guessed, lower)


# where a new clause starts: a later verb past one of these is that clause's ("..., and does the cable snap")
_CLAUSE_STARTS = _SUBORDINATORS | _WH | _AUX_DO | _AUX_BE | _AUX_HAVE | _SUBJECT_PRONOUNS | (_CLOSES - {","})


def _subjects(verbs: set[int], guessed: dict[int, int], lower: list[str]) -> set[int]:
    """The guessed verbs that are the subject's last word: a run's last word taken for the verb before a
    preposition was the subject's when the clause has its verb further on ("does the RETURNING clause on an
    INSERT give back"; "does the server crash on load" has none)."""
    return {
        guess
        for guess, end in guessed.items()
        if any(not set(lower[end:j]) & _CLAUSE_STARTS for j in verbs if j >= end)
    }


def _after_auxiliary(words: list[str], lower: list[str], content: list[bool], i: int) -> tuple[int, int]:
    """The verb in the run after the auxiliary at ``i`` ("does", "is" after a wh-word), or -1, and where
    that run ends."""
    j = i + 1
    while j < len(words) and lower[j] in _DETERMINERS | _POSSESSIVES:
        j += 1
    run, end = _run(words, j, content)
    if j == i + 1 and len(run) >= 2 and run[1] == run[0] + 1 and _IDENTIFIER.search(words[run[0]]):
        return run[1], len(words)  # "does asyncio.gather handle ...": a name is a whole subject
    if len(run) < 2:
        return -1, end
    # "Why is my query slow?": after "why is" or "how is" the subject has a predicate
    asks_why = lower[i] in _AUX_BE and lower[i - 1] in ("why", "how")
    chosen = _verb_in_run(words, run, end, be=lower[i] in _AUX_BE, predicate=asks_why)
    return chosen, end if chosen == run[-1] else len(words)


def _spoken_verbs(words: list[str], lower: list[str], content: list[bool], i: int, after: int) -> set[int]:
    """Verbs of questions as people write them: a progressive after "is", a verb with its particle at the
    clause's end, a statement opening on a name and its verb."""
    found: set[int] = set()
    nxt = i + 1
    progressive = after + 1 < len(words) and lower[after].endswith("ing") and content[after]
    if lower[i] in _AUX_BE and i > 0 and progressive and words[after + 1] not in _CLOSES:
        found.add(after)  # "What is going wrong", "is eating all the CPU" (not "What is caching?")
    if content[i] and i > 0 and nxt < len(words) and lower[nxt] in _PARTICLES:
        ends = (
            nxt + 1 == len(words) or lower[nxt + 1] in _PREPOSITIONS | _DETERMINERS | _POSSESSIVES | _CLOSES
        )
        if ends:
            found.add(i)  # "what does the RETURNING clause give back in SQLite", "how do I clean up the"
    last = nxt + 1 == len(words) or (nxt + 2 == len(words) and words[-1] in "?!.")
    if content[i] and i > 0 and nxt < len(words) and lower[nxt] in _PREPOSITIONS and last:
        found.add(i)  # "come from", "be careful about": a verb and its particle end the clause
    opens_object = nxt < len(words) and (
        lower[nxt] in _DETERMINERS | _POSSESSIVES | _OBJECT_PRONOUNS
        or _CAPITALS.match(words[nxt]) is not None
    )
    if content[i] and words[i].islower() and i > 1 and opens_object:
        if lower[i - 1] == "to" and _CAPITALS.match(words[nxt]):
            # "is it safe to run VACUUM" (not "get Apache to gzip the pages": there the rare word is the
            # verb, and what the question is about)
            found.add(i)
        if lower[i - 1] in ("but", "and", "or") and content[i - 2]:
            found.add(i)  # "undo the last commit but keep my changes"
    if i == 0 and content[0] and words[0][:1].isupper() and nxt < len(words) and content[nxt]:
        third = lower[nxt].endswith("s") and not lower[nxt].endswith("ss")
        opens = nxt + 1 < len(words) and lower[nxt + 1] in _PREPOSITIONS | _DETERMINERS | _POSSESSIVES
        if third and opens:
            found.add(nxt)  # a statement opening "Git asks for my password": a name and its verb
    return found


def _verb_in_run(words: list[str], run: list[int], end: int, *, be: bool, predicate: bool = False) -> int:
    """The verb in the run after "does X ..." or "is X ...": the last word when the run ends where a clause
    or a new noun phrase starts ("does SQLite decide the", "do ... modules differ?"), the second when a
    preposition follows ("does deepresearch avoid repeating paid calls when"); after "is", a participle,
    and after "why is" or "how is" (``predicate``) the last plain word, which is what the subject is ("Why
    is the error log empty?": "What is X?" may end on its subject, "Why is X?" does not)."""
    following = words[end].lower() if end < len(words) else "?"
    if following in _AUX_DO | _AUX_BE | _AUX_HAVE | _ADVERBS:
        return -1  # "What does the with statement do", "can unreachable objects really be lost"
    if be:
        last = words[run[-1]]
        participle = last.lower().endswith(("ed", "en"))
        plain = predicate and last.islower() and not _IDENTIFIER.search(last) and run[-1] == run[-2] + 1
        return run[-1] if participle or plain else -1
    contiguous = run[-1] - run[0] == len(run) - 1  # not a coordination ("A, B and C differ in")
    if following in _PREPOSITIONS | _SUBORDINATORS - {"if"} and len(run) >= 3 and contiguous:
        # after "does" or a modal the verb has no -s: "can worker threads share memory in" (a plural noun
        # still belongs to the subject), "does deepresearch avoid repeating paid calls when"
        # ... but a verb that relates what it compares is one wherever it stands ("does WAL mode compare to")
        relating = [i for i in run[1:] if words[i].lower().startswith(_RELATING)]
        return relating[0] if relating else next((i for i in run[1:] if not ends_in_s(words[i])), run[1])
    if following in _CLOSES and len(run) >= 3 and contiguous and ends_in_s(words[run[-1]]):
        # "does Apache handle keep-alive connections?": a plural ends the object, not a verb after "does";
        # the verb is the first plain word past the subject's name (one with no vowel, "gc", is a name)
        return next((i for i in run[1:-1] if _PLAIN_VERB.fullmatch(words[i])), run[-1])
    return run[-1]


def noun_phrases(clause: str) -> list[Phrase]:
    """The clause's noun phrases in order (see the module docstring)."""
    words = tokens(clause)
    lower = _lowered(words)
    verbs = _verbs(words)
    phrases: list[Phrase] = []
    context, carried = "subject", ""
    subordinate = False
    i = 0
    while i < len(words):
        following = words[i + 1] if i + 1 < len(words) else ""
        if i in verbs:
            context = "object"
        elif lower[i] in _PREPOSITIONS and not _is_content(words[i], following):
            context = "pp"
        elif lower[i] in _SUBORDINATORS | (_WH if i else frozenset()):
            context, subordinate = "clause", True
        if i in verbs or not _is_content(words[i], following, words[i - 1] if i else ""):
            i += 1
            continue
        start = i
        while start > 0 and lower[start - 1] in _DETERMINERS | _POSSESSIVES | _QUANTIFIERS:
            start -= 1
        end, items = _extent(words, i, verbs)
        if " ".join(lower[i:end]) in _QUANTITY_NOUNS and end + 1 < len(words) and lower[end] == "of":
            carried, i = context, end + 1  # "thousands of customer sites": the sites are the phrase
            continue
        relation = " ".join(lower[i:end]) in _RELATION_NOUNS and end + 1 < len(words)
        if relation and lower[end] in ("between", "of") and not phrases:
            # "What is the difference between X and Y?" asks about X and Y, as "What is X?" asks about X
            role = "named" if start > 0 and lower[0] in ("what", "which") and lower[1] in _AUX_BE else context
            carried, context, i = role, "pp", end + 1
            continue
        if all(w in _QUANTIFIERS or w in _NUMBERS or w.isdigit() for w in lower[i:end]):
            i = end  # "split a commit into two", "when several could be used": a number is no phrase
            continue
        role, carried = carried or context, ""
        if start > 0 and lower[0] in ("what", "which") and not phrases:
            role = "named" if lower[1] in _AUX_BE and start <= 3 else "which" if start == 1 else role
        text = " ".join(words[start:end])
        head = " ".join(w for w in words[i:end] if w.lower() not in _QUANTIFIERS)
        # "the existing one" after "a row": "the existing row" (not "one by one"; not after a lone "delete")
        nouns = [p for p in phrases if (p.text != p.head or p.plural or " " in p.head) and not p.items]
        nouns = [p for p in nouns if p.head.split()[-1].lower() not in COMPARATIVES]  # not "no longer"
        before = next((p for p in reversed(nouns) if p.role == role), nouns[-1] if nouns else None)
        ahead = lower[end] if end < len(words) else ""
        if before and ahead not in ("of", "by", "at") and (instead := instead_of_one(head, before.head)):
            text, head = f"{text.rsplit(' ', 1)[0]} {instead.split()[-1]}", instead
        phrases.append(Phrase(_tidy(text), _tidy(head), role, start, items, subordinate))
        if role in ("subject", "named", "which"):
            context = "object" if role == "subject" else "subject"
        i = end
    return phrases


def _extent(words: list[str], i: int, verbs: set[int]) -> tuple[int, tuple[str, ...]]:
    """Where the noun phrase starting at ``i`` ends, and its members when it is a coordination ("prefork,
    worker and event multi-processing modules", "blobs, trees and commits")."""
    lower = _lowered(words)

    def content(j: int) -> bool:
        return (
            j < len(words)
            and j not in verbs
            and _is_content(words[j], words[j + 1] if j + 1 < len(words) else "", words[j - 1] if j else "")
        )

    end = i
    while content(end):
        end += 1
    members = [(i, end)]
    j = end
    while j < len(words) and (lower[j] == "," or lower[j] in _COORDINATORS):
        k = j + 1
        if k < len(words) and lower[k] in _COORDINATORS:
            k += 1
        articled = i > 0 and lower[i - 1] in _ARTICLES
        # "a rowid table and a WITHOUT ROWID table", "cancel or a second Ctrl-C": a member's own article
        # (after a bare one only "a" and only in a choice: "X versus the default" compares X with no thing
        # of its own, "nginx and a certificate" are two things set up, not one list)
        article = (
            k + 1 < len(words)
            and lower[k] in _ARTICLES
            and (articled or (lower[j] in ("or", "vs", "versus") and lower[k] in ("a", "an")))
        )
        k += int(article)
        if not content(k) or (
            lower[j] == "," and not any(lower[m] in _COORDINATORS for m in range(k, min(k + 5, len(words))))
        ):
            break
        stop = k
        while content(stop):
            stop += 1
        members.append((k - article, stop))
        end = j = stop
        if lower[k - article - 1] in ("and", "or"):
            break  # "A, B and C" ends at C; "A vs B vs C" goes on
    if len(members) == 1:
        return end, ()
    if articled and len(members) == sum(lower[a] in _ARTICLES for a, _ in members[1:]) + 1:
        members[0] = (i - 1, members[0][1])  # every member has its article: each is named with it
    return end, tuple(" ".join(words[a:b]) for a, b in members)


def _tidy(text: str) -> str:
    return re.sub(r"\s+([,;:])", r"\1", text).strip(" ,;:")


def verbs(clause: str) -> list[str]:
    """The words of the clause taken for verbs ("decide", "answers", "rotate"), without what follows a form
    of "be" ("are my INSERT statements so *slow*", "is a file still *tracked*"): a predicate is what the
    question asks about, not a way of saying it."""
    words = tokens(clause)
    lower = _lowered(words)
    found = []
    positions = _verbs(words)
    for i in sorted(positions):
        if i - 1 in positions and lower[i].endswith("ing"):
            continue  # "I keep resolving the same conflict": the action asked about, not a way of saying it
        before = [w for w in lower[:i] if w in _AUX_BE | _AUX_DO]
        if not before or before[-1] not in _AUX_BE or lower[i] in _AUX_BE | _AUX_DO | _AUX_HAVE:
            found.append(words[i])
    return found


# "when I can edit ...", "if we already have ...": what the asker can do sets the scene, where "when a handler
# throws" or "when I use LIKE" is what the question is about
_ASKER_CAN = re.compile(
    r"\b(?:when|if|since|although|because)\s+(?:i|we)\s+(?:can|could|have|am|already)\b([^,;?]*)", re.I
)


def asker_condition(question: str) -> tuple[str, str]:
    """The question before a condition on what the asker can already do, and that condition ("when I can edit
    the main server configuration"); ("", "") when there is none or nothing is named before it."""
    match = _ASKER_CAN.search(question)
    if match is None or not noun_phrases(question[: match.start()]):
        return "", ""
    return question[: match.start()], match.group(1)
