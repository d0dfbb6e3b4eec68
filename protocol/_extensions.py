"""The registry of extensions the core iterates over (``_seams``): the only place that
names them. Each is one module; its order here is the order of its axes among the
task's and of its hooks' effects."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from spatialstale.env import Instance, MemoryEntry, Pos

from ._axes import axes_of
from ._crops import CROPS
from ._distractors import DISTRACTORS
from ._edits import EDITS
from ._filter_modes import UNKNOWN
from ._fog import FOG
from ._holes import HOLES
from ._seams import (
    DELETE,
    WHOLE_GRID,
    AuditMarks,
    Extension,
    FilterMode,
    MemoryForm,
    ReportPart,
    ReportSweep,
    ScorePart,
    Scores,
    StandIn,
    VerdictField,
    View,
    Views,
)

if TYPE_CHECKING:
    from PIL.Image import Image

EXTENSIONS: tuple[Extension, ...] = (HOLES, FOG, DISTRACTORS, CROPS, EDITS)
"""The built-in extensions, in order."""


def _of(kind: str) -> list[Extension]:
    """The extensions of task kind ``kind``, in registry order."""
    return [e for e in EXTENSIONS if kind in e.kinds]


def extension_axes(kind: str) -> tuple[type, ...]:
    """The axes dataclasses of the extensions of task kind ``kind``, in registry order."""
    return tuple(e.axes for e in _of(kind))


def settings_bases(kind: str, *, last: bool = False) -> tuple[type, ...]:
    """The bases a ``kind`` settings class inherits its extensions' axes from (those placed
    after all of the kind's own axes, ``Extension.axes_last``, or the others): a dataclass
    collects its fields from the last base to the first, so the bases come in reverse
    registry order for the axes to follow the task's own in registry order."""
    return tuple(e.axes for e in _of(kind) if e.axes_last(kind) == last)[::-1]


def extension_names(kind: str) -> tuple[str, ...]:
    """The ``-T`` names of the extensions' axes of ``kind`` that a task passes its solver
    (``Extension.solver_args``), which the solver reads."""
    return tuple(name for e in _of(kind) for name in e.solver_args({a.name: a.value for a in axes_of(e.axes)}))


def extension_values(kind: str, given: Mapping[str, object]) -> dict[str, Any]:
    """Each extension axis of ``kind`` read from ``given`` (its default when absent).

    Raises:
        ValueError: a name in ``given`` that no extension of ``kind`` declares, or a
            bad value (TaskParameterError, one line).
    """
    names = extension_names(kind)
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise ValueError(f"unknown argument {', '.join(unknown)}; the extensions take {', '.join(names) or 'none'}")
    return {
        a.name: a.read(given.get(a.name, a.default), a.name)
        for axes in extension_axes(kind)
        for a in axes_of(axes)
        if a.name in names
    }


def extension_view(kind: str, values: Mapping[str, Any]) -> View:
    """What of the live grid the calls of a ``kind`` task with these values show."""
    views = [v for e in _of(kind) if (v := e.view(values)) is not None]
    return WHOLE_GRID if not views else views[0] if len(views) == 1 else Views(tuple(views))


def dry_run_notes(kind: str, values: Mapping[str, Any]) -> list[str]:
    """The dry run's method notes of the extensions of ``kind`` for these values."""
    return [n for e in _of(kind) if (n := e.dry_run_note(values)) is not None]


def check_extensions(kind: str, values: Mapping[str, Any]) -> None:
    """Refuse a combination of a ``kind`` task's axis values that an extension cannot run
    (TaskParameterError, one line)."""
    for e in _of(kind):
        e.check(values)


def extension_prompt(kind: str, call: str, values: Mapping[str, Any], prompt: str) -> str:
    """The system prompt of call kind ``call`` of a ``kind`` task, each extension's hook applied in turn."""
    for e in _of(kind):
        prompt = e.prompt(call, values, prompt)
    return prompt


def extension_memory_form(
    kind: str, values: Mapping[str, Any], instance: Instance, *, drawn: bool = True
) -> MemoryForm | None:
    """How an audit of a ``kind`` task with these values shows its entries: the first
    extension's form that has one; None: each entry's text line (the paper)."""
    for e in _of(kind):
        if (form := e.memory_form(values, instance, drawn=drawn)) is not None:
            return form
    return None


def extension_stand_ins() -> tuple[StandIn, ...]:
    """Every image an extension's memory form sends, as the dry run measures it."""
    return tuple(s for e in EXTENSIONS for s in e.stand_ins())


def read_memory_picture(image: Image, size: int) -> tuple[str, Pos] | None:
    """The remembered cell type and the cell of a picture of a memory entry, as the
    first extension that reads it reads it (the reference agents' reading); None: no
    extension reads it."""
    for e in EXTENSIONS:
        if (read := e.read_picture(image, size)) is not None:
            return read
    return None


def active_extensions(kind: str, values: Mapping[str, Any]) -> tuple[str, ...]:
    """The names of the extensions of ``kind`` on for these values (settings or sample metadata)."""
    return tuple(e.name for e in _of(kind) if e.active(values))


def verdict_fields(kind: str, values: Mapping[str, Any]) -> tuple[VerdictField, ...]:
    """The fields each audit verdict of a ``kind`` task with these values gains, in registry order."""
    return tuple(f for e in _of(kind) if e.active(values) and (f := e.verdict_field()) is not None)


def every_verdict_field() -> tuple[VerdictField, ...]:
    """Every extension's verdict field, whichever task asks for it (the reference agents
    read from the prompt which ones it asks for)."""
    return tuple(f for e in EXTENSIONS if (f := e.verdict_field()) is not None)


def extension_scores(kind: str) -> dict[str, Scores]:
    """The score declarations of the extensions of ``kind``, by extension name."""
    return {e.name: s for e in _of(kind) if (s := e.scores(kind)) is not None}


def extension_score(kind: str, metadata: Mapping[str, Any], windows: Sequence[Mapping[str, Any]]) -> list[ScorePart]:
    """What the extensions on for a ``kind`` sample (by its metadata) add to its score."""
    return [p for e in _of(kind) if (p := e.score(kind, metadata, windows)) is not None]


def extension_reports() -> tuple[ReportPart, ...]:
    """The extensions' parts of the report's section beyond the paper, in registry order."""
    return tuple(part for e in EXTENSIONS if isinstance(part := e.report(), ReportPart))


def extension_sweeps() -> tuple[ReportSweep, ...]:
    """The extensions' sections of the report that set a navigation axis's values side
    by side, in registry order."""
    return tuple(sweep for e in EXTENSIONS if isinstance(sweep := e.report(), ReportSweep))


def compared_axes(kind: str) -> tuple[str, ...]:
    """The axes whose runs of task kind ``kind`` an extension's report part compares
    with the paper's value: every other table of the report reads them at it."""
    return tuple(part.axis for part in extension_reports() if any(t.kind == kind for t in part.tables))


def extension_args(kind: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """What a ``kind`` task with these settings passes its solver of its extensions."""
    return {k: v for e in _of(kind) for k, v in e.solver_args(values).items()}


def extension_records(kind: str, values: Mapping[str, Any]) -> dict[str, object]:
    """What the task's header and its samples' metadata record of the extensions beyond their axes."""
    return {k: v for e in _of(kind) for k, v in e.settings_record(values).items()}


def extension_tags(kind: str, values: Mapping[str, Any]) -> list[str]:
    """The log's tags of the extensions beyond their axes'."""
    return [tag for e in _of(kind) for tag in e.tags(values)]


def extension_instance(instance: Instance, values: Mapping[str, Any]) -> Instance:
    """``instance`` with every extension's entries these values (settings, or a sample's
    metadata) put in its store: what the task's samples and the solvers see."""
    for e in EXTENSIONS:
        instance = e.memory(instance, values)
    return instance


def extension_instance_metadata(instance: Instance) -> dict[str, object]:
    """What a sample's metadata records of the extensions' entries in ``instance``."""
    return {k: v for e in EXTENSIONS for k, v in e.instance_metadata(instance).items()}


def extension_entry_ids(metadata: Mapping[str, Any]) -> frozenset[str]:
    """The ids of the extensions' entries in a sample with this metadata."""
    return frozenset().union(*(e.entry_ids(metadata) for e in EXTENSIONS))


def extension_audit_result(entry: MemoryEntry, flagged: bool) -> str | None:
    """How an audit table marks the verdict on an extension's entry (None: a cell's entry)."""
    return next((r for m in _marks() if (r := m.mark(entry, flagged)) is not None), None)


def extension_wrong_results() -> tuple[str, ...]:
    """The extensions' audit marks that are errors."""
    return tuple(r for m in _marks() for r in m.wrong)


def extension_audit_notes(results: Mapping[str, int], named: Callable[[str], str]) -> list[str]:
    """The extensions' clauses of an audit table's summary line."""
    return [n for m in _marks() if (n := m.note(results, named)) is not None]


def _marks() -> list[AuditMarks]:
    return [m for e in EXTENSIONS if (m := e.audit_marks()) is not None]


FILTER_MODES: tuple[FilterMode, ...] = (DELETE, UNKNOWN)
"""The filter modes (``-T filter``), the paper's first (the default)."""

FILTERS = tuple(m.name for m in FILTER_MODES)
"""The values of ``-T filter``."""


def filter_named(name: str) -> FilterMode:
    """The filter mode called ``name``.

    Raises:
        ValueError: no filter mode is called ``name`` (one line).
    """
    for mode in FILTER_MODES:
        if mode.name == name:
            return mode
    raise ValueError(f"filter must be one of {', '.join(FILTERS)}; got {name!r}")
