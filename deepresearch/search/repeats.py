"""What a corpus repeats: boilerplate blocks and duplicate documents, found by content, not by name.

A documentation set repeats its navigation, footer and licence notice on every page, and often ships one
page twice (a rendered page next to its markup source) or a fragment that other pages include. Quoted as
findings or cited as sources of their own, they make a report say nothing or cite one page twice.

- **Boilerplate**: a text block (a paragraph of the extracted text, not a heading nor a term) that stands in
  at least ``BOILERPLATE_SHARE`` of the corpus's documents, or that reads as a copyright, licence or "last
  updated" notice. The corpus index leaves these blocks out of the text it serves.
- **Duplicates**: a document whose sampled word 5-grams (shingles) lie for ``NEAR_COPY`` or more in one
  other document that holds as much of it in return (the same page twice), or for ``FRAGMENT`` or more in
  one document of a richer format (a page's Markdown or AsciiDoc source next to its HTML, whose markup breaks
  some shingles, or a fragment that pages include). The richer format is kept (HTML, Markdown, PDF before
  plain text), then the longer. A page held in a longer page is kept: a focused page is the better citation,
  and two manual pages that include the same long option list are still two pages. The longer page is left
  out instead when it is made of other pages (an aggregate: a single-page edition of a manual).
"""

from __future__ import annotations

import hashlib
import re
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath
from typing import NamedTuple

__all__ = [
    "BOILERPLATE_SHARE",
    "FRAGMENT",
    "NEAR_COPY",
    "Fingerprint",
    "block_key",
    "boilerplate",
    "duplicates",
    "fingerprint",
    "strip_boilerplate",
]

BOILERPLATE_SHARE = 0.1
"""A block in at least this share of the documents (and in BOILERPLATE_MIN of them) is boilerplate."""
BOILERPLATE_MIN = 3
NEAR_COPY = 0.9
"""Share of each document's shingles found in the other above which two documents are one."""
FRAGMENT = 0.6
"""Share of a document's shingles found in one document of a richer format (HTML before Markdown, PDF, plain
text) above which it is that page's source or a fragment it includes."""
AGGREGATE = 0.7
"""Share of a page made up of other whole pages above which it is an aggregate of them (see _aggregates)."""
_SHINGLE_WORDS = 5
_SAMPLE_MOD = 8  # one shingle in eight is kept (by hash): containment estimated from a sample
_MIN_SAMPLE = 3  # a text this short says too little to call it a copy of anything
_WORD = re.compile(r"[a-z0-9]+")
_DIGITS = re.compile(r"\d+")
# notices, whichever page carries them: "Copyright 2026 ...", "© 2020 ...", "Licensed under ...",
# "All rights reserved", "Last updated 2024-05-31", "This page last modified on ..."
_NOTICE = re.compile(
    r"^(?:copyright\b|©|\(c\)\s*\d{4}|licensed under\b|all rights reserved\b|"
    r"(?:this page )?last (?:updated|modified)\b)",
    re.IGNORECASE,
)
_NOTICE_CHARS = 300
# richer formats first: a rendered page keeps its headings, lists and tables; its source does not
_FORMAT_RANK = {".html": 0, ".htm": 0, ".md": 1, ".markdown": 1, ".pdf": 2}
_PLAIN_RANK = 3


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big", signed=True)


def block_key(block: str) -> int:
    """A block's identity across pages: case, spacing and numbers (years, versions, dates) ignored."""
    return _hash(_DIGITS.sub("0", " ".join(block.lower().split())))


def _blocks(text: str) -> list[str]:
    return [block.strip() for block in text.split("\n\n") if block.strip()]


def _is_heading(block: str) -> bool:
    return block.startswith("#")


_TERM_CHARS = 40


def _is_term(block: str) -> bool:
    """A definition list's short term ("-r:", "command:"): structure, as a heading is - the zsh manual's
    builtins share "-r:" over a different description each, and with the term left out each description
    read as the term's before it ("-R [ n ]:" labelled typeset's -U)."""
    return block.endswith(":") and len(block) <= _TERM_CHARS and "\n" not in block


def _is_notice(block: str) -> bool:
    return len(block) <= _NOTICE_CHARS and bool(_NOTICE.match(block))


class Fingerprint(NamedTuple):
    """What the index stores per document to find boilerplate and copies later: its blocks' keys and a
    sample of its shingles, each as packed 64-bit integers."""

    blocks: bytes
    shingles: bytes


def fingerprint(text: str) -> Fingerprint:
    blocks = sorted({block_key(b) for b in _blocks(text) if not _is_heading(b)})
    words = _WORD.findall(text.lower())
    shingles = {
        _hash(" ".join(words[i : i + _SHINGLE_WORDS])) for i in range(max(0, len(words) - _SHINGLE_WORDS + 1))
    }
    sample = sorted(h for h in shingles if h % _SAMPLE_MOD == 0)
    return Fingerprint(array("q", blocks).tobytes(), array("q", sample).tobytes())


def _unpack(data: bytes | None) -> list[int]:
    values = array("q")
    if data:
        values.frombytes(data)
    return values.tolist()


def boilerplate(blocks_per_document: Sequence[bytes | None]) -> set[int]:
    """The keys of the blocks that stand in at least BOILERPLATE_SHARE of the documents."""
    counts: Counter[int] = Counter()
    for data in blocks_per_document:
        counts.update(set(_unpack(data)))
    least = max(BOILERPLATE_MIN, BOILERPLATE_SHARE * len(blocks_per_document))
    return {key for key, count in counts.items() if count >= least}


def strip_boilerplate(text: str, keys: set[int] | frozenset[int]) -> str:
    """The text without its boilerplate blocks and notices (headings and terms always stay: structure)."""
    kept = [
        block
        for block in _blocks(text)
        if _is_heading(block)
        or _is_term(block)
        or not (_is_notice(block) or (keys and block_key(block) in keys))
    ]
    return "\n\n".join(kept)


def _format_rank(path: str) -> int:
    name = PurePosixPath(path).name.lower()
    return _FORMAT_RANK.get(PurePosixPath(name).suffix, _PLAIN_RANK)


def duplicates(documents: Iterable[tuple[int, str, bytes | None]]) -> dict[int, int]:
    """Which documents are copies or fragments of another: {file id: id of the document kept instead}.

    ``documents`` are (file id, corpus-relative path, packed shingle sample). Shingles found in many
    documents (navigation, licence text) say nothing about copying and are not counted."""
    samples = {file_id: (path, set(_unpack(data))) for file_id, path, data in documents}
    df: Counter[int] = Counter()
    for _, shingles in samples.values():
        df.update(shingles)
    common = max(25, len(samples) // 10)
    own = {file_id: {h for h in shingles if df[h] <= common} for file_id, (_, shingles) in samples.items()}
    holders: defaultdict[int, list[int]] = defaultdict(list)
    for file_id, shingles in own.items():
        for h in shingles:
            if df[h] > 1:
                holders[h].append(file_id)
    shared: defaultdict[int, Counter[int]] = defaultdict(Counter)
    for ids in holders.values():
        for a in ids:
            for b in ids:
                if a != b:
                    shared[a][b] += 1
    # richer format first, then the longer document (a container before what it contains), then the path
    order = sorted(samples, key=lambda i: (_format_rank(samples[i][0]), -len(own[i]), samples[i][0]))
    kept: set[int] = set()
    dropped: dict[int, int] = {}
    for file_id in order:
        size, rank = len(own[file_id]), _format_rank(samples[file_id][0])
        holder = None
        for other, count in shared[file_id].most_common() if size >= _MIN_SAMPLE else ():
            if count < FRAGMENT * size:
                break
            # a page's source in a poorer format, or an include fragment; or the same page twice
            source = _format_rank(samples[other][0]) < rank
            copy = count >= NEAR_COPY * size and shared[other][file_id] >= NEAR_COPY * len(own[other])
            if other in kept and (source or copy):
                holder = other
                break
        if holder is None:
            kept.add(file_id)
        else:
            dropped[file_id] = holder
    dropped |= _aggregates(kept, own, shared)
    return dropped


def _aggregates(kept: set[int], own: dict[int, set[int]], shared: dict[int, Counter[int]]) -> dict[int, int]:
    """Pages made of other pages (a manual's single-page edition, a reference that repeats every entry): a
    page that holds two or more kept pages whole (NEAR_COPY of each), which together make up AGGREGATE of
    it, is left out for the pages it is made of - each is the focused citation for its part."""
    holding: defaultdict[int, list[int]] = defaultdict(list)
    for part in kept:
        if len(own[part]) < _MIN_SAMPLE:
            continue
        for whole, count in shared[part].items():
            if whole in kept and len(own[whole]) > len(own[part]) and count >= NEAR_COPY * len(own[part]):
                holding[whole].append(part)
    found: dict[int, int] = {}
    for whole, parts in holding.items():
        covered = set().union(*(own[part] for part in parts)) & own[whole]
        if len(parts) >= 2 and len(covered) >= AGGREGATE * len(own[whole]):
            found[whole] = max(parts, key=lambda part: len(own[part]))
    return found
