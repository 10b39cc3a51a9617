"""The extractive engine when the user's words are not the corpus's (issue [quality] part 2): a capitalised
keyword is one name, a verb is never a noun phrase, a numbered name ("HTTP/2") is searched as one.
Each on a small real input; the figures over whole manuals are measured by bench/quality (docs/quality.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepresearch.extractive.asking.phrases import noun_phrases, verb_terms, verbs
from deepresearch.extractive.asking.planning import keyword_plan, question_topic
from deepresearch.extractive.bm25 import VERB, Scorer
from deepresearch.extractive.reading.sentences import quotes
from deepresearch.extractive.reading.text import content_tokens
from deepresearch.extractive.screening import passages_of, rank_passages, rank_sources
from deepresearch.search.corpus import CorpusIndex
from deepresearch.search.ranking import match_expression


def _page(title: str, body: str) -> str:
    return f"<html><head><title>{title}</title></head><body><h1>{title}</h1>{body}</body></html>"


def _write(root: Path, pages: dict[str, tuple[str, str]]) -> None:
    root.mkdir()
    for name, (title, body) in pages.items():
        (root / name).write_text(_page(title, body))


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


@pytest.mark.parametrize(
    ("clause", "phrase"),
    [
        ("I host thousands of customer sites", "customer sites"),
        ("Can I have only the couple of directories I work on", "directories"),
        ("We keep dozens of branches", "branches"),
    ],
)
def test_a_quantity_is_no_topic_the_noun_after_of_is(clause: str, phrase: str) -> None:
    found = [p.text for p in noun_phrases(clause)]
    assert found[0] == phrase, found
    assert question_topic(clause + "?") == phrase  # no "What are thousands?"


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        (
            "How do I bundle the logbooks of my station into a parcel and post them to the harbour office "
            "for review?",
            "the logbooks",
        ),
        ("How do I copy the tide tables to a spare disk for safekeeping?", "the tide tables"),
        ("How do I copy the tide tables, every evening, to a spare disk for safekeeping?", "the tide tables"),
        # a phrase with a determiner or several words after "for" is a thing, not a purpose; nor is a name
        ("Which lamp oil should I buy for the storm lantern?", "the storm lantern"),
        ("Which lamp oil should I buy for LANTERNS?", "LANTERNS"),
    ],
)
def test_a_purpose_that_ends_the_question_is_no_topic(question: str, topic: str) -> None:
    # "... for review" says what the asker does it for; the topic was "review"
    assert question_topic(question, RARITY) == topic


RARITY = {"review": 0.01, "safekeeping": 0.001, "harbour office": 0.05, "harbour": 0.05, "office": 0.3,
          "tide tables": 0.02, "tide": 0.03, "tables": 0.3, "lamp oil": 0.05, "lamp": 0.2, "oil": 0.1,
          "storm lantern": 0.02, "storm": 0.05, "lantern": 0.03, "lanterns": 0.001, "logbooks": 0.04,
          "station": 0.3, "parcel": 0.2, "spare disk": 0.1, "spare": 0.2, "disk": 0.2}  # fmt: skip


# --- a command-line option is a name ------------------------------------------------------------------
def test_an_option_and_its_value_are_words_of_the_question() -> None:
    tokens = content_tokens("What is the difference between frob sync -m mine and frob sync -Y mine?")
    assert {"-m", "-y", "mine"} <= set(tokens)
    assert "when" not in content_tokens("Should I use -S or -G when syncing?")  # a value stands alone
    assert "-x" not in content_tokens("a re-run of x-ray e-mail")  # a hyphen inside a word is no option


def test_the_section_on_an_options_value_answers_a_question_about_it() -> None:
    # the value ("mine") is a stopword elsewhere; without it, the question is "difference frob sync", and
    # the page that lists its backends' differences wins over the one that says what "-Y mine" does
    sources = [
        {
            "id": "S1",
            "n": 1,
            "title": "frob-backends(1)",
            "text": "## Differences between the frob sync backends\n\n"
            + "The two frob sync backends show their differences in progress messages and in hooks. " * 4,
        },
        {
            "id": "S2",
            "n": 2,
            "title": "frob-sync(1)",
            "text": "## Strategy options\n\nmine: conflicting hunks are resolved cleanly by keeping the "
            "local version; changes from the other side that do not conflict are still taken. With "
            "-m mine the other side is ignored entirely and the result is always the local tree.",
        },
    ]
    question = "What is the difference between frob sync -m mine and frob sync -Y mine?"
    # the topic a corpus's rarity picks for it (the planner keeps the words, not the option's hyphen)
    ranked = rank_sources(question, [question], sources, [4], topic="Y mine")[0][0]
    assert ranked[0][1]["source_id"] == "S2", [(round(s, 2), p["source_id"]) for s, p in ranked]


# --- verbs a run of words hides -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("clause", "verb", "phrase"),
    [
        # a verb and its infinitive: "mv" is the command's name, "refuse" what it does
        ("Why does harbourd mv refuse to moor a ship whose papers I stamped", "refuse", "harbourd mv"),
        ("Why does harbourd purge refuse to sink anything without -f", "refuse", "harbourd purge"),
        # "in front of" is a preposition; the question's verb is its last word
        (
            "What do the two status flags in front of each berth in harbourd ls --long mean",
            "mean",
            "the two status flags",
        ),
        # a subject before "doesn't" and its verb, and the verb's infinitive
        ("I built an index on the cargo list but my query doesn't seem to use it", "seem", "my query"),
        ("I built an index on the cargo list but my query doesn’t seem to use it", "seem", "my query"),
        # a participle joined to a verb by "and" is one too (after "been", verbs() leaves both out)
        ("How do I recall a ship that has been loaded and towed by others", "", "a ship"),
        # past "not" to the verb, and a manner adverb at the clause's end is no noun (session 28)
        ("What do I do if the ship does not moor cleanly", "moor", "the ship"),
        # a bare verb after its agent ("make Git treat"), a verb after "that" and before its preposition
        ("How can I make Harbourd moor one ship as if it were another", "moor", "one ship"),
        ("How do I rename all the ships that moor after it", "moor", "all the ships"),
        # a verb joined by "and" to the one before, with its own object
        (
            "How can I search the cargo lists for words quickly and moor the best ships",
            "moor",
            "the best ships",
        ),
    ],
)
def test_a_verb_inside_a_run_of_words_is_no_noun(clause: str, verb: str, phrase: str) -> None:
    assert not verb or verb in verbs(clause), verbs(clause)
    found = [p.text for p in noun_phrases(clause)]
    assert phrase in found and not any(word in p.split() for p in found for word in (verb, "towed")), found
    assert not any(p in ("front", "use", "moor", "cleanly", "quickly") for p in found)
    assert not any(p.startswith("Harbourd moor") or p.endswith("quickly") for p in found), found


def test_another_thing_is_no_topic() -> None:
    # "another branch" is an instance, as "two branches" is: the topic is what is copied
    question = "How do I copy a single crate from another ship onto my current ship?"
    rarity = {"single crate": 0.06, "crate": 0.7, "single": 0.47, "another ship": 0.08, "ship": 0.5}
    rarity |= {"another": 0.39, "current ship": 0.2, "current": 0.6, "copy": 0.33}
    assert question_topic(question, rarity) == "a single crate"


def test_a_vague_phrase_is_no_topic() -> None:
    assert question_topic("How can I keep two ships in one harbour at the same time?") != "the same time"
    rest = "How do I moor some of the ships and leave the rest for a later tide?"
    assert question_topic(rest) != "the rest"
    # ... when the question names nothing else, it still is; and "the REST API" is no vague phrase
    assert question_topic("What happens at the same time?") == "the same time"
    assert question_topic("How do I moor to the REST buoy with a rope?") == "the REST buoy"


def test_a_word_after_an_auxiliary_or_to_is_still_a_noun() -> None:
    # the subject after "does" is no verb, and where "to" goes is no infinitive
    topics = [question_topic(q) for q in ("Which ships does harbourd track?", "How do I sail to Lerwick?")]
    assert topics == ["harbourd", "Lerwick"], topics
    assert question_topic("How do I moor to buoys?") == "buoys"


def test_a_figure_is_no_topic_and_not_asked_about() -> None:
    question = "I logged a depth of 12.5 in the harbour log and the totals come out wrong. What can I do?"
    plan = keyword_plan(question, max_queries=6)
    assert plan.topic != "12.5" and not any("12.5?" in sq for sq in plan.sub_questions), plan


RENAMED = "I renamed a buoy last spring; how do I see its history from before the rename?"


def test_a_word_the_question_also_names_as_a_thing_is_no_light_verb() -> None:
    # verbs count half ("decides" is said "selects" in the sources), but "the rename" is what is asked about
    light = verb_terms(RENAMED)
    assert content_tokens("renamed")[0] not in light
    assert content_tokens("see")[0] in light
    assert content_tokens("splice")[0] in verb_terms("How do I splice a rope?")
    # ... in the quotes' scores
    scorer = Scorer(quotes("The rename log keeps every former name of a buoy.", 1))
    rename, see = content_tokens("rename")[0], content_tokens("see")[0]
    weights = scorer.weights(RENAMED, "")
    assert weights.own[rename] == scorer.idf(rename), weights
    assert weights.own[see] == VERB * scorer.idf(see), weights
    # ... and in the passages' ranking
    page = {
        "n": 1,
        "id": "registry",
        "title": "Harbour registry",
        "text": "## Registry\n\nThe rename log keeps every former name of a buoy.\n\n## Visits\n\n"
        "Each buoy page shows its history of visits and repairs.",
    }
    ranked = {
        p["text"]: score for score, p in rank_passages(RENAMED, [RENAMED], passages_of([page]), 5, "buoy")[0]
    }
    renames, visits = (next(s for t, s in ranked.items() if word in t) for word in ("rename log", "visits"))
    assert renames >= 0.8 * visits, ranked
