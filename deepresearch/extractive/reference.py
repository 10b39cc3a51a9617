"""What a pronoun or a demonstrative of the question stands for, said in the sub-questions in full.

A question written the way people write it leans on what it said before: "I renamed a file with git mv; how
do I see its history?" (the file's), "..., and what happens when it is stale?" (what the clause before said
was still fresh), "Are NULLs treated as equal ...?, and how does that compare with other engines?" (the
NULLs). A sub-question is read on its own - as a section's heading and as a search - so it says it.
"""

from __future__ import annotations

import re

from deepresearch.extractive.phrases import Phrase, noun_phrases, verbs
from deepresearch.extractive.wordclasses import PARTICIPLES

_PRONOUN_ITS = re.compile(r"\b(?:its|their)\s+(\w+)", re.IGNORECASE)
_PRONOUN_IT = re.compile(r"\b(it|they|them)\b", re.IGNORECASE)


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
    after "whether a cached response is still fresh" is when the cached response is stale."""
    said = re.search(rf"\bit(?={_STATE})", clause, re.IGNORECASE)
    if said is None:
        return clause
    for phrase in noun_phrases(before):
        if re.search(rf"\b{re.escape(phrase.text)}{_STATE}", before, re.IGNORECASE):
            owner = re.sub(r"^(?:a|an)\s+", "the ", phrase.text, flags=re.IGNORECASE)
            return f"{clause[: said.start()]}{owner}{clause[said.end() :]}"
    return clause


def from_scene(clause: str, statements: list[str]) -> str:
    """ "it" and "them" in the first question, resolved to a statement's subject and its plural noun."""
    phrases = [p for statement in statements for p in noun_phrases(statement)]
    subject = next((p for p in phrases if p.role == "subject" and not _PERSONAL.match(p.text)), None)
    # "them": a coordination or a plural noun the statement names ("my username and password"), not a name
    # in capitals ("HTTPS")
    plural = next(
        (p for p in phrases if p.role != "subject" and (p.items or (p.plural and not p.head.isupper()))), None
    )
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
    owner = _lower_possessive(re.sub(r"^(?:a|an)\s+", "the ", done_to.text, flags=re.IGNORECASE))
    return f"{clause[: said.start()]}{owner}'s{clause[said.end() :]}"


_SENTENCE_OPENERS = frozenset(
    ["my", "our", "your", "the", "a", "an", "this", "these", "that", "those", "every", "all", "some", "we"]
)


def inline(sentence: str) -> str:
    """A sentence continued inside another: its capital dropped where it only opened the sentence."""
    first, _, rest = sentence.partition(" ")
    return f"{first.lower()} {rest}".strip() if first.lower() in _SENTENCE_OPENERS else sentence


_PERSONAL = re.compile(r"^(?:i|we|you)$", re.IGNORECASE)


def _lower_possessive(text: str) -> str:
    """ "My server" inside a sentence is "my server"."""
    first, _, rest = text.partition(" ")
    return f"{first.lower()} {rest}".strip() if first.lower() in ("my", "our", "your") else text


def resolve_pronouns(clause: str, topic: str) -> str:
    """ "what are its limits" -> "what are the limits of <topic>"; a bare "it" becomes the topic."""
    if not topic or topic.lower() in clause.lower():
        return clause
    clause = _PRONOUN_ITS.sub(lambda m: f"the {m.group(1)} of {topic}", clause, count=1)
    return _PRONOUN_IT.sub(topic, clause, count=1)
