"""The registry of extensions the core iterates over (``_seams``): the only place that
names them. Each is one module; its order here is the order of its axes among the
task's and of its hooks' effects."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._axes import axes_of
from ._edits import EDITS
from ._fog import FOG
from ._seams import WHOLE_GRID, Extension, ScorePart, Scores, VerdictField, View, Views

EXTENSIONS: tuple[Extension, ...] = (FOG, EDITS)
"""The built-in extensions, in order."""


def extension_axes(kind: str) -> tuple[type, ...]:
    """The axes dataclasses of the extensions of task kind ``kind``, for its settings to inherit."""
    return tuple(e.axes for e in EXTENSIONS if kind in e.kinds)


def extension_names(kind: str) -> tuple[str, ...]:
    """The ``-T`` names of the extensions' axes of ``kind``."""
    return tuple(a.name for axes in extension_axes(kind) for a in axes_of(axes))


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
        a.name: a.read(given.get(a.name, a.default), a.name) for axes in extension_axes(kind) for a in axes_of(axes)
    }


def extension_view(kind: str, values: Mapping[str, Any]) -> View:
    """What of the live grid the calls of a ``kind`` task with these values show."""
    views = [v for e in EXTENSIONS if kind in e.kinds and (v := e.view(values)) is not None]
    return WHOLE_GRID if not views else views[0] if len(views) == 1 else Views(views)


def dry_run_notes(kind: str, values: Mapping[str, Any]) -> list[str]:
    """The dry run's method notes of the extensions of ``kind`` for these values."""
    return [n for e in EXTENSIONS if kind in e.kinds and (n := e.dry_run_note(values)) is not None]


def _of(kind: str) -> list[Extension]:
    return [e for e in EXTENSIONS if kind in e.kinds]


def active_extensions(kind: str, values: Mapping[str, Any]) -> tuple[str, ...]:
    """The names of the extensions of ``kind`` on for these values (settings or sample metadata)."""
    return tuple(e.name for e in _of(kind) if e.active(values))


def extension_prompt(kind: str, call: str, values: Mapping[str, Any], prompt: str) -> str:
    """The system prompt of call kind ``call`` of a ``kind`` task, each extension's hook applied in turn."""
    for e in _of(kind):
        prompt = e.prompt(call, values, prompt)
    return prompt


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
