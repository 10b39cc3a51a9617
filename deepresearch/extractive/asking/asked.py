"""A question as people write it, read for what it asks: the planner's sub-questions are read on their own -
as a section's heading and as a search - so what a word of the question leans on is said in full.

- A request written as a command is the question it makes: "Compare X and Y", "Explain X", "Explain how X
  works" (read as a question, it asks "What is Explain git rebase?" and "How do Compare nginx and Apache
  compare?"), and a statement asked about with a bare "Why?" ("My query doesn't use the index. Why?") asks
  why it holds.
- A pronoun or a demonstrative stands for what the question said before: "I renamed a file with git mv; how
  do I see its history?" (the file's), "..., and what happens when it is stale?" (what the clause before
  said was still fresh), "Are NULLs treated as equal ...?, and how does that compare with other engines?"
  (the NULLs).
- A condition on what the asker can already do ("when I can edit the main server configuration") says when
  the question holds, not what it is about.
"""

from __future__ import annotations

import re

from deepresearch.extractive.asking.phrases import Phrase, noun_phrases, verbs
from deepresearch.extractive.asking.wordclasses import (
    DETERMINERS,
    FUNCTION_WORDS,
    PARTICIPLES,
    POSSESSIVES,
    PREPOSITIONS,
    SUBORDINATORS,
    manner_adverb,
    tokens,
)
from deepresearch.extractive.inflection import ends_in_s, gerund, plural_word

__all__ = [
    "as_asked",
    "asks_about_limits",
    "attested",
    "from_scene",
    "inline",
    "owned",
    "parallel",
    "replaced_object",
    "resolve_pronouns",
    "why_of",
    "without_aspects",
    "yes_no_subject",
]

_PLEASE = r"^(?:please\s+)?"
_EXPLAIN = r"(?:explain|describe|tell\s+me\s+about|give\s+me\s+an\s+overview\s+of)\s+"
_COMPARE = re.compile(
    _PLEASE + r"(?:compare|contrast)\s+(.+?)\s+(?:and|with|to|against|vs\.?|versus)\s+(.+?)[.?!]*$", re.I
)
# "repokey vs keyfile encryption: what is the difference and which one should I choose?" - a title of the
# things compared, then what is asked of them
_LABELLED = re.compile(
    r"^(?P<a>[^:?]+?)\s+(?:vs\.?|versus)\s+(?P<b>[^:?]+?)\s*:\s*"
    r"(?P<rest>(?:what|which|how|why|when|where|should|is|are|do|does|can)\b.+)$",
    re.IGNORECASE,
)
_DIFFERENCE = re.compile(r"\bthe difference\b(?!\s+between)", re.IGNORECASE)
_WHICH = re.compile(r"\b(which)(?:\s+one)?\b(?!\s+of\b)", re.IGNORECASE)
_BOTH = re.compile(r"\b(?:they|them)\b", re.IGNORECASE)


def _labelled(a: str, b: str, asked: str, question: str) -> str:
    """The question asked of a titled comparison, the two named where it refers to them: "the difference"
    (between them), "which (one)" (of them), "they"; as it is when it refers to them otherwise."""
    both = f"{a.strip()} and {b.strip()}"
    said = _DIFFERENCE.sub(f"the difference between {both}", asked, count=1)
    said = _BOTH.sub(both, _WHICH.sub(lambda m: f"{m.group(1)} of {both}", said))
    return said[:1].upper() + said[1:] if said != asked else question


_HOW_WORKS = re.compile(_PLEASE + r"(?:explain|describe|tell\s+me)\s+how\s+(.+?)\s+(works?)[.?!]*$", re.I)
_EMBEDDED = re.compile(
    _PLEASE + r"(?:explain|describe|tell\s+me)\s+((?:how|what|why|when|where|which|who)\b.+)$", re.I
)
_WHAT = re.compile(
    _PLEASE + _EXPLAIN + r"(?!(?:how|what|why|when|where|which|who|whether|if)\b)(.+?)[.?!]*$", re.I
)


# a context said before what is asked: "In Django, how do I ...?", "When using Node, why does ...?"
_CONTEXT_FIRST = re.compile(
    r"^(?P<context>(?:in|inside|within|on|under|for|from|with|using|when using)\s[^,?.;:]{2,60}?),\s+"
    r"(?P<asked>(?:what|what's|how|why|which|when|where|who|is|are|can|could|should|do|does|did)\b.+)$",
    re.IGNORECASE,
)
_DISCOURSE = frozenset(
    ("for example", "for instance", "in general", "in short", "in practice", "in other words", "in fact",
     "on the other hand", "in this case", "in that case", "in particular", "with that said", "in summary")
)  # fmt: skip
_FIRST_CLAUSE_END = re.compile(r",\s+(?:and|or|but)\s|\?\s|;\s|\s[-—–]\s")
_WHY_AFTER = re.compile(r"^(?P<said>.+?)[.!]\s+(?:why|how\s+come)\s*[?!.]*$", re.IGNORECASE)
_WHY_AND = re.compile(
    r"^(?P<said>.+?)[.!]\s+why\s*,?\s+and\s+(?P<rest>(?:how|what|which)\b.+)$", re.IGNORECASE
)
_VERBS_IN_SUBJECT = frozenset(["goes", "does", "has", "is", "are", "was", "were"])


def as_asked(question: str, why: bool = True) -> str:
    """The question a request makes ("Explain git rebase" -> "What is git rebase, and how does it work?"),
    or (``why``) a statement followed by "Why?" (see ``why_of``); a question as it is."""
    if why and (match := _WHY_AFTER.match(question)) and (asked := why_of(match.group("said"))):
        return asked
    # "My list page runs hundreds of queries. Why, and how do I cut them?": the why asked, then the rest
    if why and (match := _WHY_AND.match(question)) and (asked := why_of(match.group("said"))):
        return f"{asked.rstrip('?')}, and {_it_named(match.group('said'), match.group('rest'))}"
    if match := _LABELLED.match(question):
        return _labelled(match["a"], match["b"], match["rest"], question)
    if (match := _CONTEXT_FIRST.match(question)) and match["context"].lower() not in _DISCOURSE:
        # "Inside a zsh function, what's the difference between local and typeset, and how ...?" lost its
        # first clause to the context before it: the context goes to that clause's end, where it is said
        asked, context = match["asked"], match["context"][:1].lower() + match["context"][1:]
        end = _FIRST_CLAUSE_END.search(asked)
        at = end.start() if end else len(asked.rstrip(" ?.!"))
        return f"{asked[:1].upper()}{asked[1:at]} {context}{asked[at:]}"
    if match := _COMPARE.match(question):
        if "," in match.group(1):  # "Compare A, B and C"
            return f"How do {match.group(1)} and {match.group(2)} compare?"
        # the form whose two sides the planner joins (extractive/asking/comparison.py)
        return f"How does {match.group(1)} compare to {match.group(2)}?"
    if match := _HOW_WORKS.match(question):
        return f"How {'does' if match.group(2).lower() == 'works' else 'do'} {match.group(1)} work?"
    if match := _EMBEDDED.match(question):
        return _direct(match.group(1).rstrip(" .?!").split())
    if (match := _WHAT.match(question)) and re.search(r"[^\W\d_]", match.group(1)):
        what = match.group(1)
        plural = plural_word(what)
        return f"What {'are' if plural else 'is'} {what}, and how {'do they' if plural else 'does it'} work?"
    return question


def _it_named(said: str, rest: str) -> str:
    """ "... how do I stop it?" after "My lamp smokes every night. Why": "it" is the statement's subject, as
    the statement names it ("my lamp", not the bare topic "lamp")."""
    last = said.rpartition(". ")[2]
    subject = next((p for p in noun_phrases(last) if p.role == "subject"), None)
    if subject is None or subject.plural or not last.startswith(subject.text):
        return rest
    first, _, others = subject.text.partition(" ")
    owner = others and first.lower() in POSSESSIVES | DETERMINERS
    named = f"{first.lower()} {others}" if owner else subject.text
    return re.sub(r"\bit\b", lambda _: named, rest, count=1)  # (a backslash in it is its text)


_AUXILIARIES = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "can",
        "could",
        "will",
        "would",
        "should",
        "may",
        "might",
        "must",
        "has",
        "have",
    ]
)
_IRREGULAR = {"does": "do", "goes": "go", "has": "have"}
_NEGATED = frozenset(
    [
        *("isn't", "aren't", "wasn't", "weren't", "hasn't", "haven't", "doesn't", "don't", "didn't"),
        *("can't", "cannot", "couldn't", "won't", "wouldn't", "shouldn't"),
    ]
)


def _third_person(word: str) -> bool:
    lower = word.lower()
    return (
        lower.endswith("s") and not lower.endswith(("ss", "us", "is")) and word.isalpha() and word.islower()
    )


def _direct(words: list[str]) -> str:
    """An embedded question as a direct one: "why git needs gc" -> "Why does git need gc?", "what a hook
    is" -> "What is a hook?", "why logs fill the disk" -> "Why do logs fill the disk?"; as it is when the
    wh-word is the subject or the subject's ("which MPM fits", "what happens when ...") or the verb is
    past ("why the build failed")."""
    wh, rest = words[0].capitalize(), words[1:]
    subject = (
        wh in ("What", "Who") and bool(rest) and (rest[0].lower() in _AUXILIARIES or _third_person(rest[0]))
    )
    if wh in ("Which", "Whose") or not rest or subject:
        return " ".join([wh, *rest]) + "?"
    for k, word in enumerate(rest[1:], start=1):
        lower = word.lower()
        if lower in _AUXILIARIES:  # "why the index is stale" -> "Why is the index stale?"
            return " ".join([wh, word, *rest[:k], *rest[k + 1 :]]) + "?"
        if _third_person(word):
            base = _IRREGULAR.get(lower) or (
                lower[:-3] + "y"
                if lower.endswith("ies")
                else lower[:-2]
                if lower.endswith(("shes", "ches", "xes", "sses", "oes"))
                else lower[:-1]
            )
            return " ".join([wh, "does", *rest[:k], base, *rest[k + 1 :]]) + "?"
    if len(rest) >= 2 and not any(w.lower().endswith("ed") for w in rest):
        return " ".join([wh, "do", *rest]) + "?"  # a plural subject: "how pip and conda differ"
    return " ".join([wh, *rest]) + "?"


def why_of(statement: str) -> str | None:
    """ "My query doesn't seem to use it. Why?" asks "Why doesn't my query seem to use it?": the statement's
    last sentence and its last part (after "but"), its auxiliary put before its subject, or "do"/"does"
    with the verb's plain form ("My backups fail every night" -> "Why do my backups fail every night?").
    What comes before stays a statement that sets the scene, or, where the question ends on "it" of what
    the scene names, is said in the question. None - the statement is asked as it is - when its verb is not
    found after its subject, is in the past ("the build failed": its plain form is not known), is joined to
    another ("... and it won't start"), or an auxiliary ends it ("but Postgres doesn't")."""
    before, _, last = statement.rpartition(". ")
    scene, _, said = last.rpartition(" but ")
    words = said.split()
    subject = next((p for p in noun_phrases(said) if p.role == "subject"), None)
    if not words or subject is None or not said.lower().startswith(subject.text.lower()):
        return None
    k = len(subject.text.split())
    if k >= len(words) - 1 or re.search(r"\band\b", " ".join(words[k:]), re.IGNORECASE):
        return None
    if words[-1].lower() in _AUXILIARIES | _NEGATED or words[k - 1].lower() in _VERBS_IN_SUBJECT:
        return None  # "Postgres doesn't", "My lawn goes brown" (the chunker took "goes" for the subject's)
    words = inline(" ".join(words)).split()
    verb, lower = words[k], words[k].lower()
    auxiliary = lower in _AUXILIARIES | _NEGATED
    if lower in ("has", "have") and words[k + 1].lower() not in PARTICIPLES | {"been", "not", "no"}:
        auxiliary = words[k + 1].lower().endswith(("ed", "en"))  # "has changed", not "has 10,000 branches"
    if auxiliary:
        asked = ["Why", "can't" if lower == "cannot" else verb, *words[:k], *words[k + 1 :]]
    elif lower not in ("has", "have") and (verb not in verbs(said) or lower.endswith("ed")):
        return None
    elif ends_in_s(lower) and not subject.plural:
        asked = ["Why", "does", *words[:k], _IRREGULAR.get(lower) or _plain(lower), *words[k + 1 :]]
    else:
        asked = ["Why", "do", *words]
    question = " ".join(asked).rstrip(" .!?") + "?"
    done = next((p for p in noun_phrases(scene) if p.role == "object"), None) if scene else None
    if done is not None and re.search(r"\bit\?$", question) and done.text in scene:
        # "I created an index on an expression but my query doesn't use it": "it" is what the scene made,
        # with what it says of it (not past an "and" or a comma: "... and restarted the machine")
        made = re.split(r",|\s+and\s+", scene[scene.index(done.text) :])[0].strip()
        question = re.sub(r"\bit\?$", _definite(made) + "?", question)
        scene = ""
    said_before = " ".join(part.rstrip(" ,.") + "." for part in (before, scene) if part.strip())
    return f"{said_before} {question}" if said_before else question


def _plain(verb: str) -> str:
    """ "crashes" -> "crash", "copies" -> "copy", "dies" -> "die", "fails" -> "fail"."""
    if verb.endswith("ies"):
        return verb[:-1] if len(verb) <= 4 else verb[:-3] + "y"
    return verb[:-2] if verb.endswith(("shes", "ches", "xes", "sses", "oes")) else verb[:-1]


_EACH = re.compile(r"\b(?:each|either)(?: one| of them)?(?=[\s?.!]*$)", re.IGNORECASE)
_PRONOUN_ITS = re.compile(r"\b(?:its|their)\s+(\w+)", re.IGNORECASE)
# not the "it" of "do it" (what the clause before asks to do, not a thing); "how do they work" is theirs
# (not "it" that stands for what follows: "is it safe to just run break-lock?")
_PRONOUN_IT = re.compile(
    r"\b((?<!\bdo\s)(?<!\bdoing\s)it(?!\s+(?:is\s+|was\s+)?\w+\s+to\s)|they|them)\b", re.IGNORECASE
)


def yes_no_subject(clause: str, topic: str) -> Phrase | None:
    """The subject of a passive yes/no question that is not about the topic ("Are NULLs treated as equal ...
    in UNION?"): what a later "how does that compare?" asks about, not the name the question ends on. Only
    where the subject agrees with "is" or "are" and a participle follows it: elsewhere the phrase taken for
    the subject may hold the verb or the predicate ("Are transactions serializable by default ...")."""
    opener = re.match(r"^(is|are)\s+", clause, re.IGNORECASE)
    subject = next((p for p in noun_phrases(clause) if p.role == "subject"), None)
    if opener is None or subject is None or not clause[opener.end() :].startswith(subject.text):
        return None
    after = clause[opener.end() + len(subject.text) :].split()
    participle = bool(after) and (after[0].lower().endswith(("ed", "en")) or after[0].lower() in PARTICIPLES)
    if not participle or subject.plural != (opener.group(1).lower() == "are"):
        return None
    if subject.text.lower() in topic.lower() or topic.lower() in subject.text.lower():
        return None  # the topic already ("Is SQLite faster than PostgreSQL?" compares two)
    return subject


# "... whether a cached response is still fresh, and what happens when it is stale?"
_STATE = r"\s+(?:is|was)\s+(?:(?:still|not|no\s+longer|already)\s+)?[a-z]+\b"


def parallel(clause: str, before: str) -> str:
    """ "it is <state>" in a later clause is what the clause before says "is <state>" of: "when it is stale"
    after "whether a cached response is still fresh" is when the cached response is stale. And "How do I stop
    it?" after "Why does vim suddenly jump to a new line ...?" stops the happening: "How do I stop vim from
    suddenly jumping to a new line ...?" (it had asked "How do I stop vim?")."""
    if (stop := _STOP_IT.match(clause)) and (why := _WHY_DOES.match(before)):
        words = why["rest"].split()
        said = [word for word in verbs(before) if word.lower() not in ("does", "do", "did")]
        k = next((i for i, word in enumerate(words) if word in said), 0)
        adverbs = k
        while adverbs > 1 and manner_adverb(words[adverbs - 1].lower()):
            adverbs -= 1  # "vim suddenly jump": the subject, then how it happens
        # "git keep asking for my password": git from asking for it
        kept = k + 1 < len(words) and words[k].lower() in ("keep", "keeps") and words[k + 1].endswith("ing")
        verb = words[k + 1] if kept else gerund(words[k])
        linked = words[adverbs - 1].lower() in _LINKS  # "the lamp go dark"
        if k > 0 and not linked:
            happening = [*words[:adverbs], "from", *words[adverbs:k], verb, *words[k + 1 + kept :]]
            return f"{stop[1]} {' '.join(happening)}{clause[stop.end() :]}"
    said = re.search(rf"\bit(?={_STATE})", clause, re.IGNORECASE)
    asked_it = _ASKED_IT.match(clause)
    agent = _AGENT_IT.search(clause) or asked_it
    if said is None and agent is not None:
        # "Where does CMake look for FooConfig.cmake and how do I tell it where ...?": who is told, asked or
        # let do something is the clause before's subject, when it is a name (the topic was told); so is
        # what "can it ...?" asks of ("How does a graceful reload work, and can it still drop connections?")
        subject = next((p for p in noun_phrases(before) if p.role == "subject"), None)
        named = subject is not None and (subject.text[:1].isupper() or asked_it is not None)
        if subject is not None and named and not _PERSONAL.match(subject.text):
            return f"{clause[: agent.start(1)]}{subject.text}{clause[agent.end(1) :]}"
    if said is None:
        return clause
    for phrase in noun_phrases(before):
        if re.search(rf"\b{re.escape(phrase.text)}{_STATE}", before, re.IGNORECASE):
            owner = _definite(phrase.text)
            return f"{clause[: said.start()]}{owner}{clause[said.end() :]}"
    return clause


_AGENT_IT = re.compile(r"\b(?:tell|ask|let|force|teach)\s+(it)\b", re.IGNORECASE)
_ASKED_IT = re.compile(r"(?:can|could|will|would|does|did|may|might|must)\s+(it)\b", re.IGNORECASE)
_STOP_IT = re.compile(r"^(how\s+(?:do|can|could|should)\s+(?:i|we)\s+(?:stop|prevent|keep))\s+it\b", re.I)
_LINKS = frozenset(("go", "get", "become", "turn", "stay", "grow", "seem", "feel", "look"))
_WHY_DOES = re.compile(r"^why\s+(?:does|do|did)\s+(?P<rest>.+?)\W*$", re.IGNORECASE)
_UNDERGOES = re.compile(r"^[^,;.?!]*?\b(?:gets?|getting|got)\s+(?:[a-z]+ed|cut|hit|shut|stuck)\b", re.I)


def from_scene(clause: str, statements: list[str]) -> str:
    """ "it" and "them" in the first question, resolved to a statement's subject and its plural noun."""
    phrases = [p for statement in statements for p in noun_phrases(statement)]
    subject = next((p for p in phrases if p.role == "subject" and not _PERSONAL.match(p.text)), None)
    # "I set my zone serial to a date in the future. How do I get it back?": what the asker did it to, where
    # "it" is a verb's object (not "... when it rains")
    done = re.search(r"\b([\w-]+)\s+it\b", clause, re.IGNORECASE)
    if subject is None and done is not None and done.group(1).lower() not in FUNCTION_WORDS:
        subject = next((p for p in phrases if p.role == "object" and not (p.items or p.plural)), None)
    # "them": a coordination or a plural noun the statement names ("my username and password"), not a name
    # in capitals ("HTTPS")
    # ... not one that leans back itself ("My backend servers only see HAProxy's IP address in their logs. How
    # do I pass the real client IP to them?": "their logs" are the servers'; the servers are what "them" is)
    plural = next(
        (
            p
            for p in phrases
            if p.role != "subject"
            and (p.items or (p.plural and not p.head.isupper()))
            and p.text.split()[0].lower() not in ("their", "its")
        ),
        next((p for p in phrases if p.role == "subject" and p.plural and not _PERSONAL.match(p.text)), None),
    )
    # "My server keeps getting flooded with bounces ...; how do I stop it?": a subject something is done to is
    # not what "it" stands for - the happening is
    if subject is not None and any(_UNDERGOES.search(st.partition(subject.text)[2]) for st in statements):
        subject = None
    # ... but "it" after a preposition is the thing the clause itself names last ("send all mail through the
    # ISP's server and log in to it": the server, not the asker's own from the scene)
    to_it = re.search(r"\b(?:to|into|onto|from|with|on|in)\s+it\b", clause, re.IGNORECASE)
    named = [p for p in noun_phrases(clause[: to_it.start()]) if p.role == "pp"] if to_it else []
    subject = named[-1] if named and not named[-1].plural else subject
    if subject is not None and re.search(r"\bit\b", clause, re.IGNORECASE):
        clause = re.sub(r"\bit\b", _lower_possessive(subject.text), clause, count=1, flags=re.IGNORECASE)
    if plural is not None:
        clause = re.sub(
            r"\b(them|they)\b", _lower_possessive(plural.text), clause, count=1, flags=re.IGNORECASE
        )
    return clause


def owned(clause: str, statements: list[str]) -> str:
    """ "its" after a statement whose subject is the asker: what the asker did something to ("I renamed a file
    with git mv; how do I see its history from before the rename?" asks for "the file's history"). Not where
    the question names something of its own before "its" ("Does Apache keep its old config?"), nor when the
    statement's verb is not found (the phrase taken for its object may hold it), nor for a phrase ending in
    -s (it may end on a verb)."""
    phrases = [p for statement in statements for p in noun_phrases(statement)]
    if any(p.role == "subject" and not _PERSONAL.match(p.text) for p in phrases):
        return clause
    said = re.search(r"\bits\b", clause, re.IGNORECASE)
    done_to = next((p for p in phrases if p.role == "object" and not p.items and not p.plural), None)
    if said is None or done_to is None or done_to.text.lower().endswith("s"):
        return clause
    if noun_phrases(clause[: said.start()]) or not any(verbs(statement) for statement in statements):
        return clause
    owner = _lower_possessive(_definite(done_to.text))
    return f"{clause[: said.start()]}{owner}'s{clause[said.end() :]}"


_SENTENCE_OPENERS = frozenset(
    [
        *("my", "our", "your", "its", "their", "we", "it", "they", "there"),
        *("the", "a", "an", "this", "these", "that", "those", "every", "all", "some"),
        *("sometimes", "often", "usually", "occasionally", "now", "then", "recently", "suddenly", "lately"),
    ]
)


def _definite(phrase: str) -> str:
    """ "an index" named again is "the index"."""
    return re.sub(r"^(?:a|an)\s+", "the ", phrase, flags=re.IGNORECASE)


def inline(sentence: str) -> str:
    """A sentence continued inside another: its capital dropped where it only opened the sentence ("After an
    OS upgrade my TLS forwarding fails" -> "... when after an OS upgrade ...")."""
    first, _, rest = sentence.partition(" ")
    opens = first.lower() in _SENTENCE_OPENERS | PREPOSITIONS | SUBORDINATORS
    opener = opens and first[1:] == first[1:].lower()  # not "IF_MODIFIED" or a name in capitals
    return f"{first.lower()} {rest}".strip() if opener else sentence


_PERSONAL = re.compile(r"^(?:i|we|you)$", re.IGNORECASE)


def _lower_possessive(text: str) -> str:
    """ "My server" inside a sentence is "my server"."""
    first, _, rest = text.partition(" ")
    return f"{first.lower()} {rest}".strip() if first.lower() in ("my", "our", "your") else text


def resolve_pronouns(clause: str, topic: str) -> str:
    """ "what are its limits" -> "what are the limits of <topic>"; a bare "it" becomes the topic."""
    if not topic or topic.lower() in clause.lower():
        return clause
    if re.search(r"\b(?:differ|compare)", clause, re.IGNORECASE):
        topic = topic.replace(" or ", " and ")  # "Should we use A or B, and how do they differ?": A and B
    elif _EACH.search(clause) and re.search(r" (?:and|or) ", topic):  # "When should I use each?": A or B
        return _EACH.sub(topic.replace(" and ", " or "), clause, count=1)
    clause = _PRONOUN_ITS.sub(lambda m: f"the {m.group(1)} of {topic}", clause, count=1)
    return _PRONOUN_IT.sub(topic, clause, count=1)


def replaced_object(clause: str, others: str) -> Phrase | None:
    """What "What should I use instead?" replaces: the object of the same verb in the question before it
    ("Can I use flask run to serve my site?" -> "flask run"), not the question's topic ("my site")."""
    said = tokens(clause)
    verb = said[-2].lower() if len(said) >= 2 and said[-1].lower() == "instead" else ""
    before = tokens(others)
    objects = (p for p in noun_phrases(others) if p.role == "object" and p.start > 0)
    return next((p for p in objects if verb and before[p.start - 1].lower() == verb), None)


# a message or a name the question quotes: "'Working outside of application context'", "“saved successfully”"
_ASKS_LIMITS = re.compile(
    r"\b(limits?|limitations?|risks?|drawbacks?|pitfalls?|costs?|trade-?offs?|downsides?|caveats?)\b", re.I
)

_ASPECT_WORDS = re.compile(
    r"\b(?:limitations?|limits?|drawbacks?|risks?|pitfalls?|caveats?|downsides?|careful(?:ly)?|work|works|"
    r"configured|configure)\b",
    re.IGNORECASE,
)


def without_aspects(sub_question: str) -> str:
    """The sub-question without its aspect words: "What are the limitations of X?" asks about X (its limits
    are found by their wording, not by the word "limitation"), "How does X work?" asks about X."""
    return _ASPECT_WORDS.sub(" ", sub_question)


def asks_about_limits(text: str) -> bool:
    """The question asks for the limits, risks or costs of something (not merely what happens on an error)."""
    return bool(_ASKS_LIMITS.search(text))


# ... "it" its object, not the subject of what follows ("How do I confirm it is DNSSEC?")
_ATTEST_VERBS = r"confirm|verify|check|prove|diagnose|troubleshoot|debug|reproduce"
_ATTESTS = re.compile(rf"\b({_ATTEST_VERBS})\s+it(?=\s*$|\s*[,;.?!]|\s+(?:and|or)\b)", re.IGNORECASE)


def attested(clause: str, statements: list[str]) -> str | None:
    """ "My BIND resolver returns SERVFAIL ... How do I confirm it?": what the statement says happens."""
    match = _ATTESTS.search(clause)
    said = re.split(r"[,;]|\s+(?:and|but)\s+(?:i|we)\b", statements[0], flags=re.I)[0] if statements else ""
    phrases = noun_phrases(said)
    if match is None or not phrases or phrases[0].role != "subject" or not verbs(said):
        return None
    said = f"{said[:1].lower()}{said[1:]}" if said.split()[0].lower() in ("my", "our", "the") else said
    return f"{clause[: match.end(1)]} {said}{clause[match.end() :]}"
