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
    BUILTIN_EXTENSIONS,
    DELETE,
    FILTER_MODES,
    NAVIGATION,
    NAVIGATORS,
    PROMPT_NAVIGATOR,
    AuditResult,
    DetectionSettings,
    Extension,
    MemoryPart,
    NavigationSettings,
    PerceptionSettings,
    TaskParameterError,
    axes_of,
    every_verdict_field,
    filter_named,
    navigator,
)
from spatialstale.solvers import detect, navigate

from .test_layers import LAYERS, ROOT

MAX_FILES = 6
"""An extension's footprint: the source files outside tests/ and docs/ that name it."""

NAMED_BY = {
    "holes": {
        "env/_render.py": "the world's part: the listing of S, G and the holes, and its notes",
        "env/__init__.py": "env's public names: the listing and its notes (the reference agents read them)",
        "protocol/_holes.py": "the extension itself",
        "protocol/_extensions.py": "the registry imports the extension's module, which its name names",
        "agents/_perception.py": "the reference agents read the listing as a model would (a test double)",
    },
    "fog": {
        "env/_fog.py": "the world's part: what a radius shows of the grid, and how fogged cells are named",
        "protocol/_fog.py": "the extension itself",
        "evals/navigation.py": "the task's -T parameter: Inspect reads a task's keyword arguments",
    },
    "distractors": {
        "env/_distractor_bank.py": "the world's part: the versioned bank (env/data/distractors) and the draw",
        "protocol/_extensions.py": "the registry, the one place that lists the extensions",
        "protocol/_distractors.py": "the extension itself",
        "evals/detection.py": "the task's -T parameter: Inspect reads a task's keyword arguments",
        "evals/navigation.py": "likewise",
    },
    "crops": {
        "env/_crops.py": "the world's part: a memory entry's picture, drawn as the grid's image draws its cells, "
        "and read back from its pixels",
        "env/__init__.py": "env's public names: the drawing and the reading the extension (and the tests) use",
        "protocol/_crops.py": "the extension itself",
        "protocol/_extensions.py": "the registry, the one place that names every extension",
        "evals/detection.py": "the help of the task's -T memory: Inspect reads a task's keyword arguments",
    },
    "edits": {
        "protocol/_edits.py": "the extension itself",
        "protocol/_extensions.py": "the registry imports the extension's module, which its name names",
        "evals/detection.py": "the task's -T parameter: Inspect reads a task's keyword arguments",
    },
    "tools": {
        "protocol/_tool_navigator.py": "the navigator itself: its prompt, tool names, recall answers, dry-run notes",
        "protocol/_navigators.py": "the registry of navigators (-T agent), the only place in protocol that names them",
        "protocol/__init__.py": "the public names the loop and the reference agents share (tools' names, answers)",
        "solvers/_agents.py": "the agent navigators' one path: the move and recall tools, the rules, the plan",
        "agents/_tools.py": "the reference agents' answers to its turns (a test double beside the product)",
        "benchmarks/bench_agents.py": "its harness cost per call, beside the hand-written loop it replaced",
    },
    "memory": {
        "protocol/_agent_memory.py": "the navigator itself: its prompt, its files, how its claims are read and judged",
        "protocol/_navigators.py": "the registry of navigators (-T agent), the only place in protocol that names them",
        "protocol/__init__.py": "the public names the agents' path and the scorers share",
        "benchmarks/bench_agents.py": "its harness cost per call, for reference beside the tool navigator's",
    },
    "unknown": {
        "protocol/_filter_modes.py": "the filter mode itself: UnknownEntry and its line",
        "protocol/_extensions.py": "the registry of filter modes (-T filter)",
        "solvers/_episode.py": "the step table's line for the record's unknown_in_view count (its text is in the logs)",
        "agents/_perception.py": "the reference agents read an UNKNOWN line as a model would (a test double)",
        "agents/_policies.py": "the reference agents' plans treat an UNKNOWN cell as no memory (a test double)",
    },
}
"""Where each extension's axes may be named, and why."""

NAMED_AS = {"crops": ("crop",), "holes": ("holes_observation", "holes_note", "observation=holes", "from ._holes")}
"""The words that name an extension whose axis is a common word, matched in any letter
case: ``memory`` is named everywhere, its value ``crops`` names the extension;
``observation`` and ``holes`` are everywhere, the listing's names name it."""


MARKS = {
    "tools": (
        '"tools"',
        "agent=tools",
        "TOOL_NAVIGATOR",
        "DEFAULT_TOOLS_PROMPT",
        "NAVIGATE_TOOLS",
        "MOVE_NAME",
        "ToolLoop",
    ),
    "memory": ("MEMORY_NAVIGATOR", "DEFAULT_MEMORY_PROMPT", "NAVIGATE_MEMORY", "agent=memory"),
    "unknown": ("UnknownEntry", "filter=unknown", "UNKNOWN (flagged", "_filter_modes"),
}
"""What names each navigator (``-T agent``) and filter mode (``-T filter``) other than the
paper's: identifiers unique to it, since its value alone (``tools``, ``unknown``) is a
common word."""


def sources() -> list[Path]:
    return sorted(p for package in LAYERS for p in (ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("extension", BUILTIN_EXTENSIONS, ids=lambda e: e.name)
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
    assert naming == set(allowed), f"{sorted(set(allowed) - naming)} no longer name {names}: update NAMED_BY"
    assert len(naming) <= MAX_FILES


def test_a_solver_reads_the_extensions_axes_by_name() -> None:
    with pytest.raises(ValueError, match="view_radius must be full or an integer of at least 0; got -1"):
        navigate(view_radius=-1)
    with pytest.raises(
        ValueError, match="unknown argument radius; the extensions take observation, view_radius, distr"
    ):
        navigate(radius=1)
    navigate(view_radius="2")  # read as the task reads it
    with pytest.raises(ValueError, match="memory must be one of text, crops; got 'pictures'"):
        detect(memory="pictures")
    with pytest.raises(
        ValueError, match="unknown argument memories; the extensions take observation, distractors, memory, e"
    ):
        detect(memories="crops")
    detect(memory="CROPS")  # read as the task reads it


@pytest.mark.parametrize("settings", [DetectionSettings, NavigationSettings, PerceptionSettings], ids=lambda s: s.kind)
def test_the_extensions_axes_come_after_the_tasks_own_in_registry_order(settings: type) -> None:
    ours = [a.name for e in BUILTIN_EXTENSIONS if settings.kind in e.kinds for a in axes_of(e.axes)]
    assert ours, "each task kind with settings has an extension"
    own = [f.name for f in fields(settings) if f.name not in ("seeds", "prompts", "order", "extensions")]
    assert [a.name for a in axes_of(settings)] == own + ours
    assert not set(ours) & {f.name for f in fields(settings)}, "read at run time, not inherited"


STAGES = {"check", "memory", "view", "prompt", "active", "verdict_field", "scores", "score", "report"}
"""The hooks of :class:`Extension`, in the order a run meets their stages."""

EVERY_EXPERIMENT = {"memory", "verdict_field"}
"""Hooks with one built-in implementer that stay: stages every experiment meets (the
store every audit judges, the verdict every audit answer is read into)."""


def test_the_extension_interface_is_few_hooks_each_with_its_implementers() -> None:
    hooks = [name for name, value in vars(Extension).items() if callable(value) and not name.startswith("_")]
    assert hooks == list(STAGES) or set(hooks) == STAGES
    assert len(hooks) <= 12
    for hook in hooks:
        implementers = [e.name for e in BUILTIN_EXTENSIONS if getattr(type(e), hook) is not getattr(Extension, hook)]
        assert len(implementers) >= 2 or (implementers and hook in EVERY_EXPERIMENT), (hook, implementers)


def test_the_detection_solver_reads_the_extensions_axes_by_name() -> None:
    with pytest.raises(ValueError, match="edits must be one of true, false"):
        detect(edits="maybe")
    with pytest.raises(
        ValueError, match="unknown argument edit; the extensions take observation, distractors, memory, e"
    ):
        detect(edit=True)
    detect(edits="true")  # read as the task reads it


def test_an_extension_changes_nothing_at_the_stages_it_does_not_plug_into() -> None:
    fog = next(e for e in BUILTIN_EXTENSIONS if e.name == "fog")
    values = {"view_radius": 1}
    assert not fog.active(values)
    assert fog.prompt("audit", values, "the prompt") == "the prompt"
    assert fog.verdict_field() is None and fog.scores("navigation") is None
    assert fog.score("navigation", values, []) is None
    assert fog.memory() is None and fog.report() is not None
    # a memory part's defaults: the instance as drawn, nothing recorded, no marks, no form
    part = MemoryPart()
    instance = make_instance(4810, "L2", 8)
    assert part.add(instance, values) is instance and part.metadata(instance) == {}
    assert part.entry_ids({"distractor_entries": [{"id": "mem_001"}]}) == frozenset()
    assert part.marks is None and part.form(values, instance) is None and part.stand_ins == ()


def test_each_verdict_field_is_a_key_of_its_own() -> None:
    names = [f.name for f in every_verdict_field()]
    assert len(set(names)) == len(names)
    assert not set(names) & {"memory_id", "is_stale", "reason"}, "a verdict's own keys"
    records = [f.record for f in every_verdict_field()]
    assert len(set(records)) == len(records)
    window_keys = set(AuditResult.__dataclass_fields__) | {"grid", "truth"}  # DetectionWindow.to_dict's own
    assert not set(records) & window_keys


@pytest.mark.parametrize(
    "plugin", [n.name for n in NAVIGATORS if n != PROMPT_NAVIGATOR] + [m.name for m in FILTER_MODES if m != DELETE]
)
def test_the_core_names_no_navigator_or_filter_mode(plugin: str) -> None:
    marks = MARKS[plugin]
    naming = {str(path.relative_to(ROOT)) for path in sources() if any(mark in path.read_text() for mark in marks)}
    allowed = NAMED_BY[plugin]
    assert naming <= set(allowed), f"{sorted(naming - set(allowed))} name {plugin}: use the seams"
    assert len(naming) <= MAX_FILES


def test_the_agent_axis_is_the_registry_of_navigators() -> None:
    names = tuple(n.name for n in NAVIGATORS)
    assert NAVIGATORS[0] is PROMPT_NAVIGATOR and NAVIGATION.agent == PROMPT_NAVIGATOR.name
    assert next(a for a in axes_of(NavigationSettings) if a.name == "agent").values == names
    with pytest.raises(ValueError, match=f"agent must be one of {', '.join(names)}, or module:function; got 'chat'"):
        navigate(agent="chat")
    with pytest.raises(ValueError, match="agent must be one of"):
        navigator("chat")


def test_the_filter_axis_is_the_registry_of_filter_modes() -> None:
    names = tuple(m.name for m in FILTER_MODES)
    assert FILTER_MODES[0] is DELETE and NAVIGATION.filter == DELETE.name
    assert next(a for a in axes_of(NavigationSettings) if a.name == "filter").values == names
    with pytest.raises(ValueError, match=f"filter must be one of {', '.join(names)}; got 'drop'"):
        navigate(filter_mode="drop")
    with pytest.raises(ValueError, match="filter must be one of"):
        filter_named("drop")


def test_an_axis_the_task_signature_does_not_name_is_read_from_its_keywords() -> None:
    """An extension added to the registry reaches the task through its ``**`` parameter
    (Inspect passes every ``-T`` value to a task that has one): its axis is read like the
    others, and a misspelt one fails naming it among the valid names."""
    given = {"regime": "L1", "n_seeds": 1, "unknown": {"edits": "true", "distractors": "3"}}
    settings = DetectionSettings.read(given)
    assert (settings.edits, settings.distractors) == (True, 3)
    assert settings == DetectionSettings.read({"regime": "L1", "n_seeds": 1, "edits": True, "distractors": 3})
    with pytest.raises(TaskParameterError, match=r"unknown task parameter 'edit' \(did you mean 'edits'\?\); valid: "):
        DetectionSettings.read({"regime": "L1", "n_seeds": 1, "unknown": {"edit": "true"}})
    with pytest.raises(TaskParameterError, match=r"edits must be one of true, false .*; got .maybe."):
        DetectionSettings.read({"regime": "L1", "n_seeds": 1, "unknown": {"edits": "maybe"}})
