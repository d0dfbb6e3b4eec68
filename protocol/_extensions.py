"""The registry of extensions the core iterates over (``_seams``): the only place that
names them. Each is one module; its order here is the order of its axes among the
task's and of its hooks' effects."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from spatialstale.env import Instance, MemoryEntry

from ._axes import axes_of
from ._distractors import DISTRACTORS
from ._fog import FOG
from ._measures import Count, TaskMetric
from ._seams import WHOLE_GRID, Extension, View, Views

EXTENSIONS: tuple[Extension, ...] = (FOG, DISTRACTORS)
"""The built-in extensions, in order."""


def extension_axes(kind: str, last: bool | None = None) -> tuple[type, ...]:
    """The axes dataclasses of the extensions of task kind ``kind``, for its settings to
    inherit: all, or those placed after the kind's own axes (``last``) or not."""
    return tuple(e.axes for e in EXTENSIONS if kind in e.kinds and last in (None, e.axes_last(kind)))


def extension_names(kind: str) -> tuple[str, ...]:
    """The ``-T`` names of the extensions' axes of ``kind`` that a task passes its solver
    (``Extension.solver_args``)."""
    return tuple(
        name
        for e in EXTENSIONS
        if kind in e.kinds
        for name in e.solver_args({a.name: a.value for a in axes_of(e.axes)})
    )


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
    views = [v for e in EXTENSIONS if kind in e.kinds and (v := e.view(values)) is not None]
    return WHOLE_GRID if not views else views[0] if len(views) == 1 else Views(views)


def dry_run_notes(kind: str, values: Mapping[str, Any]) -> list[str]:
    """The dry run's method notes of the extensions of ``kind`` for these values."""
    return [n for e in EXTENSIONS if kind in e.kinds and (n := e.dry_run_note(values)) is not None]


def _of(kind: str) -> tuple[Extension, ...]:
    return tuple(e for e in EXTENSIONS if kind in e.kinds)


def extension_args(kind: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """What a ``kind`` task with these settings passes its solver of its extensions."""
    return {k: v for e in _of(kind) for k, v in e.solver_args(values).items()}


def check_extensions(kind: str, values: Mapping[str, Any]) -> None:
    """Each extension's refusal of these settings (TaskParameterError, one line)."""
    for e in _of(kind):
        e.check(values)


def extension_records(kind: str, values: Mapping[str, Any]) -> dict[str, object]:
    """What the task's header and its samples' metadata record of the extensions beyond their axes."""
    return {k: v for e in _of(kind) for k, v in e.settings_record(values).items()}


def extension_tags(kind: str, values: Mapping[str, Any]) -> list[str]:
    """The log's tags of the extensions beyond their axes'."""
    return [tag for e in _of(kind) for tag in e.tags(values)]


def active_extensions(kind: str, values: Mapping[str, Any]) -> tuple[str, ...]:
    """The names of the extensions these settings turn on: a task adds their metrics."""
    return tuple(e.name for e in _of(kind) if e.active(values))


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
    """How an audit table marks an extension's entry (None: a cell's entry)."""
    return next((r for e in EXTENSIONS if (r := e.audit_result(entry, flagged)) is not None), None)


def extension_wrong_results() -> tuple[str, ...]:
    """The extensions' audit results that are errors."""
    return tuple(r for e in EXTENSIONS for r in e.wrong_results())


def extension_audit_notes(results: Mapping[str, int], named: Callable[[str], str]) -> list[str]:
    """The extensions' clauses of an audit table's summary line."""
    return [n for e in EXTENSIONS if (n := e.audit_note(results, named)) is not None]


def extension_counts(kind: str) -> tuple[Count, ...]:
    """The counts the extensions of ``kind`` add to a score, declared."""
    return tuple(c for e in _of(kind) for c in e.counts(kind))


def extension_metrics(kind: str) -> tuple[TaskMetric, ...]:
    """The metrics the extensions of ``kind`` add to a task when on, declared."""
    return tuple(m for e in _of(kind) for m in e.metrics(kind))


def extension_score_counts(
    kind: str, metadata: Mapping[str, Any], windows: Sequence[Mapping[str, Any]]
) -> dict[str, int]:
    """The extensions' counts of one sample's score."""
    return {k: v for e in _of(kind) for k, v in e.score_counts(kind, metadata, windows).items()}


def extension_score_notes(kind: str, value: Mapping[str, Any]) -> list[str]:
    """The extensions' clauses of a score's explanation."""
    return [n for e in _of(kind) if (n := e.score_note(kind, value)) is not None]
