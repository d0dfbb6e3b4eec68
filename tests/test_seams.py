"""The seams hold: the core names no extension that plugs into them (``protocol/_seams.py``).

An extension's axes are named in its own module and in the few places that must name
them, listed here with their reason; a module that names one elsewhere (a loop, a
scorer, the dry run, an agent) threads the extension through the core again.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from spatialstale.env import make_instance
from spatialstale.protocol import (
    EXTENSIONS,
    AuditResult,
    DetectionSettings,
    Extension,
    NavigationSettings,
    axes_of,
    every_verdict_field,
)
from spatialstale.protocol._extensions import extension_axes
from spatialstale.solvers import detect, navigate

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
    "crops": {
        "env/_crops.py": "the world's part: a memory entry's picture, drawn as the grid's image draws its cells, "
        "and read back from its pixels",
        "env/__init__.py": "env's public names: the drawing and the reading the extension (and the tests) use",
        "protocol/_crops.py": "the extension itself",
        "protocol/_extensions.py": "the registry, the one place that names every extension",
        "evals/detection.py": "the help of the task's -T memory: Inspect reads a task's keyword arguments",
        "report/_sections_k.py": "the report's section (the report section is not behind a seam yet)",
    },
    "edits": {
        "protocol/_edits.py": "the extension itself",
        "protocol/_extensions.py": "the registry imports the extension's module, which its name names",
        "evals/detection.py": "the task's -T parameter: Inspect reads a task's keyword arguments",
        "report/_sections_k.py": "the report's App. K edits part (the report section is not behind a seam yet)",
    },
}
"""Where each extension's axes may be named, and why."""

NAMED_AS = {"crops": ("crop",)}
"""The word that names an extension whose axis is a common word (``memory`` is named
everywhere; its value ``crops`` names the extension), matched in any letter case."""


def sources() -> list[Path]:
    return sorted(p for package in LAYERS for p in (ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("extension", EXTENSIONS, ids=lambda e: e.name)
def test_the_core_names_no_extension(extension: Extension) -> None:
    names = [a.name for a in axes_of(extension.axes)]
    assert names, "an extension declares at least one axis"
    if extension.name in NAMED_AS:
        names = list(NAMED_AS[extension.name])
        naming = {str(p.relative_to(ROOT)) for p in sources() if any(n in p.read_text().lower() for n in names)}
    else:
        naming = {str(p.relative_to(ROOT)) for p in sources() if any(name in p.read_text() for name in names)}
    allowed = NAMED_BY[extension.name]
    assert naming <= set(allowed), f"{sorted(naming - set(allowed))} name {names}: use the seams"
    assert len(naming) <= MAX_FILES


def test_a_solver_reads_the_extensions_axes_by_name() -> None:
    with pytest.raises(ValueError, match="view_radius must be full or an integer of at least 0; got -1"):
        navigate(view_radius=-1)
    with pytest.raises(ValueError, match="unknown argument radius; the extensions take view_radius"):
        navigate(radius=1)
    navigate(view_radius="2")  # read as the task reads it
    with pytest.raises(ValueError, match="memory must be one of text, crops; got 'pictures'"):
        detect(memory="pictures")
    with pytest.raises(ValueError, match="unknown argument memories; the extensions take memory, edits"):
        detect(memories="crops")
    detect(memory="CROPS")  # read as the task reads it


@pytest.mark.parametrize("settings", [DetectionSettings, NavigationSettings], ids=lambda s: s.kind)
def test_the_extensions_axes_come_in_registry_order(settings: type) -> None:
    ours = [a.name for axes in extension_axes(settings.kind) for a in axes_of(axes)]
    assert ours, "each task kind with settings has an extension"
    assert [f.name for f in fields(settings) if f.name in ours] == ours


def test_the_detection_solver_reads_the_extensions_axes_by_name() -> None:
    with pytest.raises(ValueError, match="edits must be one of true, false"):
        detect(edits="maybe")
    with pytest.raises(ValueError, match="unknown argument edit; the extensions take memory, edits"):
        detect(edit=True)
    detect(edits="true")  # read as the task reads it


def test_an_extension_changes_nothing_at_the_stages_it_does_not_plug_into() -> None:
    fog = next(e for e in EXTENSIONS if e.name == "fog")
    values = {"view_radius": 1}
    assert not fog.active(values)
    assert fog.prompt("audit", values, "the prompt") == "the prompt"
    assert fog.verdict_field() is None and fog.scores("navigation") is None
    assert fog.score("navigation", values, []) is None
    # the memory and settings hooks beyond the axes: the instance as drawn, nothing recorded
    instance = make_instance(4810, "L2", 8)
    assert fog.memory(instance, values) is instance and fog.instance_metadata(instance) == {}
    assert fog.entry_ids({"distractor_entries": [{"id": "mem_001"}]}) == frozenset()
    assert fog.audit_marks() is None and not fog.axes_last("navigation")
    assert fog.solver_args(values) == values and fog.settings_record(values) == {} and fog.tags(values) == []


def test_each_verdict_field_is_a_key_of_its_own() -> None:
    names = [f.name for f in every_verdict_field()]
    assert len(set(names)) == len(names)
    assert not set(names) & {"memory_id", "is_stale", "reason"}, "a verdict's own keys"
    records = [f.record for f in every_verdict_field()]
    assert len(set(records)) == len(records)
    window_keys = set(AuditResult.__dataclass_fields__) | {"grid", "truth"}  # DetectionWindow.to_dict's own
    assert not set(records) & window_keys
