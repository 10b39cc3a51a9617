"""A question's clauses: where one ends (a question mark, a semicolon, ", and what ...", a full stop before a
capital) and which of them ask (a question word or an auxiliary first) rather than set the scene."""

from __future__ import annotations

import re
from collections.abc import Mapping

from deepresearch.extractive.asking.asked import as_asked
from deepresearch.extractive.asking.phrases import noun_phrases

__all__ = ["ASKS", "QUOTED", "asker_condition", "quoted_stops", "split_clauses"]

_WH = r"what|how|which|why|when|where|who|is|are|does|do|can|should"
# a clause ends at a question mark, a semicolon, ", and what ..." or a full stop before a capital ("My
# server is eating the CPU. How can I see ...", "... fails with 'Could not find ...'. Where does ...")
_CLAUSE_SPLIT = re.compile(
    rf"\?\s+|;\s+|(?<=[a-z0-9)'\"’”])(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\betc)\.\s+(?=[A-Z])|"
    # ... or a quotation's closing mark after its own full stop ("... in a production deployment.' We want")
    r"(?<=[.?!])['\"’”]\s+(?=[A-Z])|"
    rf",?\s+(?:and|but|or)\s+(?=(?:{_WH})\b)|"
    # "Can I edit it by hand, or will my changes get lost?": a second question
    r",\s+or\s+(?=(?:will|would|could)\s+(?:i|we|you|my|our|it|they|the)\b)",
    re.IGNORECASE,
)
# a clause that asks: it opens with a question word or an auxiliary; any other is a statement that sets the
# scene ("I host thousands of customer sites; can Apache serve them ...?"), and so is one opening on "When I
# ..., " with no question after its comma ("When I run gnuplot x.gp, the plot window disappears." had a "?")
_AUXILIARY = (
    rf"{_WH}|was|were|did|could|would|will|may|might|must|has|have|had|isn't|aren't|doesn't|don't|can't|won't|"
    r"shouldn't"
)
# ... not a clause of when or where something happens, then what happens ("When the Wi-Fi drops in the middle
# of a backup, the next runs fail ..."), with or without its comma ("when enc01 is restarted those tasks wait
# even longer") - "When did it fail, and why?", "When it fails, how do I ...?" and "When it fails what do I
# do?" ask
_SCENE_WHEN = rf"(?:when|whenever|where)\s+(?!(?:{_AUXILIARY}|to)\b)"
ASKS = re.compile(
    rf"^(?!{_SCENE_WHEN}(?:[^,]*,\s*+(?!(?:{_WH})\b)|(?:(?!\b(?:what|how|which|why|who)\b)[^,])*$))"
    rf"(?:{_AUXILIARY})\b",
    re.IGNORECASE,
)


def split_clauses(question: str, why: bool = True) -> list[str]:
    """The question's clauses, as asked (see asked.as_asked), in order; at least one."""
    question = as_asked(" ".join(question.split()).strip(), why)
    question = quoted_stops(_CODE_STATEMENT.sub(lambda code: code.group().replace(";", "\0"), question))
    parts = [c.strip(" ?.,") for c in _CLAUSE_SPLIT.split(question) if len(c.strip(" ?.,").split()) >= 2]
    parts = [_ASIDE.sub(r" (\1)", part).strip(" —–") for part in parts]
    parts = [_FOLLOW_UP.sub("", part) for part in parts] or [question.strip(" ?.")]
    return [_unquoted(part) for part in parts]  # (a code statement's ";" is QUOTED's mark too)


# code a question quotes ("Why does a = a.transpose(); give me ...?"): its ";" ends no clause (nor a quote's)
_CODE_STATEMENT = re.compile(rf"(?:[\w.]+\s*=\s*[^;?]*|\b\w+\([^()]*\));(?!\s*(?:{_WH})\b)", re.I)
# an aside between dashes, or one a dash opens at the clause's end: "Which session backend should I choose
# — database, cache, or signed cookies — and ...?" asked "Which session backend should I choose — ... —?"
_ASIDE = re.compile(r"\s+[—–]\s*([^—–]+?)\s*(?:[—–]|$)")

# "Can I use flask run in production? If not, what should I use instead?": the condition is the answer to
# the clause before; what the clause asks comes after it ... and "And what happens to the others?" after "?"
# asks what it asks (it read as a condition, "... when And what happens to the others?")
_FOLLOW_UP = re.compile(
    rf"^(?:(?:if\s+(?:not|so|yes|no)|otherwise|and\s+if\s+not)\s*,|and|but|also|plus)\s*(?=(?:{_WH})\b)", re.I
)


_ASKER_CAN = re.compile(
    r"\b(?:when|if|since|although|because)\s+(?:i|we)\s+(?:can|could|have|am|already)\b([^,;?]*)", re.I
)


def asker_condition(question: str) -> tuple[str, str]:
    """The question before a condition on what the asker can already do, and that condition ("when I can edit
    the main server configuration"); ("", "") when there is none or nothing is named before it."""
    match = _ASKER_CAN.search(question)
    if match is None or not noun_phrases(question[: match.start()]):
        return "", ""
    return question[: match.start()], match.group(1)


QUOTED = {";": "\0", ".": "\1", "?": "\2", "!": "\3"}
"""What a quotation's own stops stand for while a question is cut into clauses (see quoted_stops)."""


def _unquoted(text: str) -> str:
    for stop, mark in QUOTED.items():
        text = text.replace(mark, stop)
    return text


def quoted_stops(text: str, marks: Mapping[str, str] = QUOTED) -> str:
    """The text with each ";" inside a quotation, and each full stop, "?" and "!" before a space there,
    replaced by its ``marks``: "we get 'Parent instance is not bound to a Session; lazy load operation of
    attribute 'customer' cannot proceed'. How do we fix this?" quotes one error message, not two clauses,
    and so does "the log says 'WARNING: This is a development server. Do not use it in a production
    deployment.'" (Flask's). A quote opens after a space and closes before one (not "Friday's"); one that
    never closes ("the '90s; how do I ...?") masks nothing."""
    out, depth, held = list(text), 0, []
    for i, char in enumerate(text):
        before, after = text[i - 1] if i else " ", text[i + 1] if i + 1 < len(text) else " "
        if char in "'\"‘’“”" and (before.isspace() or before in "([") and not after.isspace():
            depth += 1
        elif char in "'\"‘’“”" and depth and not before.isspace() and (after.isspace() or after in ".,;:?!)"):
            depth -= 1
            if depth == 0:  # the quotation closed: its semicolons were its own
                for k in held:
                    out[k] = marks.get(text[k], text[k])
                held = []
        elif depth and (char == ";" or (char in ".?!" and after.isspace())):
            held.append(i)
    return "".join(out)
