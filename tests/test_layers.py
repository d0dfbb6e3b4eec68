"""The layering contract, read from the source: every import, at module level or inside a
function, goes down the layers ``env <- protocol <- solvers | scorers | agents <- evals <-
report <- study | llamacpp`` (benchmarks above all); no module imports, directly or through
others, a module that imports it; and no package imports another package's private module
(``spatialstale.protocol._prompts``): what one package uses of another is in that
package's ``__all__``.

The tests are not held to the last rule: a test reaches into the module it tests (and the
report's tests drive the command, ``study._cli.main``). The benchmarks are, except where
one times or resets an internal no user touches (:data:`MEASURED_INTERNALS`)."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = {
    "env": 0,
    "protocol": 1,
    "solvers": 2,
    "scorers": 2,
    "agents": 2,
    "evals": 3,
    "report": 4,
    "study": 5,
    "llamacpp": 5,
    "benchmarks": 6,
}
"""Each package's layer: a module may import its own package and lower layers only. The
scorers and the reference agents read the protocol, never the loops that run it."""

PACKAGES = tuple(LAYERS)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _import_sites(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every module of the project ``path`` imports, anywhere in the
    file, by its checkout name (``solvers._audit``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = _module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found: list[tuple[int, str]] = []
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
                found.append((node.lineno, name))
    return found


def _imports(path: Path) -> set[str]:
    """Every module of the project ``path`` imports (:func:`_import_sites`)."""
    return {name for _, name in _import_sites(path)}


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
    assert {"env._grid", "protocol._settings", "evals.navigation", "report._load", "study._cli"} <= set(SOURCES)


@pytest.mark.parametrize("module", sorted(SOURCES))
def test_imports_go_down_the_layers(module: str) -> None:
    layer = LAYERS[module.split(".")[0]]
    for target in sorted(_graph()[module]):
        package = target.split(".")[0]
        assert LAYERS[package] < layer or package == module.split(".")[0], (
            f"{module} (layer {layer}) imports {target} (layer {LAYERS[package]})"
        )


def _private(name: str) -> str | None:
    """The private module ``name`` imports (``protocol._prompts`` of
    ``protocol._prompts.Sight``), None when it names a public one."""
    parts = name.split(".")
    for depth, part in enumerate(parts[1:], start=2):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:depth])
    return None


@pytest.mark.parametrize("module", sorted(SOURCES))
def test_no_package_imports_another_packages_private_module(module: str) -> None:
    package = module.split(".")[0]
    path = SOURCES[module]
    found = [
        f"{path.relative_to(ROOT)}:{line}: imports spatialstale.{private}; use spatialstale.{private.split('.')[0]}"
        for line, name in _import_sites(path)
        if (private := _private(name)) is not None and private.split(".")[0] != package
    ]
    assert not found, "a private module of another package:\n" + "\n".join(found)


def test_the_private_check_names_the_private_module() -> None:
    assert _private("protocol._prompts.Sight") == "protocol._prompts"
    assert _private("protocol.Sight") is None
    assert _private("study") is None


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
