"""The registry of extensions the core iterates over (``_seams``): the only place that
names them. Each is one module; its order here is the order of its axes among the
task's and of its hooks' effects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._axes import axes_of
from ._filter_modes import UNKNOWN
from ._fog import FOG
from ._seams import DELETE, WHOLE_GRID, Extension, FilterMode, View, Views

EXTENSIONS: tuple[Extension, ...] = (FOG,)
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
