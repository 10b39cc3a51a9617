"""Ranking a corpus's documents for a query: passages by BM25F in SQLite FTS5, then documents.

A document's passage score is its best passage's (title, heading path and body weighted as in BM25F), plus
a share of the score of the words its neighbours' headings add (pseudo-relevance feedback). That alone lets
a page that merely mentions the query's words many times - a changelog, a keyword index, a section titled
with one of them - win over the page about what was asked. So each document also gets a title score: how
much of the query its title names (the query's words weighted by their rarity in the corpus) and how much of
its title is about the query (the title's words weighted by their rarity among titles). The page titled like
the question's subject wins; a page whose title shares only a common word gains nothing.
"""

from __future__ import annotations

import itertools
import math
import re
import sqlite3
from collections import Counter

from deepresearch.extractive import literals as _literals
from deepresearch.extractive.bm25 import named_share
from deepresearch.extractive.reading.text import KEYWORD_NAME, plain_words

__all__ = ["BM25_WEIGHTS", "SEQ_BITS", "DocumentRanker", "document_shares", "match_expression"]

SEQ_BITS = 20
SMALL_CORPUS = 20
"""A corpus of fewer documents measures a phrase's share over its passages: on HAProxy's four manuals most
words are on every page, and "a download" said in passing outweighed "a graceful reload" as a topic."""
_MAX_QUERY_TOKENS = 32
_MAX_PHRASES = 8
_TOKEN_RE = re.compile(r"\w+")
_PHRASE_BREAK = re.compile(r"[^\w\s-]+")
_NUMBERED_NAME = re.compile(r"\w+(?:[/.\-]\w+)+")
_STOPWORDS = frozenset(
    (
        "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "how", "in", "is",
        "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "what", "when", "where",
        "which", "who", "why", "will", "with", "i", "my", "can", "should", "you", "your", "we",
    )
)  # fmt: skip
# BM25F-style field weights (title, heading path, body): the section titled like the question wins, the
# page title helps all its sections, and a strong body passage still wins over a weak heading match
BM25_WEIGHTS = "2.0, 3.0, 1.0"
TITLE_WEIGHT = 0.6
"""The title score (0..1) is added to the passage score scaled to the best document's (0..1)."""
_CANDIDATES = 200  # documents scored by their best passage, before the title score re-ranks them
_PRF_DOCS = 8  # pseudo-relevance feedback: the top passages whose headings expand the query
_PRF_TERMS = 3
_PRF_WEIGHT = 0.3  # an expansion term counts this much of an original one
# words every page title of a documentation set carries ("— Python 3.11.2 documentation")
_FEEDBACK_NOISE = frozenset(("documentation", "python", "html", "index", "contents", "guide"))
OPTION_WEIGHT = 0.5
OPTION_DOCUMENTS = 12
"""A query's literals (extractive/literals.py: identifiers, quoted strings, and the command-line options it
names, taken together: "should I use -S or -G?") are what a user copies from a screen. A document gains
OPTION_WEIGHT times the share of the query's literals it holds, counting only the literals that at most
OPTION_DOCUMENTS of the query's candidates hold ("-f", "VirtualHost": on most pages of a manual, they name no
page). Options are looked for in the text: the tokenizer reads "-S" as the word "s"."""

_RANK_SQL = f"""
WITH ranked AS MATERIALIZED (
    SELECT rowid AS rid, bm25(passages, {BM25_WEIGHTS}) AS score FROM passages WHERE passages MATCH :q
)
SELECT rid >> {SEQ_BITS} AS file_id, min(score) AS score FROM ranked GROUP BY file_id ORDER BY score LIMIT :n
"""
_FEEDBACK_SQL = f"""
SELECT title, headings FROM passages WHERE passages MATCH :q ORDER BY bm25(passages, {BM25_WEIGHTS}) LIMIT :n
"""


def _content(query: str) -> list[str]:
    named = {name.lower() for name in KEYWORD_NAME.findall(query)}  # "the with statement" keeps "with"
    tokens = list(dict.fromkeys(_TOKEN_RE.findall(query.lower())))
    return [token for token in tokens if token not in _STOPWORDS or token in named] or tokens


def _phrases(query: str) -> list[str]:
    """Adjacent content words of the query ("virtual host", "git gc", "foreign key"): a passage that has
    them side by side scores for the phrase as well as for each word. A name joined by a slash, a dot or a
    hyphen with a number in it is a phrase of its parts ("HTTP/2", "TLS 1.3", "UTF-8"): its parts alone
    ("http", "2") are on every page."""
    found = [
        " ".join(_TOKEN_RE.findall(name))
        for name in _NUMBERED_NAME.findall(query.lower())
        if any(part.isdigit() for part in _TOKEN_RE.findall(name))
    ]
    for part in _PHRASE_BREAK.split(query.lower()):
        words = _TOKEN_RE.findall(part)
        for a, b in itertools.pairwise(words):
            if a not in _STOPWORDS and b not in _STOPWORDS and not a.isdigit() and not b.isdigit():
                found.append(f"{a} {b}")
    return list(dict.fromkeys(found))[:_MAX_PHRASES]


def match_expression(query: str) -> str | None:
    """A safe FTS5 MATCH expression for free text: each word and each phrase of two adjacent content words
    quoted, OR-ed; BM25 rewards passages that match more of them. Quotes, operators and column names in the
    user's text never reach FTS5's syntax."""
    content = _content(query)
    if not content:
        return None
    terms = [f'"{token}"' for token in content[:_MAX_QUERY_TOKENS]]
    return " OR ".join(terms + [f'"{phrase}"' for phrase in _phrases(query)])


class DocumentRanker:
    """Documents best first for a query. Built once per index state (titles are read once, the corpus
    frequency of each query word is looked up once)."""

    def __init__(self, conn: sqlite3.Connection, excluded: frozenset[int]) -> None:
        self.excluded = excluded
        self._titles: dict[int, set[str]] = {}
        self._named: dict[int, tuple[str, ...]] = {}  # each title's words, in order (for literals)
        for file_id, title in conn.execute("SELECT id, title FROM files WHERE error IS NULL"):
            if file_id not in excluded:
                self._titles[file_id] = set(plain_words(title))
                self._named[file_id] = _literals.words(title)
        df: Counter[str] = Counter()
        for words in self._titles.values():
            df.update(words)
        n = len(self._titles) or 1
        self._title_idf = {w: math.log(1 + (n - c + 0.5) / (c + 0.5)) for w, c in df.items()}
        self._passages = conn.execute("SELECT count(*) FROM passages").fetchone()[0] or 1
        self._idf: dict[str, float] = {}

    def rank(self, conn: sqlite3.Connection, query: str, limit: int) -> list[int]:
        expression = match_expression(query)
        if expression is None or limit < 1:
            return []
        scores = self._passage_scores(conn, expression)
        if not scores:
            return []
        top = max(scores.values()) or 1.0
        asked = self._query_weights(conn, query)
        combined = {
            file_id: score / top + TITLE_WEIGHT * self._title_score(file_id, asked)
            for file_id, score in scores.items()
        }
        for file_id, share in self._holding_literals(conn, query, list(scores)).items():
            combined[file_id] += OPTION_WEIGHT * share
        return sorted(combined, key=lambda file_id: (-combined[file_id], file_id))[:limit]

    def _holding_literals(
        self, conn: sqlite3.Connection, query: str, candidates: list[int]
    ) -> dict[int, float]:
        """The share of the query's telling literals each candidate holds (see OPTION_WEIGHT), for the
        candidates that hold any. Only the candidates (the documents the query's words found, at most
        _CANDIDATES): a page is not found on its literals alone, and the scan stays bounded on a large
        corpus. A literal a candidate's title names is left to the title score: the pages that merely
        mention "mod_log_forensic" are not the page about it."""
        held: list[set[int]] = []
        options = self._holding_options(conn, query, candidates)
        if options is not None:
            held.append(options)
        among = set(candidates) - self.excluded
        for literal in _literals.literals(query):
            run = _literals.words(literal)
            if any(_literals.holds(self._named.get(file_id, ()), run) for file_id in among):
                continue  # a page is titled with it ("mod_log_forensic"): the title score finds that page
            rows = conn.execute(
                f"SELECT DISTINCT rowid >> {SEQ_BITS} FROM passages WHERE passages MATCH ?",
                ('"' + " ".join(run) + '"',),
            )
            held.append({file_id for (file_id,) in rows} & among)
        return _literals.telling(held, OPTION_DOCUMENTS)

    def _holding_options(
        self, conn: sqlite3.Connection, query: str, candidates: list[int]
    ) -> set[int] | None:
        """The candidates whose text holds every option the query names, as an option (not inside a word or
        a longer option: "-S" is not in "--Sign" nor in "TLS-S"); None when it names none."""
        options = _literals.options(query)
        if not options:
            return None
        if not candidates:
            return set()
        # instr() is case-sensitive and cheap; the pattern then checks each hit as an option
        where = " AND ".join("instr(text, ?) > 0" for _ in options)
        among = ", ".join("?" for _ in candidates)
        holding: set[int] = set()
        sql = f"SELECT file_id, text FROM texts WHERE file_id IN ({among}) AND {where}"
        for file_id, text in conn.execute(sql, [*candidates, *options]):
            if file_id not in self.excluded and all(_literals.holds_option(text, o) for o in options):
                holding.add(file_id)
                if len(holding) > OPTION_DOCUMENTS:
                    break  # options many pages hold ("-f") name no page in particular
        return holding

    def _passage_scores(self, conn: sqlite3.Connection, expression: str) -> dict[int, float]:
        """Each document's best passage score (bm25() negated: higher is better), with the feedback terms'."""
        scores = {
            file_id: -score
            for file_id, score in conn.execute(_RANK_SQL, {"q": expression, "n": _CANDIDATES})
            if file_id not in self.excluded
        }
        expansion = _feedback_terms(conn, expression)
        if expansion is not None:
            for file_id, score in conn.execute(_RANK_SQL, {"q": expansion, "n": _CANDIDATES}):
                if file_id not in self.excluded:
                    scores[file_id] = scores.get(file_id, 0.0) + _PRF_WEIGHT * -score
        return scores

    def _query_weights(self, conn: sqlite3.Connection, query: str) -> dict[str, float]:
        """The query's content words (stemmed) with their idf over the corpus's passages."""
        weights: dict[str, float] = {}
        for word in _content(query):
            stems = plain_words(word)
            if not stems:
                continue
            if word not in self._idf:
                found = conn.execute(
                    "SELECT count(*) FROM passages WHERE passages MATCH ?", (f'"{word}"',)
                ).fetchone()[0]
                self._idf[word] = math.log(1 + (self._passages - found + 0.5) / (found + 0.5))
            weights[stems[0]] = max(weights.get(stems[0], 0.0), self._idf[word])
        return weights

    def _title_score(self, file_id: int, asked: dict[str, float]) -> float:
        """The harmonic mean of how much of the query the title names and how much of the title the query
        names (0 when they share nothing)."""
        title = self._titles.get(file_id)
        if not title or not asked:
            return 0.0
        recall = named_share(asked, title, asked)  # "datatypes" names "type" in part
        if not recall:
            return 0.0
        weights = {w: self._title_idf.get(w, 0.0) for w in title}
        precision = named_share(title, asked, weights)
        return 2 * recall * precision / (recall + precision) if recall + precision else 0.0


def _feedback_terms(conn: sqlite3.Connection, expression: str) -> str | None:
    """Pseudo-relevance feedback: the words the top passages' titles and headings share (in two or more
    of them) that the query lacks, as a MATCH expression of their own - the corpus's own vocabulary
    for what the user asked ("placeholders" finds the section on "parameter substitution")."""
    asked = set(_TOKEN_RE.findall(expression.lower()))
    counts: dict[str, int] = {}
    for title, headings in conn.execute(_FEEDBACK_SQL, {"q": expression, "n": _PRF_DOCS}):
        words = {w for w in _TOKEN_RE.findall(f"{title} {headings}".lower()) if len(w) > 2}
        for word in words - asked - _STOPWORDS - _FEEDBACK_NOISE:
            if not word.isdigit():
                counts[word] = counts.get(word, 0) + 1
    terms = sorted((w for w, c in counts.items() if c >= 2), key=lambda w: (-counts[w], w))[:_PRF_TERMS]
    return " OR ".join(f'"{term}"' for term in terms) if terms else None


def document_shares(
    conn: sqlite3.Connection, phrases: list[str], excluded: frozenset[int]
) -> dict[str, float]:
    """The share of the corpus's documents that contain each phrase (its words side by side): how specific
    a phrase of the question is to this corpus ("git" is on every page of Git's manual, "git gc" is not).
    On a corpus of fewer than SMALL_CORPUS documents, the share of its passages (see SMALL_CORPUS)."""
    total = conn.execute("SELECT count(*) FROM files WHERE error IS NULL").fetchone()[0] - len(excluded)
    small = 0 < total < SMALL_CORPUS
    if small:
        total = sum(r >> SEQ_BITS not in excluded for (r,) in conn.execute("SELECT rowid FROM passages"))
    # a passage's rowid, or (on a larger corpus) its file's: the file is the rowid's high bits
    unit = "rowid" if small else f"DISTINCT rowid >> {SEQ_BITS}"
    shares: dict[str, float] = {}
    for phrase in phrases:
        words = _TOKEN_RE.findall(phrase.lower())
        if not words or total <= 0:
            continue
        rows = conn.execute(
            f"SELECT {unit} FROM passages WHERE passages MATCH ?", ('"' + " ".join(words) + '"',)
        )
        held = [r for (r,) in rows if (r >> SEQ_BITS if small else r) not in excluded]
        shares[phrase] = len(held) / total
    return shares
