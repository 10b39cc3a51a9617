"""The command line's arguments, read in-process: argparse refuses them before anything starts (the settings
would live in tmp_path), so no server nor subprocess is needed; tests/test_cli.py runs `deepresearch`."""

from __future__ import annotations

from pathlib import Path

import pytest

import agent
from deepresearch.options import OPTION_DEFAULTS


@pytest.mark.parametrize("port", ["99999", "-5", "0", "http"])
def test_a_port_out_of_range_names_the_range(
    port: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In-process (argparse refuses it before anything starts); the settings would live in tmp_path."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DEEPRESEARCH_HOME", str(tmp_path))
    with pytest.raises(SystemExit) as exited:
        agent.main(["serve", "--port", port])
    assert exited.value.code == 2
    stderr = capsys.readouterr().err
    assert "argument --port" in stderr and "a number from 1 to 65535" in stderr, stderr


@pytest.mark.parametrize(
    ("argv", "said", "usage"),
    [
        (["--bogus"], "unrecognized arguments: --bogus (see `deepresearch --help`)", "deepresearch [-h]"),
        (
            ["--bogus", "run", "q"],
            "unrecognized arguments: --bogus (see `deepresearch --help`)",
            "deepresearch [-h]",
        ),
        (
            ["runs", "--all"],
            "unrecognized arguments: --all (see `deepresearch runs --help`)",
            "deepresearch runs",
        ),
        (
            ["run", "q", "--sorces", "3"],
            "unrecognized arguments: --sorces 3 (see `deepresearch run --help`)",
            "deepresearch run [-h] [--corpus CORPUS]",
        ),
        # a stray option beside a missing argument: the option is named, not the argument it hid
        (
            ["run", "--bogus"],
            "unrecognized arguments: --bogus (see `deepresearch run --help`)",
            "deepresearch run [-h] [--corpus CORPUS]",
        ),
        (
            ["resume", "--takeover", "--max-fetches=3", "--zz=1"],
            "unrecognized arguments: --zz=1 (see `deepresearch resume --help`)",
            "deepresearch resume [-h]",
        ),
        (
            ["token", "revoke", "a", "b"],
            "unrecognized arguments: b (see `deepresearch token revoke --help`)",
            "deepresearch token revoke [-h] token",
        ),
        (["run", "--loops", "-2"], "the following arguments are required: question", "deepresearch run"),
        (
            [],
            "choose a command: run, resume, runs, checkpoints, serve, mcp, token or prune",
            "deepresearch [-h]",
        ),
        (
            ["token"],
            "choose a token action: create, list or revoke (see `deepresearch token --help`)",
            "deepresearch token [-h] ACTION",
        ),
    ],
)
def test_a_stray_option_or_no_command_is_named(
    argv: list[str],
    said: str,
    usage: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """argparse's own wording for `--bogus` was "the following arguments are required: command"."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DEEPRESEARCH_HOME", str(tmp_path))
    with pytest.raises(SystemExit) as exited:
        agent.main(argv)
    assert exited.value.code == 2
    stderr = capsys.readouterr().err
    assert said in stderr and ("required" not in stderr or "required" in said), stderr
    # the usage line is the command's own, with the options it takes, not the top level's
    assert stderr.startswith(f"usage: {usage}"), stderr
    assert not any(tmp_path.iterdir()), "nothing is created before the arguments are understood"


def test_the_run_help_shows_each_default_and_the_setting_that_changes_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        agent.main(["run", "--help"])
    assert exited.value.code == 0
    shown = " ".join(capsys.readouterr().out.split()).split("options:", 1)[1]  # help is wrapped to the width
    for option, setting in (
        ("--loops", "max_research_loops"),
        ("--queries", "queries_per_round"),
        ("--results", "results_per_query"),
        ("--sources", "sources_to_fetch"),
    ):
        said = f"default {getattr(OPTION_DEFAULTS, setting)}, or DEEPRESEARCH_{setting.upper()})"
        assert said in shown.split(f"{option} {option[2:].upper()}", 1)[1].split(" --", 1)[0], shown
    # the budget options as the README writes them, not the service's field names ("MAX_LLM_TOKENS")
    for usage in ("--max-tokens N", "--max-searches N", "--max-fetches N", "--deadline SECONDS"):
        assert usage in shown, shown


def test_a_corpus_folder_without_documents_is_refused_when_it_is_all_a_run_may_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # it failed late, as a run: "no search results at all ... Configure a search provider or a corpus"
    empty = tmp_path / "notes"
    (empty / ".drafts").mkdir(parents=True)
    (empty / ".drafts" / "hidden.md").write_text("# Hidden\n\nA hidden draft is never indexed.\n")
    (empty / "table.csv").write_text("a,b\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DEEPRESEARCH_HOME", str(tmp_path / "home"))
    argv = ["--env-file", "/nonexistent", "run", "What is a lease?", "--corpus", str(empty), "--corpus-only"]
    code = agent.main([*argv, "--plain"])
    assert code == 2
    stderr = capsys.readouterr().err
    assert f"folder {empty} holds no .md, .txt, .html or .pdf document to search" in stderr, stderr
    # the fix is named as the command line spells it (it said "turn corpus-only off")
    assert "or leave `--corpus-only` off to search the web too" in stderr, stderr
    assert "Traceback" not in stderr


@pytest.mark.parametrize(
    ("option", "said"),
    [
        (["--sources", "0"], "error: --sources: Input should be greater than or equal to 1"),
        (["--queries", "100"], "error: --queries: Input should be less than or equal to 20"),
        (["--deadline", "0"], "error: --deadline: Input should be greater than 0"),
        (
            ["--sources", "0", "--queries", "100"],
            "error: --queries: Input should be less than or equal to 20; --sources: Input"
            " should be greater than or equal to 1",
        ),
    ],
)
def test_an_option_out_of_range_is_named_as_typed_not_as_the_services_field(
    option: list[str],
    said: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # it said "options.sources_to_fetch: Input should be ... (the --sources option)"
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "lamp.md").write_text("# Lamp\n\nThe keeper lights the lamp at dusk every day.\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DEEPRESEARCH_HOME", str(tmp_path / "home"))
    argv = [
        "--env-file",
        "/nonexistent",
        "run",
        "When is the lamp lit?",
        "--corpus",
        "notes",
        "--corpus-only",
    ]
    assert agent.main([*argv, *option, "--plain"]) == 2
    stderr = capsys.readouterr().err
    assert stderr.strip() == said, stderr


def test_a_corpus_folder_without_documents_is_named_when_the_web_is_searched_instead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the run went on silently to the web; refused here by a bad option, so that nothing is searched
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "table.csv").write_text("a,b\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DEEPRESEARCH_HOME", str(tmp_path / "home"))
    argv = ["--env-file", "/nonexistent", "run", "When is the lamp lit?", "--corpus", "notes", "--sources"]
    argv.append("0")
    assert agent.main([*argv, "--plain"]) == 2
    stderr = capsys.readouterr().err
    assert stderr.startswith(
        "note: --corpus notes holds no .md, .txt, .html or .pdf document: this run searches the web only\n"
    ), stderr
    # corpus-only set in the environment: the web is not searched, and the folder is refused, not noted
    monkeypatch.setenv("DEEPRESEARCH_CORPUS_ONLY", "true")
    assert agent.main([*argv[:-2], "--plain"]) == 2
    stderr = capsys.readouterr().err
    assert "note:" not in stderr and "holds no .md, .txt, .html or .pdf document to search" in stderr, stderr
    monkeypatch.delenv("DEEPRESEARCH_CORPUS_ONLY")
    # a folder with a document says nothing of the kind
    (tmp_path / "notes" / "lamp.md").write_text("# Lamp\n\nThe keeper lights the lamp at dusk every day.\n")
    assert agent.main([*argv, "--plain"]) == 2
    assert "note:" not in capsys.readouterr().err
