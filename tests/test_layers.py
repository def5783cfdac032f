"""Imports run one way: down the layers README's "Architecture" draws, and never round in a circle.

Every import counts, those inside functions and under ``TYPE_CHECKING`` too: a lazy import hides a circle
from Python, not from whoever reads the code. A submodule's import of its own package (which Python does
implicitly for every submodule) is not an edge unless it names something the package itself defines.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import REPO


def modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package at ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _targets(name: str, path: Path, node: ast.ImportFrom, known: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    if node.level:
        base = package.split(".")[: len(package.split(".")) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    subs = {f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in known}
    if subs and len(subs) == len(node.names):  # `from . import a, b`: the submodules only
        return subs
    while target and target not in known:  # `from .x.y import z` where y is not a module: x.y's package
        target = target.rpartition(".")[0]
    return subs | ({target} if target else set())


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (anywhere in its code)."""
    known = modules(root)
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                edges |= _targets(name, path, node, known)
            elif isinstance(node, ast.Import):
                edges |= {a.name for a in node.names if a.name in known}
        graph[name] = edges - {name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    comp.append(m)
                    if m == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_the_workbench_has_no_import_circle():
    graph = import_graph(REPO / "workbench")
    assert len(graph) > 100 and "workbench.batch.executors.slurm" in graph["workbench.batch.executors"]
    assert circles(graph) == []


def test_a_planted_circle_is_found_however_it_is_hidden(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .b import B\n")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .sub.b import B\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from .. import a\n    return a\nB = 1\n")
    (pkg / "c.py").write_text("from . import a\n")  # imports into the circle, is not part of it
    (pkg / "sub" / "d.py").write_text("from . import b\n")  # its package's submodule, not the package
    assert circles(import_graph(pkg)) == [["pkg.a", "pkg.sub.b"]]
    (pkg / "sub" / "d.py").write_text("from . import B\n")  # a name the package defines: the package itself
    (pkg / "sub" / "__init__.py").write_text("from .b import B\nfrom . import d\n")
    assert sorted(circles(import_graph(pkg))) == [["pkg.a", "pkg.sub.b"], ["pkg.sub", "pkg.sub.d"]]


def layers(readme: Path) -> list[tuple[str, list[str]]]:
    """README's architecture drawing, bottom layer first: (layer, its modules and packages)."""
    text = readme.read_text(encoding="utf-8").split("## Architecture", 1)[1]
    block = re.search(r"```text\n(.*?)```", text, re.S).group(1)
    rows = [line.split(":", 1) for line in block.strip().splitlines()]
    return [(name.strip(), body.split()) for name, body in reversed(rows)]


def layer_of(module: str, drawn: list[tuple[str, list[str]]], package: str = "workbench") -> int | None:
    """The layer of the longest drawn name that is the module or one of its packages."""
    best: tuple[int, int] | None = None
    for i, (_, names) in enumerate(drawn):
        for name in names:
            full = package if name == package else f"{package}.{name}"  # the package: its __init__ only
            inside = module.startswith(full + ".") and name != package
            if (module == full or inside) and (best is None or len(full) > best[1]):
                best = (i, len(full))
    return None if best is None else best[0]


def upward(graph: dict[str, set[str]], drawn: list[tuple[str, list[str]]], package: str = "workbench") -> list[str]:
    """Imports that go up a layer, and modules the drawing does not place."""
    found = [f"{m}: not in the drawing" for m in sorted(graph) if layer_of(m, drawn, package) is None]
    for m in sorted(graph):
        for target in sorted(graph[m]):
            a, b = layer_of(m, drawn, package), layer_of(target, drawn, package)
            if a is not None and b is not None and b > a:
                found.append(f"{m} ({drawn[a][0]}) imports {target} ({drawn[b][0]})")
    return found


def test_every_import_runs_down_the_drawn_layers():
    drawn = layers(REPO / "docs" / "architecture.md")
    assert [name for name, _ in drawn][:2] == ["foundation", "formats"] and len(drawn) >= 8
    assert upward(import_graph(REPO / "workbench"), drawn) == []


def test_an_upward_import_or_an_unplaced_module_is_found(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "low").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "low" / "__init__.py").write_text("")
    (pkg / "low" / "base.py").write_text("def f():\n    from ..high import g\n    return g\n")  # lazy, still up
    (pkg / "high.py").write_text("from .low.base import f\ng = 1\n")
    (pkg / "stray.py").write_text("")
    drawn = [("bottom", ["low"]), ("top", ["pkg", "high"])]
    assert upward(import_graph(pkg), drawn, "pkg") == ["pkg.stray: not in the drawing",
                                                       "pkg.low.base (bottom) imports pkg.high (top)"]


def test_only_cross_cutting_modules_sit_at_the_top_and_the_architecture_page_names_them():
    """Every other module lives in a package named for what it owns: a new top-level module must be argued
    for on the architecture page (its paragraph on the top level names each one)."""
    top = {p.stem for p in (REPO / "workbench").glob("*.py")} - {"__init__", "__main__"}
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    paragraph = page.split("Only cross-cutting modules sit at the top", 1)[1].split("\n\n", 1)[0]
    assert top == set(re.findall(r"`(\w+)`", paragraph)) & top == {
        "version", "errors", "paths", "io", "pricing", "evidence", "parsers", "store"}
