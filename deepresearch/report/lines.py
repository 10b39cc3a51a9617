"""A finding as a line of the report: its section's label, then the quote with its citation before each
sentence's closing punctuation (the citation check reads the line sentence by sentence); quotes that follow
one another in a section read as one paragraph; no sentence is quoted twice (Ledger)."""

from __future__ import annotations

import re
from typing import Any

from deepresearch.extractive.reading.sentences import NEAR_DUPLICATE
from deepresearch.extractive.reading.text import content_tokens, split_sentences
from deepresearch.report.findings import named_terms, parallel
from deepresearch.report.render import markdown_text, stray_backticks

__all__ = ["Ledger", "cite", "paragraphs", "passages_by_place", "reading_order"]


class Ledger:
    """The sentences the report has used: each is quoted once in the whole report, and a near-copy of one
    (the same sentence in a page's HTML and in its source file) counts as the same sentence, and so does one
    quoted with its code sample and again without it ("A typical configuration ... might look as follows.
    `LogFormat ...`", then the sentence alone): a sentence's words are read without its inline code."""

    def __init__(self) -> None:
        self._used: list[tuple[set[str], bool, frozenset[str]]] = []

    def take(self, statement: str) -> bool:
        """Record the statement's sentences; False (and nothing recorded) if any of them is used already."""
        said = split_sentences(statement) or [statement]
        names = named_terms(statement)  # of the whole quote: "This value defaults to 3" is said of "fall"
        sentences = [(_words(s), _denies(s), names) for s in said]
        if any(self._seen(*sentence) for sentence in sentences):
            return False
        self._used += sentences
        return True

    def _seen(self, terms: set[str], denies: bool, names: frozenset[str]) -> bool:
        # ... but one that says "not" where the other does not is its contrary, whatever words they share:
        # CMake's "Libraries and targets following PRIVATE are linked to, but are not made part of the link
        # interface." had taken the place of its PUBLIC sentence, "... and are made part of ..."
        # ... and so is one that says it of another name ("The "fall" parameter states ...", after "rise")
        return any(
            denies == said_no and _near(terms, used) and not parallel(names, named)
            for used, said_no, named in self._used
        )


def _denies(sentence: str) -> bool:
    """Whether the sentence says no (an odd count of negations: "not without" says yes)."""
    return len(_NEGATION.findall(sentence)) % 2 == 1


_INLINE_CODE = re.compile(r"`[^`]*`")


def _words(sentence: str) -> set[str]:
    """A sentence's content words without its inline code, or with it when it is (almost) all code."""
    prose = set(content_tokens(_INLINE_CODE.sub(" ", sentence)))
    return prose if len(prose) >= 3 else set(content_tokens(sentence))


def cite(finding: dict[str, Any]) -> str:
    """A finding as a report line: its section (when it names the subject), then the quote with the citation
    before each sentence's closing punctuation, so every quoted sentence is checked on its own."""
    return _line(finding.get("section") or "", _cited(finding))


def _line(section: str, quoted: str) -> str:
    return (_label(section) + ": " if section else "") + quoted


def _cited(finding: dict[str, Any]) -> str:
    marks, said = "".join(f"[{n}]" for n in finding["citations"]), markdown_text(finding["statement"].strip())
    return " ".join(
        f"{sentence[:-1]} {marks}{sentence[-1]}"
        if sentence[-1:] in ".!?" and not _ABBREVIATION.search(sentence)
        else f"{sentence} {marks}"
        for sentence in _distinct(split_sentences(said) or [said])
    )


# a sentence that ends on an abbreviation keeps its full stop: "... without the prefix, i.e. [1]" (Flask)
_ABBREVIATION = re.compile(r"\b(?:i\.e|e\.g|etc|cf|vs|approx)\.$", re.IGNORECASE)


UNIT_REPEAT = 0.6
"""Share of their words (Jaccard) at which a quote's sentence says again what the one before it said."""


def _distinct(sentences: list[str]) -> list[str]:
    """A quote's sentences without one that repeats the sentence before it: an option's one-line summary
    and its description's first sentence ("Sets the maximum UDP size sent by named. This sets the maximum
    UDP size that named sends, in bytes.") say one thing; the first is kept, it leans on nothing."""
    kept = sentences[:1]
    for sentence in sentences[1:]:
        before, words = _words(kept[-1]), _words(sentence)
        alike = before and words and len(before & words) / len(before | words) >= UNIT_REPEAT
        # ... saying it the same way: not "is flushed" then "is not flushed", nor `wick_min` then `wick_max`
        same = _NEGATION.findall(kept[-1].lower()) == _NEGATION.findall(sentence.lower())
        if not (
            alike and same and set(_INLINE_CODE.findall(kept[-1])) == set(_INLINE_CODE.findall(sentence))
        ):
            kept.append(sentence)
    return kept


def _near(terms: set[str], used: set[str]) -> bool:
    """The same sentence, or a near-copy of it: one that adds or drops a few words. One that says another word
    in a place of its own ("via the prefix argument" / "via the loads argument", "will be included" / "will
    be excluded") says something else, unless it shares nearly all (SAME_WORDS)."""
    if terms == used or not (terms and used):
        return terms == used
    shared = len(terms & used) / len(terms | used)
    return shared >= (SAME_WORDS if terms - used and used - terms else NEAR_DUPLICATE)


SAME_WORDS = 0.9


_NEGATION = re.compile(r"\b(?:not|no|never|none|nothing|without|cannot)\b|n't\b")


def paragraphs(findings: list[dict[str, Any]], passages: dict[tuple[str, int], str]) -> list[str]:
    """Findings in reading order as report lines, a quote that follows the one before it in the same section
    of the same source on that quote's line: a section's explanation reads as a paragraph under its name,
    not as the name repeated on every line. ``passages``: each evidence passage's text by sub-question and
    place (a finding's ``order`` is [place, position]). Only a quote that comes right after the other in
    that one's passage, nothing between them, continues a line, and only where the citation check will
    still read the line sentence by sentence, each with its citation (not after "Default: `off`", nor
    after a lone backtick). Lines of one section of one source in a row are items under its name, named
    once (a tutorial's "*Using Git for collaboration*:" opened ten lines in a row)."""
    lines: list[tuple[str, str, str]] = []  # (section, citations, quotes) per line
    previous: dict[str, Any] | None = None
    for finding in findings:
        quoted, section = _cited(finding), finding.get("section") or ""
        marks = "".join(f"[{n}]" for n in finding["citations"])
        joined = f"{lines[-1][2]} {quoted}" if lines else quoted
        if (
            previous is not None
            and _follows(previous, finding, passages)
            and split_sentences(joined) == [*split_sentences(lines[-1][2]), *split_sentences(quoted)]
        ):
            lines[-1] = (section, marks, joined)
        else:
            lines.append((section, marks, quoted))
        previous = finding
    out: list[str] = []
    for i, (section, marks, quoted) in enumerate(lines):
        before = lines[i - 1][:2] if i else None
        after = lines[i + 1][:2] if i + 1 < len(lines) else None
        if section and (section, marks) in (before, after):
            if before != (section, marks):
                out.append(f"- {_label(section)}:")
            out.append(f"  - {quoted}")
        else:
            out.append(f"- {_line(section, quoted)}")
    return out


def _follows(before: dict[str, Any], after: dict[str, Any], passages: dict[tuple[str, int], str]) -> bool:
    """``after`` is quoted right after ``before`` in ``before``'s passage, same section, same source."""
    place = (before.get("order") or [None])[0]
    text = passages.get((before["sub_question"], place), "") if isinstance(place, int) else ""
    pair = " ".join(f"{before['statement']} {after['statement']}".split())
    return (
        before.get("section") == after.get("section")
        and before["citations"] == after["citations"]
        and bool(text)
        and pair in text
    )


def passages_by_place(state: dict[str, Any]) -> dict[tuple[str, int], str]:
    """Each evidence passage's text (spaces normalised) by sub-question and its place among that
    sub-question's evidence, as the reviewers number them (report/findings.py)."""
    evidence = state.get("evidence", [])
    found: dict[tuple[str, int], str] = {}
    for index, sub_question in enumerate(state["plan"]["sub_questions"]):
        items = [e for e in evidence if e.get("sub_question_index") == index]
        for place, item in enumerate(items):
            found[(sub_question, place)] = " ".join(str(item.get("passage", "")).split())
    return found


def reading_order(findings: list[dict[str, Any]], state: dict[str, Any]) -> list[dict[str, Any]]:
    """The findings as a reader meets them: the sources in the order of their first quote's passage in the
    evidence, and a source's quotes in its page's order - passage, then sentence (a finding's ``order`` is
    [place, position]). By place alone, an answering section's passage, read for the question as a whole,
    came before the passage before it on the page: BIND's "This key may then be copied to both hosts"
    stood eleven lines above the tsig-keygen sentence it follows."""
    page: dict[tuple[str, int], int] = {}
    for index, sub_question in enumerate(state["plan"]["sub_questions"]):
        items = [e for e in state.get("evidence", []) if e.get("sub_question_index") == index]
        for place, item in enumerate(items):
            number = str(item.get("passage_id", "")).rpartition(".")[2]
            page[(sub_question, place)] = int(number) if number.isdigit() else place

    def where(finding: dict[str, Any]) -> tuple[int, int]:
        place, position = [*(finding.get("order") or []), 0, 0][:2]
        return page.get((finding["sub_question"], place), place), position

    first: dict[int, int] = {}
    for finding in findings:
        n = finding["citations"][0] if finding.get("citations") else 0
        first[n] = min(first.get(n, 10**9), int((finding.get("order") or [0])[0]))
    return sorted(
        findings,
        key=lambda f: (first[f["citations"][0] if f.get("citations") else 0], *where(f)),
    )


_PLAIN_WORD = re.compile(r"[A-Za-z]{2,}")


def _label(section: str) -> str:
    """A quote's section in italics; a name with Markdown's own characters in it ("__init__(self, *args)",
    "dataclass(*, init=True)") as code, where they read as written rather than as emphasis. A heading in
    words that holds such a name ("Apache Module mod_cache") is prose: in italics, the characters escaped."""
    if not re.search(r"[*_\\`\[\]]", section):
        return f"*{section}*"
    words = section.split()
    if "`" in section or 2 * sum(_PLAIN_WORD.fullmatch(w) is not None for w in words) >= len(words) > 1:
        # its code spans as code, a TeX-style "`export'" as written (the zsh FAQ's), brackets no link
        return "*" + stray_backticks(re.sub(r"([*_\\\[\]])", r"\\\1", section)) + "*"
    return f"`{section}`"
