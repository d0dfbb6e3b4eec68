"""The registry of extensions the core iterates over (``_seams``): the only place that
names them. Each built-in is one module; an installed package adds its own through the
entry-point group ``spatialstale.extensions``. The registry's order is the order of
their axes after the task's own and of their hooks' effects."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cache, partial
from typing import TYPE_CHECKING, Any

from spatialstale.env import Instance, MemoryEntry, Pos, installed_plugins, load_plugin

from ._axes import Axis, axes_of
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
    MemoryPart,
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

BUILTIN_EXTENSIONS: tuple[Extension, ...] = (HOLES, FOG, DISTRACTORS, CROPS, EDITS)
"""The built-in extensions, in order."""

ENTRY_POINT_GROUP = "spatialstale.extensions"
"""The entry-point group a package declares its extensions in (docs/extensions.md)."""


@cache
def extensions() -> tuple[Extension, ...]:
    """Every extension: the built-ins, then each one an installed package declares in
    :data:`ENTRY_POINT_GROUP` (an :class:`Extension` object, or a class constructed with
    no arguments), in the order of their names. Loaded on the first call, once the suite's
    modules are imported (an extension's module imports them); one that cannot be loaded
    fails with one line naming it."""
    found = list(BUILTIN_EXTENSIONS)
    for name, spec in sorted(installed_plugins(ENTRY_POINT_GROUP).items()):
        said = f"extension {name!r} ({spec})"
        target = load_plugin(spec, partial(_refused, said))
        extension = target() if isinstance(target, type) else target
        if not isinstance(extension, Extension):
            raise ValueError(f"{said} is not a spatialstale.protocol.Extension")
        taken = {e.name for e in found} | {a.name for e in found for a in axes_of(e.axes)}
        clash = sorted(({extension.name} | {a.name for a in axes_of(extension.axes)}) & taken)
        if clash:
            raise ValueError(f"{said} takes a name another extension or axis has: {', '.join(clash)}")
        found.append(extension)
    return tuple(found)


def _refused(said: str, why: str) -> ValueError:
    return ValueError(f"{said} {why}")


def _of(kind: str) -> list[Extension]:
    """The extensions of task kind ``kind``, in registry order."""
    return [e for e in extensions() if kind in e.kinds]


@cache
def _parts() -> tuple[MemoryPart, ...]:
    # the registry is read once (extensions()), so its memory parts are too: an audit
    # table asks them for every entry's mark
    return tuple(p for e in extensions() if (p := e.memory()) is not None)


@cache
def extension_axes(kind: str) -> tuple[Axis, ...]:
    """The axes of the extensions of task kind ``kind``, in registry order (read once, as
    the registry is: the settings ask for them at every read of an extension's axis)."""
    return tuple(a for e in _of(kind) for a in axes_of(e.axes))


def extension_names(kind: str) -> tuple[str, ...]:
    """The ``-T`` names of the extensions' axes of ``kind``."""
    return tuple(a.name for a in extension_axes(kind))


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
    return {a.name: a.read(given.get(a.name, a.default), a.name) for a in extension_axes(kind)}


def extension_view(kind: str, values: Mapping[str, Any]) -> View:
    """What of the live grid the calls of a ``kind`` task with these values show."""
    views = [v for e in _of(kind) if (v := e.view(values)) is not None]
    return WHOLE_GRID if not views else views[0] if len(views) == 1 else Views(tuple(views))


def dry_run_notes(kind: str, values: Mapping[str, Any]) -> list[str]:
    """The dry run's method notes of the extensions of ``kind`` for these values."""
    return [n for e in _of(kind) if (v := e.view(values)) is not None and (n := v.dry_run_note()) is not None]


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
        if (part := e.memory()) is not None and (form := part.form(values, instance, drawn=drawn)) is not None:
            return form
    return None


def extension_stand_ins() -> tuple[StandIn, ...]:
    """Every image an extension's memory form sends, as the dry run measures it."""
    return tuple(s for part in _parts() for s in part.stand_ins)


def read_memory_picture(image: Image, size: int) -> tuple[str, Pos] | None:
    """The remembered cell type and the cell of a picture of a memory entry, as the
    first extension that reads it reads it (the reference agents' reading); None: no
    extension reads it."""
    return next((read for part in _parts() if (read := part.read_picture(image, size)) is not None), None)


def active_extensions(kind: str, values: Mapping[str, Any]) -> tuple[str, ...]:
    """The names of the extensions of ``kind`` on for these values (settings or sample metadata)."""
    return tuple(e.name for e in _of(kind) if e.active(values))


def verdict_fields(kind: str, values: Mapping[str, Any]) -> tuple[VerdictField, ...]:
    """The fields each audit verdict of a ``kind`` task with these values gains, in registry order."""
    return tuple(f for e in _of(kind) if e.active(values) and (f := e.verdict_field()) is not None)


def every_verdict_field() -> tuple[VerdictField, ...]:
    """Every extension's verdict field, whichever task asks for it (the reference agents
    read from the prompt which ones it asks for)."""
    return tuple(f for e in extensions() if (f := e.verdict_field()) is not None)


def extension_scores(kind: str) -> dict[str, Scores]:
    """The score declarations of the extensions of ``kind``, by extension name."""
    return {e.name: s for e in _of(kind) if (s := e.scores(kind)) is not None}


def extension_score(kind: str, metadata: Mapping[str, Any], windows: Sequence[Mapping[str, Any]]) -> list[ScorePart]:
    """What the extensions on for a ``kind`` sample (by its metadata) add to its score."""
    return [p for e in _of(kind) if (p := e.score(kind, metadata, windows)) is not None]


def extension_reports() -> tuple[ReportPart, ...]:
    """The extensions' parts of the report's section beyond the paper, in registry order."""
    return tuple(part for e in extensions() if isinstance(part := e.report(), ReportPart))


def extension_sweeps() -> tuple[ReportSweep, ...]:
    """The extensions' sections of the report that set a navigation axis's values side
    by side, in registry order."""
    return tuple(sweep for e in extensions() if isinstance(sweep := e.report(), ReportSweep))


def compared_axes(kind: str) -> tuple[str, ...]:
    """The axes whose runs of task kind ``kind`` an extension's report part compares
    with the paper's value: every other table of the report reads them at it."""
    return tuple(part.axis for part in extension_reports() if any(t.kind == kind for t in part.tables))


def extension_instance(instance: Instance, values: Mapping[str, Any]) -> Instance:
    """``instance`` with every extension's entries these values (settings, or a sample's
    metadata) put in its store: what the task's samples and the solvers see."""
    for part in _parts():
        instance = part.add(instance, values)
    return instance


def extension_instance_metadata(instance: Instance) -> dict[str, object]:
    """What a sample's metadata records of the extensions' entries in ``instance``."""
    return {k: v for part in _parts() for k, v in part.metadata(instance).items()}


def extension_entry_ids(metadata: Mapping[str, Any]) -> frozenset[str]:
    """The ids of the extensions' entries in a sample with this metadata."""
    return frozenset().union(*(part.entry_ids(metadata) for part in _parts()))


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
    return [part.marks for part in _parts() if part.marks is not None]


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
