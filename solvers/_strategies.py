"""Memory strategies: what each navigator is shown of its memory, step by step.

A strategy is a small object the navigation loop asks for the memory view before
every step, ``await strategy.view(step, grid, agent)``; it is not a branch inside
the loop. ``STRATEGIES`` maps each name to its class.

The filtering strategies (SelfVerify, OMCD, Oracle) apply their flags in one of
``FILTERS``: ``delete`` (the paper) drops a flagged entry from the view; ``unknown``
keeps it in place as an :class:`UnknownEntry`, which lists the cell as unknown
instead of repeating the flagged claim.

Under fog (``view_radius``) the audits of SelfVerify and OMCD are shown the grid as
the agent sees it from where it stands, so an auditor can only check the cells in
view (and keeps the others, as a careful one must). Oracle still uses the truth: it
is the oracle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import ClassVar, Protocol

from inspect_ai.model import Model

from spatialstale.env import Grid, Instance, MemoryEntry, Pos, fog

from ._audit import AuditResult, Truth, batched_audit, selfverify_audit
from ._prompts import Sight


@dataclass(frozen=True)
class StrategyContext:
    """What a strategy may use: the instance, the auditor model and audit settings."""

    instance: Instance
    auditor: Model
    sight: Sight
    """How an audit shows the grid (modality and listing)."""
    batch_size: int
    audit_prompt: str
    selfverify_prompt: str
    structured: bool
    filter_mode: str
    """How flags shape the view: one of ``FILTERS``."""
    view_radius: int | None
    """What an audit sees: the Chebyshev square of this radius around the agent
    (``spatialstale.env.fog``); None shows the whole grid (the paper)."""

    def seen(self, grid: Grid, agent: Pos) -> Grid:
        """``grid`` as an audit made at ``agent`` sees it."""
        return fog(grid, agent, self.view_radius)

    async def audit(self, entries: Sequence[MemoryEntry], step: int, grid: Grid, agent: Pos) -> AuditResult:
        """The batched audit of ``entries`` (OMCD's) against ``grid`` as seen from
        ``agent``: the auditor role, the batch size, the audit prompt, structured
        output and the answer reading of the task's settings. Its transcript table
        shows the truth against the live grid beside each verdict."""
        return await batched_audit(
            self.auditor,
            entries,
            self.seen(grid, agent),
            agent,
            sight=self.sight,
            batch_size=self.batch_size,
            prompt=self.audit_prompt,
            step=step,
            structured=self.structured,
            truth=Truth.of(self.instance, grid),
        )

    async def selfverify(self, entries: Sequence[MemoryEntry], grid: Grid, agent: Pos) -> AuditResult:
        """SelfVerify's single check of ``entries`` against ``grid`` as seen from ``agent``."""
        return await selfverify_audit(
            self.auditor,
            entries,
            self.seen(grid, agent),
            agent,
            sight=self.sight,
            prompt=self.selfverify_prompt,
            structured=self.structured,
        )


FILTERS = ("delete", "unknown")
"""How a filtering strategy applies its flags: ``delete`` removes a flagged entry
from the view (the paper); ``unknown`` keeps it, marked as unknown."""


@dataclass(frozen=True)
class UnknownEntry(MemoryEntry):
    """A flagged entry kept in the view under ``filter=unknown``.

    Its prompt line names the cell and the audit step that flagged it but not the
    flagged claim, so the navigator knows memory holds nothing it can trust there.
    It never equals the entry it replaces.
    """

    flagged_at: int

    @property
    def line(self) -> str:
        return f"[{self.id}] UNKNOWN (flagged stale at step {self.flagged_at}) at ({self.row},{self.col})"

    @classmethod
    def of(cls, entry: MemoryEntry, step: int) -> UnknownEntry:
        return cls(**{f.name: getattr(entry, f.name) for f in fields(entry)}, flagged_at=step)


class MemoryStrategy(Protocol):
    name: ClassVar[str]
    audits: list[AuditResult]

    async def view(self, step: int, grid: Grid, agent: Pos) -> tuple[MemoryEntry, ...] | None:
        """The memory shown before action ``step + 1``; None shows no memory section."""
        ...


class _Strategy:
    name: ClassVar[str]
    flags: ClassVar[bool] = True
    """Whether the strategy flags entries (so a filter mode changes what it shows)."""

    async def view(self, step: int, grid: Grid, agent: Pos) -> tuple[MemoryEntry, ...] | None:
        raise NotImplementedError

    def __init__(self, context: StrategyContext) -> None:
        self.context = context
        self.audits: list[AuditResult] = []

    @property
    def memory(self) -> tuple[MemoryEntry, ...]:
        return self.context.instance.memory

    def filtered(self, audit: AuditResult) -> tuple[MemoryEntry, ...]:
        """The store with ``audit``'s flags applied in the context's filter mode."""
        if self.context.filter_mode == "unknown":
            return tuple(UnknownEntry.of(e, audit.step) if e.id in audit.flagged else e for e in self.memory)
        return tuple(e for e in self.memory if e.id not in audit.flagged)


class NoMemory(_Strategy):
    """The memoryless control: the prompt holds no memory at all (any filter mode)."""

    name = "nomemory"
    flags = False

    async def view(self, step: int, grid: Grid, agent: Pos) -> tuple[MemoryEntry, ...] | None:
        return None


class NoFilter(_Strategy):
    """All n² original entries, unchanged, even where they contradict the grid.

    It flags nothing, so the filter mode changes nothing for it.
    """

    name = "nofilter"
    flags = False

    async def view(self, step: int, grid: Grid, agent: Pos) -> tuple[MemoryEntry, ...] | None:
        return self.memory


class SelfVerify(_Strategy):
    """One pre-navigation call with the whole store; never re-audited."""

    name = "selfverify"

    async def view(self, step: int, grid: Grid, agent: Pos) -> tuple[MemoryEntry, ...] | None:
        if not self.audits:
            self.audits.append(await self.context.selfverify(self.memory, grid, agent))
        return self.filtered(self.audits[-1])


class OMCD(_Strategy):
    """The batched audit before navigation, and again after every realized change.

    The grid of the latest audit is kept; at a decision point where the live grid
    differs from it (under L3, the first step after a realized event) the whole store
    is audited again and the view is rebuilt from these latest judgments. Under fog
    the trigger is still the live grid (the protocol's schedule), while the audit is
    shown only what is in view from where the agent stands.
    """

    name = "omcd"

    def __init__(self, context: StrategyContext) -> None:
        super().__init__(context)
        self.audited_grid: Grid | None = None

    async def judge(self, step: int, grid: Grid, agent: Pos) -> AuditResult:
        return await self.context.audit(self.memory, step, grid, agent)

    async def view(self, step: int, grid: Grid, agent: Pos) -> tuple[MemoryEntry, ...] | None:
        if grid != self.audited_grid:
            self.audits.append(await self.judge(step, grid, agent))
            self.audited_grid = grid
        return self.filtered(self.audits[-1])


class Oracle(OMCD):
    """OMCD's filter fed the ground-truth stale labels; it makes no model call.

    Fog does not reach it: it knows the truth of every cell, in view or not.
    """

    name = "oracle"

    async def judge(self, step: int, grid: Grid, agent: Pos) -> AuditResult:
        return AuditResult(step=step, flagged=self.context.instance.stale_ids(grid), calls=0)


STRATEGIES: dict[str, type[_Strategy]] = {s.name: s for s in (NoMemory, NoFilter, SelfVerify, OMCD, Oracle)}
"""Every strategy by name, in the paper's order."""

FILTERING = tuple(name for name, strategy in STRATEGIES.items() if strategy.flags)
"""The strategies whose view a filter mode changes: NoMemory and NoFilter flag nothing."""


def make_strategy(name: str, context: StrategyContext) -> MemoryStrategy:
    if name not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}; got {name!r}")
    return STRATEGIES[name](context)
