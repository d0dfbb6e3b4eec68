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
5. **settings, again**: :meth:`Extension.check` refuses a combination of values;
6. **prompt**: :meth:`Extension.prompt`, a call's system prompt under the values;
7. **memory**: :meth:`Extension.memory_form`, how an audit shows its entries
   (:class:`MemoryForm`), and :meth:`Extension.stand_ins`, its images as the dry run
   measures them (:class:`StandIn`), and :meth:`Extension.read_picture`, how the
   reference agents read one of its pictures back.

An extension subclasses :class:`Extension`, so a hook it does not define keeps the
method's default (the paper's protocol). The stages the paper's code still calls by
name (answer reading, scores, the report's section) get their hooks as their
extensions move behind the seam.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from inspect_ai.model import Content

from spatialstale.env import Grid, Instance, MemoryEntry, Pos

if TYPE_CHECKING:
    from PIL.Image import Image


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


@runtime_checkable
class MemoryForm(Protocol):
    """The memory stage: how an audit call shows its batch of memory entries."""

    def content(self, entries: Sequence[MemoryEntry]) -> list[Content]:
        """The part of the call's prompt that shows ``entries`` (after the observation)."""
        ...


@dataclass(frozen=True)
class StandIn:
    """An image an extension's prompts send, as the dry run measures it without drawing it.

    Attributes:
        prefix: how each of its stand-ins' names starts (what the dry run sends in its place).
        width: its width in pixels.
        height: its height in pixels.
        legend: how the dry run's legend names it (``a memory ...``).
    """

    prefix: str
    width: int
    height: int
    legend: str


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
        return None

    def dry_run_note(self, values: Mapping[str, Any]) -> str | None:
        """The dry run's method note for a task with these values; None: nothing to say."""
        return None

    def check(self, values: Mapping[str, Any]) -> None:
        """The settings stage: refuse a combination of a task's axis values (all of its
        axes, by name) that the extension cannot run, with a TaskParameterError (one
        line, before any model call; the study skips the combination with it as its
        reason). Default: every combination runs."""
        return None

    def prompt(self, call: str, prompt: str, values: Mapping[str, Any]) -> str:
        """The prompt stage: the system prompt of a call of kind ``call`` (``audit``, ...)
        under these values, from the prompt set's ``prompt``. Default: ``prompt`` as it is."""
        return prompt

    def memory_form(self, values: Mapping[str, Any], instance: Instance, *, drawn: bool = True) -> MemoryForm | None:
        """The memory stage: how an audit call of ``instance`` shows its batch of entries
        under these values; with ``drawn`` False (the dry run) its images are stand-ins
        (:meth:`stand_ins`) that name what they show without drawing it. Default
        (None): each entry's text line, as in the paper."""
        return None

    def stand_ins(self) -> tuple[StandIn, ...]:
        """The dry run: the images :meth:`memory_form` sends, as stand-ins measured by
        their size. Default: none."""
        return ()

    def read_picture(self, image: Image, size: int) -> tuple[str, Pos] | None:
        """The reference agents' reading (``spatialstale.agents``): the remembered cell
        type and the cell of one picture of a memory entry (an image right after a text
        part holding only the entry's id) as :meth:`memory_form` draws it, read from its
        pixels alone as a model must, for a grid of ``size``. Default (None): not one of
        this extension's pictures."""
        return None


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
