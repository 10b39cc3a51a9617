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
    _PLEASE + r"(?:explain|describe|tell\s+me)\s+((?:how|what|why|when|where|which)\b.+)$", re.I
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
        # "Explain why git needs gc" asks why: the words as they are, as a question
        clause = match.group(1).rstrip(" .?!")
        return f"{clause[:1].upper()}{clause[1:]}?"
    if (match := _WHAT.match(question)) and re.search(r"[^\W\d_]", match.group(1)):
        what = match.group(1)
        plural = plural_word(what)
        return f"What {'are' if plural else 'is'} {what}, and how {'do they' if plural else 'does it'} work?"
    return question
