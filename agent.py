"""deepresearch: the command line. The run lifecycle is the service's (deepresearch/service/runs.py), as
for HTTP.

deepresearch run "question" [--corpus DIR]     research with a live progress view; Ctrl-C pauses
deepresearch resume RUN_ID [--checkpoint ID]   continue a paused/failed run (or fork from a checkpoint)
deepresearch runs | checkpoints RUN_ID         what is stored
deepresearch serve [--host H] [--port P]       the HTTP runner (and MCP at /mcp)
deepresearch mcp                               an MCP server on stdin/stdout, for MCP hosts (docs/mcp.md)
deepresearch token create NAME [--admin] | list | revoke ID_OR_NAME
deepresearch prune --older-than 30d            delete old finished runs and everything they stored
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import logging
import math
import re
import signal
import socket
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from pydantic import ValidationError

from deepresearch.errors import CheckpointNotFound, InvalidInput, RunConflict, RunNotFound

# The engine, the store and the settings are imported where a command needs them, not here: the CPU
# pool's worker processes (spawn) import this module again as their main module, and these imports cost
# each worker seconds of CPU it never uses. (`deepresearch --help` answers at once, too.)
if TYPE_CHECKING:
    from config import Settings
    from deepresearch.service.options import Patch
    from deepresearch.service.runs import RunService
    from deepresearch.store import RunRecord

__all__ = ["main"]

logger = logging.getLogger("deepresearch")

EXIT_OK, EXIT_USAGE, EXIT_FAILED, EXIT_CANCELLED = 0, 2, 3, 130
# the command-line spelling of the options a message may name
_FLAGS = {
    "max_research_loops": "--loops",
    "queries_per_round": "--queries",
    "results_per_query": "--results",
    "sources_to_fetch": "--sources",
    "corpus_dir": "--corpus",
    "corpus_only": "--corpus-only",
    "budget.max_llm_tokens": "--max-tokens",
    "budget.max_search_calls": "--max-searches",
    "budget.max_fetches": "--max-fetches",
    "budget.deadline_seconds": "--deadline",
}

# a field the service names in a message about several options ("options.sources_to_fetch: ...")
_AS_TYPED = re.compile(r"\b(?:options\.)?(" + "|".join(re.escape(name) for name in _FLAGS) + r")(?=: )")
# ... or an option a message names in its text ("leave `corpus_only` off")
_NAMED = re.compile(r"`(?:options\.)?(" + "|".join(re.escape(name) for name in _FLAGS) + r")`")


async def _check_database(settings: Settings) -> None:
    from deepresearch.store import open_persistence

    async with open_persistence(settings.resolved_database_url) as persistence:
        await persistence.store.ping()


_NUMBER = re.compile(r"-\d+(?:\.\d*)?")  # a negative value, not an option


class _Parser(argparse.ArgumentParser):
    """argparse's parser, except that a stray option beside a missing argument is named first: `deepresearch
    run --bogus` said "the following arguments are required: question", as if the option had been read."""

    _given: list[str]

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        # a command's parser is given what follows its name on the command line
        self._given = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        if message.startswith("the following arguments are required"):
            known = self._option_string_actions
            stray = [
                a
                for a in getattr(self, "_given", [])
                if a.startswith("-") and not _NUMBER.fullmatch(a) and a.split("=")[0] not in known
            ]
            if stray:
                message = f"unrecognized arguments: {' '.join(stray)} (see `{self.prog} --help`)"
        super().error(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="deepresearch", description="Self-hosted deep-research agent.")
    parser.add_argument("--env-file", default=".env", help="read settings from this file if it exists")
    # not required=True: argparse would then answer a mistyped option (`deepresearch --bogus`) with
    # "arguments are required: command"; _arguments() names the stray option or the missing command instead
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", help="research a question")
    run.add_argument("question", help="the question to research, in quotes")
    run.add_argument("--corpus", type=Path, help="folder of .md/.txt/.html/.pdf documents to search too")
    run.add_argument("--corpus-only", action="store_true", help="search only the corpus, never the web")
    # the defaults shown are the engine's; DEEPRESEARCH_* settings in the environment or .env replace them
    run.add_argument("--loops", type=int, help=_default("max research loops (depth)", "max_research_loops"))
    run.add_argument("--queries", type=int, help=_default("queries per round (breadth)", "queries_per_round"))
    run.add_argument("--results", type=int, help=_default("results per query", "results_per_query"))
    run.add_argument(
        "--sources",
        type=int,
        help=_default("sources to fetch per round (corpus documents: up to twice)", "sources_to_fetch"),
    )
    run.add_argument("--no-critic", action="store_true", help="skip the critic review")
    run.add_argument("--plain", action="store_true", help="plain line output instead of the live view")
    _budget_arguments(run)

    resume = sub.add_parser("resume", help="continue a paused, interrupted or failed run")
    resume.add_argument("run_id")
    resume.add_argument("--checkpoint", help="fork from this checkpoint id (see `checkpoints RUN_ID`)")
    resume.add_argument("--plain", action="store_true")
    resume.add_argument(
        "--takeover",
        action="store_true",
        help="resume a run still marked running whose process is gone (never while it runs)",
    )
    _budget_arguments(resume)

    sub.add_parser("runs", help="list runs")
    checkpoints = sub.add_parser("checkpoints", help="list a run's checkpoints")
    checkpoints.add_argument("run_id")

    serve = sub.add_parser("serve", help="serve the HTTP runner")
    serve.add_argument("--host", default="127.0.0.1", help="off loopback, API tokens are required")
    serve.add_argument("--port", type=_port, default=8000, help="1-65535 (default 8000)")

    sub.add_parser("mcp", help="serve MCP over stdio, for MCP hosts that start a command (docs/mcp.md)")

    token = sub.add_parser("token", help="API tokens: create, list, revoke")
    actions = token.add_subparsers(dest="action", metavar="ACTION")  # _arguments() names a missing one
    token.set_defaults(actions=actions.choices)
    create = actions.add_parser("create", help="a new token for user NAME (printed once, on the last line)")
    create.add_argument("name")
    create.add_argument("--admin", action="store_true", help="the token sees and acts on every user's runs")
    actions.add_parser("list", help="every token (never the token itself)")
    revoke = actions.add_parser("revoke", help="revoke a token by id, or every token of a user by name")
    revoke.add_argument("token")

    prune = sub.add_parser("prune", help="delete finished runs older than an age, with all they stored")
    prune.add_argument("--older-than", required=True, type=_age, help="e.g. 30d, 12h, 90m")
    # _arguments() lists the commands when none is given, and answers a stray option with the command's usage
    parser.set_defaults(commands=sub.choices)
    return parser


def _default(text: str, option: str) -> str:
    """An option's help with its default and the setting that changes it."""
    from deepresearch.options import OPTION_DEFAULTS

    default = f"default {getattr(OPTION_DEFAULTS, option)}, or DEEPRESEARCH_{option.upper()}"
    return f"{text[:-1]}; {default})" if text.endswith(")") else f"{text} ({default})"


def _age(text: str) -> float:
    """An age like 30d, 12h or 90m, in days."""
    units = {"d": 1.0, "h": 1 / 24, "m": 1 / 1440}
    number, unit = text[:-1], text[-1:].lower()
    try:
        value = float(number)
    except ValueError:
        value = -1.0
    if unit not in units or not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not an age like 30d, 12h or 90m")
    return value * units[unit]


def _port(text: str) -> int:
    """A TCP port to listen on. Not 0 (any free port): the address printed and logged would be wrong."""
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port: give a number from 1 to 65535, e.g. 8000")
    return port


def _budget_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("budget (the run pauses at a checkpoint when one is reached)")
    # metavars as the README writes them, not the service's field names ("--max-tokens MAX_LLM_TOKENS")
    add = group.add_argument
    add("--max-tokens", type=int, dest="max_llm_tokens", metavar="N", help="LLM tokens for the whole run")
    add("--max-searches", type=int, dest="max_search_calls", metavar="N", help="search calls")
    add("--max-fetches", type=int, dest="max_fetches", metavar="N", help="page fetches")
    add("--deadline", type=float, dest="deadline_seconds", metavar="SECONDS", help="seconds from the start")


def _budget_overrides(args: argparse.Namespace) -> dict[str, Any]:
    names = ("max_llm_tokens", "max_search_calls", "max_fetches", "deadline_seconds")
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


def _options_patch(args: argparse.Namespace, settings: Settings) -> Patch:
    """The run's options as given on the command line, typed as the API's (the service merges them over
    the defaults)."""
    from deepresearch.search.folder import DOCUMENT_KINDS, has_documents
    from deepresearch.service.options import options_patch

    if args.corpus and not args.corpus.is_dir():
        if args.corpus.is_file():
            raise InvalidInput(
                f"--corpus {args.corpus}: is a file, not a folder; name the folder that holds the documents"
            )
        raise InvalidInput(f"--corpus {args.corpus}: no such folder; name an existing folder of documents")
    if args.corpus_only and not args.corpus and settings.corpus_dir is None:
        # said in the flags' words here (the service names its fields: "options: corpus_only needs ...")
        raise InvalidInput("--corpus-only needs --corpus DIR: name the folder of documents to research")
    web = not (args.corpus_only or settings.corpus_only)  # corpus-only: the service refuses such a folder
    if args.corpus and web and not has_documents(args.corpus):
        # not an error (the web is searched), but the folder was meant to be read: say it is not
        said = f"--corpus {args.corpus} holds no {DOCUMENT_KINDS} document: this run searches the web only"
        print(f"note: {said}", file=sys.stderr)
    given = {
        "max_research_loops": args.loops,
        "queries_per_round": args.queries,
        "results_per_query": args.results,
        "sources_to_fetch": args.sources,
        # absolute, so a resume from another working directory finds the same folder
        "corpus_dir": str(args.corpus.resolve()) if args.corpus else None,
        "corpus_only": args.corpus_only or None,
        "requires_critic_review": False if args.no_critic else None,
    }
    return options_patch(
        {k: v for k, v in given.items() if v is not None} | {"budget": _budget_overrides(args)}
    )


async def _follow(
    service: RunService, run: RunRecord, plain: bool, begin: Callable[[], Awaitable[object]]
) -> int:
    """Start the execution with `begin`, show its progress until it ends; Ctrl-C pauses it."""
    from deepresearch.service.cli_view import ProgressView

    run_id = run.run_id
    view = ProgressView(run, live=not plain and sys.stdout.isatty())
    service.on_event = view.on_event  # before the execution starts: the view sees its first event
    await begin()
    loop = asyncio.get_running_loop()
    presses = 0

    def on_sigint() -> None:
        nonlocal presses
        presses += 1
        if presses > 1:
            view.note("Second Ctrl-C: stopping now. Calls in flight may be made again on resume.")
            service.abort(run_id)
            return
        service.request_stop(run_id, "cancelled with Ctrl-C")
        view.note(
            "Pausing: letting in-flight calls finish and record their receipts (Ctrl-C again to force)."
        )

    loop.add_signal_handler(signal.SIGINT, on_sigint)
    try:
        with view:
            final = await service.wait(run_id)
    except asyncio.CancelledError:
        # the engine recorded the run as interrupted before letting the cancellation through
        print(f"Stopped. Continue with: deepresearch resume {run_id}")
        return EXIT_CANCELLED
    finally:
        loop.remove_signal_handler(signal.SIGINT)
    view.summary(final)
    if final.status == "completed":
        print(f"Report: {await service.engine.report_path(final, final.status)}")
        return EXIT_OK
    if final.status == "cancelled":
        print(f"Paused at the latest checkpoint. Continue with: deepresearch resume {run_id}")
        return EXIT_CANCELLED
    print(f"Run failed: {final.error}\nFix the cause, then: deepresearch resume {run_id}", file=sys.stderr)
    return EXIT_FAILED


async def _tokens(args: argparse.Namespace, settings: Settings) -> int:
    from deepresearch.service.auth import Tokens
    from deepresearch.store import open_persistence

    async with open_persistence(settings.resolved_database_url) as persistence:
        tokens = Tokens(persistence.store)
        if args.action == "create":
            record, token = await tokens.create(args.name, admin=args.admin)
            role = "admin" if record.admin else "user"
            print(
                f"Token {record.token_id} for {record.name} ({role}). It is shown only now; keep it secret:"
            )
            print(token)
        elif args.action == "list":
            listed = await tokens.list()
            if not listed:
                print("No API tokens yet. Create one with: deepresearch token create NAME [--admin]")
            for t in listed:
                state = f"revoked {t.revoked_at[:19]}" if t.revoked_at else "active"
                used = t.last_used_at[:19] if t.last_used_at else "never used"
                role = "admin" if t.admin else "user"
                print(
                    f"{t.token_id}  {t.name:<20} {role:<5}  {state:<27} created {t.created_at[:19]}  {used}"
                )
        else:
            for t in await tokens.revoke(args.token):
                print(f"Revoked token {t.token_id} of {t.name}.")
    return EXIT_OK


async def _main(args: argparse.Namespace, settings: Settings) -> int:
    from deepresearch.engine.core import open_engine
    from deepresearch.service.options import options_patch
    from deepresearch.service.runs import RunService

    if args.command == "token":
        return await _tokens(args, settings)
    async with open_engine(settings) as engine:
        service = RunService(engine, shutdown_grace_seconds=settings.shutdown_grace_seconds)
        if args.command == "run":
            run = await service.create(args.question, _options_patch(args, settings))
            print(
                f"Run {run.run_id} ({run.engine} engine) — artifacts in "
                f"{settings.workspace_dir / (run.artifact_dir or '')}"
            )

            async def launch() -> None:
                service.launch(run.run_id)

            return await _follow(service, run, args.plain, launch)
        if args.command == "resume":
            patch = options_patch({"budget": budget}) if (budget := _budget_overrides(args)) else None

            async def resume() -> None:
                try:
                    await service.resume(args.run_id, args.checkpoint, patch, takeover=args.takeover)
                except CheckpointNotFound as exc:
                    raise InvalidInput(f"{exc}; see `deepresearch checkpoints {args.run_id}`") from None

            return await _follow(service, await service.store.get_run(args.run_id), args.plain, resume)
        if args.command == "runs":
            runs, _ = await service.list_runs(None, limit=100, offset=0)
            for item in runs:
                # a renamed run by the name the user gave it, as the workbench lists it
                name = item.title or item.question
                print(f"{item.run_id}  {item.status:<11} {item.created_at[:19]}  {_shortened(name, 70)}")
            return EXIT_OK
        if args.command == "prune":
            pruned = await service.prune(args.older_than)
            print(
                f"Deleted {len(pruned.deleted)} run(s) finished more than {args.older_than:g} day(s) ago. "
                f"Database: {pruned.database_bytes / 1e6:.1f} MB, "
                f"workspace: {pruned.workspace_bytes / 1e6:.1f} MB."
            )
            return EXIT_OK
        if args.command == "checkpoints":
            for cp in await service.views.checkpoints(args.run_id):
                print(f"{cp.checkpoint_id}  {cp.stage:<17} {cp.created_at[:19]}  {cp.summary}")
            return EXIT_OK
    return EXIT_USAGE


def _port_problem(host: str, port: int) -> str | None:
    """Why the server could not listen on host:port (taken, not an address of this machine), or None.
    Checked before starting so the message names the fix; uvicorn would only log and exit."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return f"port {port} on {host} is already in use (another server?); choose one with --port"
            return f"cannot listen on {host}:{port}: {exc.strerror}; check --host and --port"
    return None


def _shortened(text: str, width: int) -> str:
    """One line of at most `width` characters, a cut marked: a cut question never passes for a whole one."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = _parser()
    args, stray = parser.parse_known_args(argv)
    if stray:
        given = list(sys.argv[1:] if argv is None else argv)
        # a stray option before the command is the top level's ("deepresearch --bogus run q")
        first = given.index(stray[0]) if stray[0] in given else len(given)
        if args.command is None or first < given.index(args.command):
            parser.error(f"unrecognized arguments: {' '.join(stray)} (see `deepresearch --help`)")
        # the command's usage line, not the top level's: it shows the options the command takes
        command, usage = args.command, args.commands[args.command]
        if getattr(args, "action", None):
            command, usage = f"{command} {args.action}", args.actions[args.action]
        usage.error(f"unrecognized arguments: {' '.join(stray)} (see `deepresearch {command} --help`)")
    if args.command is None:
        *first, last = args.commands
        parser.error(f"choose a command: {', '.join(first)} or {last} (see `deepresearch --help`)")
    if args.command == "token" and args.action is None:
        args.commands["token"].error(
            "choose a token action: create, list or revoke (see `deepresearch token --help`)"
        )
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(argv)
    from config import describe_settings_error, describe_validation_error, load_settings
    from deepresearch.service.auth import TokenError
    from deepresearch.store import PostgresUnavailable, UnsupportedDatabase

    try:
        env_file = args.env_file if Path(args.env_file).is_file() else None
        settings = load_settings(env_file)
    except ValidationError as exc:
        print(f"error: invalid settings: {describe_settings_error(exc)}", file=sys.stderr)
        return EXIT_USAGE
    logging.basicConfig(level=settings.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.command == "serve":
            from runner import serve, serve_problem

            asyncio.run(_check_database(settings))  # fail fast with a message, not a lifespan traceback
            if problem := serve_problem(settings, args.host):
                print(f"error: {problem}", file=sys.stderr)
                return EXIT_USAGE
            if problem := _port_problem(args.host, args.port):
                print(f"error: {problem}", file=sys.stderr)
                return EXIT_USAGE
            shown = f"[{args.host}]" if ":" in args.host else args.host
            print(f"Serving the workbench at http://{shown}:{args.port}/ (API docs: /docs). Ctrl-C stops.")
            return serve(settings, host=args.host, port=args.port)
        if args.command == "mcp":  # stdout is the protocol's: every message of ours goes to stderr
            from deepresearch.api.mcp.stdio import serve_stdio
            from runner import VERSION

            asyncio.run(_check_database(settings))
            return asyncio.run(serve_stdio(settings, VERSION))
        return asyncio.run(_main(args, settings))
    except RunNotFound as exc:
        print(f"error: {exc}; list runs with `deepresearch runs`", file=sys.stderr)
    except RunConflict as exc:
        print(f"error: {exc}", file=sys.stderr)
    except (UnsupportedDatabase, PostgresUnavailable) as exc:
        print(f"error: {exc}", file=sys.stderr)
    except ValidationError as exc:
        print(f"error: invalid options: {describe_validation_error(exc, 'options')}", file=sys.stderr)
    except InvalidInput as exc:
        # the options as typed, not the service's field names ("--sources: Input should be ...")
        flag = _FLAGS.get((exc.field or "").removeprefix("options."))
        said = f"{flag}: {exc.reason}" if flag else _AS_TYPED.sub(lambda m: _FLAGS[m[1]], str(exc))
        said = _NAMED.sub(lambda m: f"`{_FLAGS[m[1]]}`", said)
        print(f"error: {said}", file=sys.stderr)
    except (ValueError, TokenError) as exc:
        print(f"error: {exc}", file=sys.stderr)
    except KeyboardInterrupt:
        print("Stopped. Resume with `deepresearch resume RUN_ID` (see `deepresearch runs`).", file=sys.stderr)
        return EXIT_CANCELLED
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
