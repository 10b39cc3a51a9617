"""A request written as a command, as the question it makes: "Compare X and Y", "Explain X", "Explain how X
works". The planner reads questions (extractive/planning.py); read as one, a request asks "What is Explain
git rebase?" and "How do Compare nginx and Apache compare?"."""

from __future__ import annotations

import re

from deepresearch.extractive.inflection import plural_word

__all__ = ["as_asked"]

_PLEASE = r"^(?:please\s+)?"
_EXPLAIN = r"(?:explain|describe|tell\s+me\s+about|give\s+me\s+an\s+overview\s+of)\s+"
_COMPARE = re.compile(
    _PLEASE + r"(?:compare|contrast)\s+(.+?)\s+(?:and|with|to|against|vs\.?|versus)\s+(.+?)[.?!]*$", re.I
)
_HOW_WORKS = re.compile(_PLEASE + r"(?:explain|describe|tell\s+me)\s+how\s+(.+?)\s+(works?)[.?!]*$", re.I)
_EMBEDDED = re.compile(
    _PLEASE + r"(?:explain|describe|tell\s+me)\s+((?:how|what|why|when|where|which|who)\b.+)$", re.I
)
_WHAT = re.compile(
    _PLEASE + _EXPLAIN + r"(?!(?:how|what|why|when|where|which|who|whether|if)\b)(.+?)[.?!]*$", re.I
)


def as_asked(question: str) -> str:
    """The question a request makes ("Explain git rebase" -> "What is git rebase, and how does it work?");
    a question as it is."""
    if match := _COMPARE.match(question):
        if "," in match.group(1):  # "Compare A, B and C"
            return f"How do {match.group(1)} and {match.group(2)} compare?"
        # the form whose two sides the planner joins (extractive/comparison.py)
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
