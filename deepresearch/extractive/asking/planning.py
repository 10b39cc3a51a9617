"""Extractive planning: sub-questions a person would write, built from the question's own structure.

A question is split into its clauses ("What is X and what are its limits?" is two questions), pronouns are
resolved to the question's topic, and the aspects that fit are added - what the topic is (or what each thing
compared is), how it works, its limits, how it is configured - each a plain grammatical question about the
topic. Nothing is generated: every sub-question is the user's clause or a fixed template around a noun
phrase taken from the question.

The topic is one of the question's noun phrases (extractive/asking/phrases.py), never a verb or an adverb: the
subject unless it is a pronoun, a name the question asks about, the object of "How do I ..." When the corpus
says how rare each phrase is (the share of its documents that contain it, of its passages when it has only a
few documents: search/ranking.py SMALL_CORPUS), the rarest phrase the corpus knows wins, so "Git" or "SQLite"
- on every page of their own manual - give way to "git gc" or "VACUUM".
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from deepresearch.extractive.asking.asked import (
    attested,
    from_scene,
    inline,
    owned,
    parallel,
    replaced_object,
    resolve_pronouns,
    yes_no_subject,
)
from deepresearch.extractive.asking.clauses import ASKS, split_clauses
from deepresearch.extractive.asking.comparison import (
    COMPARATIVE,
    EITHER,
    VERSUS,
    aside,
    avoided,
    bare,
    compared,
    compared_members,
    exemplified,
    member_questions,
    named_alone,
    only,
    plural_item,
    quoted_whole,
    weighed,
)
from deepresearch.extractive.asking.phrases import Phrase, noun_phrases, verb_terms
from deepresearch.extractive.asking.wordclasses import FUNCTION_WORDS, PARTICIPLES, PREPOSITIONS, tokens
from deepresearch.extractive.inflection import as_question, gerund_phrase, listed, plural_word, third_person
from deepresearch.extractive.reading.text import content_tokens, keywords

MAX_SUB_QUESTIONS = 4

# "Is that safe?", "When is that a bad idea?", "How does this work?": a demonstrative standing for what the
# clause before asks about (not "Is that option safe?" - there it is a determiner, told by the topic)
_WHEN = re.compile(r"(?:when|whenever|if|once|after)\s", re.IGNORECASE)
_DEMONSTRATIVE = re.compile(
    r"^((?:(?:what|how|when|why|where|which)\s+)?(?:is|are|was|does|do|did|can|could|will|would|should|"
    r"might|may)\s+)(that|this)\b(?=\s+(?!(?:is|are|was|were)\b))",
    re.IGNORECASE,
)
_VAGUE = re.compile(r"^(?:a certain|certain|the same|all the|some|any|such)\b", re.IGNORECASE)
_FIGURE = r"[\d.,%$€£]+"  # "47.49", "32 GB", "0.1 + 0.2 == 0.3": figures and measures are no topic
_NUMBER = re.compile(rf"^{_FIGURE}(?:\s+{_FIGURE})*(?:\s*(?:[KMGT]i?B|[kKMG]Hz|ms|s|min|h|[kKM]|%))?$")
_NO_TOPIC = re.compile(
    r"^(?:a certain\b|certain\b|the (?-i:rest)$|the same (?:time|way|thing|one)s?$|such$|"
    # "give up after some time": the rarest phrase in an API's pages, no topic
    r"(?:some|any|such)\s+(?:time|times|way|ways|thing|things|point|stuff|reason|reasons)$|"
    # "What are common causes?" asks for a list about the topic the statement names
    r"(?:(?:the|some|common|possible|usual|typical|main|other|likely)\s+)*"
    r"(?:causes?|reasons?|ways?|steps|options|alternatives|solutions|fixes|approaches|things|differences?)$)",
    re.I,
)
_IDENTIFIER = re.compile(r"[._()\[\]]|[a-z][A-Z]|^[A-Z][A-Z0-9_]+$|-")
_WHAT_IS = re.compile(r"^what\s+(?:is|are)\b", re.IGNORECASE)
_HOW_WORK = re.compile(
    r"^how\s+(?:does|do|is|are|can)\s+.+?\s+(?:work|works|behave|function)\b", re.IGNORECASE
)
_RELATES = re.compile(r"^how\s+(?:does|do)\s+.+?\s+(?:compares?|stacks?\s+up)\s+(?:to|with|against)\b", re.I)
_HOW_VERB = re.compile(r"^how\s+(?:does|do)\s+(\S+(?:\s+\S+)?)\s+([a-z]+)\s+(.+)$", re.IGNORECASE)
_NO_VERB = frozenset(("work", "works", *PARTICIPLES))  # after the subject: no verb of a mechanism
# "How can one ...", not "How can one SQLite query ..."
_HOW_TO = re.compile(r"^how\s+(?:do|can|should|would)\s+(?:i|you|we|one(?!\s+(?-i:[A-Z])))\s+(.+)$", re.I)
# what a clause asks to do, for anchoring the clause after it: "Why would I declare X", "Can I keep X"
_WHY_I = re.compile(r"^(?:why|when)\s+(?:would|should|do|can|could)\s+(?:i|we)\s+(.+)$", re.IGNORECASE)
_HOW_TO_INF = re.compile(r"^how\s+to\s+(.+)$", re.IGNORECASE)
# "Can I see an example of X?", "May I know ...", "Should I worry about X?": a request, no task to do
_ASKS_FOR = frozenset(["have", "see", "get", "know", "ask", "learn", "hear", "worry", "understand", "read"])
_CAN_I = re.compile(r"^(?:can|could|should|may)\s+(?:i|we)\s+(.+)$", re.IGNORECASE)
# "how can one SQLite query return a subtree, and how does that work?": "that" is how the query returns it
_CAN_IT = re.compile(
    r"^(?:how\s+)?(?:can|could|does|do|will|would)\s+(?!(?:i|we|you|one(?!\s+(?-i:[A-Z])))\s)(\S.+?)[?.!]*$",
    re.IGNORECASE,
)
_HOW_THAT_WORKS = re.compile(r"^how\s+(?:does|do)\s+(?:that|this)\s+work\b\W*$", re.IGNORECASE)
# "Does git gc delete unreachable objects?": a phrase from the auxiliary to a preposition or the end holds the
# verb the chunker could not tell from a name's word ("Can an SQLite column be computed" has its own)
_SWALLOWS = re.compile(
    r"^(?:do|does|did|can|could|will|would|should|may|might|must)\s+(.+?)(?:\s+(?:on|in|at|to|from|for|with|"
    r"by|into|over|under|after|before|when|if)\b.*)?$",
    re.IGNORECASE,
)
_SEVERAL = re.compile(r"^(?:two|three|many|several|multiple|all|both)\b", re.IGNORECASE)
# a question that asks what can go wrong in its own words gets no "What are the limitations of ...?"
_LIMIT_WORDS = re.compile(
    r"\b(limit|limits|limitation|limitations|risk|risks|drawback|drawbacks|pitfall|pitfalls|cost|costs|"
    r"trade-?offs?|downsides?|caveats?|fail|fails|exceeds?|errors?|wrong|slow|advise against|careful|risky|"
    r"dangerous|unsafe|bad idea|precautions?|beware)\b",
    re.IGNORECASE,
)
_CONFIG_WORDS = re.compile(
    r"\b(configur\w*|size|option|options|setting|settings|parameter|parameters|tune|tuned|set up)\b",
    re.IGNORECASE,
)
_FAILURE = re.compile(r"(?:error|exception|warning|failure|crash)e?s?$", re.IGNORECASE)
_MANY = "another|two|three|many|much|several|multiple"
_LEADING = re.compile(rf"^(?:my|your|our|their|his|its|{_MANY})\s+", re.I)
# "two branches", "their cache", "our 40 web servers": an instance, not the subject matter (not "our cache",
# nor a status code: "404 errors")
_STATUS = r"(?:errors?|responses?|status|codes?|redirects?|pages?)\b"
_COUNTED = re.compile(
    rf"^(?:(?:my|your|our|their)\s+)?\d[\d,.]*\s+(?!{_STATUS})\w|^(?:their|his|its|{_MANY})\s+", re.I
)
_RELATION_OF = re.compile(
    r"\b(the (?:pitfalls|drawbacks|downsides|risks|limitations|limits|caveats|disadvantages|advantages|"
    r"benefits|trade-?offs|pros and cons) of .+)$",
    re.IGNORECASE,
)
# how much a phrase's place in the question makes it the topic: what "What is" names first
_ROLE_WEIGHT = {"named": 1.3, "subject": 1.0, "which": 1.0, "object": 0.9, "pp": 0.8, "clause": 0.8}
_QUANTIFIED = 0.5  # "two branches", "multiple threads": an instance, not the subject matter
_LATER_CLAUSE = 0.8  # the question's second clause ("... and what does it cost?")
_COMPARED = 1.3  # the members of a comparison: what the question is about
_SUBORDINATE = 0.6  # a clause inside it ("... when I can edit the main server configuration")
# a statement before a first question that points back at nothing, but a name ("We want employees ...")
_SCENE = 0.35
_POINTS_BACK = frozenset(("it", "its", "they", "them", "their", "this", "these", "those", "such"))
_NO_TOPIC_WEIGHT = 0.3  # "at the same time", "leave the rest" (_NO_TOPIC): the topic is elsewhere
_MESSAGE = re.compile(r"(?:^|\s)['\"‘“]\S.*?\s.*?['\"’”](?=[\s.,;:?!]|$)")  # a quoted message, of words
_EXAMPLE_WEIGHT = 0.1  # "policies like CMP0048": an example stands for its kind, which is the topic
# ... and so does a host's name: "a certificate for mail.example.com" is the asker's, not the manual's topic
_HOST = re.compile(r"^[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|edu|example|test|local|lan|internal)$", re.I)
# ... or a word of it: a team numbers its hosts from zero ("enc02 sits idle", "on ci-04"; not "sha1", "x86")
_NUMBERED_HOST = re.compile(r"^[a-z]{2,}[a-z-]*?-?0\d+$")
SPECIFIC = 0.15
"""A topic in at most this share of the corpus's documents is specific enough for "What is X?" aspects."""
BROAD = 0.3
"""A one-word topic on more of the corpus's documents than this is no query of its own (_searchable)."""


@dataclass(frozen=True, slots=True)
class KeywordPlan:
    """The extractive plan: what the plan_research stage stores for either engine."""

    sub_questions: list[str]
    queries: list[str]
    rationale: str
    topic: str = ""
    aspects: list[str] = field(default_factory=list)
    """The sub-questions added to the question's own clauses ("What is X?", "What are the limitations of
    X?"): they explain the answer, they do not ask for more of it."""


def _display(phrase: Phrase) -> str:
    """The phrase as the sub-questions name it: its article kept, a possessive or a count left out, "vs"
    read as "or" ("Is git merge or git rebase safe ...?" where the question says "is it safe")."""
    shown = COMPARATIVE.sub("", _LEADING.sub("", phrase.text)).strip()
    # "The crane won't lift the dinghy. Why?": the article opened a sentence
    shown = re.sub(r"^(?:The|A|An)\b", lambda m: m.group(0).lower(), shown)
    return VERSUS.sub(" or ", shown) if phrase.items else shown


def _together(phrase: Phrase) -> str:
    """The things a phrase compares named together: "How do the event MPM and the worker MPM work?"."""
    return EITHER.sub(" and ", _display(phrase)) if phrase.items else _display(phrase)


def _core(phrase: Phrase) -> str:
    return bare(_display(phrase))


def lookup_phrases(question: str) -> list[str]:
    """What the planner asks the corpus about: each noun phrase's core and its shorter tails, and every
    content word of the question."""
    found: list[str] = []
    for clause in dict.fromkeys([*split_clauses(question), *split_clauses(question, why=False)]):
        for phrase in noun_phrases(clause):
            words = _core(phrase).split()
            found += [" ".join(words[i:]) for i in range(len(words))] + words
    found += [w for w in tokens(question) if w.lower() not in FUNCTION_WORDS and w not in ",;:?!"]
    return list(dict.fromkeys(w.lower() for w in found if w))


def _specificity(phrase: Phrase, rarity: Mapping[str, float] | None) -> float:
    core = _core(phrase)
    if not core:
        return 0.0
    if rarity is None:
        named = any(_IDENTIFIER.search(word) for word in core.split())
        return 1.0 + 0.5 * named
    words = core.lower().split()
    # a word of the phrase must be rare ("gc" in "git gc"), and the phrase must stand in the corpus: its
    # longest tail that does ("httpd log files" -> "log files"); a phrase of common words ("the main server
    # configuration") is not specific however rarely its words stand side by side
    rarest = max((-math.log(rarity[w]) for w in words if rarity.get(w, 0.0) > 0), default=0.0)
    for i in range(len(words)):
        share = rarity.get(" ".join(words[i:]), 0.0)
        if share > 0:
            return min(rarest, -math.log(share) * ((len(words) - i) / len(words)) ** 0.5)
    return 0.0


def choose_topic(question: str, rarity: Mapping[str, float] | None = None) -> Phrase | None:
    """The question's topic: its noun phrase with the best role, weighted by how rare it is in the corpus.
    The first clause that asks counts most; a statement that sets the scene ("My server is eating all the
    CPU; how can I see ...") counts as a subordinate clause, and less when no question points back at it."""
    best: tuple[float, Phrase] | None = None
    # the topic of "I ran VACUUM but the file is still large. Why?" is what the statement is about (VACUUM),
    # whichever part of it the why-question puts first
    clauses = split_clauses(question, why=False)
    first = next((i for i, clause in enumerate(clauses) if ASKS.match(clause)), 0)
    back = any(word.lower() in _POINTS_BACK for word in tokens(clauses[first]))  # the first that asks
    for index, clause in enumerate(clauses):
        asks = bool(ASKS.match(clause)) or not any(ASKS.match(c) for c in clauses)
        phrases = compared(clause, noun_phrases(clause))
        for phrase in phrases:
            if avoided(clause, phrase) or _NUMBER.match(_core(phrase)):
                continue  # neither what the asker does without ("without a VirtualHost block") nor a figure
            weight = _ROLE_WEIGHT.get(phrase.role, 0.8) * (_LATER_CLAUSE if index > first else 1.0)
            # "Which is faster for lookups, a dict or a set?" is about the things it compares
            weight *= _COMPARED if weighed(clause, phrase) else 1.0
            # "CRLF", "HTTP/2" - not a possessor ("our ISP's relay" is a relay)
            named = any(
                _IDENTIFIER.search(w) or w[:2].isupper() or (w[:1].isupper() and not clause.startswith(w))
                for w in _core(phrase).split()
                if not w.endswith(("'s", "’s"))
            )
            weight *= (_SUBORDINATE if back or named else _SCENE) if not asks else 1.0
            purpose = _purpose(clause, phrase, phrases)
            weight *= (_SCENE if purpose else _SUBORDINATE) if phrase.subordinate and asks else 1.0
            weight *= _QUANTIFIED if _COUNTED.match(phrase.text) else 1.0
            weight *= _NO_TOPIC_WEIGHT if _NO_TOPIC.match(phrase.text) or aside(clause, phrase) else 1.0
            weight *= _EXAMPLE_WEIGHT if exemplified(clause, phrase) or _hosted(_core(phrase)) else 1.0
            value = weight * _specificity(phrase, rarity)
            if value > 0 and (best is None or value > best[0]):
                best = (value, phrase)
    return quoted_whole(question, best[1]) if best else None


# the roles of a phrase a clause asks about (not "need to change", which the chunker reads as a "pp")
_ASKED_ROLES = frozenset(("subject", "object", "named", "which"))


def _purpose(clause: str, phrase: Phrase, phrases: list[Phrase]) -> bool:
    """In a clause of purpose after a phrase of the question's own: "register custom markers so that I stop
    getting PytestUnknownMarkWarning" asks about the markers, the purpose says why, as the asker's scene does
    (_SCENE); "What do I need to change so that Postfix relays mail for our LAN?" asks about its purpose."""
    lower = [word.lower() for word in tokens(clause)]
    opens = [
        k
        for k in range(min(phrase.start, len(lower) - 1))
        if (lower[k] == "so" and lower[k + 1] in ("that", "i", "we", "you", "it", "they"))
        or lower[k : k + 3] == ["in", "order", "to"]
    ]
    return bool(opens) and any(other.start < opens[0] and other.role in _ASKED_ROLES for other in phrases)


def _hosted(core: str) -> bool:
    return bool(_HOST.match(core)) or any(_NUMBERED_HOST.match(word) for word in core.split())


def question_topic(question: str, rarity: Mapping[str, float] | None = None) -> str:
    """The topic as a phrase of the question ("the json module", "git gc", "a detached HEAD"), or ""."""
    phrase = choose_topic(question, rarity)
    return _display(phrase) if phrase else ""


def _specific(phrase: Phrase, rarity: Mapping[str, float] | None) -> bool:
    """Worth a "What is X?": a name (an identifier, a capitalised or hyphenated term), or rare in a corpus."""
    core = _core(phrase)
    if rarity is not None:
        return 0 < rarity.get(core.lower(), 0.0) <= SPECIFIC
    return any(_IDENTIFIER.search(w) or w[:1].isupper() for w in core.split()) or len(core.split()) >= 2


def _subject_matter(phrase: Phrase, rarity: Mapping[str, float] | None) -> bool:
    """Worth "What is X?" and "What are the limitations of X?": a specific phrase the question asks about (its
    subject, what "What is" or "Which" names) or a name - not a vague one ("a certain browser"), a figure
    ("47.49") nor a plain noun that only completes a verb or a preposition ("compile into the binary")."""
    if _VAGUE.match(phrase.text) or _NUMBER.match(_core(phrase)) or not _specific(phrase, rarity):
        return False
    named = any(_IDENTIFIER.search(word) for word in _core(phrase).split())
    return named or phrase.role in ("subject", "named", "which")


def keyword_plan(
    question: str,
    max_queries: int,
    max_sub_questions: int = MAX_SUB_QUESTIONS,
    rarity: Mapping[str, float] | None = None,
) -> KeywordPlan:
    """Sub-questions from the question's structure, and search queries in the question's own words.

    The queries are the question, the topic on its own, then the question's other clauses and the things
    it compares; an aspect ("What is X?", "What are the limitations of X?") is no query of its own - its
    answer lies in the pages the topic finds, and "limitations" would only find pages about limits."""
    question = " ".join(question.split()).strip()
    phrase = choose_topic(question, rarity)
    topic = _display(phrase) if phrase else ""
    clauses, asked = _asked(split_clauses(question), topic)
    sub_questions = [as_question(clause) for clause in asked]
    if phrase and len(phrase.items) >= 2 and only(asked[0], phrase) and not ASKS.match(asked[0]):
        # "typing.Protocol vs abc.ABC?" asks nothing in words: how the two compare
        sub_questions[0] = f"How do {listed(list(phrase.items))} compare?"
    whole = " ".join(asked)
    aspects, item_queries = _aspects(asked[0], whole, phrase, rarity) if phrase else ([], [])
    sub_questions = list(dict.fromkeys(sub_questions + aspects))[:max_sub_questions]
    aspects = [sq for sq in sub_questions if sq in aspects and sq not in sub_questions[: len(asked)]]
    # the things compared are searched one by one; a list of them as a query finds the pages that list them
    own = [_core(phrase)] if phrase and not item_queries else []
    # another clause is a query when it names something ("What should be used instead?" does not)
    named = [sq for sq, clause in zip(sub_questions[1:], clauses[1:], strict=False) if noun_phrases(clause)]
    alone = [query for query in [*own, *item_queries] if _searchable(query, rarity)]
    queries = [question, *alone, *named]
    queries += [" ".join(keywords(sq, 6)) for sq in sub_questions[: len(clauses)]]
    unique = list(dict.fromkeys(q for q in queries if q.strip()))
    rationale = (
        "Extractive mode: sub-questions from the question's clauses and the aspects that fit its topic"
        + (f" ({topic})" if topic else "")
        + "; queries in the question's own words."
    )
    return KeywordPlan(sub_questions, unique[:max_queries], rationale, topic, aspects)


def _searchable(phrase: str, rarity: Mapping[str, float] | None) -> bool:
    """A phrase worth a search of its own: not one word on more than BROAD of the corpus's pages ("error",
    "HTML" in Jinja's manual, "commit" in Git's find any page; "virtual host" still finds its own)."""
    return rarity is None or len(phrase.split()) > 1 or rarity.get(phrase.lower(), 0.0) <= BROAD


def _asked(clauses: list[str], topic: str) -> tuple[list[str], list[str]]:
    """The clauses that ask, as written and as sub-questions. A statement that sets the scene is no
    sub-question, but what the question after it says "it" or "them" of ("I host thousands of customer
    sites; can Apache serve them ...?"). A later clause says "that" of what the clause before asks ("...,
    and is that safe?"), and one that names nothing the question names ("What should I be careful
    about?") is about the first clause's task or the topic, and says so."""
    asking = [clause for clause in clauses if ASKS.match(clause)] or clauses
    statements = [clause for clause in clauses if clause not in asking]
    # a pronoun refers back: in the first clause only to a statement before it ("Why is it unsafe to ...")
    asked = [attested(asking[0], statements) or from_scene(asking[0], statements)]
    # the scene is the last statement, or the last that quotes a message ("... we get 'Parent instance <Order>
    # is not bound to a Session ...'. It started after Friday's refactoring ... How do we fix this?")
    quoting = [statement for statement in statements if _MESSAGE.search(statement)]
    scene = (quoting or statements or [""])[-1]
    if scene and not set(content_tokens(asked[0])) & set(content_tokens(" ".join(statements))):
        # "I turned on HTTP/2 but page loads stall. What is going wrong?": the scene is what it asks about
        # ... said once: a scene that opens on "When ..." keeps its own
        said = inline(scene)
        asked[0] = f"{asked[0]} {said}" if _WHEN.match(said) else f"{asked[0]} when {said}"
    elif scene:
        # a scene the question shares words with is left out: "its" must say whose ("I renamed a file with
        # git mv; how do I see its history from before the rename?" asks for "the file's history")
        asked[0] = owned(asked[0], statements)
    for clause in asking[1:]:
        doing = _CAN_IT.match(asked[-1]) if _HOW_THAT_WORKS.match(clause) else None
        if doing is not None:
            # "Can SQLite enforce foreign keys, and how does that work?": how it does what was asked about
            what = doing.group(1)
            subject = next((p for p in noun_phrases(asked[-1]) if p.role == "subject"), None)
            # a subject of its own ("Python dicts"), not one with its verb ("Docker restart containers")
            whole = subject is not None and what.startswith(subject.text) and len(subject.text.split()) <= 2
            aux = re.sub(r"^how\s+", "", asked[-1], flags=re.IGNORECASE).split()[0].lower()
            own = subject.plural if whole and subject else plural_word(what.split()[0].removesuffix("'s"))
            plural = aux == "do" or (aux != "does" and bool(_SEVERAL.match(what) or own))
            asked.append(f"How {'do' if plural else 'does'} {what}?")
            continue
        asker = yes_no_subject(asked[-1], topic) if _DEMONSTRATIVE.match(clause) else None
        antecedent = _clause_task(asked[-1]) or (asker.text if asker else topic)
        if asker is not None and asker.plural:  # "How do NULLs compare ...?", "What do NULLs mean ...?"
            clause = re.sub(r"^((?:\w+\s+)?)does(?=\s+that\b)", r"\1do", clause, flags=re.IGNORECASE)
        if antecedent and EITHER.search(antecedent) and _DEMONSTRATIVE.match(clause):
            # "Is SQLite faster than PostgreSQL? How does that work?": how the two work
            antecedent = EITHER.sub(" and ", antecedent)
            clause = re.sub(r"^(how\s+)does\b", r"\1do", clause, flags=re.IGNORECASE)
        if antecedent:
            clause = _DEMONSTRATIVE.sub(lambda m, a=antecedent: m.group(1) + a, clause, count=1)
        # "What are the pitfalls of X, and how do I avoid them?": them are the pitfalls of X, not X
        relation = _RELATION_OF.search(asked[0])
        clause = resolve_pronouns(parallel(clause, asked[-1]), relation.group(1) if relation else topic)
        asked.append(_anchor(clause, " ".join(asked + statements), _clause_task(asked[0]), topic))
    return asking, asked


def _clause_task(clause: str) -> str | None:
    """What a clause asks to do, as a gerund phrase: "How do I get X" -> "getting X", "Can I keep X" ->
    "keeping X", "Why would I declare X" -> "declaring X"."""
    task = _task_phrase(clause)
    match = _CAN_I.match(clause) or _WHY_I.match(clause)
    if task is None and match is not None:
        words = match.group(1).strip(" ?.").split()
        task = gerund_phrase(words) or None
    return task


def _anchor(clause: str, others: str, task: str | None, topic: str) -> str:
    """A clause that shares no word with the rest of the question ("What should I be careful about?",
    "Should I use -S or -G?") asks about the first clause's task or the topic: said in the sub-question, so
    its search and its quotes are about them. A verb they share is no shared word ("... a zone that gets
    dynamic updates" and "Will my changes get lost?")."""
    own = set(content_tokens(clause)) - verb_terms(clause)
    if own & set(content_tokens(others)) or not (task or topic):
        return clause
    if not task and set(content_tokens(topic)) <= own:
        return clause  # it names the topic already ("Can Git remember my fix?")
    if topic and re.search(r"\binstead$", clause, re.IGNORECASE):
        replaced = replaced_object(clause, others)
        return f"{clause} of {_display(replaced) if replaced else topic}"
    return f"{clause} when {task}" if task else f"{clause} with {topic}"


def _aspects(
    clause: str, whole: str, phrase: Phrase, rarity: Mapping[str, float] | None
) -> tuple[list[str], list[str]]:
    """The aspect sub-questions that fit the topic, and a query for each thing the question compares."""
    swallows = _SWALLOWS.match(clause.rstrip(" ?.,"))
    if swallows and swallows.group(1).lower() == phrase.text.lower() and len(phrase.text.split()) >= 2:
        return [], []  # no "What are git gc delete unreachable objects?"
    topic, plural = _together(phrase), phrase.plural
    aspects: list[str] = []
    # the members of a coordination are asked about one by one when the question compares them, not in
    # "my username and password"
    items = compared_members(whole, phrase)
    # "Can I keep a database entirely in RAM?" asks to do something, as "How do I ..." does: its limits are
    # the task's, and a name it does that in ("RAM") is no subject to ask "What is X?" of
    can = _CAN_I.match(clause)
    polite = can is not None and can.group(1).split()[0].lower() in _ASKS_FOR  # "May I know X?"
    task = _task_phrase(clause) or (_clause_task(clause) if can and not polite else None)
    # "What are common causes when ...?" asks for a list, not what a thing is
    listing = any(p.role == "named" and _NO_TOPIC.match(p.text) for p in noun_phrases(clause))
    what_is = bool(_WHAT_IS.match(clause)) and not listing
    if items:
        aspects += member_questions(whole, phrase, items)  # "What is PRIVATE in target_link_libraries?"
    elif not what_is and task is None and _subject_matter(phrase, rarity):
        aspects.append(f"What {'are' if plural else 'is'} {named_alone(phrase, topic, clause)}?")
    if what_is and not re.search(r"\bhow\b", whole, re.IGNORECASE):
        aspects.append(f"How {'do' if plural else 'does'} {topic} work?")
    subject = next((p for p in noun_phrases(clause) if p.role == "subject"), None)
    # "How does X compare to Y?" is no mechanism of X: the limits asked about are the two sides'
    mechanism = _mechanism(clause, _display(subject)) if subject and not _RELATES.match(clause) else None
    # an error has no limitations to ask about ("What are the limitations of an IntegrityError?")
    failure = not (task or mechanism) and _FAILURE.search(_core(phrase)) is not None
    limits = task or mechanism or _subject_matter(phrase, rarity) or _HOW_WORK.match(clause)
    if not _LIMIT_WORDS.search(whole) and not failure and limits:
        limited = task or mechanism or named_alone(phrase, topic, clause)
        aspects.append(f"What are the limitations of {limited}?")
    if _CONFIG_WORDS.search(whole) and not re.search(r"\bconfigur", whole, re.IGNORECASE):
        aspects.append(f"How {'are' if plural else 'is'} {topic} configured?")
    return aspects, [bare(item) for item in items]


def _mechanism(clause: str, topic: str) -> str | None:
    """ "How does X handle Y" -> "how X handles Y" (the mechanism asked about, as a noun clause)."""
    match = _HOW_VERB.match(clause)
    subject = clause.lower().startswith((f"how does {topic.lower()} ", f"how do {topic.lower()} "))
    if match is None or match.group(2).lower() in ("work", "works") or topic not in clause or not subject:
        return None  # ... or the topic is not the subject: "How does Apache decide which vhost ..." keeps it
    subject_end = clause.find(topic) + len(topic)
    tail = clause[subject_end:].strip().split(maxsplit=1)
    # ... nor a participle of the subject's own: "How does a partial clone made with --filter work?"
    first = tail[0].lower() if tail else ""
    after = tail[1].split()[0].lower() if len(tail) > 1 else ""
    if not tail or first in _NO_VERB or (first.endswith("ed") and after in PREPOSITIONS):
        return None
    verb = tail[0]  # or the rest of the subject ("How do SAVEPOINT, RELEASE and ROLLBACK TO differ")
    third = verb if plural_item(topic) or verb.lower() in FUNCTION_WORDS else third_person(verb)
    return f"how {topic} {third}" + (f" {tail[1]}" if len(tail) > 1 else "")


def _task_phrase(clause: str) -> str | None:
    """A how-to question's task as a gerund phrase: "How do I use X to Y" -> "using X to Y"."""
    match = _HOW_TO.match(clause) or _HOW_TO_INF.match(clause)
    words = match.group(1).strip(" ?.").split() if match else []
    if not words:
        return None
    if len(words) >= 3 and words[1].lower() == "and":  # "create and activate X"
        return f"{gerund_phrase(words[:1])} and {gerund_phrase(words[2:])}"
    return gerund_phrase(words)
