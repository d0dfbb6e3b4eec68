"""The README's quick start: the first command installs only what running the suite
needs (no dev extra), the second adds the dev extra and runs the tests, and CI runs that
second line exactly; nothing the installed packages import is a dev-only package."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ("env", "solvers", "scorers", "evals", "agents", "study", "report")
"""The folders installed as ``spatialstale.*``."""


def _quick_start() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block is not None
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_first_command_installs_the_suite_alone_and_runs_the_demo() -> None:
    install_and_demo, _ = _quick_start()
    assert ".venv/bin/pip install -e . " in install_and_demo
    assert "[" not in install_and_demo  # no extra
    assert install_and_demo.endswith(".venv/bin/spatialstale demo")


def test_ci_runs_the_readme_test_command_exactly() -> None:
    _, tests = _quick_start()
    assert '.venv/bin/pip install -e ".[dev]"' in tests and tests.endswith(".venv/bin/pytest")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert tests in ci


def _top_level_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_the_runtime_imports_no_dev_only_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    runtime = {re.split(r"[<>=!~\[ ;]", d)[0].lower() for d in project["dependencies"]}
    dev_only = {re.split(r"[<>=!~\[ ;]", d)[0].lower() for d in project["optional-dependencies"]["dev"]} - runtime
    modules = {name.replace("-", "_") for name in dev_only}  # pytest_xdist is imported as xdist
    modules |= {"xdist" for name in dev_only if name == "pytest-xdist"}
    modules |= {"pytest_randomly" for name in dev_only if name == "pytest-randomly"}
    imported = {
        name for package in RUNTIME for path in (ROOT / package).rglob("*.py") for name in _top_level_imports(path)
    }
    assert not imported & modules, f"the installed packages import dev-only packages: {sorted(imported & modules)}"
