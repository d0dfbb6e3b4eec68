"""The layering contract, read from the source: every import, at module level or inside a
function, goes down the layers ``env <- solvers <- scorers | agents <- evals <- report <-
study | llamacpp`` (benchmarks above all), and no module imports, directly or through others, a
module that imports it."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = {
    "env": 0,
    "solvers": 1,
    "scorers": 2,
    "agents": 2,
    "evals": 3,
    "report": 4,
    "study": 5,
    "llamacpp": 5,
    "benchmarks": 6,
}
"""Each package's layer: a module may import its own package and lower layers only."""
PACKAGES = tuple(LAYERS)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every module of the project ``path`` imports, anywhere in the file, by its
    checkout name (``solvers._audit``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = _module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = (node.module or "").removeprefix("spatialstale.")
            # ``from package import module`` imports the module; ``from module import name`` the module
            names = [f"{module}.{alias.name}" for alias in node.names]
            names = [n if n in _module_names() else module for n in names]
        for name in names:
            name = name.removeprefix("spatialstale.")
            if name.split(".")[0] in PACKAGES:
                found.add(name)
    return found


@cache
def _module_names() -> frozenset[str]:
    return frozenset(_module_name(path) for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def _sources() -> dict[str, Path]:
    return {
        _module_name(path): path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "templates" not in path.parts
    }


SOURCES = _sources()


@cache
def _graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (a name that is not a module is an
    attribute of its module: ``solvers._audit.batched_audit`` is ``solvers._audit``)."""
    graph: dict[str, set[str]] = {}
    for name, path in SOURCES.items():
        targets = set()
        for imported in _imports(path):
            while imported and imported not in SOURCES:
                imported = imported.rpartition(".")[0]
            if imported and imported != name:
                targets.add(imported)
        graph[name] = targets
    return graph


def test_the_sources_are_found() -> None:
    assert {"env._grid", "solvers._settings", "evals.navigation", "report._load", "study._cli"} <= set(SOURCES)


@pytest.mark.parametrize("module", sorted(SOURCES))
def test_imports_go_down_the_layers(module: str) -> None:
    layer = LAYERS[module.split(".")[0]]
    for target in sorted(_graph()[module]):
        package = target.split(".")[0]
        assert LAYERS[package] < layer or package == module.split(".")[0], (
            f"{module} (layer {layer}) imports {target} (layer {LAYERS[package]})"
        )


def test_no_module_imports_a_module_that_imports_it() -> None:
    graph = _graph()
    visiting: list[str] = []
    done: set[str] = set()

    def visit(node: str) -> None:
        if node in done:
            return
        if node in visiting:
            cycle = [*visiting[visiting.index(node) :], node]
            raise AssertionError("import cycle: " + " -> ".join(cycle))
        visiting.append(node)
        for target in sorted(graph[node]):
            visit(target)
        visiting.pop()
        done.add(node)

    for module in sorted(graph):
        visit(module)
