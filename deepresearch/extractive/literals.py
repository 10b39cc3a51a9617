"""A question's literals: what a user copies from a screen rather than words they choose - an identifier
("g2414721", "AH00558", "SQLITE_BUSY", "RequestReadTimeout") or a quoted string of two words or more (an
error message). The page that holds a literal few other pages hold is the page about it, whatever the
question's other words say: search ranks it up (search/ranking.py) and screening reads it as relevant
(extractive/screening.py). Command-line options are literals too, but the search tokenizer cannot see
them ("-S" is the word "s"), so search looks for them apart."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["holds", "holds_option", "literals", "options", "page_shares", "telling", "words"]

# letters and digits (a hash, an error code, "utf8mb4"; not a quantity or an ordinal: "512MB", "1500ms",
# "100th"), words joined by underscores ("SQLITE_BUSY", "json_extract", "__init__"), camelCase and CamelCase
# ("RequestReadTimeout"). Not a dotted name: "user.email" is on every page that shows a setup, where
# git-config(1) is the page about it (git-dev2 conditional-config-include lost its answer to it)
_IDENTIFIER = re.compile(
    r"(?<![\w.])(?:"
    r"(?=[A-Za-z_]*\d)(?=\d*[A-Za-z])(?!\d+[A-Za-z]+(?![\w.]))\w{5,}"
    r"|__\w+__|[A-Za-z]\w*_\w*[A-Za-z0-9]"
    r"|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*"
    r")(?![\w.]\w)"
)
# a quote in double, curly or back quotes, or in single quotes not part of a word ("Apache's", "users'");
# quotes pair in their order ('"-S" is the "pickaxe search"' holds two)
_QUOTED = re.compile(r"\"([^\"]*)\"|\u201c([^\u201d]*)\u201d|`([^`]*)`|(?<!\w)'([^']*)'(?!\w)")
_WORD = re.compile(r"\w+")
MAX_LITERALS = 6
_OPTION = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*")
MAX_OPTIONS = 4


def options(question: str) -> list[str]:
    """The command-line options a question names ("-S", "--pickaxe-all"), sorted."""
    return sorted(set(_OPTION.findall(question)))[:MAX_OPTIONS]


def holds_option(text: str, option: str) -> bool:
    """Whether a text holds the option as an option: not inside a word or a longer option ("-S" is not in
    "--Sign" nor in "TLS-S"), followed by anything else ("-S<string>", "-S,")."""
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text) is not None


def literals(question: str) -> list[str]:
    """The identifiers and quoted strings of a question, as typed, in their order. A quoted single word is
    not one ("the 'master' branch" only stresses a word)."""
    found = _IDENTIFIER.findall(question)
    for groups in _QUOTED.findall(question):
        quoted = "".join(groups).strip()
        if 3 <= len(quoted) <= 120 and len(_WORD.findall(quoted)) >= 2:
            found.append(quoted)
    return list(dict.fromkeys(found))[:MAX_LITERALS]


def words(literal: str) -> tuple[str, ...]:
    """A literal as the run of lower-case words a text must hold side by side."""
    return tuple(_WORD.findall(literal.lower()))


def holds(text_words: tuple[str, ...] | list[str], literal: tuple[str, ...]) -> bool:
    """Whether the words of a text hold the literal's words side by side."""
    if not literal:
        return False
    n = len(literal)
    first = literal[0]
    return any(
        text_words[i] == first and tuple(text_words[i : i + n]) == literal
        for i in range(len(text_words) - n + 1)
    )


def telling(held: Iterable[set[int]], most: int) -> dict[int, float]:
    """From the documents holding each literal, the share of the telling literals - those at most `most`
    documents hold, and at least one - that each document holds (only documents that hold one)."""
    chosen = [files for files in held if 0 < len(files) <= most]
    shares: dict[int, float] = {}
    for files in chosen:
        for file_id in files:
            shares[file_id] = shares.get(file_id, 0.0) + 1 / len(chosen)
    return shares


def page_shares(question: str, passages: Sequence[Mapping[str, Any]]) -> dict[int, float]:
    """The share of the question's telling literals each fetched page holds (screening.py LITERAL_PRIOR).
    Not its options: a page that holds "-f" or "-S" is not the page about the question by that alone (its
    passages on them are on topic: screening.py _holding_options)."""
    wanted = [words(literal) for literal in literals(question)]
    if not wanted:
        return {}
    texts: dict[int, list[str]] = {}
    titles: dict[int, tuple[str, ...]] = {}
    for p in passages:
        texts.setdefault(p["n"], []).append(p["text"])
        titles.setdefault(p["n"], words(p["title"]))
    # as in search: a literal a page is titled with is that page's title's to find
    wanted = [run for run in wanted if not any(holds(title, run) for title in titles.values())]
    held: list[set[int]] = [set() for _ in wanted]
    for n, parts in texts.items():
        page = words("\n".join(parts))
        for i, literal in enumerate(wanted):
            if holds(page, literal):
                held[i].add(n)
    return telling(held, len(texts) // 3)
