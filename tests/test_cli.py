"""The command line end to end, as a user runs it: `deepresearch` as a real subprocess, configured only
through environment variables, against the scripted servers on 127.0.0.1.

The key test is the issue's "done means": Ctrl-C (SIGINT) after fetch_sources pauses the run with exit code
130, and `deepresearch resume RUN_ID` finishes it without one repeated call of a completed stage, counted at
the scripted servers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deepresearch.engine.core import open_engine
from peers import launch
from stages import FINAL_ARTIFACTS, REPORT_STAGES
from tests.conftest import Servers

REPO = Path(__file__).resolve().parent.parent
QUESTION = "How do durable workflow checkpoints and SQLite write-ahead logging keep long runs safe?"
COMMAND_TIMEOUT = 90.0
"""Upper bound of one CLI invocation (a cold interpreter start alone takes a few seconds)."""
RUN_LINE = re.compile(r"^Run ([0-9a-f]{32}) \((\w+) engine\) — artifacts in (.+)$", re.MULTILINE)
STAGE_DELAY = "0.5"
"""Every business stage sleeps this long first: the time Ctrl-C has to land before screen_evidence works."""
LATER_STAGE_PROMPTS = frozenset({"screen/v1", "review/v1", "critic/v1", "report/v1"})
# Our own variables and the ones the settings accept as aliases: a developer's shell must not leak in.
_FOREIGN_PREFIXES = ("DEEPRESEARCH_", "OPENAI_", "LONG_TASK_", "KSADK_", "SEARXNG_", "TAVILY_", "BRAVE_")
_PROXY_VARS = frozenset({"http_proxy", "https_proxy", "all_proxy", "no_proxy"})


def _cli_prefix() -> list[str]:
    """The installed console script when there is one (what a user types), else the module. The commands
    are forked from the test worker's pre-imported zygote (peers/launch.py: the same program, without the
    ~2 s of CPU each interpreter spends importing), but for `cli(..., fresh_interpreter=True)`."""
    script = Path(sys.executable).with_name("deepresearch")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "agent"]


def cli_env(servers: Servers, tmp_path: Path, *, llm: bool = False, **extra: str) -> dict[str, str]:
    """The environment of a CLI process: Servers.settings(tmp_path, llm=...) as env vars, plus ``extra``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(_FOREIGN_PREFIXES) and key.lower() not in _PROXY_VARS
    }
    env |= {
        "PYTHONPATH": str(REPO),
        "PYTHONUNBUFFERED": "1",
        "PYTHONIOENCODING": "utf-8",
        "COLUMNS": "200",  # rich wraps at the console width; keep each progress line on one line
        "NO_COLOR": "1",
    }
    env |= servers.env(tmp_path, llm=llm)
    return env | extra


@dataclass(frozen=True)
class Result:
    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str

    def __str__(self) -> str:
        return f"$ deepresearch {' '.join(self.args)}\n[exit {self.code}]\n{self.stdout}\n{self.stderr}"


def cli(
    args: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    timeout: float = COMMAND_TIMEOUT,
    *,
    fresh_interpreter: bool = False,
) -> Result:
    """Run one command to its end (killed after ``timeout``); in a new interpreter, as a user starts it,
    with ``fresh_interpreter``."""
    done = (subprocess.run if fresh_interpreter else launch.run)(
        [*_cli_prefix(), *args],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        check=False,
    )
    return Result(tuple(args), done.returncode, done.stdout, done.stderr)


def cli_parallel(commands: Sequence[tuple[Sequence[str], Mapping[str, str]]], cwd: Path) -> list[Result]:
    """Independent commands at the same time: interpreter start-up dominates their cost."""
    with ThreadPoolExecutor(max_workers=len(commands)) as pool:
        futures = [pool.submit(cli, args, env, cwd) for args, env in commands]
        return [future.result() for future in futures]


def run_line(stdout: str) -> tuple[str, str, Path]:
    """(run id, engine, artifact folder) from the first line `deepresearch run` prints."""
    match = RUN_LINE.search(stdout)
    assert match, f"no 'Run <id> (<engine> engine) — artifacts in <dir>' line in:\n{stdout}"
    return match.group(1), match.group(2), Path(match.group(3))


def assert_final_artifacts(folder: Path) -> None:
    missing = [name for name in FINAL_ARTIFACTS if not (folder / name).is_file()]
    assert not missing, f"missing in {folder}: {missing}"


def assert_clean_stderr(*results: Result) -> None:
    for result in results:
        assert "Traceback" not in result.stderr, str(result)


def article_hits(servers: Servers) -> Counter[str]:
    return Counter({path: n for path, n in servers.site.hits.items() if path.startswith("/articles/")})


def checkpoint_stages(stdout: str) -> list[str]:
    """Stage column of `deepresearch checkpoints RUN_ID` (``<checkpoint id>  <stage>  <time>  <summary>``)."""
    return [line.split()[1] for line in stdout.splitlines() if len(line.split()) > 1]


class LineReader:
    """Reads a process's stdout on a thread, so the test can wait for a line with a deadline."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        self._stream = proc.stdout
        self._queue: queue.Queue[str | None] = queue.Queue()
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._pump, name="cli-stdout", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        try:
            for line in self._stream:
                self._queue.put(line.rstrip("\n"))
        finally:
            self._queue.put(None)

    def wait_for(self, prefix: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                line = self._queue.get(timeout=remaining)
            except queue.Empty:
                break
            if line is None:
                raise AssertionError(f"output ended before {prefix!r}:\n" + "\n".join(self.lines))
            self.lines.append(line)
            if line.startswith(prefix):
                return line
        raise AssertionError(f"no {prefix!r} within {timeout:.0f}s:\n" + "\n".join(self.lines))

    def rest(self, timeout: float) -> str:
        """Everything up to the end of the output (the process has exited)."""
        self._thread.join(timeout)
        while True:
            try:
                line = self._queue.get_nowait()
            except queue.Empty:
                break
            if line is not None:
                self.lines.append(line)
        return "\n".join(self.lines)


@contextlib.contextmanager
def plain_run(
    env: Mapping[str, str], cwd: Path, stderr: Any
) -> Iterator[tuple[subprocess.Popen[str], LineReader, str, str, Path]]:
    """`deepresearch run QUESTION --plain` as a live process: (process, reader, run id, engine, folder).
    Killed on the way out if the test left it running."""
    proc = launch.Popen(
        [*_cli_prefix(), "run", QUESTION, "--plain"],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        encoding="utf-8",
    )
    try:
        reader = LineReader(proc)
        run_id, engine, folder = run_line(reader.wait_for("Run ", timeout=COMMAND_TIMEOUT))
        yield proc, reader, run_id, engine, folder
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


# --- a run, start to finish -------------------------------------------------------------------------
def test_run_extractive_writes_the_final_artifacts(servers: Servers, tmp_path: Path) -> None:
    env = cli_env(servers, tmp_path)
    # the one command of this file started as a user starts it: a broken start-up fails here
    result = cli(["run", QUESTION], env, tmp_path, fresh_interpreter=True)
    assert result.code == 0, str(result)
    run_id, engine, folder = run_line(result.stdout)
    assert engine == "extractive"
    assert folder.is_absolute() and folder.is_relative_to(tmp_path / "workspace")
    assert_final_artifacts(folder)
    # the report's path is printed when the run is done
    report = folder / "deepresearch-report.md"
    assert f"Report: {report}" in result.stdout.splitlines(), result.stdout
    assert "Status: completed" in result.stdout
    # one line per event however long (a log is not an 80-column terminal), and the path only once
    assert all(len(line) < 500 for line in result.stdout.splitlines())
    assert result.stdout.count("Report: ") == 1, result.stdout
    assert "Engine: **extractive**" in report.read_text(encoding="utf-8")
    sources = json.loads((folder / "sources.json").read_text(encoding="utf-8"))["sources"]
    assert sources and all(s["url"].startswith(servers.site_url) for s in sources)
    assert json.loads((folder / "research-state.json").read_text(encoding="utf-8"))["run_id"] == run_id
    assert len(servers.search.calls) == 3

    # a completed run does not "resume" (forking needs --checkpoint), and nothing runs again
    again = cli(["resume", run_id], env, tmp_path)
    assert again.code == 2, str(again)
    assert "already completed" in again.stderr and "--checkpoint" in again.stderr
    assert_clean_stderr(result, again)
    assert len(servers.search.calls) == 3, "a refused resume must not run anything"


# --- the "done means": Ctrl-C, then resume, repeats nothing ---------------------------------
def test_ctrl_c_after_fetch_then_resume_repeats_no_completed_call(servers: Servers, tmp_path: Path) -> None:
    env = cli_env(servers, tmp_path, llm=True, DEEPRESEARCH_STAGE_DELAY_SECONDS=STAGE_DELAY)
    stderr_path = tmp_path / "run.stderr"
    with (
        stderr_path.open("w", encoding="utf-8") as stderr_file,
        plain_run(env, tmp_path, stderr_file) as (proc, reader, run_id, engine, folder),
    ):
        assert engine == "llm"
        reader.wait_for("✔ Fetch sources:", timeout=COMMAND_TIMEOUT)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=COMMAND_TIMEOUT)
        paused_output = reader.rest(timeout=10)
    paused = Result(("run", QUESTION, "--plain"), code, paused_output, stderr_path.read_text("utf-8"))
    assert paused.code == 130, str(paused)
    assert f"Paused at the latest checkpoint. Continue with: deepresearch resume {run_id}" in paused.stdout
    assert "Pausing: letting in-flight calls finish" in paused.stdout
    assert "Status: cancelled" in paused.stdout
    assert not (folder / "deepresearch-report.md").exists()

    # what the completed stages cost, counted where the calls arrive
    searches, hits, llm_calls = (
        len(servers.search.calls),
        article_hits(servers),
        servers.llm.calls_by_prompt(),
    )
    assert searches == 3, servers.search.calls
    assert sum(hits.values()) >= 2, hits
    assert llm_calls["plan/v1"] == 1, llm_calls
    assert set(llm_calls) <= {"plan/v1"} | LATER_STAGE_PROMPTS, llm_calls

    checkpoints = cli(["checkpoints", run_id], env, tmp_path)
    assert checkpoints.code == 0, str(checkpoints)
    stages = checkpoint_stages(checkpoints.stdout)
    assert stages[:3] == ["plan_research", "search_web", "fetch_sources"], checkpoints.stdout

    resumed = cli(["resume", run_id, "--plain"], env, tmp_path)
    assert resumed.code == 0, str(resumed)
    assert "Status: completed" in resumed.stdout
    assert_final_artifacts(folder)
    # zero repeated calls of the completed stages ...
    assert len(servers.search.calls) == searches, servers.search.calls
    assert article_hits(servers) == hits
    after = servers.llm.calls_by_prompt()
    assert after["plan/v1"] == llm_calls["plan/v1"], after
    # ... and only the later stages asked the model
    grown = {prompt for prompt in after if after[prompt] > llm_calls[prompt]}
    assert grown <= LATER_STAGE_PROMPTS, after
    assert all(after[prompt] >= 1 for prompt in LATER_STAGE_PROMPTS), after
    assert after["report/v1"] == 1 and after["critic/v1"] == 1, after
    # the resumed view starts at the stage after the latest checkpoint, never at a checkpointed one
    titles = {stage.key: stage.title for stage in REPORT_STAGES}
    keys = [stage.key for stage in REPORT_STAGES]
    started = [line[2:] for line in resumed.stdout.splitlines() if line.startswith("▶ ")]
    assert started and started[0] == titles[keys[keys.index(stages[-1]) + 1]], resumed.stdout
    assert not {titles[key] for key in stages} & set(started), resumed.stdout
    report = (folder / "deepresearch-report.md").read_text(encoding="utf-8")
    assert "Engine: **llm**" in report and f"Run `{run_id}`" in report
    assert_clean_stderr(paused, checkpoints, resumed)


# --- bad input: a clear message, exit 2, never a traceback -------------------------------------------
def test_bad_input_gets_a_clear_message_and_exit_2(servers: Servers, tmp_path: Path) -> None:
    env = cli_env(servers, tmp_path)
    cases: dict[str, tuple[list[str], dict[str, str]]] = {
        "empty question": (["run", ""], env),
        "punctuation only": (["run", "?"], env),
        "unknown run": (["resume", "0123456789abcdef0123456789abcdef"], env),
        "missing corpus": (["run", QUESTION, "--corpus", "no-such-folder"], env),
        "invalid setting": (["run", QUESTION], env | {"DEEPRESEARCH_MAX_RESEARCH_LOOPS": "0"}),
        "invalid flag": (["run", QUESTION, "--loops", "0"], env),
        "corpus-only alone": (["run", QUESTION, "--corpus-only"], env),
    }
    results = dict(zip(cases, cli_parallel(list(cases.values()), tmp_path), strict=True))
    for name, result in results.items():
        assert result.code == 2, f"{name}: {result}"
        assert result.stderr.startswith("error:"), f"{name}: {result}"
        assert "Traceback" not in result.stderr + result.stdout, f"{name}: {result}"
    assert "question is empty: write the question to research" in results["empty question"].stderr
    assert "has no words" in results["punctuation only"].stderr
    assert "not found" in results["unknown run"].stderr
    assert "`deepresearch runs`" in results["unknown run"].stderr
    assert "--corpus no-such-folder: no such folder" in results["missing corpus"].stderr
    assert "invalid settings" in results["invalid setting"].stderr
    assert "max_research_loops" in results["invalid setting"].stderr
    assert "error: --loops: Input should be greater than or equal to 1" in results["invalid flag"].stderr
    assert "error: --corpus-only needs --corpus DIR" in results["corpus-only alone"].stderr
    # nothing was researched
    assert servers.search.calls == [] and servers.site.total_hits == 0
    assert not (tmp_path / "workspace").exists()


# --- the local corpus --------------------------------------------------------------------------------
CORPUS = {
    "checkpoints.md": (
        "# Checkpoints in long-running workflows\n\n"
        "A checkpoint records the state of a workflow after each completed step. When the process stops, "
        "the workflow resumes from its latest checkpoint instead of starting again from the top.\n\n"
        "Checkpoints are written after a step's result has been stored, so a resumed workflow never "
        "loses a completed step.\n"
    ),
    "receipts.md": (
        "# Receipts for external calls\n\n"
        "Every external call of a workflow can leave a receipt keyed by the workflow, the step and a hash "
        "of its arguments. A resumed workflow that finds a receipt returns the recorded result instead of "
        "calling the service again, so a paid call is never repeated.\n"
    ),
    "gardening.md": (
        "# Tomatoes\n\nTomatoes need full sun, deep watering and a stake or cage once the plants grow "
        "taller than half a metre.\n"
    ),
}
CORPUS_QUESTION = "How do workflow checkpoints and receipts avoid repeating external calls on resume?"


def _write_corpus(folder: Path) -> None:
    folder.mkdir(parents=True)
    for name, text in CORPUS.items():
        (folder / name).write_text(text, encoding="utf-8")


def _assert_corpus_only_run(result: Result, servers: Servers) -> None:
    assert result.code == 0, str(result)
    _, _, folder = run_line(result.stdout)
    assert_final_artifacts(folder)
    sources = json.loads((folder / "sources.json").read_text(encoding="utf-8"))["sources"]
    assert sources, "no source was read from the corpus"
    assert all(s["url"].startswith("corpus://") for s in sources), [s["url"] for s in sources]
    assert {s["url"] for s in sources} <= {f"corpus://{name}" for name in CORPUS}
    assert "(local document)" in (folder / "deepresearch-report.md").read_text(encoding="utf-8")
    assert_clean_stderr(result)


def test_corpus_only_never_touches_the_web(servers: Servers, tmp_path: Path) -> None:
    _write_corpus(tmp_path / "notes")
    env = cli_env(servers, tmp_path)
    result = cli(["run", CORPUS_QUESTION, "--corpus", "notes", "--corpus-only"], env, tmp_path)
    _assert_corpus_only_run(result, servers)
    assert servers.search.calls == [], servers.search.calls
    assert servers.site.total_hits == 0


def test_corpus_flag_with_corpus_only_env(servers: Servers, tmp_path: Path) -> None:
    _write_corpus(tmp_path / "notes")
    env = cli_env(servers, tmp_path, DEEPRESEARCH_CORPUS_ONLY="true")
    result = cli(["run", CORPUS_QUESTION, "--corpus", "notes"], env, tmp_path)
    _assert_corpus_only_run(result, servers)
    assert servers.search.calls == []


# --- a second Ctrl-C stops at once; the run stays resumable ------------------------------------------
def test_second_ctrl_c_stops_at_once_and_the_run_resumes(servers: Servers, tmp_path: Path) -> None:
    env = cli_env(servers, tmp_path, llm=True, DEEPRESEARCH_STAGE_DELAY_SECONDS="1")
    with plain_run(env, tmp_path, subprocess.PIPE) as (proc, reader, run_id, _, folder):
        reader.wait_for("✔ Plan the research:", timeout=COMMAND_TIMEOUT)
        proc.send_signal(signal.SIGINT)
        reader.wait_for("! Pausing", timeout=COMMAND_TIMEOUT)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=COMMAND_TIMEOUT)
        output = reader.rest(timeout=10)
        stderr = proc.stderr.read() if proc.stderr else ""
    assert code == 130, output + stderr
    assert f"deepresearch resume {run_id}" in output and "Traceback" not in stderr
    listed = cli(["runs"], env, tmp_path)
    assert any(line.startswith(run_id) and "interrupted" in line for line in listed.stdout.splitlines())
    resumed = cli(["resume", run_id, "--plain"], env, tmp_path)
    assert resumed.code == 0, str(resumed)
    assert_final_artifacts(folder)
    assert servers.llm.calls_by_prompt()["plan/v1"] == 1


def test_a_run_left_running_by_a_dead_process_is_taken_over(servers: Servers, tmp_path: Path) -> None:
    env = cli_env(servers, tmp_path, DEEPRESEARCH_STAGE_DELAY_SECONDS="1")
    with plain_run(env, tmp_path, subprocess.DEVNULL) as (proc, reader, run_id, _, folder):
        reader.wait_for("✔ Plan the research:", timeout=COMMAND_TIMEOUT)
        proc.kill()  # kill -9: nothing gets to record that the run stopped
        proc.wait(timeout=10)
    refused = cli(["resume", run_id], env, tmp_path)
    assert refused.code == 2 and "--takeover" in refused.stderr, str(refused)
    taken = cli(["resume", run_id, "--takeover", "--plain"], env, tmp_path)
    assert taken.code == 0, str(taken)
    assert_final_artifacts(folder)


def test_serve_on_a_taken_port_names_the_fix(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("DEEPRESEARCH_")}
        result = cli(["serve", "--port", str(port)], env | {"DEEPRESEARCH_HOME": str(tmp_path)}, tmp_path)
    assert result.code == 2, str(result)
    assert f"port {port} on 127.0.0.1 is already in use" in result.stderr and "--port" in result.stderr


# --- papercuts: each answered with what to do, never a traceback or silence ---------------------------
def test_an_empty_token_list_and_a_corpus_file_say_what_to_do(servers: Servers, tmp_path: Path) -> None:
    env = cli_env(servers, tmp_path)
    (tmp_path / "notes.md").write_text("# Notes\n", encoding="utf-8")
    listed, corpus = cli_parallel(
        [(["token", "list"], env), (["run", QUESTION, "--corpus", "notes.md"], env)], tmp_path
    )
    assert_clean_stderr(listed, corpus)
    assert listed.code == 0 and "No API tokens yet" in listed.stdout, str(listed)
    assert "deepresearch token create NAME" in listed.stdout
    assert corpus.code == 2 and "--corpus notes.md: is a file, not a folder" in corpus.stderr, str(corpus)
    assert servers.search.calls == [] and servers.site.total_hits == 0


def test_a_run_whose_search_fails_says_why_once_and_how_to_go_on(servers: Servers, tmp_path: Path) -> None:
    """An empty --corpus folder (said up front: the web is searched instead) and a search server that
    refuses connections (a bound port nobody listens on): the run fails at the search, the progress says
    why once (the stage's line, not again as the run's error), stderr says it with the resume command."""
    (tmp_path / "empty").mkdir()
    with socket.socket() as refusing:
        refusing.bind(("127.0.0.1", 0))
        port = refusing.getsockname()[1]
        env = cli_env(servers, tmp_path) | {"DEEPRESEARCH_WEB_SEARCH_URL": f"http://127.0.0.1:{port}/search"}
        result = cli(["run", QUESTION, "--corpus", "empty", "--plain"], env, tmp_path)
    assert_clean_stderr(result)
    assert result.code == 3, str(result)
    assert "note: --corpus empty holds no .md, .txt, .html or .pdf document" in result.stderr, str(result)
    failed = [line for line in result.stdout.splitlines() if line.startswith("✖")]
    assert len(failed) == 1 and failed[0].startswith("✖ Search for sources: search_web:"), str(result)
    run_id, _, _ = run_line(result.stdout)
    assert "Run failed: search_web:" in result.stderr and f"deepresearch resume {run_id}" in result.stderr
    assert servers.site.total_hits == 0


def test_runs_lists_a_renamed_run_by_its_title(servers: Servers, tmp_path: Path) -> None:
    async def renamed_run() -> str:
        async with open_engine(servers.settings(tmp_path)) as engine:
            run = await engine.create_run(QUESTION)
            await engine.store.update_run(run.run_id, title="Checkpoint notes for the team")
            long = await engine.create_run(LONG_QUESTION)
            return run.run_id, long.run_id

    run_id, long_id = asyncio.run(renamed_run())
    listed = cli(["runs"], cli_env(servers, tmp_path), tmp_path)
    assert listed.code == 0, str(listed)
    line = next(line for line in listed.stdout.splitlines() if line.startswith(run_id))
    assert line.endswith("Checkpoint notes for the team") and QUESTION[:40] not in line, line
    # a question longer than the column is cut on one line with a mark, never silently
    line = next(line for line in listed.stdout.splitlines() if line.startswith(long_id))
    shown = line.split("  ")[-1]
    assert shown.endswith("…") and len(shown) <= 70 and LONG_QUESTION.startswith(shown[:-1]), line


LONG_QUESTION = (
    "How do workflow checkpoints and receipts together make sure that a resumed research run "
    "never repeats a paid search, a fetch or a model call that already completed?"
)
