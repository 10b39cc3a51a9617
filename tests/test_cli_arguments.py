"""The command line's arguments, read in-process: argparse refuses them before anything starts (the settings
would live in tmp_path), so no server nor subprocess is needed; tests/test_cli.py runs `deepresearch`."""

from __future__ import annotations

from pathlib import Path

import pytest

import agent


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
    ("argv", "said"),
    [
        (["--bogus"], "unrecognized arguments: --bogus (see `deepresearch --help`)"),
        (["runs", "--all"], "unrecognized arguments: --all (see `deepresearch runs --help`)"),
        ([], "choose a command: run, resume, runs, checkpoints, serve, mcp, token or prune"),
        (["token"], "choose a token action: create, list or revoke (see `deepresearch token --help`)"),
    ],
)
def test_a_stray_option_or_no_command_is_named(
    argv: list[str],
    said: str,
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
    assert said in stderr and "required" not in stderr, stderr
    assert not any(tmp_path.iterdir()), "nothing is created before the arguments are understood"
