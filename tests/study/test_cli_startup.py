"""``spatialstale --help`` answers at once: the command's module and the top-level
parser import neither Inspect nor the numeric stack; each command imports what it
needs when it runs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("inspect_ai", "scipy", "pandas", "numpy", "matplotlib", "spatialstale.solvers", "spatialstale.report")


def _imported_after(code: str) -> list[str]:
    """The heavy modules in ``sys.modules`` after running ``code`` in a fresh interpreter."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    return list(json.loads(done.stdout.splitlines()[-1]))


def test_the_command_module_imports_nothing_heavy() -> None:
    assert _imported_after("import spatialstale.study._cli") == []


@pytest.mark.parametrize("argv", [["--help"], ["demo", "--help"], ["report", "--help"]])
def test_help_imports_nothing_heavy(argv: list[str]) -> None:
    code = f"from spatialstale.study._cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass"
    assert _imported_after(code) == []


def test_the_package_still_exports_its_names_on_use() -> None:
    import spatialstale.study as study

    assert study.Study.__name__ == "Study" and callable(study.account)
    assert set(study.__all__) <= set(dir(study))
    with pytest.raises(AttributeError):
        _ = study.no_such_name
