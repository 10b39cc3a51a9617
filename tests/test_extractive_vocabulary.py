"""The extractive engine when the user's words are not the corpus's (issue [quality] part 2): the topic is
what the pages that answer the whole question hold, not a rare aside; a capitalised keyword is one name;
a verb is never a noun phrase; a numbered name ("HTTP/2") is searched as one; and the sources' own words
for what was asked count.
Each on a small real input; the figures over whole manuals are measured by bench/quality (docs/quality.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepresearch.extractive.phrases import noun_phrases, verbs
from deepresearch.extractive.planning import lookup_phrases, question_topic
from deepresearch.extractive.sentences import Quote, Scorer
from deepresearch.extractive.text import content_tokens
from deepresearch.search.corpus import CorpusIndex
from deepresearch.search.ranking import match_expression


def _page(title: str, body: str) -> str:
    return f"<html><head><title>{title}</title></head><body><h1>{title}</h1>{body}</body></html>"


def _write(root: Path, pages: dict[str, tuple[str, str]]) -> None:
    root.mkdir()
    for name, (title, body) in pages.items():
        (root / name).write_text(_page(title, body))


# --- the topic: what the answering pages hold -------------------------------------------------------
async def test_a_rare_aside_is_not_the_topic_when_the_answering_pages_do_not_hold_it(tmp_path: Path) -> None:
    pages = {
        f"drift-{i}.html": (
            f"Drift mooring {i}",
            f"<p>A ship moored WITHOUT ANCHOR in bay {i} drifts on a swivel chain laid on the sea bed.</p>"
            f"<p>Mooring WITHOUT ANCHOR saves the crew from hauling chain in bay {i}.</p>",
        )
        for i in range(9)
    }
    pages |= {
        f"harbour-{i}.html": (
            f"Harbour {i}",
            f"<p>Harbour {i} has quays, cranes and a pilot station; every captain reports to its master.</p>",
        )
        for i in range(28)
    }
    pages["paint.html"] = ("Hull paint", "<p>Painting a hull red is a bad idea, say the painters.</p>")
    root = tmp_path / "docs"
    _write(root, pages)
    index = CorpusIndex(tmp_path / "index.db", root)
    await index.reindex()
    question = "Why would I moor a ship WITHOUT ANCHOR, and when is that a bad idea?"
    phrases = lookup_phrases(question)
    rarity = await index.document_shares(phrases)
    focus = await index.question_focus(question, phrases)
    # rarer than the subject, "a bad idea" won on rarity alone; the pages that answer do not hold it
    assert question_topic(question, rarity) == "a bad idea"
    assert focus["without anchor"] > 3 * focus["bad idea"]
    assert question_topic(question, rarity, focus) == "a ship WITHOUT ANCHOR"


# --- the question's grammar -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("clause", "phrases", "not_phrases"),
    [
        ("What actually happens to my data with INSERT OR REPLACE", ["INSERT OR REPLACE"], ["happens"]),
        ("I keep resolving the same merge conflict", ["the same merge conflict"], ["resolving"]),
        ("How do I make a handler process some files differently from just serving them", [], ["serving"]),
        (
            "Is it better to compile modules into the binary or load them",
            ["the binary"],
            ["the binary or load"],
        ),
        ("Can I add remarks to a commit that has already been made", ["remarks", "a commit"], ["made"]),
        ("Why would I declare an SQLite table WITHOUT ROWID", ["an SQLite table WITHOUT ROWID"], []),
    ],
)
def test_verbs_are_no_noun_phrases_and_a_keyword_run_is_one_name(
    clause: str, phrases: list[str], not_phrases: list[str]
) -> None:
    found = [phrase.text for phrase in noun_phrases(clause)]
    for phrase in phrases:
        assert phrase in found, found
    for phrase in not_phrases:
        assert phrase not in found, found


def test_a_verb_after_a_verb_is_the_action_asked_about() -> None:
    # not a noun phrase (above), and not a light "way of saying it" either: the sources say "resolved"
    assert verbs("I keep resolving the same merge conflict") == ["keep"]


def test_a_capitalised_keyword_keeps_its_small_words() -> None:
    assert "without" in content_tokens("a table WITHOUT ROWID")
    assert "without" not in content_tokens("a table without a rowid")  # an ordinary word stays a stopword
    assert "or" in content_tokens("INSERT OR REPLACE")


# --- retrieval: a numbered name is one phrase ---------------------------------------------------------
async def test_a_numbered_name_is_searched_as_one_phrase(tmp_path: Path) -> None:
    pages = {
        "http2.html": ("Protocol guide", "<p>HTTP/2 multiplexes requests over one connection.</p>"),
    }
    pages |= {
        f"release-{i}.html": (
            f"Release {i}.2",
            f"<p>Release {i}.2 fixes 2 bugs in the HTTP parser, 2 in the HTTP client, 2 in headers.</p>",
        )
        for i in range(6)
    }
    root = tmp_path / "docs"
    _write(root, pages)
    index = CorpusIndex(tmp_path / "index.db", root)
    await index.reindex()
    assert (await index.search("How do I turn on HTTP/2?", 3))[0].url == "corpus://http2.html"
    assert '"http 2"' in (match_expression("How do I turn on HTTP/2?") or "")


# --- quotes: the sources' words for what was asked ----------------------------------------------------
def _quote(n: int, section: str, text: str) -> Quote:
    return Quote(text, n, section, 0, frozenset(content_tokens(text)))


def test_the_sources_words_for_the_question_count_as_related() -> None:
    units = [
        _quote(1, "Enabling compression", "gzip output is made by the DEFLATE filter that compresses pages."),
        _quote(1, "Enabling compression", "The DEFLATE filter compresses text before it is sent."),
        _quote(1, "Proxies", "gzip responses carry a Vary header; the DEFLATE filter adds it."),
        _quote(2, "Request bodies", "A gzip request body is inflated by the DEFLATE input filter."),
        _quote(3, "Logging", "The log file records every request with its status code."),
        _quote(4, "Modules", "A module is loaded at start-up by the server."),
    ]
    scorer = Scorer(units)
    weights = scorer.weights("How do I gzip pages?", "How do I gzip pages?", candidates=units)
    assert "deflat" in weights.related
    explains = _quote(5, "Compression", "Output is compressed by the DEFLATE filter.")
    unrelated = _quote(6, "Logging", "Output is written to the error log.")
    assert scorer.coverage(explains, weights) > scorer.coverage(unrelated, weights)
