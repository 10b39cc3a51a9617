"""The sub-question grammar check of the quality harness (see ``grammar_problems``)."""

from __future__ import annotations

import itertools
import re

_OPENERS = re.compile(
    r"^(what|how|which|why|when|where|who|whose|is|are|does|do|did|can|could|should|would|will|has|have)\b",
    re.IGNORECASE,
)
_AUX = frozenset(
    (
        "is", "are", "was", "were", "does", "do", "did", "can", "could", "should", "would", "will", "has",
        "have", "may", "might", "must", "isn't", "aren't", "wasn't", "weren't", "doesn't", "don't", "didn't",
        "can't", "cannot", "couldn't", "shouldn't", "wouldn't", "won't", "hasn't", "haven't",
    )
)  # fmt: skip
_FUNCTION = frozenset(
    (
        "a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "about", "into",
        "over", "under", "and", "or", "but", "nor", "if", "then", "than", "as", "is", "are", "was", "were",
        "be", "been", "being", "does", "do", "did", "can", "could", "should", "would", "will", "may",
        "might", "must", "has", "have", "had", "what", "how", "which", "why", "when", "where", "who",
        "whose", "whom", "that", "this", "these", "those", "it", "its", "their", "there", "i", "you", "we",
        "they", "my", "your", "our", "not", "no", "any", "each", "every", "some", "all", "both", "either",
        "neither", "such", "own", "same", "so", "very", "he", "she", "him", "her", "them", "me", "us",
    )
)  # fmt: skip
"""A pronoun ends a phrase like an article: "... and mailing them" strings no keywords together, though the
question says "mail them" and "mailing list"."""
_WH = frozenset(["what", "how", "which", "why", "when", "where", "who", "whose"])
_DANGLING_END = frozenset(
    (
        "a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "about", "into",
        "and", "or", "but", "nor", "than", "as", "its", "their", "is", "are",
    )
)  # fmt: skip


_TOKEN = re.compile(r"[A-Za-z0-9_][\w.'’()\-]*[\w)]|[A-Za-z0-9_]|[,;:?!]")


def _tokens(text: str) -> list[str]:
    """Lower-cased words, with each punctuation mark kept as a token of its own (it ends a phrase)."""
    return [t.lower().strip("'’") for t in _TOKEN.findall(text)]


def _verb_after_wh(words: list[str]) -> bool:
    # "What happens when ...", "Who uses ...": the wh-word is the subject of a verb in -s
    return words[0] in ("what", "who", "which") and len(words) > 1 and words[1].endswith("s")


def grammar_problems(sub_question: str, question: str) -> list[str]:
    """Why a sub-question is not a plain grammatical question (empty list: it passes).

    A simple check, not a parser. The question opens with an interrogative word and, for a wh-question, an
    auxiliary verb within four words; it ends with one question mark, not on a function word, and doubles
    no word. Keyword soup is caught against the user's question: a run of two or more content words taken
    from the question must be a phrase of it, not words strung together from different places, and must
    not stop mid-phrase when it is three words or more ("... avoid repeating paid?" when the question says
    "paid calls")."""
    problems: list[str] = []
    text = " ".join(sub_question.split())
    if not text[:1].isupper():
        problems.append("does not start with a capital letter")
    if not text.endswith("?") or text.count("?") != 1:
        problems.append("does not end with exactly one question mark")
    words = [t for t in _tokens(text) if t not in ",;:?!"]
    if not words or not _OPENERS.match(text):
        problems.append("does not open with a question word")
    elif words[0] in _WH and not any(w in _AUX for w in words[1:5]) and not _verb_after_wh(words):
        problems.append("no auxiliary verb after the question word")
    if words and words[-1] in _DANGLING_END:
        problems.append(f"ends on a function word ({words[-1]!r})")
    if any(a == b for a, b in itertools.pairwise(words)):
        problems.append("doubles a word")
    source = _tokens(question)
    # "The tide table is empty. Why?" asks "Why is the tide table empty?": its auxiliary moved before the
    # subject leaves the subject and what follows it side by side
    inverted = [t for t in source if t not in _AUX]
    runs: list[list[str]] = [[]]
    for token in _tokens(text):
        # an identifier (functools.lru_cache, __enter__) is a name: it starts or ends a phrase
        if token in _FUNCTION or token in ",;:?!" or re.search(r"[._()]", token):
            runs.append([])
        else:
            runs[-1].append(token)
    for run in runs:
        if len(run) < 2 or not set(run) <= set(source):
            continue
        starts = [i for i in range(len(source) - len(run) + 1) if source[i : i + len(run)] == run]
        moved = any(inverted[i : i + len(run)] == run for i in range(len(inverted) - len(run) + 1))
        if not starts and not moved:
            problems.append(f"keywords strung together ({' '.join(run)!r})")
        elif (
            starts
            and len(run) >= 3
            and all(
                i + len(run) < len(source) and source[i + len(run)] not in _FUNCTION | set(",;:?!")
                for i in starts
            )
        ):
            problems.append(f"a phrase cut mid-way ({' '.join(run)!r})")
    return problems
