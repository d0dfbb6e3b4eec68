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
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Protocol, Self, runtime_checkable

from spatialstale.env import Grid, MemoryEntry, Pos


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


class Navigator(Protocol):
    """The navigator stage (``-T agent``): how an episode's moves are asked of the model.

    A navigator is one value of the navigation task's ``agent`` axis, listed in
    ``_navigators.NAVIGATORS``; the paper's is :data:`PROMPT_NAVIGATOR` (one fresh call a
    step, the memory view in the prompt), the default. Its loop is the solvers' (a
    loop registered under its name there); here is what the protocol declares of it.

    Attributes:
        name: its value of ``-T agent`` (and its sample ids' part, ``-NAME``).
        help: how ``-T agent``'s help describes it.
        call_kind: the kind of its calls (``system_message``'s tag).
    """

    @property
    def name(self) -> str: ...

    @property
    def help(self) -> str: ...

    @property
    def call_kind(self) -> str: ...

    def system_prompt(self) -> str | None:
        """The settings stage: its default navigation prompt; None: the prompt set's."""
        ...

    def dry_run_note(self) -> str | None:
        """The dry run's method note for its tasks; None: nothing to say."""
        ...

    def dry_run_counts(self) -> str | None:
        """The dry run's word for its navigation counts; None: as the paper's navigator's."""
        ...


@dataclass(frozen=True)
class PromptNavigator:
    """The paper's navigator: one fresh call a step, the memory view in the prompt."""

    name: str = "prompt"
    help: str = "prompt (one call a step, memory in the prompt: the paper)"
    call_kind: str = "navigate"

    def system_prompt(self) -> str | None:
        return None

    def dry_run_note(self) -> str | None:
        return None

    def dry_run_counts(self) -> str | None:
        return None


PROMPT_NAVIGATOR = PromptNavigator()


class FilterMode(Protocol):
    """The memory stage's filter (``-T filter``): how a strategy's flags shape its view.

    A filtering strategy (SelfVerify, OMCD, Oracle, LocalVerify) hands the store and its
    flags (entry id -> step of the audit that flagged it) to the task's filter mode,
    listed in ``_extensions.FILTER_MODES``; the paper's is :data:`DELETE`, the default.
    """

    @property
    def name(self) -> str: ...

    @property
    def help(self) -> str:
        """How ``-T filter``'s help describes it."""
        ...

    def apply(self, memory: Sequence[MemoryEntry], flags: Mapping[str, int]) -> tuple[MemoryEntry, ...]:
        """The view: ``memory`` with ``flags`` applied."""
        ...


@dataclass(frozen=True)
class WithheldEntry(MemoryEntry):
    """An entry a filter mode keeps in the view without its claim: it names the cell
    (and the audit step that flagged it) but makes no claim, so it cannot mislead as a
    stale one can; a step's record counts them (``unknown_in_view``). It never equals
    the entry it replaces."""

    flagged_at: int

    @classmethod
    def of(cls, entry: MemoryEntry, step: int) -> Self:
        return cls(**{f.name: getattr(entry, f.name) for f in fields(entry)}, flagged_at=step)


@dataclass(frozen=True)
class Delete:
    """The paper's filter: a flagged entry leaves the view."""

    name: str = "delete"
    help: str = "delete removes a flagged entry (the paper)"

    def apply(self, memory: Sequence[MemoryEntry], flags: Mapping[str, int]) -> tuple[MemoryEntry, ...]:
        return tuple(e for e in memory if e.id not in flags)


DELETE = Delete()
