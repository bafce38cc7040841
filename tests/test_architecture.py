"""The package's import structure (docs/architecture.md): no import circle, no import up the chain
of layers nor up a package's inner order, and no long module without a word on why.

Every `import` / `from ... import` of every module under kubectl_wap/ counts, wherever it stands:
at the top, inside a function (a lazy import) or under `if TYPE_CHECKING:`. A lazy or type-only
import does not make a circle go away, it only hides it from the interpreter at start-up: the two
modules still need each other, and the next refactoring that hoists the import breaks the load.
The graph is read from the source with `ast` (nothing is imported), so a test failure names the
file and line of each edge.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "kubectl_wap"
DOC = ROOT / "docs" / "architecture.md"

# The layers, bottom first, and the top-level modules and packages of kubectl_wap/ in each
# ("__init__" is kubectl_wap/__init__.py). A module may import modules of its own layer and of the
# layers below it, never of a layer above. docs/architecture.md shows the same table
# (test_the_document_shows_this_table keeps the two equal).
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("__init__", "errors", "quantity", "profiles")),
    ("model", ("model",)),
    ("queueing", ("queueing",)),
    ("snapshot", ("snapshot",)),
    ("framework", ("framework",)),
    ("preemption", ("preemption",)),
    ("simulate", ("simulate",)),
    ("autoscale", ("autoscale",)),
    ("diagnose", ("diagnose",)),
    ("report", ("report",)),
    ("cli", ("cli",)),
]
LAYER_OF: dict[str, int] = {unit: i for i, (_, units) in enumerate(LAYERS) for unit in units}

# The order inside a package, bottom first: each tier's modules (a name is a module of the package or
# a subpackage, with all its modules; "__init__" is the package's own __init__.py) may import their own
# tier and the tiers below it. docs/architecture.md "Inside the ..." sections say the same in words.
INNER: dict[str, list[tuple[str, ...]]] = {
    "kubectl_wap.model": [("terms",), ("storage",), ("__init__",), ("dra", "lookup")],
    "kubectl_wap.snapshot": [("decode",), ("share",), ("io",), ("source", "__init__")],
    "kubectl_wap.framework": [
        ("__init__", "status", "ties", "volumes", "groups"),
        ("state", "nodecache"),
        ("plugins",),
        ("registry", "buildstate", "volumewarnings"),
        ("filtering", "scoring", "nominated", "schedule_one"),
        ("groupcycle", "placement", "podgroup"),
    ],
    "kubectl_wap.cli": [
        ("pipes", "profilepick", "options"),
        ("flags", "completion", "kueuestage", "mcpserver", "metricsserve", "progress"),
        ("app",),
        ("inputs", "output"),
        ("analysis",),
        ("whatif", "explain", "rank", "diff", "snapshot", "simulate", "pending", "whypreempted", "demo_cmd", "completion_cmd", "version"),
        ("metrics_cmd", "mcp_cmd"),
        ("__init__", "__main__"),
    ],
}
# Imports against a package's inner order that stay, each with why. Both are single helpers whose
# move means editing a module other branches are editing now (issue 37 left them): value_key, a
# cache key for JSON-shaped values, belongs in decode/ (only convert.py and allowlist.py use it);
# owners.py wraps io/files.py's SnapshotItems, the streamed items of a formatVersion 2 snapshot.
INNER_EXCEPTIONS: dict[tuple[str, str], str] = {
    ("kubectl_wap.snapshot.decode.convert", "kubectl_wap.snapshot.share.allowlist"): "value_key (the stanza cache's key)",
    ("kubectl_wap.snapshot.decode.owners", "kubectl_wap.snapshot.io.files"): "SnapshotItems (a streamed snapshot's items)",
    ("kubectl_wap.snapshot.decode.owners", "kubectl_wap.snapshot.share.strip"): "controller_ref (the one reading of a pod's controller, shared with the allow-list)",
}

# What a plugin may import of the framework: the parts below the plugins. The registry, the
# filter/score runtime and the schedulers above them run the plugins (upstream: a plugin depends on
# the framework's interfaces, only the profile reads the registry).
PLUGIN_MAY_IMPORT = {"status", "state", "volumes", "nodecache", "ties"}


@dataclass(frozen=True)
class Edge:
    source: str  # importing module, dotted
    target: str  # imported module, dotted
    path: str  # file of the import, relative to the repository
    line: int
    where: str  # "", ", inside a function" or ", under TYPE_CHECKING"

    def __str__(self) -> str:
        return f"{self.source} imports {self.target} ({self.path}:{self.line}{self.where})"


def _modules() -> dict[str, Path]:
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = list(p.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


MODULES = _modules()


def _known(name: str) -> str | None:
    """The module `name` loads: itself, or the longest prefix that is one of ours."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Imports(ast.NodeVisitor):
    """Every import of one module, with where it stands."""

    def __init__(self, module: str, path: Path) -> None:
        self.module = module
        self.rel = str(path.relative_to(ROOT))
        self.package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        self.where: list[str] = []
        self.edges: list[Edge] = []
        self.dynamic: list[int] = []

    def _add(self, target: str | None, node: ast.stmt) -> None:
        if target is None or target == self.module:
            return
        where = f", {self.where[-1]}" if self.where else ""
        self.edges.append(Edge(self.module, target, self.rel, node.lineno, where))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] == "kubectl_wap":
                self._add(_known(alias.name), node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            parts = self.package.split(".")
            base = ".".join(parts[: len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        if base.split(".")[0] != "kubectl_wap":
            return
        for alias in node.names:
            full = f"{base}.{alias.name}"
            self._add(full if full in MODULES else _known(base), node)

    def _inside(self, what: str, node: ast.AST) -> None:
        self.where.append(what)
        self.generic_visit(node)
        self.where.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._inside(self.where[-1] if self.where and "TYPE_CHECKING" in self.where[-1] else "inside a function", node)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_If(self, node: ast.If) -> None:
        if not _is_type_checking(node.test):
            self.generic_visit(node)
            return
        self.where.append("under TYPE_CHECKING")
        for stmt in node.body:
            self.visit(stmt)
        self.where.pop()
        for stmt in node.orelse:
            self.visit(stmt)

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        if (isinstance(f, ast.Name) and f.id == "__import__") or (isinstance(f, ast.Attribute) and f.attr == "import_module"):
            self.dynamic.append(node.lineno)
        self.generic_visit(node)


def _read() -> tuple[list[Edge], list[str]]:
    edges: list[Edge] = []
    dynamic: list[str] = []
    for module, path in MODULES.items():
        v = _Imports(module, path)
        v.visit(ast.parse(path.read_text(), str(path)))
        edges.extend(v.edges)
        dynamic.extend(f"{v.rel}:{n}" for n in v.dynamic)
    return edges, dynamic


EDGES, DYNAMIC = _read()


def _graph() -> dict[str, dict[str, Edge]]:
    graph: dict[str, dict[str, Edge]] = {m: {} for m in MODULES}
    for e in EDGES:
        graph[e.source].setdefault(e.target, e)  # the first import of a target names the edge
    return graph


def _components(graph: dict[str, dict[str, Edge]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def _shortest_cycle(graph: dict[str, dict[str, Edge]], comp: list[str]) -> list[Edge]:
    """One shortest circle through the component's first module, as its edges."""
    inside = set(comp)
    start = comp[0]
    came: dict[str, Edge] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w, e in sorted(graph[v].items()):
                if w not in inside:
                    continue
                if w == start:
                    path = [e]
                    while path[0].source != start:
                        path.insert(0, came[path[0].source])
                    return path
                if w not in came:
                    came[w] = e
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no circle through {start}")  # a component always has one


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_no_import_circle() -> None:
    graph = _graph()
    problems = []
    for comp in _components(graph):
        cycle = _shortest_cycle(graph, comp)
        chain = " -> ".join([e.source for e in cycle] + [cycle[0].source])
        lines = "\n".join(f"    {e}" for e in cycle)
        others = f" (the circle's component has {len(comp)} modules: {', '.join(comp)})" if len(comp) > len(cycle) else ""
        problems.append(f"import circle: {chain}{others}\n{lines}")
    assert not problems, (
        "modules import each other (a lazy or TYPE_CHECKING import counts): move what both need "
        "into a module below them, or let one side receive it (docs/architecture.md)\n" + "\n".join(problems)
    )


def test_every_top_level_module_has_a_layer() -> None:
    missing = sorted({_unit(m) for m in MODULES} - set(LAYER_OF))
    assert not missing, (
        f"kubectl_wap/{', '.join(missing)} in no layer: add to LAYERS in tests/test_architecture.py and to the table "
        "in docs/architecture.md"
    )


def test_no_import_up_the_layers() -> None:
    problems = []
    for e in EDGES:
        a, b = _unit(e.source), _unit(e.target)
        if a == b or a not in LAYER_OF or b not in LAYER_OF:
            continue  # within one package (circles are test_no_import_circle's); unplaced: the test above
        if LAYER_OF[b] > LAYER_OF[a]:
            problems.append(f"{e}: {LAYERS[LAYER_OF[a]][0]} may not import {LAYERS[LAYER_OF[b]][0]}")
    assert not problems, "imports up the chain of layers (docs/architecture.md):\n" + "\n".join(problems)


def test_plugins_import_only_the_framework_below_them() -> None:
    problems = []
    for e in EDGES:
        if not e.source.startswith("kubectl_wap.framework.plugins.") or not e.target.startswith("kubectl_wap.framework."):
            continue
        rest = e.target.removeprefix("kubectl_wap.framework.")
        if rest.split(".")[0] != "plugins" and rest not in PLUGIN_MAY_IMPORT:
            problems.append(f"{e}: a plugin may import framework.{', framework.'.join(sorted(PLUGIN_MAY_IMPORT))} "
                            "and other plugins, not what runs the plugins")
    assert not problems, "\n".join(problems)


def _part(package: str, module: str) -> str:
    """The tier name of `module` inside `package`: its first component below the package."""
    return "__init__" if module == package else module.removeprefix(package + ".").split(".")[0]


@pytest.mark.parametrize("package", sorted(INNER))
def test_every_module_of_a_package_has_a_tier(package: str) -> None:
    placed = {name for tier in INNER[package] for name in tier}
    missing = sorted({_part(package, m) for m in MODULES if m == package or m.startswith(package + ".")} - placed)
    assert not missing, f"{package}: {', '.join(missing)} in no tier: add to INNER in tests/test_architecture.py and docs/architecture.md"


@pytest.mark.parametrize("package", sorted(INNER))
def test_no_import_up_a_package_s_inner_order(package: str) -> None:
    tier_of = {name: i for i, tier in enumerate(INNER[package]) for name in tier}
    inside = lambda m: m == package or m.startswith(package + ".")  # noqa: E731
    problems = []
    for e in EDGES:
        if not (inside(e.source) and inside(e.target)) or (e.source, e.target) in INNER_EXCEPTIONS:
            continue
        a, b = _part(package, e.source), _part(package, e.target)
        if a in tier_of and b in tier_of and tier_of[b] > tier_of[a]:
            problems.append(f"{e}: {a} stands below {b} in {package}")
    assert not problems, "imports up a package's inner order (INNER, docs/architecture.md):\n" + "\n".join(problems)


def test_every_inner_exception_is_still_an_import() -> None:
    """An exception whose import went away is removed, so the order it excused is checked again."""
    stale = sorted(set(INNER_EXCEPTIONS) - {(e.source, e.target) for e in EDGES})
    assert not stale, f"INNER_EXCEPTIONS lists imports that no longer exist: {stale}"


LONG_MODULE_LINES = 600
LONG_MODULE_MARK = "# Long module:"


def test_a_long_module_says_why() -> None:
    """A module over 600 lines is a room a newcomer gets lost in: split it, or say in a comment
    starting with LONG_MODULE_MARK why its parts belong together."""
    long = []
    for module, path in MODULES.items():
        lines = path.read_text().splitlines()
        if len(lines) > LONG_MODULE_LINES and not any(line.startswith(LONG_MODULE_MARK) for line in lines):
            long.append(f"{path.relative_to(ROOT)} ({len(lines)} lines)")
    assert not long, f"modules over {LONG_MODULE_LINES} lines without a '{LONG_MODULE_MARK} why' comment: " + ", ".join(long)


def test_no_dynamic_import() -> None:
    """importlib.import_module / __import__ would hide an edge from the tests above."""
    assert not DYNAMIC, "dynamic imports (write an import statement): " + ", ".join(DYNAMIC)


def test_the_document_shows_this_table() -> None:
    rows = re.findall(r"^\| (\d+) \| (\w+) \| (.+?) \|$", DOC.read_text(), re.M)
    shown = [(name, tuple(re.findall(r"`([\w]+)`", members))) for _, name, members in rows]
    assert shown == LAYERS, "the layer table of docs/architecture.md differs from LAYERS in tests/test_architecture.py"


@pytest.mark.parametrize(
    "source, expect",
    [
        ("from .b import x\n", ["kubectl_wap.p.a imports kubectl_wap.p.b (kubectl_wap/p/a.py:1)"]),
        ("def f():\n    from . import b\n", ["kubectl_wap.p.a imports kubectl_wap.p.b (kubectl_wap/p/a.py:2, inside a function)"]),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..q import c\n",
         ["kubectl_wap.p.a imports kubectl_wap.q (kubectl_wap/p/a.py:3, under TYPE_CHECKING)"]),
        ("import kubectl_wap.p.b.x\n", ["kubectl_wap.p.a imports kubectl_wap.p.b (kubectl_wap/p/a.py:1)"]),
        ("import numpy\nfrom os import path\n", []),
    ],
)
def test_the_reader_sees_every_kind_of_import(source: str, expect: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The graph's reader on a made-up package p (modules p.a, p.b; q a package): lazy and
    TYPE_CHECKING imports are edges, with where they stand."""
    fake = {m: PKG / "/".join(m.split(".")[1:]) for m in ("kubectl_wap", "kubectl_wap.p", "kubectl_wap.p.a", "kubectl_wap.p.b", "kubectl_wap.q")}
    monkeypatch.setitem(globals(), "MODULES", fake)
    v = _Imports("kubectl_wap.p.a", PKG / "p" / "a.py")
    v.visit(ast.parse(source))
    assert [str(e) for e in v.edges] == expect
