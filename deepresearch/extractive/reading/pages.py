"""What a page or a section is, told by its headings and its lines: navigation (a table of contents, "See
also", an index, a version banner), an FAQ's entries and its index of questions, release notes, a table's
header or navigation row - nothing to quote, nor to read as an answer - and the name a section's quotes are
labelled with."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from deepresearch.extractive.reading.leaning import ADMONITIONS, asks
from deepresearch.extractive.reading.text import LIST_ITEM, section_label


def faq_entries(sections: Sequence[tuple[int, tuple[str, ...]]]) -> set[int]:
    """The sections (by index) that are an FAQ's entries: headed by a question among siblings - the sections
    under the same heading of the same page - two or more and at least half of which ask. A guide's section
    titled by a question among others that are not ("How Do I Know I Have a Validation Problem?", BIND's
    DNSSEC guide) goes on with the guide; an FAQ's next entry answers another question."""
    parents = [(n, headings[:-1]) for n, headings in sections]
    asking = [bool(headings) and headings[-1].rstrip().endswith("?") for _, headings in sections]
    siblings = Counter(parents)
    questions = Counter(p for p, a in zip(parents, asking, strict=True) if a)
    return {
        i
        for i, p in enumerate(parents)
        if asking[i] and questions[p] >= 2 and 2 * questions[p] >= siblings[p]
    }


def question_index(passage: str) -> bool:
    """The passage lists questions: QUESTION_INDEX list items or more that ask, and they are two lines in
    three of it - an FAQ's index, whose other entries are its questions put as statements ("Case-insensitive
    matching of Unicode characters does not work."), each answered in a section of its own. Not questions
    each followed by its answer, nor a checklist with a question or two."""
    lines = [line.strip() for line in passage.splitlines() if line.strip() and not line.startswith("#")]
    asking = sum(1 for line in lines if LIST_ITEM.match(line) and asks(line))
    return asking >= QUESTION_INDEX and 3 * asking >= 2 * len(lines)


QUESTION_INDEX = 3


# a page's navigation, not its content: a table of contents or a list of links to other pages, whose
# entries ("How to check out a different version of a project:") read like sentences once flattened; and a
# paper's list of references ("[7] Ingo Molnar. Re: BUG 2.6.23-rc3 ...": a title, and a "[7]" that reads
# as a citation marker)
_NAVIGATION = re.compile(
    r"^(?:\d+(?:\.\d+)*\.?\s*)?(?:(?:table of )?contents|see also|on this page|related (?:pages|topics)"
    r"|references|bibliography|acknowledge?ments|credits|colophon)$",
    re.IGNORECASE,
)


# a book's index, under its letters ("Chapter 63 - Concept Index" > "K": "Kaspersky:" over the chapters that
# name it, quoted in the Exim specification's reports as findings); not a list of modules with what they do
_INDEX = re.compile(
    r"^(?:(?:chapter\s+)?\d+(?:\.\d+)*\.?\s*(?:[-–—:]\s*)?)?"
    r"(?:(?:general|concept|option|variable|subject|keyword|command|program)\s+)?index$",
    re.IGNORECASE,
)


def navigation(headings: Sequence[str]) -> bool:
    """Whether a section headed so (its heading path) is navigation or a list of references: nothing to
    quote, nor to read as an answer (screening)."""
    heading = " ".join(headings[-1].replace("*", "").split()) if headings else ""
    indexed = any(_INDEX.match(" ".join(h.replace("*", "").split())) for h in headings)
    return bool(headings) and (
        _NAVIGATION.match(heading) is not None or _BANNER.match(heading) is not None or indexed
    )


# a manual's version banner, "version 2.6.12-1+deb12u4 (Debian)" (haproxy-doc: over a note to the manual's
# contributors, quoted in 11 of 12 reports) - not a release's section, "Version 1.2.4 (2023-03-24)"
_BANNER = re.compile(r"^version v?\d[\w.+~:-]*(?: \([^)\d]*\))?$")


# a section of release notes: "Version 1.2.4 (2023-03-24)", "Changes in version 3.45.0", "2.4.1 - 2023-01-02",
# "2022-12-28 (3.40.1)"
_RELEASE = re.compile(
    r"^(?:(?:version|release|changes in(?: version)?|what['’]s new in)\s+v?\d+(?:\.\d+)+|"
    r"v?\d+\.\d+(?:\.\d+)*\s*(?:\(|[-–—]|$)|\d{4}-\d\d-\d\d\s+\(v?\d+(?:\.\d+)+\))",
    re.IGNORECASE,
)
RELEASE_SECTIONS = 3


def release_pages(passages: Iterable[Mapping[str, Any]]) -> set[int]:
    """The pages (source numbers) of release notes among the passages: titled so ("Change history for
    Celery 2.1", "Changelog"), or with at least RELEASE_SECTIONS sections, half of them or more under a
    release's heading ("2.1.4" > "Fixes"). Such a page holds every word of its manual once, in passing:
    "1.1.11 removes WSL autodetection" answers no how or why."""
    sections: dict[int, set[tuple[str, ...]]] = {}
    for p in passages:
        sections.setdefault(p["n"], set()).add(tuple(" ".join(h.split()) for h in p["headings"] or [""]))
    released = {
        n: sum(any(_RELEASE.match(h) for h in path) for path in paths) for n, paths in sections.items()
    }
    titled = {n for n, paths in sections.items() if any(_HISTORY.match(path[0]) for path in paths)}
    return titled | {
        n for n, count in released.items() if count >= RELEASE_SECTIONS and 2 * count >= len(sections[n])
    }


_HISTORY = re.compile(
    r"^(?:(?:change ?log|change history|release notes|release history|history of changes)\b|"
    # "What’s new in Celery 4.0 (latentcall)": its sections are topics ("Canvas Refactor"), not releases
    r"what['’]s new in\b.*\d+\.\d+)",
    re.I,
)


# a Markdown table's row ("| field | effect |", "|---|---|"): never quoted, nor added to the sentence before
_TABLE_ROW = re.compile(r"^\|.*\|$")
_NAVIGATION_CELLS = frozenset(("prev", "previous", "up", "next", "home"))


def table_row(text: str) -> bool:
    """A table's header row, or a page's navigation row (DocBook's "Prev | Up | Next" and "Chapter 7.
    Security Considerations | Home | Chapter 9. Reference", quoted as a finding): never quoted. The rows
    stay in the corpus text: PostgreSQL's name the page's chapter (bench/quality/JOURNAL.md, session 37)."""
    if _TABLE_ROW.match(text):
        return True
    cells = [cell.strip().lower() for cell in text.split("|")]
    links = sum(cell in _NAVIGATION_CELLS for cell in cells)
    return 2 <= len(cells) <= 6 and (links >= 2 or (len(cells) == 3 and cells[1] == "home"))


def section_name(headings: Sequence[str]) -> str:
    """The label of a passage's quotes: its section's short name - not the page's own title, which names
    nothing the source list does not, nor an admonition's ("Note", "Tip": DocBook titles its box with a
    heading, and the text after the box was labelled "Note" in mutt's and PostgreSQL's reports; ending the
    box's section in the corpus text instead cost PostgreSQL a fact: bench/quality/JOURNAL.md, session 38)."""
    if len(headings) > 1 and section_label(headings[-1]).lower() in ADMONITIONS:
        headings = headings[:-1]
    return section_label(headings[-1]).replace("*", "").replace("`", "") if len(headings) > 1 else ""
