"""Checks by meaning of the items in a model's answer: what a small model writes instead of an answer.

A 135M-parameter model under a grammar produces valid JSON of the right shape that says nothing: the
sub-questions ``","``, ``"query1"``, ``"query2"``, the query ``"no code here."``. Each item of a list the
model wrote is kept only if it is

- not empty, not punctuation alone, not too short for its kind (a sub-question needs two words);
- not a placeholder ("query1", "sub-question 1", "string", "...", "example", "your query here");
- not an echo of the schema (a field's name, title or description, a JSON type word);
- not a duplicate of an earlier item (case and punctuation aside);
- for a finding, a statement: not a question, nor a bare heading copied from a passage;
- on topic, where that is checkable: at least one content word (by stem, or its first five letters) in
  common with what the answer is about (the question; for reflection, the sub-questions too).

The schemas (deepresearch.graph.schemas) drop what fails and say why; when too little is left the answer is
unusable, is re-asked once with those reasons, and then the step falls back to its extractive method with
them as the recorded reason.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from pydantic import BaseModel

from deepresearch.extractive.reading.text import content_tokens

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_ALNUM = re.compile(r"[^\W_]", re.UNICODE)
# whole values that stand for "nothing here"
_EMPTY_VALUES = frozenset(
    {"...", "…", "etc", "n/a", "na", "none", "null", "nil", "tbd", "todo", "xxx", "undefined", "unknown"}
)
# the words placeholders are made of; a placeholder uses only these, and at least one slot noun
_SLOT_NOUN_TEXT = """
    query queries question questions subquestion subquestions sub string str example examples sample
    item items text value values placeholder keyword keywords topic answer gap gaps finding findings
    statement statements issue issues suggestion suggestions claim claims perspective perspectives
    rationale reason description lorem ipsum foo bar baz"""
_SLOT_NOUNS = frozenset(_SLOT_NOUN_TEXT.split())
_FILLER_TEXT = """
    the a an of my your our here this that is to be in goes enter write insert fill filled another more
    some first second third one two three four five up follow search knowledge missing unsupported open
    relevant research web"""
_FILLER = frozenset(_FILLER_TEXT.split())
_JSON_WORDS = frozenset({"string", "array", "object", "number", "integer", "boolean", "list", "int", "bool"})
TOPIC_PREFIX = 5
"""Two content words match when their stems are equal or they share this many first letters."""


_QUESTION_WORDS = frozenset({"what", "how", "why", "when", "where", "which", "who", "whom", "whose"})


@dataclass(frozen=True, slots=True)
class ItemRule:
    min_words: int = 1
    on_topic: bool = False
    statement: bool = False
    """It must state something: a question, or a bare heading such as "What is and is not repeated"
    (copied from the passage's section title), is not a finding."""


def normalized(text: str) -> str:
    """Lower case, punctuation and underscores as spaces: the form compared for echoes and duplicates."""
    return " ".join(re.sub(r"[\W_]+", " ", text.lower(), flags=re.UNICODE).split())


@functools.cache
def schema_words(schema: type[BaseModel]) -> frozenset[str]:
    """A schema's own words, normalized: field names, titles and descriptions (nested models too)."""
    words: set[str] = set()
    for name, info in schema.model_fields.items():
        words |= {normalized(name), normalized(info.title or ""), normalized(info.description or "")}
        for sub in _models_in(info.annotation):
            words |= schema_words(sub)
    return frozenset(w for w in words if w)


def _models_in(annotation: object) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in getattr(annotation, "__args__", ()) for m in _models_in(arg)]


@functools.lru_cache(maxsize=256)
def topic_words(topic: str) -> frozenset[str]:
    """The content words (stems) of what an answer must be about."""
    return frozenset(content_tokens(topic))


def on_topic(text: str, topic: frozenset[str]) -> bool:
    prefixes = {word[:TOPIC_PREFIX] for word in topic}
    return any(word in topic or word[:TOPIC_PREFIX] in prefixes for word in content_tokens(text))


def problem(text: str, rule: ItemRule, echoes: frozenset[str], topic: frozenset[str] | None) -> str | None:
    """Why one item is not usable (None: it is)."""
    lowered = text.lower().strip()
    if not _ALNUM.search(lowered):
        return "punctuation only" if lowered else "empty"
    if lowered.strip(" .!?\"'<>[](){}") in _EMPTY_VALUES:
        return "a placeholder"
    words = _WORD.findall(lowered)
    if (
        words
        and all(w in _SLOT_NOUNS or w in _FILLER for w in words)
        and any(w in _SLOT_NOUNS for w in words)
    ):
        return "a placeholder"
    key = normalized(text)
    if key in echoes or key in _JSON_WORDS:
        return "the schema's own words"
    if len(_ALNUM.findall(lowered)) < 3 or len(words) < rule.min_words:
        return "too short"
    if rule.on_topic and topic and not on_topic(text, topic):
        return "off topic (no word in common with the question)"
    if rule.statement and _not_a_statement(text, words):
        return "a question or a heading, not a statement"
    return None


def _not_a_statement(text: str, words: list[str]) -> bool:
    bare = re.sub(r"(\s*\[\d+\])+\s*$", "", text).rstrip()  # a trailing citation is not the sentence's end
    return bare.endswith("?") or (words[0] in _QUESTION_WORDS and not bare.endswith((".", "!", ";", ")")))


def screen(
    values: list[str], rule: ItemRule, echoes: frozenset[str], topic: frozenset[str] | None
) -> tuple[list[str], list[str]]:
    """The usable items (whitespace collapsed, first of duplicates kept, order kept) and, for each dropped
    one, a note saying what it was and why."""
    kept: dict[str, str] = {}
    dropped: list[str] = []
    for value in values:
        text = " ".join((value or "").split())
        why = problem(text, rule, echoes, topic)
        if why is None and normalized(text) in kept:
            why = "a duplicate"
        if why is not None:
            dropped.append(f"{_quoted(text)} {why}")
            continue
        kept[normalized(text)] = text
    return list(kept.values()), dropped


def shape_only(values: list[str]) -> list[str]:
    """Without an answer context (a receipt read back, an extractive value): whitespace, empties and exact
    duplicates only - a recorded value is never judged again."""
    kept: dict[str, str] = {}
    for value in values:
        text = " ".join((value or "").split())
        if text:
            kept.setdefault(text.lower(), text)
    return list(kept.values())


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _quoted(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")
