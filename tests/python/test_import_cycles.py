"""No import loops among bloatlab's Python modules.

The rule: module A *imports* module B when A's source has an ``import`` naming B anywhere
— at module level or inside a function (a function-level import is how a loop gets hidden,
so it counts the same). Imports under ``if TYPE_CHECKING:`` do not count: they never run.
``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``
(a name defined in the package's ``__init__``). A package's ``__init__`` importing its own
submodules is not a loop by itself: a submodule never needs its parent's ``__init__`` unless it
imports a name from it. The test fails on every cycle (a strongly connected component of two
or more modules, or a module importing itself) and names the modules in it.

``python tests/python/test_import_cycles.py`` prints the cycles and the number of elementary
loops (what issue 17 counted).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PKG_DIR = Path(__file__).resolve().parents[2] / "python" / "bloatlab"
PKG = "bloatlab"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PKG_DIR.rglob("*.py")):
        parts = list(path.relative_to(PKG_DIR.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    out[f"{PKG}._core"] = PKG_DIR / "_core.pyi"  # the Rust extension: a leaf, it imports nothing here
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that can run (skips ``if TYPE_CHECKING:`` bodies)."""
    found: list[ast.Import | ast.ImportFrom] = []

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for n in child.orelse:
                    walk(n)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(child)
            walk(child)

    walk(tree)
    return found


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        is_pkg = path.name == "__init__.py"
        if path.suffix == ".pyi":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in _imports(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base_parts = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                    base = ".".join(base_parts + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in mods else base)
            for t in targets:
                # `import bloatlab.x.y` names its deepest module that exists
                while t and t not in mods and "." in t:
                    t = t.rsplit(".", 1)[0]
                if t in mods and (t != mod or not is_pkg):
                    if not (is_pkg and t == mod):
                        graph[mod].add(t)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm; components with a loop (2+ modules, or a self-import)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph[v]:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def elementary_cycles(graph: dict[str, set[str]], limit: int = 10_000) -> list[list[str]]:
    """Every simple loop (each listed once, starting at its smallest module); for the report."""
    cycles: list[list[str]] = []
    nodes = sorted(graph)
    for i, start in enumerate(nodes):
        allowed = set(nodes[i:])

        def dfs(v: str, path: list[str], start: str = start, allowed: set[str] = allowed) -> None:
            for w in sorted(graph[v]):
                if w == start:
                    cycles.append(list(path))
                elif w in allowed and w not in path and len(cycles) < limit:
                    dfs(w, path + [w])

        dfs(start, [start])
    return cycles


def test_graph_sees_the_package() -> None:
    g = import_graph()
    assert "bloatlab.cli" in g and "bloatlab.experiments.framework" in g
    assert "bloatlab.errors" in g["bloatlab.sweeps.store"]  # a plain module-level import is seen


def test_no_import_cycles() -> None:
    comps = strongly_connected(import_graph())
    assert not comps, "import loops among bloatlab's modules: " + "; ".join(" <-> ".join(c) for c in comps)


def test_function_level_imports_count(tmp_path: Path) -> None:
    """The checker sees an import hidden in a function and skips TYPE_CHECKING ones."""
    src = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import b\ndef f():\n    from . import c\n"
    found = [ast.unparse(n) for n in _imports(ast.parse(src))]
    assert found == ["from typing import TYPE_CHECKING", "from . import c"]


if __name__ == "__main__":
    g = import_graph()
    for comp in strongly_connected(g):
        print("component:", ", ".join(comp))
    loops = elementary_cycles(g)
    for c in loops:
        print("loop:", " -> ".join(c + [c[0]]))
    print(f"{len(loops)} loops")
