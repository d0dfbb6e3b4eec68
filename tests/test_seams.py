"""The seams hold: the core names no extension that plugs into them (``protocol/_seams.py``).

An extension's axes are named in its own module and in the few places that must name
them, listed here with their reason; a module that names one elsewhere (a loop, a
scorer, the dry run, an agent) threads the extension through the core again.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from spatialstale.protocol import EXTENSIONS, Extension, axes_of
from spatialstale.solvers import navigate

from .test_layers import LAYERS, ROOT

MAX_FILES = 6
"""An extension's footprint: the source files outside tests/ and docs/ that name it."""

NAMED_BY = {
    "fog": {
        "env/_fog.py": "the world's part: what a radius shows of the grid, and how fogged cells are named",
        "protocol/_fog.py": "the extension itself",
        "evals/navigation.py": "the task's -T parameter: Inspect reads a task's keyword arguments",
        "report/_navigation_stats.py": "the report's columns (the report section is not behind a seam yet)",
        "report/_sections_beyond.py": "the report's fog section (likewise)",
    },
    "distractors": {
        "env/_distractor_bank.py": "the world's part: the versioned bank (env/data/distractors) and the draw",
        "protocol/_extensions.py": "the registry, the one place that lists the extensions",
        "protocol/_distractors.py": "the extension itself",
        "evals/detection.py": "the task's -T parameter: Inspect reads a task's keyword arguments",
        "evals/navigation.py": "likewise",
        "report/_sections_k.py": "the report's App. K sections (the report section is not behind a seam yet)",
    },
}
"""Where each extension's axes may be named, and why."""


def sources() -> list[Path]:
    return sorted(p for package in LAYERS for p in (ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("extension", EXTENSIONS, ids=lambda e: e.name)
def test_the_core_names_no_extension(extension: Extension) -> None:
    names = [a.name for a in axes_of(extension.axes)]
    assert names, "an extension declares at least one axis"
    naming = {str(path.relative_to(ROOT)) for path in sources() if any(name in path.read_text() for name in names)}
    allowed = NAMED_BY[extension.name]
    assert naming <= set(allowed), f"{sorted(naming - set(allowed))} name {names}: use the seams"
    assert len(naming) <= MAX_FILES


def test_a_solver_reads_the_extensions_axes_by_name() -> None:
    with pytest.raises(ValueError, match="view_radius must be full or an integer of at least 0; got -1"):
        navigate(view_radius=-1)
    with pytest.raises(ValueError, match="unknown argument radius; the extensions take view_radius"):
        navigate(radius=1)
    navigate(view_radius="2")  # read as the task reads it
