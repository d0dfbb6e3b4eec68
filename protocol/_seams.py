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
4. **dry run**: :meth:`Extension.dry_run_note`, the estimate's method note.

The stages the paper's code still calls by name (memory, answer reading, scores, the
report's section) get their hooks as their extensions move behind the seam.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

from spatialstale.env import Grid, Pos


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
