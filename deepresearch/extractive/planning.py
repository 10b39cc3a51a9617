"""Extractive planning: sub-questions a person would write, built from the question's own structure.

A question is split into its clauses ("What is X and what are its limits?" is two questions), pronouns are
resolved to the question's topic, and the aspects that fit are added - what it is, how it works, its limits,
how it is configured - each a plain grammatical question about the topic. Nothing is generated: every
sub-question is the user's clause or a fixed template around a phrase taken from the question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deepresearch.extractive.text import STOPWORDS, keywords

MAX_SUB_QUESTIONS = 4

_WH = r"what|how|which|why|when|where|who|is|are|does|do|can|should"
_CLAUSE_SPLIT = re.compile(rf"\?\s+|;\s+|,?\s+(?:and|but|or)\s+(?=(?:{_WH})\b)", re.IGNORECASE)
_IDENTIFIER = re.compile(r"(?<![\w.])(?:\w+(?:\.\w+)+(?:\(\))?|_*\w+_\w*|\w+\(\))(?![\w.])")
_KIND_NOUN = re.compile(
    r"\b(?:the\s+)?(\w+)\s+(module|statement|function|class|package|decorator|method|library)\b",
    re.IGNORECASE,
)
_WHAT_IS = re.compile(r"^what\s+(?:is|are)\s+((?:the|a|an)\s+)?(.+)$", re.IGNORECASE)
_HOW_WORK = re.compile(
    r"^how\s+(?:does|do|is|are|can)\s+(.+?)\s+(?:work|works|behave|function)\b", re.IGNORECASE
)
_WHAT_DO = re.compile(r"^what\s+(?:does|do)\s+(.+?)\s+do\b", re.IGNORECASE)
_HOW_VERB = re.compile(r"^how\s+(?:does|do)\s+(\S+(?:\s+\S+)?)\s+([a-z]+)\s+(.+)$", re.IGNORECASE)
_HOW_TO = re.compile(r"^how\s+(?:do|can|should|would)\s+(?:i|you|we|one)\s+(.+)$", re.IGNORECASE)
_HOW_TO_INF = re.compile(r"^how\s+to\s+(.+)$", re.IGNORECASE)
_PHRASE_END = re.compile(
    r"\s+(?:and|or|in|for|with|when|if|that|which|to|from|on|at|by)\s+|,|$", re.IGNORECASE
)
_LIMIT_WORDS = re.compile(
    r"\b(limit|limits|limitation|limitations|risk|risks|drawback|drawbacks|pitfall|pitfalls|cost|costs|"
    r"trade-?offs?|downsides?|caveats?|fail|fails|exceeds?|errors?)\b",
    re.IGNORECASE,
)
_CONFIG_WORDS = re.compile(
    r"\b(configur\w*|size|option|options|setting|settings|parameter|parameters|tune|tuned|set up)\b",
    re.IGNORECASE,
)
_PRONOUN_ITS = re.compile(r"\bits\s+(\w+)", re.IGNORECASE)
_PRONOUN_IT = re.compile(r"\b(it|they|them)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class KeywordPlan:
    """The extractive plan: what the plan_research stage stores for either engine."""

    sub_questions: list[str]
    queries: list[str]
    rationale: str


def keyword_plan(question: str, max_queries: int, max_sub_questions: int = MAX_SUB_QUESTIONS) -> KeywordPlan:
    """Sub-questions from the question's structure, and search queries in the question's own words.

    The queries are the question, then each sub-question, then the topic on its own; the corpus search
    expands each with its top documents' vocabulary (pseudo-relevance feedback, see search/corpus.py)."""
    question = " ".join(question.split()).strip()
    clauses = [c.strip(" ?.,") for c in _CLAUSE_SPLIT.split(question) if len(c.strip(" ?.,").split()) >= 2]
    clauses = clauses or [question.strip(" ?.")]
    topic = question_topic(clauses[0])
    asked = [_resolve_pronouns(clause, topic) for clause in clauses]
    sub_questions = [_as_question(clause) for clause in asked]
    whole = " ".join(asked)
    task = _task_phrase(clauses[0])
    if topic:
        plural = _plural(topic)
        aspects: list[str] = []
        items = _items(topic)
        named = bool(_IDENTIFIER.search(topic) or _KIND_NOUN.search(topic) or _HOW_WORK.match(clauses[0]))
        # "What is X?" helps when X is an API or the question asks how X works; for a question about one
        # behaviour of X ("How does X avoid Y?") it would only pull in everything else about X
        if (
            task is None
            and not _WHAT_IS.match(clauses[0])
            and (named or _mechanism(clauses[0], topic) is None)
        ):
            # "loggers, handlers and formatters": what each one is, rather than what the list is
            aspects += [f"What {'are' if _plural(item) else 'is'} {item}?" for item in items or [topic]]
        if _WHAT_IS.match(clauses[0]) and not re.search(r"\bhow\b", whole, re.IGNORECASE):
            aspects.append(f"How {'do' if plural else 'does'} {topic} work?")
        if not _LIMIT_WORDS.search(whole):
            aspects.append(f"What are the limitations of {task or _mechanism(clauses[0], topic) or topic}?")
        if _CONFIG_WORDS.search(whole) and not re.search(r"\bconfigur", whole, re.IGNORECASE):
            aspects.append(f"How {'are' if plural else 'is'} {topic} configured?")
        sub_questions += aspects
    sub_questions = list(dict.fromkeys(sub_questions))[:max_sub_questions]
    queries = [question, *sub_questions[1:], *([topic] if topic else [])]
    queries += [" ".join(keywords(sq, 6)) for sq in sub_questions]
    unique = list(dict.fromkeys(q for q in queries if q.strip()))
    rationale = (
        "Extractive mode: sub-questions from the question's clauses and the aspects that fit its topic"
        + (f" ({topic})" if topic else "")
        + "; queries in the question's own words."
    )
    return KeywordPlan(sub_questions, unique[:max_queries], rationale)


_ASKS_LIMITS = re.compile(
    r"\b(limits?|limitations?|risks?|drawbacks?|pitfalls?|costs?|trade-?offs?|downsides?|caveats?)\b",
    re.IGNORECASE,
)


def asks_about_limits(text: str) -> bool:
    """The question asks for the limits, risks or costs of something (not merely what happens on an error)."""
    return bool(_ASKS_LIMITS.search(text))


def question_topic(clause: str) -> str:
    """The thing a question is about, as a phrase of the question: an identifier (asyncio.gather),
    "the X module/statement", what a what-is question names, or the subject of "how does X work"."""
    if match := _HOW_WORK.match(clause) or _WHAT_DO.match(clause):
        return match.group(1).strip()
    if match := _HOW_TO.match(clause) or _HOW_TO_INF.match(clause):
        # a task's object: "give a dataclass field a mutable default" -> "a dataclass field"
        found = _IDENTIFIER.search(clause) or _KIND_NOUN.search(clause)
        if found is None:
            rest = match.group(1).split(maxsplit=1)[1:]
            rest = re.sub(r"^and\s+\S+\s+", "", rest[0]) if rest else ""
            head = re.split(r"\s+(?:a|an|the)\s+", rest, maxsplit=1)[0]
            phrase = _PHRASE_END.split(head, maxsplit=1)[0].strip()
            if phrase:
                return phrase
    if match := _WHAT_IS.match(clause):
        phrase = _PHRASE_END.split(match.group(2), maxsplit=1)[0].strip()
        if phrase:
            return f"{match.group(1) or ''}{phrase}".strip()
    if match := _IDENTIFIER.search(clause):
        return match.group(0)
    if (match := _KIND_NOUN.search(clause)) and match.group(1).lower() not in STOPWORDS - {"with"}:
        return f"the {match.group(1)} {match.group(2)}"
    words = clause.split()
    content = [w for w in words[1:] if w.lower().strip(",") not in STOPWORDS]
    return content[0].strip(",") if content else ""


def _mechanism(clause: str, topic: str) -> str | None:
    """ "How does X handle Y" -> "how X handles Y" (the mechanism asked about, as a noun clause)."""
    match = _HOW_VERB.match(clause)
    if match is None or match.group(2).lower() in ("work", "works") or topic not in clause:
        return None
    subject_end = clause.find(topic) + len(topic)
    tail = clause[subject_end:].strip().split(maxsplit=1)
    if not tail:
        return None
    verb = tail[0]
    if verb.lower() in ("work", "works"):
        return None
    third = verb if _plural(topic) else verb + ("es" if verb.endswith(("s", "sh", "ch", "x")) else "s")
    return f"how {topic} {third}" + (f" {tail[1]}" if len(tail) > 1 else "")


def _task_phrase(clause: str) -> str | None:
    """A how-to question's task as a gerund phrase: "How do I use X to Y" -> "using X to Y"."""
    match = _HOW_TO.match(clause) or _HOW_TO_INF.match(clause)
    if match is None:
        return None
    words = match.group(1).strip(" ?.").split()
    if not words:
        return None
    verbs = [words[0]]
    rest = words[1:]
    if len(rest) >= 2 and rest[0].lower() == "and":  # "create and activate X"
        verbs.append(rest[1])
        rest = rest[2:]
    return " and ".join(gerund(v) for v in verbs) + (" " + " ".join(rest) if rest else "")


def gerund(verb: str) -> str:
    """use -> using, run -> running, create -> creating, bind -> binding, set -> setting."""
    lower = verb.lower()
    if lower.endswith("ie"):
        return verb[:-2] + "ying"
    if lower.endswith("e") and not lower.endswith(("ee", "ye", "oe")):
        return verb[:-1] + "ing"
    if (
        len(lower) <= 4
        and len(lower) >= 3
        and lower[-1] not in "aeiouwxy"
        and lower[-2] in "aeiou"
        and lower[-3] not in "aeiou"
    ):
        return verb + verb[-1] + "ing"
    return verb + "ing"


def _resolve_pronouns(clause: str, topic: str) -> str:
    """ "what are its limits" -> "what are the limits of <topic>"; a bare "it" becomes the topic."""
    if not topic or topic.lower() in clause.lower():
        return clause
    clause = _PRONOUN_ITS.sub(lambda m: f"the {m.group(1)} of {topic}", clause, count=1)
    return _PRONOUN_IT.sub(topic, clause, count=1)


def _as_question(clause: str) -> str:
    clause = clause.strip(" ?.,")
    return clause[:1].upper() + clause[1:] + "?"


def _items(topic: str) -> list[str]:
    """The members of a coordinated topic ("loggers, handlers and formatters"), when they are short."""
    parts = [p.strip() for p in re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", topic) if p.strip()]
    return parts if 2 <= len(parts) <= 3 and all(len(p.split()) <= 3 for p in parts) else []


def _plural(topic: str) -> bool:
    last = topic.split()[-1].lower() if topic.split() else ""
    return " and " in topic or (
        last.endswith("s") and not last.endswith(("ss", "us", "is")) and "." not in last
    )
