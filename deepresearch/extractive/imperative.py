"""A request written as a command, as the question it makes: "Compare X and Y", "Explain X", "Explain how X
works" - and a statement asked about with a bare "Why?" ("My query doesn't use the index. Why?"). The
planner reads questions (extractive/planning.py); read as one, a request asks "What is Explain git rebase?"
and "How do Compare nginx and Apache compare?", and a bare "Why?" asks nothing at all."""

from __future__ import annotations

import re

from deepresearch.extractive.inflection import ends_in_s, plural_word
from deepresearch.extractive.phrases import noun_phrases, verbs

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


_WHY_AFTER = re.compile(r"^(?P<said>.+?)[.!]\s+(?:why|how\s+come)\s*[?!.]*$", re.IGNORECASE)
_OPENERS = frozenset(["my", "our", "your", "the", "a", "an", "this", "these", "those", "its", "their"])


def as_asked(question: str) -> str:
    """The question a request makes ("Explain git rebase" -> "What is git rebase, and how does it work?"),
    or a statement followed by "Why?" (see ``why_of``); a question as it is."""
    if (match := _WHY_AFTER.match(question)) and (asked := why_of(match.group("said"))):
        return asked
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
    last part (after "but"), its auxiliary put before its subject, or "do"/"does" with the verb's plain form
    ("My backups fail every night" -> "Why do my backups fail every night?"). What comes before "but" stays a
    statement that sets the scene, or, where the question says "it" of what the scene names, is said in
    the question. None when the statement's verb is not found after its subject, or is in
    the past ("the build failed": its plain form is not known)."""
    scene, _, said = statement.rpartition(" but ")
    words = said.split()
    subject = next((p for p in noun_phrases(said) if p.role == "subject"), None)
    if not words or subject is None or not said.lower().startswith(subject.text.lower()):
        return None
    if words[0].lower() in _OPENERS:
        words[0] = words[0].lower()
    k = len(subject.text.split())
    if k >= len(words):
        return None
    verb, lower = words[k], words[k].lower()
    if lower in _AUXILIARIES or lower in _NEGATED:
        asked = ["Why", verb, *words[:k], *words[k + 1 :]]
    elif verb not in verbs(said) or lower.endswith("ed"):
        return None
    elif ends_in_s(lower) and not subject.plural:
        asked = ["Why", "does", *words[:k], _IRREGULAR.get(lower) or _plain(lower), *words[k + 1 :]]
    else:
        asked = ["Why", "do", *words]
    question = " ".join(asked).rstrip(" .!?") + "?"
    done = next((p for p in noun_phrases(scene) if p.role == "object"), None) if scene else None
    if done is not None and re.search(r"\bit\b", question) and done.text in scene:
        # "I created an index on an expression but my query doesn't use it": "it" is what the scene made,
        # with all it says of it - the question holds the whole scene
        made = re.sub(r"^(?:a|an)\s+", "the ", scene[scene.index(done.text) :].rstrip(" ,"), flags=re.I)
        return re.sub(r"\bit\b", lambda _: made, question, count=1)
    return f"{scene.rstrip(' ,')}. {question}" if scene else question


def _plain(verb: str) -> str:
    """ "crashes" -> "crash", "copies" -> "copy", "fails" -> "fail"."""
    if verb.endswith("ies"):
        return verb[:-3] + "y"
    return verb[:-2] if verb.endswith(("shes", "ches", "xes", "sses", "oes")) else verb[:-1]
