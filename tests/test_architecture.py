"""The layers of docs/architecture.md, enforced: imports point one way and there are no import circles."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# rank: a module may import modules of its own rank or lower, never higher. The layers are folders
# (docs/architecture.md): a module's rank is its folder's, so a new module needs no entry here.
# deepresearch.platform_graph: the entry point of LangGraph's server (langgraph.json), as runner is ours
FRONT_ENDS = {"agent", "runner", "e2e_http", "pg_smoke", "deepresearch.platform_graph"}
FOLDER_RANKS = {
    "deepresearch.api": 3,
    "deepresearch.service": 2,
    "deepresearch.engine": 1,
    "deepresearch.graph": 1,
}
ENGINE_FRONT_DOORS = {"workflow", "tools"}


def rank(module: str) -> int:
    if module in FRONT_ENDS:
        return 3
    for folder, folder_rank in FOLDER_RANKS.items():
        if module == folder or module.startswith(f"{folder}."):
            return folder_rank
    if module in ENGINE_FRONT_DOORS:
        return 1
    return 0  # config, stages, prompts, llm_client and the parts: llm/ receipts/ search/ web/ report/ ...


def modules() -> dict[str, Path]:
    found = {}
    for path in [*ROOT.glob("*.py"), *ROOT.glob("deepresearch/**/*.py")]:
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        found[name] = path
    return found


def imports(found: dict[str, Path]) -> dict[str, set[str]]:
    def resolve(target: str) -> str | None:
        while target and target not in found:
            target = target.rpartition(".")[0]
        return target or None

    edges: dict[str, set[str]] = {}
    for name, path in found.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {t for a in node.names if (t := resolve(a.name))}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, *([node.module] if node.module else [])])
                for alias in node.names:
                    if target := resolve(f"{base}.{alias.name}") or resolve(base):
                        targets.add(target)
        # a package re-exporting its own submodules is not an edge between layers
        edges[name] = {t for t in targets if t != name and not t.startswith(f"{name}.")}
    return edges


def test_imports_point_down_the_layers() -> None:
    edges = imports(modules())
    upward = [
        f"{source} -> {target}"
        for source, targets in edges.items()
        for target in targets
        if rank(target) > rank(source) and not (source == "agent" and target == "runner")
    ]
    assert upward == [], upward


def test_no_import_circles() -> None:
    edges = imports(modules())
    state: dict[str, int] = {}
    circles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                circles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    assert circles == [], circles


MAX_MODULES_AT_TOP = 12
MAX_MODULES_PER_FOLDER = 15
MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 100


def test_the_package_is_folders_of_a_bounded_size() -> None:
    package = ROOT / "deepresearch"
    top = sorted(p.name for p in package.glob("*.py"))
    assert len(top) <= MAX_MODULES_AT_TOP, top
    for folder in sorted(p for p in package.rglob("*") if p.is_dir() and p.name != "__pycache__"):
        entries = [p for p in folder.iterdir() if p.name != "__pycache__"]
        assert len(entries) <= MAX_MODULES_PER_FOLDER, (folder, len(entries))


def _sources(*folders: str) -> list[Path]:
    return sorted(path for folder in folders for path in ROOT.glob(f"{folder}/**/*.py"))


# the product, the benchmarks and the scripted peers and scripts they share with the tests
CODE = ("deepresearch", "bench", "peers", "scripts")


def test_no_source_file_or_function_is_too_long() -> None:
    too_long: list[str] = []
    for path in [*ROOT.glob("*.py"), *_sources(*CODE)]:
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(ROOT)
        if (lines := len(text.splitlines())) > MAX_FILE_LINES:
            too_long.append(f"{name}: {lines} lines")
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.end_lineno is None:
                continue
            if (length := node.end_lineno - node.lineno + 1) > MAX_FUNCTION_LINES:
                too_long.append(f"{name}:{node.lineno} {node.name}(): {length} lines")
    assert too_long == [], too_long


# the front-door modules at the top, beside the package
FRONT_DOORS = ("agent", "runner", "workflow", "stages", "tools", "config", "prompts", "llm_client")


def test_no_stand_in_methods() -> None:
    """A part of a class is an object it holds, given what it needs in its constructor (its host's few
    operations as a typing.Protocol), never a mixin whose stand-ins `raise NotImplementedError` until the
    host class overrides them."""
    stand_ins: list[str] = []
    for path in [*(ROOT / f"{name}.py" for name in FRONT_DOORS), *_sources("deepresearch")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(raised, ast.Name) and raised.id == "NotImplementedError":
                stand_ins.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert stand_ins == [], stand_ins


def test_the_compiled_graph_stays_behind_the_engine() -> None:
    """Readers and steering ask the engine for a state, a history, a seed or the drawing
    (engine/core.py's face); only deepresearch/engine/ holds the compiled graph itself."""
    reaching = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in [*(ROOT / f"{name}.py" for name in FRONT_DOORS), *_sources("deepresearch")]
        if "engine" not in path.relative_to(ROOT).parts[:2]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute)
        and node.attr == "graph"
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "engine"
    ]
    assert reaching == [], reaching


def test_no_test_file_is_too_long() -> None:
    """The suites keep the same limit per file (a topic per file; shared helpers in tests/_*_helpers.py)."""
    too_long = [
        f"{path.relative_to(ROOT)}: {lines} lines"
        for path in _sources("tests")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_FILE_LINES
    ]
    assert too_long == [], too_long


def _names_holding_a_run_service(tree: ast.AST) -> set[str]:
    """`service`, and every parameter or annotated name or attribute typed with RunService in the module."""
    names = {"service"}
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation and "RunService" in ast.unparse(node.annotation):
            names.add(node.arg)
        elif isinstance(node, ast.AnnAssign) and "RunService" in ast.unparse(node.annotation):
            target = node.target
            names.add(target.attr if isinstance(target, ast.Attribute) else ast.unparse(target))
    return names


def _receivers(node: ast.expr) -> list[str]:
    """The names along an attribute chain: `request.app.state.service` -> service, state, app, request."""
    chain: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            chain.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Call | ast.Subscript | ast.Await):
            node = node.func if isinstance(node, ast.Call) else node.value
        else:
            return [*chain, node.id] if isinstance(node, ast.Name) else chain


def test_the_api_does_not_reach_through_the_service_into_the_store() -> None:
    """deepresearch/api/ reads through RunService's face (`service.views`: records, events, checkpoints,
    the database's tally; `service.protocol_store`: the Agent Protocol's tables), never `service.store`
    nor a store reached on anything the service holds (`service.views.store`, `service.engine.store`)."""
    reaching: list[str] = []
    for path in _sources("deepresearch/api"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        holders = _names_holding_a_run_service(tree)
        reaching += [
            f"{path.relative_to(ROOT)}:{node.lineno} {ast.unparse(node)}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and node.attr == "store"
            and holders & set(_receivers(node.value))
        ]
    assert reaching == [], reaching
