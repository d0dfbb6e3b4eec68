"""The seams: the pipeline's stages an extension plugs into, as typed interfaces.

An extension (an experiment beyond the paper's protocol) is one module holding one
object that satisfies :class:`Extension`; the core iterates over the registry
(``_extensions.EXTENSIONS``) and never names an extension. The stages, in the order a
run meets them:

1. **settings**: :attr:`Extension.axes`, a frozen dataclass of the extension's axes
   (declared with ``axis``); the settings of the task kinds in :attr:`Extension.kinds`
   inherit it, so its ``-T`` parameters, metadata, tags, sample ids, study flags, dry
   run and report columns derive from it as from any axis;
2. **observation**: :meth:`Extension.view` binds the extension's values to a
   :class:`View`, what of the live grid each call shows (``Sight.seen``);
3. **transcript and records**: the view's :meth:`View.step_note` (a line under each
   step's table) and :meth:`View.record` (what the episode's record keeps of it);
4. **dry run**: :meth:`Extension.dry_run_note`, the estimate's method note;
5. **memory**: :meth:`Extension.memory` puts the extension's entries in an instance's
   store beside the cells' (so every audit judges them and the dry run counts them),
   :meth:`Extension.instance_metadata` records them in each sample and
   :meth:`Extension.entry_ids` reads their ids back;
6. **transcript**: :meth:`Extension.audit_result`, :meth:`Extension.wrong_results` and
   :meth:`Extension.audit_note`, how an audit table marks its entries and sums them up;
7. **scores**: :meth:`Extension.counts` and :meth:`Extension.metrics` declare what a
   score adds and the metrics a task adds when the extension is on
   (:meth:`Extension.active`); :meth:`Extension.score_counts` and
   :meth:`Extension.score_note` fill them in;
8. **settings, beyond the axes**: :meth:`Extension.solver_args`, :meth:`Extension.check`,
   :meth:`Extension.settings_record`, :meth:`Extension.tags` and :meth:`Extension.axes_last`.

The stages the paper's code still calls by name (answer reading, the report's section)
get their hooks as their extensions move behind the seam.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

from spatialstale.env import Grid, Instance, MemoryEntry, Pos

from ._axes import axes_of
from ._measures import Count, TaskMetric


@runtime_checkable
class View(Protocol):
    """The observation stage: what of the live grid a call shows."""

    def seen(self, grid: Grid, agent: Pos) -> Grid:
        """``grid`` as a call made with the agent at ``agent`` shows it."""
        ...

    def step_note(self, position: Pos) -> str | None:
        """A line under a navigation step's transcript table (None: nothing to say)."""
        ...

    def record(self) -> dict[str, object]:
        """What an episode's record keeps of this view (empty: as in the paper)."""
        ...


class Extension(Protocol):
    """An experiment beyond the paper's protocol, plugged into the stages it needs.

    Attributes:
        name: the extension's name (its docs page, its module).
        kinds: the task kinds (``navigation``, ``detection``, ...) whose settings hold
            its axes.
        axes: a frozen dataclass whose fields are the extension's axes (``axis``); the
            settings of each kind in ``kinds`` inherit it.
    """

    @property
    def name(self) -> str: ...

    @property
    def kinds(self) -> tuple[str, ...]: ...

    @property
    def axes(self) -> type: ...

    def view(self, values: Mapping[str, Any]) -> View | None:
        """The view these axis values (canonical, by name) make; None: the whole grid."""
        ...

    def dry_run_note(self, values: Mapping[str, Any]) -> str | None:
        """The dry run's method note for a task with these values; None: nothing to say."""
        ...

    # Hooks with a default: an extension that subclasses Extension overrides those it
    # needs. ``values`` are a task's settings by axis name (every axis of its kind).

    def solver_args(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Settings: what the task passes its solver of these values (the default: each of
        the extension's axes, by name; empty for one whose effect travels in the sample's
        instance, which the solver rebuilds from the sample's metadata)."""
        return {a.name: values[a.name] for a in axes_of(self.axes)}

    def check(self, values: Mapping[str, Any]) -> None:
        """Settings: raise TaskParameterError (one line) for a combination of values the
        extension cannot run (the default: none)."""
        return None

    def settings_record(self, values: Mapping[str, Any]) -> dict[str, object]:
        """Settings: what the task's header and every sample's metadata record of these
        values beyond the axes' own recording (the default: nothing)."""
        return {}

    def tags(self, values: Mapping[str, Any]) -> list[str]:
        """Settings: the log's tags beyond its axes' (the default: none)."""
        return []

    def active(self, values: Mapping[str, Any]) -> bool:
        """Whether these values turn the extension on, so a task adds its metrics (the
        default: an axis of it away from its default, the paper's protocol)."""
        return any(values.get(a.name, a.value) != a.value for a in axes_of(self.axes))

    def memory(self, instance: Instance, values: Mapping[str, Any]) -> Instance:
        """Memory: ``instance`` with the extension's entries in its store beside the
        cells' (the default: the instance as drawn). ``values`` may be a sample's
        metadata, which records the axes that change the instance."""
        return instance

    def instance_metadata(self, instance: Instance) -> dict[str, object]:
        """Memory: what a sample's metadata records of the extension's entries in
        ``instance`` (the default: nothing)."""
        return {}

    def entry_ids(self, metadata: Mapping[str, Any]) -> frozenset[str]:
        """Memory, read back: the ids of the extension's entries in a sample with this
        metadata (the default: none)."""
        return frozenset()

    def audit_result(self, entry: MemoryEntry, flagged: bool) -> str | None:
        """Transcript: how an audit table marks ``entry``'s verdict when the entry is the
        extension's (None: not its entry; the default)."""
        return None

    def wrong_results(self) -> tuple[str, ...]:
        """Transcript: the results of :meth:`audit_result` that are errors (shown in bold,
        named in the summary line; the default: none)."""
        return ()

    def audit_note(self, results: Mapping[str, int], named: Callable[[str], str]) -> str | None:
        """Transcript: a clause of an audit table's summary line, given the count of each
        result and ``named(result)``, the ids judged so (None: nothing to add; the default)."""
        return None

    def counts(self, kind: str) -> tuple[Count, ...]:
        """Scores: the counts a ``kind`` sample's score may add (the default: none)."""
        return ()

    def metrics(self, kind: str) -> tuple[TaskMetric, ...]:
        """Scores: the metrics a ``kind`` task adds when the extension is :meth:`active`
        (each with ``only`` the extension's name; the default: none)."""
        return ()

    def score_counts(
        self, kind: str, metadata: Mapping[str, Any], windows: Sequence[Mapping[str, Any]]
    ) -> dict[str, int]:
        """Scores: the counts of :meth:`counts` of a sample with this metadata and these
        windows (a detection score's records; empty: none; the default)."""
        return {}

    def score_note(self, kind: str, value: Mapping[str, Any]) -> str | None:
        """Scores: a clause of the score's explanation, given its values (None: nothing
        to add; the default)."""
        return None

    def axes_last(self, kind: str) -> bool:
        """Settings: True to place the axes after all of the ``kind`` settings' own
        (the default, False: after the kind's head, as ``_settings`` orders them), the
        order the study's options and the report's columns keep."""
        return False


@dataclass(frozen=True)
class WholeGrid:
    """The paper's observation: every call shows the whole grid."""

    def seen(self, grid: Grid, agent: Pos) -> Grid:
        return grid

    def step_note(self, position: Pos) -> str | None:
        return None

    def record(self) -> dict[str, object]:
        return {}


WHOLE_GRID = WholeGrid()


@dataclass(frozen=True)
class Views:
    """Several extensions' views applied one after another (in registry order)."""

    parts: Sequence[View]
    kind: ClassVar[str] = "views"

    def seen(self, grid: Grid, agent: Pos) -> Grid:
        for part in self.parts:
            grid = part.seen(grid, agent)
        return grid

    def step_note(self, position: Pos) -> str | None:
        notes = [n for n in (part.step_note(position) for part in self.parts) if n is not None]
        return "\n".join(notes) if notes else None

    def record(self) -> dict[str, object]:
        out: dict[str, object] = {}
        for part in self.parts:
            out |= part.record()
        return out
