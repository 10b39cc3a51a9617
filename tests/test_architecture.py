"""The layers of docs/architecture.md, enforced: imports point one way and there are no import circles."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# rank: a module may import modules of its own rank or lower, never higher
# deepresearch.platform_graph: the entry point of LangGraph's server (langgraph.json), as runner is ours
FRONT_ENDS = {"agent", "runner", "e2e_http", "pg_smoke", "deepresearch.platform_graph"}
SERVICE = {
    "deepresearch.service",
    "deepresearch.run_views",
    "deepresearch.replicas",
    "deepresearch.auth",
    "deepresearch.http_access",
    "deepresearch.api_docs",
    "deepresearch.account_routes",
    "deepresearch.doc_collections",
    "deepresearch.limits",
    "deepresearch.contracts",
    "deepresearch.http_errors",
    "deepresearch.ui",
    "deepresearch.cli_view",
    "deepresearch.preflight",
}
ENGINE = {"deepresearch.engine", "workflow", "tools", "deepresearch.state", "deepresearch.nodes"}


def rank(module: str) -> int:
    if module in FRONT_ENDS:
        return 3
    if module in SERVICE:
        return 2
    if module in ENGINE or module.startswith("deepresearch.nodes."):
        return 1
    return 0  # config, stages, prompts, llm_client and the parts under deepresearch/


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
