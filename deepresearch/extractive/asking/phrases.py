"""The noun phrases of a question and the part each plays: a small chunker, not a parser.

Words are told apart by closed classes (asking/wordclasses.py: question words, auxiliaries, pronouns,
determiners, prepositions, conjunctions, adverbs); what is left is content. A verb is recognised by where it
stands, not by a word list: right after a subject pronoun ("How do I *rotate* ..."), at the end of the
subject that follows "does" or a modal ("How does SQLite *decide* the type ..."), after an adverb that
follows the subject ("... still *loop*"), before its infinitive ("does git rm *refuse* to remove a file"),
at the end of "What do ... in git status --short *mean*?" (the clues by the words around a verb are in
extractive/asking/verbclues.py). Runs of content words between these are the noun
phrases; each keeps its determiner for display ("the json module") and records its role: subject, object,
what a "What is ..." question names, or one inside a prepositional phrase or a subordinate clause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deepresearch.extractive.asking.verbclues import (
    CAPITALS,
    asked_verb,
    chained_verbs,
    closing_verb,
    does_itself,
    listed_verbs,
    placed_verbs,
    spoken_verbs,
    verb_after_a_list,
    verb_after_subject,
    verb_before_a_name,
    verb_past_a_phrase,
    what_it_is,
)
from deepresearch.extractive.asking.wordclasses import (
    ADVERBS,
    ARTICLES,
    AUX_BE,
    AUX_DO,
    AUX_HAVE,
    BE_CONTRACTED,
    CLOSES,
    COMPARATIVES,
    CONJUNCTIONS,
    COORDINATORS,
    DETERMINERS,
    FUNCTION_WORDS,
    GREETINGS,
    INDEFINITE_OBJECTS,
    INDEFINITES,
    KEYWORD_KIND,
    NOUN_ER,
    NUMBERS,
    OBJECT_PRONOUNS,
    PARTICLES,
    POSSESSIVES,
    PREPOSITION_NOUNS,
    PREPOSITIONS,
    PRONOUNS,
    QUANTIFIERS,
    QUANTITY_NOUNS,
    RELATING,
    RELATION_NOUNS,
    SUBJECT_PRONOUNS,
    SUBORDINATORS,
    THINGS,
    VERSUS,
    WH,
    figure,
    lowered,
    manner_adverb,
    named_am,
    passing_times,
    tokens,
)
from deepresearch.extractive.inflection import ends_in_s, instead_of_one, plural_word
from deepresearch.extractive.reading.text import content_tokens

__all__ = ["Phrase", "noun_phrases", "verb_terms", "verbs"]


_IDENTIFIER = re.compile(r"[._()\[\]]|[a-z][A-Z]")
_PLAIN_VERB = re.compile(r"[a-z]*[aeiouy][a-z]*")
_OWNER = re.compile(r"\w['’]s$")  # "mod_filter's", "Apache's"


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
    joined: bool = False  # the two sides of a comparison, joined by extractive/asking/comparison.py

    @property
    def plural(self) -> bool:
        return bool(self.items) or plural_word(self.head)


_CLAUSE_ENDS = CLOSES | PREPOSITIONS | SUBORDINATORS | CONJUNCTIONS | DETERMINERS


_PREPOSITIONAL = frozenset(
    [("such", "as"), ("depending", "on"), ("depending", "upon"), ("according", "to"), ("based", "on")]
)


def _is_content(word: str, following: str, previous: str = "") -> bool:
    lower = word.lower()
    if named_am(word, previous, following):
        return True
    if lower in PREPOSITION_NOUNS and previous.lower() in ("in", "on", "by") and following.lower() == "of":
        return False  # "in front of": a preposition
    if lower in VERSUS and (word[:2] == "VS" or not previous or previous.lower() in FUNCTION_WORDS):
        return True  # "VS Code", "does vs code": a name, not "versus" (which follows a thing compared)
    if lower in FUNCTION_WORDS or lower in AUX_DO | AUX_BE | AUX_HAVE:
        # "WITHOUT ROWID", "INSERT OR REPLACE": a capitalised keyword before another is part of a name
        keyword = CAPITALS.match(word) is not None and CAPITALS.match(following) is not None
        return keyword or (
            lower in ("with", "for", "while", "if", "as", "from", "in") and following.lower() in KEYWORD_KIND
        )
    if manner_adverb(lower) and previous.lower() not in DETERMINERS | POSSESSIVES:
        # "if it does not apply cleanly?", "runs slowly on": a manner adverb ends its clause, or stands before
        # the verb ("I accidentally set"; not "daily backups", "the assembly")
        after = following.lower()
        # ... or "does vim suddenly jump": between a subject and its verb
        between = previous and previous.lower() not in FUNCTION_WORDS and after not in FUNCTION_WORDS
        if not after or after in _CLAUSE_ENDS or previous.lower() in SUBJECT_PRONOUNS or between:
            return False
    if lower.endswith("ed") and previous.lower() in BE_CONTRACTED | {"am"}:
        return False  # "I'm confused by buffers, windows and tabs": how the asker is, no thing asked about
    if lower == "else" and previous.lower() in INDEFINITES:
        return False  # "upgrading everything else": no topic "else" (Python's "else clause" is one)
    if following == "=" and len(word) <= 3 and previous.islower() and previous not in FUNCTION_WORDS:
        return False  # "a linear system Ax = b": a formula's name is no word of its thing (not MaxClients)
    if lower in GREETINGS and (not previous or previous in CLOSES):
        return False  # "Hi all, I log temperatures ...": no topic "Hi"
    if previous.lower() in THINGS and word.islower():
        return False  # "do anything special", "something wrong with": what the thing is like, no topic
    if (lower, following.lower()) in _PREPOSITIONAL:
        return False  # "settings such as the sort order depending on the mailbox": the settings
    if following.lower() == "than" and (
        lower in COMPARATIVES or (lower.endswith("er") and lower not in NOUN_ER)
    ):
        return False  # "Is git merge faster than git rebase?": what is asked of the two, not a word of one
    return word not in CLOSES


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


def _before_verb(word: str, aux: frozenset[str]) -> bool:  # "I can edit", "I accidentally set"
    return word in aux | ADVERBS or manner_adverb(word)


def _named_acts(lower: list[str], at: int) -> bool:
    """ "between purging and banning": two acts named, not done to an object - the things compared."""
    end = at + 3
    return (
        end <= len(lower)
        and lower[at + 1] in ("and", "or")
        and lower[at + 2].endswith("ing")
        and (end == len(lower) or lower[end] in PREPOSITIONS | SUBORDINATORS)
    )


def _verbs(words: list[str]) -> set[int]:
    """Positions of the words taken for verbs (see the module docstring)."""
    verbs: set[int] = set()
    guessed: dict[int, int] = {}  # a verb taken as the last word of the run after "does", and where it ends
    opening = -1  # the verb taken after the question's opening auxiliary ("What does X ...")
    lower = lowered(words)
    times = passing_times(words)
    content = [
        _is_content(w, words[i + 1] if i + 1 < len(words) else "", words[i - 1] if i else "")
        and i not in times
        for i, w in enumerate(words)
    ]
    aux = AUX_DO | AUX_BE | AUX_HAVE
    for i, word in enumerate(lower):
        nxt = i + 1
        if word in SUBJECT_PRONOUNS and nxt < len(words):
            # "I rotate", "I can edit", "it actually change", "it is stale" (a predicate, no noun), "I have"
            verb = nxt
            while verb + 1 < len(words) and _before_verb(lower[verb], aux) and content[verb + 1]:
                verb += 1
            if content[verb] or lower[verb] in aux:
                verbs.add(verb)
            verbs.update(listed_verbs(lower, content, verb))  # "I create and activate"
        after = nxt
        while after < len(words) and lower[after] in ADVERBS:
            after += 1
        if word in AUX_BE and i > 1 and content[i - 1] and after < len(words) and content[after]:
            run, _ = _run(words, after, content)
            verbs.update(run)  # "HEAD is detached", "is still fresh": a predicate, no noun
        predicate = word in AUX_BE and after + 1 < len(words) and lower[after] in COMPARATIVES
        if predicate and not content[after + 1]:  # not "Is faster storage better?"
            verbs.add(after)  # "Which is faster, X or Y?": what is asked of X and Y, not a thing compared
            verbs.add(after + 2 if lower[after + 1] == "to" else after)  # "easier to configure, X or Y"
        # "the commit that introduced a bug" (after a verb, "decide which berth", "which" names a noun)
        relative = word in ("that", "which", "who") and i > 1 and nxt + 1 < len(words) and content[nxt]
        relative = relative and content[i - 1] and i - 1 not in verbs
        # ... not a question inside the clause: "tell R which encoding the file uses" ("uses" is its verb)
        inside = nxt + 3 < len(words) and lower[nxt + 1] in DETERMINERS | POSSESSIVES and content[nxt + 2]
        inside = inside and ends_in_s(lower[nxt + 3]) and (nxt + 4 == len(words) or words[nxt + 4] in CLOSES)
        relative = relative and not inside
        if relative and lower[nxt + 1] in DETERMINERS | POSSESSIVES | PRONOUNS:
            verbs.add(nxt)  # "the commit that introduced a bug"
        elif relative and words[nxt].islower() and lower[nxt + 1] in PREPOSITIONS | PARTICLES | CLOSES:
            verbs.add(nxt)  # "all the commits that come after it"
        gerund = after + 1 < len(words) and lower[after].endswith("ing") and content[after]
        if word in PREPOSITIONS and gerund and not _named_acts(lower, after):
            verbs.add(after)  # "without restarting the server", "from just serving them"
        if content[i] and nxt < len(words) and lower[nxt] in OBJECT_PRONOUNS | INDEFINITE_OBJECTS:
            verbs.add(i)  # "or load them as shared objects"
        verbs |= {i} if verb_after_a_list(words, lower, content, i) else set()
        if does_itself(lower, content, i):
            verbs.add(i)  # its object follows: neither "split" of "do split DNS" nor "DNS" is a verb
            continue
        verbs |= spoken_verbs(words, lower, content, i, after) | what_it_is(words, lower, i)
        verbs |= verb_after_subject(lower, content, i, after)
        # "What does X do", "why is X stored", a yes/no "should the cache store cookies" (not "Is X Y")
        if word in AUX_DO or (word in AUX_BE and i > 0 and (i < 2 or lower[i - 1] in WH | SUBORDINATORS)):
            chosen, end = _after_auxiliary(words, lower, content, i)
            verbs.add(chosen)
            opening = chosen if i == 1 else opening
            if chosen >= 0 and end < len(words) and lower[end] in PREPOSITIONS:
                guessed[chosen] = end  # "does the RETURNING clause on ... give back": see below
        elif content[i] and (i == 0 or not content[i - 1]):
            run, end = _run(words, i, content)
            # a bare noun run ending where a new noun phrase starts: "host answers a request", "call exceeds
            # its timeout" (a run after "a" or "the" is an object, "give a field a default")
            # ... unless its last word has a verb's -s ("an EventEmitter emits an 'error' event")
            third_person = (
                lower[run[-1]].endswith("s") and not lower[run[-1]].endswith("ss") if run else False
            )
            boundary = end < len(words) and lower[end] in POSSESSIVES | (
                DETERMINERS if i == 0 or lower[i - 1] not in DETERMINERS or third_person else frozenset()
            )
            if len(run) >= 2 and boundary and not verbs & set(run):
                verbs.add(run[-1])
            verbs |= verb_before_a_name(words, run)
        verbs |= placed_verbs(words, lower, content, i)
        if word in ADVERBS and i > 1 and nxt < len(words) and content[nxt] and content[i - 1]:
            verbs.add(nxt)  # "... flag still loop", "... constraints not enforced"
        verbs |= chained_verbs(lower, content, i, verbs)
    verbs |= asked_verb(lower, content)  # "What happens when", "Which timeout applies to"
    closing = closing_verb(words, lower, content) or verb_past_a_phrase(words, lower, content)
    if closing:
        verbs = (verbs - {opening}) | closing  # the subject's word taken for the verb was the subject's
    verbs.discard(-1)
    # "how much space each user can use": what "how much" asks the amount of is a noun, not a verb
    verbs -= {i for i in verbs if i > 1 and lower[i - 2] == "how" and lower[i - 1] in ("much", "many")}
    return verbs - _subjects(verbs, guessed, lower)


# where a new clause starts: a later verb past one of these is that clause's ("..., and does the cable snap")
_CLAUSE_STARTS = SUBORDINATORS | WH | AUX_DO | AUX_BE | AUX_HAVE | SUBJECT_PRONOUNS | (CLOSES - {","})


def _subjects(verbs: set[int], guessed: dict[int, int], lower: list[str]) -> set[int]:
    """The guessed verbs that are the subject's last word: a run's last word taken for the verb before a
    preposition was the subject's when the clause has its verb further on ("does the RETURNING clause on an
    INSERT give back"; "does the server crash on load" has none)."""
    return {
        guess
        for guess, end in guessed.items()
        # ... not an infinitive: "does git rm refuse to remove" has its verb, "refuse"
        if any(not set(lower[end:j]) & _CLAUSE_STARTS for j in verbs if j >= end and lower[j - 1] != "to")
    }


def _after_auxiliary(words: list[str], lower: list[str], content: list[bool], i: int) -> tuple[int, int]:
    """The verb in the run after the auxiliary at ``i`` ("does", "is" after a wh-word), or -1, and where
    that run ends."""
    j = i + 1
    while j < len(words) and lower[j] in DETERMINERS | POSSESSIVES:
        j += 1
    # "does mod_filter's smart filtering decide": a name with its possessive opens the subject, as "its" does
    # ... when the subject goes on past the word after it ("How does mod_filter's work?" has no more)
    named = j + 2 < len(words) and _OWNER.search(words[j]) is not None and content[j + 1]
    named = named and words[j + 2] not in CLOSES
    j += int(named)
    run, end = _run(words, j, content)
    named = j == i + 1 and len(run) >= 2 and run[1] == run[0] + 1 and _IDENTIFIER.search(words[run[0]])
    if named and words[run[1]].isalpha():  # (not "does 0.1 + 0.2 == 0.3 return ...": a formula's figures)
        return run[1], len(words)  # "does asyncio.gather handle ...": a name is a whole subject
    if run and end + 1 < len(words) and manner_adverb(lower[end]) and content[end + 1]:
        return end + 1, end + 2  # "does vim suddenly jump": the subject, how, then the verb
    if len(run) < 2:
        return -1, end
    # "Why is my query slow?": after "why is" or "how is" the subject has a predicate
    asks_why = lower[i] in AUX_BE and lower[i - 1] in ("why", "how")
    chosen = _verb_in_run(words, run, end, be=lower[i] in AUX_BE, predicate=asks_why)
    return chosen, end if chosen == run[-1] else len(words)


def _verb_in_run(words: list[str], run: list[int], end: int, *, be: bool, predicate: bool = False) -> int:
    """The verb in the run after "does X ..." or "is X ...": the last word when the run ends where a clause
    or a new noun phrase starts ("does SQLite decide the", "do ... modules differ?"), the second when a
    preposition follows ("does deepresearch avoid repeating paid calls when"); after "is", a participle,
    and after "why is" or "how is" (``predicate``) the last plain word, which is what the subject is ("Why
    is the error log empty?": "What is X?" may end on its subject, "Why is X?" does not)."""
    following = words[end].lower() if end < len(words) else "?"
    past = end
    while past < len(words) and words[past].lower() in ADVERBS:
        past += 1
    if past > end and (past == len(words) or words[past] in CLOSES):
        following = words[past] if past < len(words) else "?"  # "handle key rollovers automatically?"
    if following in AUX_DO | AUX_BE | AUX_HAVE | ADVERBS:
        return -1  # "What does the with statement do", "can unreachable objects really be lost"
    # "should the redirect use (code) 301 or 302", "can the pool keep 10 or 20 connections": a figure is no
    # verb, and what it counts or labels is the object; the verb is the plain word before it, past the subject
    first = next((k for k, j in enumerate(run) if figure(words[j])), len(run))
    plain = [j for j in run[1:first] if words[j].isalpha() and words[j].islower()]
    if not be and following in CLOSES and first < len(run) and plain:
        return plain[0]
    if be:
        last = words[run[-1]]
        participle = last.lower().endswith(("ed", "en"))
        plain = predicate and last.islower() and not _IDENTIFIER.search(last) and run[-1] == run[-2] + 1
        return run[-1] if participle or plain else -1
    contiguous = run[-1] - run[0] == len(run) - 1  # not a coordination ("A, B and C differ in")
    # "does git rm refuse to remove a file": the verb before its infinitive
    infinitive = end + 2 < len(words) and following == "to" and words[end + 1].isalpha()
    infinitive = infinitive and words[end + 1].islower() and words[end + 1] not in FUNCTION_WORDS
    opens = end + 2 < len(words) and words[end + 2].lower() in DETERMINERS | POSSESSIVES | PRONOUNS
    if infinitive and opens and not ends_in_s(words[run[-1]]):
        return run[-1]
    if following in PREPOSITIONS | SUBORDINATORS - {"if"} and len(run) >= 3 and contiguous:
        # after "does" or a modal the verb has no -s: "can worker threads share memory in" (a plural noun
        # still belongs to the subject), "does deepresearch avoid repeating paid calls when"
        # ... but a verb that relates what it compares is one wherever it stands ("does WAL mode compare to")
        relating = [i for i in run[1:] if words[i].lower().startswith(RELATING)]
        plain = [i for i in run[1:] if not ends_in_s(words[i]) and not any(c.isdigit() for c in words[i])]
        return relating[0] if relating else (plain or run[1:])[0]
    if following in CLOSES and len(run) >= 3 and contiguous and ends_in_s(words[run[-1]]):
        # "does Apache handle keep-alive connections?": a plural ends the object, not a verb after "does";
        # the verb is the first plain word past the subject's name (one with no vowel, "gc", is a name)
        return next((i for i in run[1:-1] if _PLAIN_VERB.fullmatch(words[i])), run[-1])
    # "does my query plan show SCAN TABLE": a keyword in capitals ends the run, its verb stands before it
    k = len(run) - 1
    while k > 0 and CAPITALS.match(words[run[k]]):
        k -= 1
    if 1 <= k < len(run) - 1 and words[run[k]].islower() and _PLAIN_VERB.fullmatch(words[run[k]]):
        return run[k] if not ends_in_s(words[run[k]]) else run[-1]
    return run[-1]


def noun_phrases(clause: str) -> list[Phrase]:
    """The clause's noun phrases in order (see the module docstring)."""
    words = tokens(clause)
    lower = lowered(words)
    verbs = _verbs(words)
    stops = verbs | passing_times(words)  # no word of a phrase: a verb, or when something was done
    phrases: list[Phrase] = []
    context, carried = "subject", ""
    subordinate = False
    i = 0
    while i < len(words):
        following = words[i + 1] if i + 1 < len(words) else ""
        if i in verbs:
            context = "object"
        elif lower[i] in PREPOSITIONS and not _is_content(words[i], following):
            context = "pp"
        elif lower[i] in SUBORDINATORS | (WH if i else frozenset()):
            context, subordinate = "clause", True
        elif lower[i] == "," and lower[0] in SUBORDINATORS and subordinate:  # "When I run X, the window pops"
            context, subordinate = "subject", False  # the main clause
        if i in stops or not _is_content(words[i], following, words[i - 1] if i else ""):
            i += 1
            continue
        start = i
        while start > 0 and lower[start - 1] in DETERMINERS | POSSESSIVES | QUANTIFIERS:
            start -= 1
        end, items = _extent(words, i, stops)
        if " ".join(lower[i:end]) in QUANTITY_NOUNS and end + 1 < len(words) and lower[end] == "of":
            carried, i = context, end + 1  # "thousands of customer sites": the sites are the phrase
            continue
        relation = " ".join(lower[i:end]) in RELATION_NOUNS and end + 1 < len(words)
        if relation and lower[end] in ("between", "of") and not phrases:
            # "What is the difference between X and Y?" asks about X and Y, as "What is X?" asks about X
            role = "named" if start > 0 and lower[0] in ("what", "which") and lower[1] in AUX_BE else context
            carried, context, i = role, "pp", end + 1
            continue
        if all(w in QUANTIFIERS or w in NUMBERS or figure(w.replace(":", "")) for w in lower[i:end]):
            i = end  # "split a commit into two", "several could be", "at 7:30": a number is no phrase
            continue
        role, carried = carried or context, ""
        if start > 0 and lower[0] in ("what", "which") and not phrases:
            role = "named" if lower[1] in AUX_BE and start <= 3 else "which" if start == 1 else role
        text = " ".join(words[start:end])
        head = " ".join(w for w in words[i:end] if w.lower() not in QUANTIFIERS)
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
    lower = lowered(words)

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
    while j < len(words) and (lower[j] == "," or lower[j] in COORDINATORS):
        k = j + 1
        if k < len(words) and lower[k] in COORDINATORS:
            k += 1
        articled = i > 0 and lower[i - 1] in ARTICLES
        # "a rowid table and a WITHOUT ROWID table", "cancel or a second Ctrl-C": a member's own article
        # (after a bare one only "a" and only in a choice: "X versus the default" compares X with no thing
        # of its own, "nginx and a certificate" are two things set up, not one list)
        article = (
            k + 1 < len(words)
            and lower[k] in ARTICLES
            and (articled or (lower[j] in ("or", "vs", "versus") and lower[k] in ("a", "an")))
        )
        k += int(article)
        stop = k
        while content(stop):
            stop += 1
        # after a comma, a member only if the list goes on right after it (not "a terminal, the window pops")
        listed = stop < len(words) and (lower[stop] == "," or lower[stop] in COORDINATORS)
        if not content(k) or (lower[j] == "," and not listed):
            break
        members.append((k - article, stop))
        end = j = stop
        if lower[k - article - 1] in ("and", "or"):
            break  # "A, B and C" ends at C; "A vs B vs C" goes on
    if len(members) == 1:
        return end, ()
    if articled and len(members) == sum(lower[a] in ARTICLES for a, _ in members[1:]) + 1:
        members[0] = (i - 1, members[0][1])  # every member has its article: each is named with it
    return end, tuple(" ".join(words[a:b]) for a, b in members)


def _tidy(text: str) -> str:
    return re.sub(r"\s+([,;:])", r"\1", text).strip(" ,;:")


def verbs(clause: str) -> list[str]:
    """The words of the clause taken for verbs ("decide", "answers", "rotate"), without what follows a form
    of "be" ("are my INSERT statements so *slow*", "is a file still *tracked*"): a predicate is what the
    question asks about, not a way of saying it."""
    words = tokens(clause)
    lower = lowered(words)
    found = []
    positions = _verbs(words)
    for i in sorted(positions):
        if i - 1 in positions and lower[i].endswith("ing"):
            continue  # "I keep resolving the same conflict": the action asked about, not a way of saying it
        before = [w for w in lower[:i] if w in AUX_BE | AUX_DO]
        if not before or before[-1] not in AUX_BE or lower[i] in AUX_BE | AUX_DO | AUX_HAVE:
            found.append(words[i])
    return found


def verb_terms(clause: str) -> set[str]:
    """The stems of the words the clause says only as verbs: they count half when text is matched against
    it (the sources say "selects" where the question says "decides"). Not a word it also names as a thing:
    "I renamed a file ...; how do I see its history from before the rename?" is about the rename, "... and
    mail them to a project's mailing list" about mail."""
    named = {t for phrase in noun_phrases(clause) for t in content_tokens(phrase.text)}
    return {t for verb in verbs(clause) for t in content_tokens(verb)} - named
