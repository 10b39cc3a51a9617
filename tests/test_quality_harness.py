"""The quality harness's own logic (bench/quality): question sets, scoring and the baseline check.

The harness's figures need the Debian documentation packages and minutes of engine runs; they are measured
by `python -m bench.quality`, never here. These tests only keep the harness honest: the sets are well formed
and keep the split their seed gave them, and the check fails on a held-out regression."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from bench.quality import baseline, corpora, diagnose, replay
from bench.quality import cli as quality_cli
from bench.quality.cli import by_split
from bench.quality.scoring import bullets, page_of, report_body, score, summary


@pytest.mark.parametrize("name", corpora.names())
def test_every_question_set_is_well_formed_and_keeps_its_seeded_split(name: str) -> None:
    qset = corpora.load(name)
    assert corpora.problems(qset) == []
    assert qset.package and qset.marker and qset.corpus_dir.is_absolute()
    splits = {q["split"] for q in qset.questions}
    if qset.split_rule.get("seed") is not None:
        assert splits == {"dev", "heldout"}


def test_the_new_corpora_have_both_splits_and_an_outside_check_exists() -> None:
    seeded = [corpora.load(n) for n in corpora.names() if corpora.load(n).split_rule.get("seed") is not None]
    assert len(seeded) >= 3
    for qset in seeded:
        assert len(qset.questions) >= 12
        assert len({q["style"] for q in qset.questions}) >= 4  # varied: how, why, compare, ...
    outside = [q for n in corpora.names() for q in corpora.load(n).questions if q["split"] == "outside"]
    assert outside


def test_a_changed_split_label_is_caught() -> None:
    qset = corpora.load("sqlite")
    flipped = [dict(q, split="dev") for q in qset.questions]
    broken = corpora.QuestionSet(**{**qset.__dict__, "questions": flipped})
    assert any("split_rule" in problem for problem in corpora.problems(broken))


def test_a_dev_kind_set_holding_a_held_out_question_is_caught() -> None:
    qset = corpora.load("git-dev")
    assert qset.split_rule["kind"] == "dev" and corpora.problems(qset) == []
    leaked = [dict(q, split="heldout") if i == 3 else q for i, q in enumerate(qset.questions)]
    broken = corpora.QuestionSet(**{**qset.__dict__, "questions": leaked})
    qid = qset.questions[3]["id"]
    assert corpora.problems(broken) == [f"git-dev/{qid}: split 'heldout' in a 'dev' set (only 'dev')"]
    unknown = corpora.QuestionSet(**{**qset.__dict__, "split_rule": {"kind": "extra"}})
    assert any("kind 'extra'" in problem for problem in corpora.problems(unknown))


def test_a_dev_kind_set_is_reported_as_dev_and_never_pinned() -> None:
    spec = corpora.load("sqlite-dev").questions[0]
    markdown = "# Report\n\n## Findings\n\n- Nothing found.\n\n## Sources\n"
    figures = by_split({"sqlite-dev": [score(spec, markdown, [], {"sub_questions": [spec["question"]]})]})
    assert list(figures["sqlite-dev"]) == ["dev"]
    pins = baseline.updated({}, "extractive", figures)
    assert "sqlite-dev" not in pins["engines"]["extractive"]
    assert baseline.unpinned(pins, "extractive", figures) == []


def test_extra_dev_sets_keep_clear_of_their_corpus_s_held_out_pages() -> None:
    """An extra dev set is tuning material: none of its questions may send the engine to a page that a
    held-out question of the same corpus counts (tuning on it would tune on the held-out answers)."""
    sets = [corpora.load(n) for n in corpora.names()]
    extra = [s for s in sets if s.split_rule.get("kind") == "dev"]
    assert {s.name for s in extra} >= {"apache-dev", "git-dev", "sqlite-dev"}
    for qset in extra:
        parents = [
            s for s in sets if s.split_rule.get("seed") is not None and s.corpus_dir == qset.corpus_dir
        ]
        assert len(parents) == 1, qset.name
        held = {p for q in parents[0].questions if q["split"] == "heldout" for p in q["gold"] + q["relevant"]}
        assert held
        for q in qset.questions:
            assert not set(q["gold"] + q["relevant"]) & held, f"{qset.name}/{q['id']}"
        assert {q["question"] for q in qset.questions}.isdisjoint(q["question"] for q in parents[0].questions)
        assert len({q["style"] for q in qset.questions}) >= 4
        assert all(3 <= len(q["facts"]) <= 5 for q in qset.questions)


def test_split_of_is_a_seeded_half_split() -> None:
    ids = [f"q{i}" for i in range(15)]
    labels = corpora.split_of(ids, 7)
    assert labels == corpora.split_of(list(reversed(ids)), 7)
    assert sum(v == "dev" for v in labels.values()) == 8
    assert labels != corpora.split_of(ids, 8)


def test_page_of_counts_a_page_s_source_copy_as_the_page(tmp_path: Path) -> None:
    (tmp_path / "git-rebase.html").write_text("<html></html>")
    assert page_of("corpus://git-rebase.txt", tmp_path) == "git-rebase.html"
    assert page_of("corpus://config.txt", tmp_path) == "config.txt"  # an include with no page of its own
    assert page_of("corpus://_sources/library/json.rst.txt#x") == "library/json.html"


def test_score_reads_facts_citations_and_repeats_from_the_report() -> None:
    spec = {
        "id": "q",
        "split": "heldout",
        "question": "How does X work?",
        "gold": ["a.html"],
        "relevant": ["a.html", "b.html"],
        "facts": [{"fact": "one", "any": ["first fact"]}, {"fact": "two", "any": ["second fact"]}],
    }
    # a sentence quoted again inside a bullet of several, under another section name, is a repeat too
    findings = (
        "- The first fact [1].\n- *Usage*: Something else [2]. More [2].\n- *Usage*: The first fact [2].\n"
        "- Other.\n"
    )
    markdown = f"# Report\n\n## Findings\n\n{findings}\n## Sources\n\n1. a\n"
    sources = [{"url": "corpus://a.html#s", "cited": True}, {"url": "corpus://c.html", "cited": True}]
    result = score(spec, markdown, sources, {"sub_questions": ["How does X work?"]})
    figures = (result.fact_recall, result.citation_precision, result.gold_cited, result.repeated)
    assert figures == (0.5, 0.5, 1, 1)
    assert result.missing_facts == ["two"]
    totals = summary([result])
    assert totals["gold_cited"] == 1 and totals["repeated_sentences"] == 1


def _figures(fact_recall: float, repeated: float = 0.0, questions: int = 7) -> dict[str, float]:
    return {
        "questions": questions,
        "not_completed": 0,
        "fact_recall": fact_recall,
        "citation_precision": 0.8,
        "gold_source_recall": 0.9,
        "repeated_sentence_rate": repeated,
    }


def test_the_check_fails_on_a_held_out_drop_beyond_the_tolerance_only() -> None:
    pinned = baseline.updated({}, "extractive", {"git": {"heldout": _figures(0.6), "dev": _figures(0.9)}})
    assert "dev" not in pinned["engines"]["extractive"]["git"]  # only never-tuned splits are pinned
    same = {"git": {"heldout": _figures(0.59), "dev": _figures(0.1)}}  # dev may move freely
    assert baseline.regressions(pinned, "extractive", same, 0.02) == []
    worse = {"git": {"heldout": _figures(0.55, repeated=0.05)}}
    found = baseline.regressions(pinned, "extractive", worse, 0.02)
    assert len(found) == 2 and "fact_recall" in found[0] and "repeated" in found[1]
    changed = {"git": {"heldout": _figures(0.6, questions=8)}}
    assert "the set changed" in baseline.regressions(pinned, "extractive", changed, 0.02)[0]
    new = {"apache": {"heldout": _figures(0.5)}}
    assert baseline.unpinned(pinned, "extractive", new) == ["apache/heldout"]


def test_the_committed_baseline_pins_every_seeded_and_outside_set() -> None:
    pins = baseline.load()["engines"].get("extractive", {})
    for name in corpora.names():
        splits = {q["split"] for q in corpora.load(name).questions} & set(baseline.PINNED_SPLITS)
        for split in splits:
            assert split in pins.get(name, {}), f"{name}/{split} has no baseline"


def _artifacts(folder: Path, question: str, report: str, evidence: str, fetched: list[str]) -> None:
    folder.mkdir(parents=True)
    files = {
        "plan.json": {"question": question},
        "search-results.json": {"results": [{"url": f"corpus://{page}"} for page in fetched]},
        "sources-fetched.json": {
            "sources": [{"n": n, "url": f"corpus://{p}"} for n, p in enumerate(fetched, 1)]
        },
        "evidence-table.json": {"evidence": [{"n": 1, "passage": evidence}]},
    }
    for name, data in files.items():
        (folder / name).write_text(json.dumps(data))
    (folder / "deepresearch-report.md").write_text(
        f"# {question}\n\n## Findings\n\n- {report} [1]\n\n## Sources\n"
    )


def _heldout_runs(home: Path) -> list[dict[str, Any]]:
    """Finished runs (placeholder artifacts) of the git set's held-out questions under `home`."""
    heldout = [q for q in corpora.load("git").questions if q["split"] != "dev"]
    for i, spec in enumerate(heldout):
        _artifacts(home / "git" / "workspace" / "research" / str(i), spec["question"], "x", "x", [])
    return heldout


def test_diagnose_names_the_last_stage_that_holds_each_fact(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "tips.html").write_text("<html><body><p>Lanterns are trimmed at dusk.</p></body></html>")
    (corpus / "lamp.html").write_text(
        "<html><body><p>The wick is cut square. Oil is checked weekly.</p></body></html>"
    )
    question = "How is a lighthouse lamp kept?"
    workspace = tmp_path / "workspace"
    _artifacts(workspace / "research" / "old", question, "Nothing.", "Nothing.", ["tips.html"])
    _artifacts(
        workspace / "research" / "new",
        question,
        "The lamp burns oil.",
        "The glass is polished daily.",
        ["tips.html"],  # the gold page was never fetched
    )
    os.utime(workspace / "research" / "old" / "deepresearch-report.md", (1, 1))
    runs = diagnose.latest_runs(workspace)
    assert runs[question].folder.name == "new"  # the newest finished run of the question
    spec = {
        "gold": ["lamp.html"],
        "facts": [
            {"fact": f, "any": [p]}
            for f, p in (
                ("a", "burns oil"),
                ("b", "polished daily"),
                ("c", "trimmed at dusk"),
                ("d", "cut square"),
                ("e", "never written"),
            )
        ],
    }
    lines, facts = diagnose.diagnose(spec, runs[question], corpus)
    assert [stage for stage, _ in facts] == ["report", "evidence", "fetched page", "gold page", "elsewhere"]
    assert "gold lamp.html: search #- of 1, fetched #- of 1, evidence 0 of 1" in lines[0]


def test_diagnose_reads_development_questions_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert diagnose.main(["--home", str(tmp_path), "--corpus-set", "no-such-set"]) == 2
    assert "no question set" in capsys.readouterr().err
    assert diagnose.main(["--home", str(tmp_path), "--corpus-set", "git"]) == 2  # no runs there yet
    assert "--split dev" in capsys.readouterr().err
    heldout = _heldout_runs(tmp_path)
    assert diagnose.main(["--home", str(tmp_path), "--corpus-set", "git"]) == 0
    printed = capsys.readouterr().out
    assert not any(spec["id"] in printed for spec in heldout)  # a held-out run's report is never read


QUALITY_DOCS = Path(__file__).resolve().parent / "fixtures" / "quality-docs"


def test_a_replay_of_unchanged_code_gives_the_bench_s_own_figures(tmp_path: Path) -> None:
    """The bench runs the real engine over a small corpus; the replay composes each report again from the
    run's plan and evidence with the same code, and must score exactly what the bench scored (it stands in
    for bench runs while the report code is tuned)."""
    questions = tmp_path / "docs-set.json"
    facts = [
        {"fact": "every external call leaves a receipt", "any": ["receipt"]},
        {"fact": "a resumed run does not pay twice", "any": ["never (?:pays|repeat)", "not repeat", "twice"]},
        {"fact": "checkpoints end the business stages", "any": ["checkpoint"]},
    ]
    spec = {
        "name": "docs-set",
        "corpus": "this repository's docs as measured",
        "package": "none",
        "corpus_dir": str(QUALITY_DOCS),
        "marker": "durability.md",
        "split_rule": {"kind": "dev"},
        "questions": [
            {
                "id": "resume-no-repeat",
                "split": "dev",
                "style": "how",
                "question": "How does deepresearch avoid repeating paid calls when a run is resumed?",
                "gold": ["durability.md"],
                "relevant": ["durability.md", "architecture.md"],
                "facts": facts,
            },
            {
                "id": "citations-checked",
                "split": "dev",
                "style": "how",
                "question": "How does the report make sure every citation points to a fetched passage?",
                "gold": ["honest-citations.md"],
                "relevant": ["honest-citations.md"],
                "facts": [{"fact": "each cited sentence is checked", "any": ["check"]}],
            },
        ],
    }
    questions.write_text(json.dumps(spec), encoding="utf-8")
    home, ran, replayed = tmp_path / "home", tmp_path / "ran.json", tmp_path / "replayed.json"
    common = ["--questions", str(questions), "--home", str(home)]
    assert quality_cli.main([*common, "--json", str(ran)]) == 0
    assert replay.main([*common, "--json", str(replayed), "--quiet", "--exact"]) == 0
    bench = json.loads(ran.read_text(encoding="utf-8"))["figures"]["docs-set"]["dev"]
    again = json.loads(replayed.read_text(encoding="utf-8"))["docs-set"]
    for figure in ("fact_recall", "citation_precision", "gold_cited", "repeated_sentences"):
        assert again[figure] == bench[figure], (figure, again, bench)
    assert bench["gold_cited"] >= 1 and bench["fact_recall"] > 0  # a real report, not two empty ones
    # ... because each report body is the run's own, to the character
    runs = diagnose.latest_runs(home / "docs-set" / "workspace")
    assert len(runs) == 2
    for run in runs.values():
        markdown, _, _ = replay.recomposed(run, QUALITY_DOCS, exact=True)
        written = (run.folder / "deepresearch-report.md").read_text(encoding="utf-8")
        assert report_body(markdown) == report_body(written), run.folder
    # the open questions that end a body are the run's own critique's, read from its artifacts
    critique = run.folder / "critique.json"
    saved = json.loads(critique.read_text(encoding="utf-8"))
    critique.write_text(json.dumps(saved | {"issues": ["Which lamp oil was used is not said."]}))
    assert "- Which lamp oil was used is not said." in replay.recomposed(run, QUALITY_DOCS)[0]
    critique.unlink()  # a run without the critic wrote none: its body is composed all the same
    assert "## Open questions" in replay.recomposed(run, QUALITY_DOCS)[0]


def test_a_replay_reads_development_questions_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert replay.main(["--home", str(tmp_path), "--corpus-set", "no-such-set"]) == 2
    assert "no question set" in capsys.readouterr().err
    # a set file that is not there is named, by the replay as by the bench, not a traceback
    missing = ["--home", str(tmp_path), "--questions", str(tmp_path / "none.json")]
    for main in (replay.main, quality_cli.main):
        assert main(missing) == 2
        assert f"no question set file {tmp_path / 'none.json'}" in capsys.readouterr().err
    # held-out runs whose artifacts a replay could not even read: they must be skipped, not read
    _heldout_runs(tmp_path)
    assert replay.main(["--home", str(tmp_path), "--corpus-set", "git"]) == 2
    assert "--split dev" in capsys.readouterr().err


def test_score_counts_the_facts_the_summary_holds() -> None:
    spec = {
        "id": "q",
        "question": "How does X work?",
        "gold": ["a.html"],
        "relevant": [],
        "facts": [{"fact": "one", "any": ["first fact"]}, {"fact": "two", "any": ["second fact"]}],
    }
    markdown = (
        "# Report\n\n> header\n\n## Summary\n\n- The first fact [1].\n\n## Findings\n\n### How?\n\n"
        "- The second fact [1].\n\n## Sources\n\n- [1] a\n"
    )
    result = score(spec, markdown, [{"url": "corpus://a.html", "cited": True}], {"sub_questions": []})
    assert (result.fact_recall, result.summary_recall) == (1.0, 0.5)
    assert summary([result])["summary_fact_recall"] == 0.5
    # a report without a Summary section summarises nothing
    assert score(spec, markdown.replace("## Summary", "## Overview"), [], {}).summary_recall == 0.0
    # facts are read as the rendered report shows them: a quote's Markdown escapes are no text
    spec["facts"] = [{"fact": "dunder", "any": [r"__enter__ is called"]}, {"fact": "code", "any": [r"a\\_b"]}]
    escaped = markdown.replace("The first fact", r"\_\_enter\_\_ is called").replace("second fact", r"`a\_b`")
    assert score(spec, escaped, [], {}).fact_recall == 1.0
    assert score(spec, escaped.replace("`a", "a").replace("b`", "b"), [], {}).fact_recall == 0.5


def test_an_abbreviation_ends_no_sentence_when_repeats_are_counted() -> None:
    body = (
        '\n## Findings\n\n- *Mode*: Patterns exclude files [1]. E.g. "*.c" excludes C files [1].\n'
        '- *Mode*: Ranges select items [1]. E.g. "2-5" selects four [1].\n'
    )
    assert bullets(body) == [
        "patterns exclude files.",
        'e.g. "*.c" excludes c files.',
        "ranges select items.",
        'e.g. "2-5" selects four.',
    ]
    # nor inside inline code; a closing quote ends one; a label with escaped characters is no sentence
    body = (
        "\n- Run `git log v2.5.. Makefile` to list them [1]. See Fig. 3 for more [1].\n"
        '- *fnmatch(\\*.c) patterns*: It says "exclusive." Readers wait [2].\n'
    )
    assert bullets(body) == [
        "run `git log v2.5.. makefile` to list them.",
        "see fig. 3 for more.",
        'it says "exclusive."',
        "readers wait.",
    ]
