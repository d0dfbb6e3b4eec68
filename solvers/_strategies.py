"""Memory strategies: what each navigator is shown of its memory, step by step.

The navigation loop asks a strategy for the memory view before every step, ``await
strategy.view(step, grid, agent)``. ``STRATEGIES`` maps each built-in name to its class:
the paper's five (``DEFAULT_STRATEGIES``) and LocalVerify, opt-in. A plug-in is any class
that implements :class:`MemoryStrategy`, named as ``module:Class`` or by an entry point;
:func:`make_strategy` builds either kind for an episode.

The filtering strategies apply their flags in the task's filter mode (``FILTER_MODES``,
the memory seam). SelfVerify's and OMCD's audits see the grid as the agent sees it from
where it stands (``Sight.seen``: under fog an auditor keeps the cells out of view);
Oracle uses the truth.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from inspect_ai.model import Model

from spatialstale.env import Grid, Instance, MemoryEntry, Pos
from spatialstale.protocol import AuditResult, Sight, filter_named, plugin_strategy

from ._audit import AuditPlan, SelfVerifyPlan, Truth


@dataclass(frozen=True)
class StrategyContext:
    """What a strategy may use: the instance, the auditor model and audit settings.

    Every strategy, built-in or plug-in, is constructed with the sample's context.
    ``instance.memory`` is the store (one entry a cell), ``instance.stale_ids(grid)``
    the truth (for an oracle only). A strategy audits through :meth:`audit` (batched,
    any subset of the store) and :meth:`selfverify` (one call), never by calling a
    model itself, so its calls share the task's auditor role, batching, prompts,
    structured output, answer reading and limits, and its transcript tables.
    """

    instance: Instance
    auditor: Model
    sight: Sight
    """How an audit shows the grid (modality and listing)."""
    batch_size: int
    audit_prompt: str
    selfverify_prompt: str
    structured: bool
    filter_mode: str
    """How flags shape the view: the name of one of ``FILTER_MODES``."""
    verify_radius: int = 1
    """LocalVerify's reach: it audits the entries within this Chebyshev distance of the agent."""

    def seen(self, grid: Grid, agent: Pos) -> Grid:
        """``grid`` as an audit made at ``agent`` sees it."""
        return self.sight.seen(grid, agent)

    def audit_plan(self, entries: Sequence[MemoryEntry], grid: Grid, agent: Pos) -> AuditPlan:
        """The calls :meth:`audit` makes."""
        return AuditPlan(
            entries,
            self.seen(grid, agent),
            agent,
            sight=self.sight,
            batch_size=self.batch_size,
            prompt=self.audit_prompt,
            truth=Truth.of(self.instance, grid),
        )

    def selfverify_plan(self, entries: Sequence[MemoryEntry], grid: Grid, agent: Pos) -> SelfVerifyPlan:
        """The call :meth:`selfverify` makes."""
        return SelfVerifyPlan(
            entries, self.seen(grid, agent), agent, self.sight, self.selfverify_prompt, Truth.of(self.instance, grid)
        )

    async def audit(self, entries: Sequence[MemoryEntry], step: int, grid: Grid, agent: Pos) -> AuditResult:
        """The batched audit of ``entries`` (OMCD's) against ``grid`` as seen from
        ``agent``: the auditor role, the batch size, the audit prompt, structured
        output and the answer reading of the task's settings. Its transcript table
        shows the truth against the live grid beside each verdict."""
        return await self.audit_plan(entries, grid, agent).ask(self.auditor, step=step, structured=self.structured)

    async def selfverify(self, entries: Sequence[MemoryEntry], grid: Grid, agent: Pos) -> AuditResult:
        """SelfVerify's single check of ``entries`` against ``grid`` as seen from ``agent``."""
        return await self.selfverify_plan(entries, grid, agent).ask(self.auditor, structured=self.structured)


Planned = AuditPlan | SelfVerifyPlan
"""An audit a strategy may make: batched, or SelfVerify's one call."""


@dataclass(frozen=True)
class PlanningContext(StrategyContext):
    """The dry run's stand-in auditor: each audit a strategy asks for is recorded as the
    plan it would ask (:meth:`~StrategyContext.audit_plan`, as the real audit's) and
    flags nothing, so the view stays the whole store."""

    planned: list[Planned] = field(default_factory=list)

    async def audit(self, entries: Sequence[MemoryEntry], step: int, grid: Grid, agent: Pos) -> AuditResult:
        self.planned.append(self.audit_plan(entries, grid, agent))
        return AuditResult(step=step, flagged=frozenset(), calls=0)

    async def selfverify(self, entries: Sequence[MemoryEntry], grid: Grid, agent: Pos) -> AuditResult:
        self.planned.append(self.selfverify_plan(entries, grid, agent))
        return AuditResult(step=0, flagged=frozenset(), calls=0)


class MemoryStrategy(Protocol):
    """What the navigation loop asks of a memory strategy, built-in or plug-in.

    A strategy class is constructed with the sample's :class:`StrategyContext`, once an
    episode, and audits only through it (:meth:`StrategyContext.audit`,
    :meth:`StrategyContext.selfverify`: the task's auditor role, batching, prompts and
    limits). It has:

    - ``name``: the strategy's name in sample ids (``L2-<name>-s4810``), metrics and the
      report; lower-case letters, digits and underscores, not a built-in's;
    - ``audits``: the :class:`~spatialstale.protocol.AuditResult` of every audit it
      made, in order;
    - ``async def view(self, step, grid, agent)``: the memory shown before action
      ``step + 1``, given the live ``grid`` and the agent's position: a tuple of
      entries of ``context.instance.memory`` (or a ``WithheldEntry`` in place of one),
      or None to show no memory section.
    """

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
        self._shown: tuple[AuditResult | None, tuple[MemoryEntry, ...]] = (None, ())

    def plan(self, max_steps: int) -> tuple[tuple[MemoryEntry, ...] | None, list[Planned]]:
        """The most an episode of ``max_steps`` steps asks with the agent kept at S, for
        the dry run: the largest view it shows (the whole store, or None for no memory
        section) and every audit it makes: :meth:`view` itself, step by step on the
        scheduled grids, its context a stand-in auditor (:class:`PlanningContext`)."""
        instance, context = self.context.instance, self.context
        assert isinstance(context, PlanningContext), "a plan is made on a PlanningContext"
        grid, changes, shown = instance.initial_grid, {e.step for e in instance.schedule}, False
        for step in range(max_steps):
            grid = instance.grid_after(step) if step in changes else grid
            coroutine = self.view(step, grid, instance.start)
            try:
                coroutine.send(None)  # the stand-in never waits: the view returns at once
            except StopIteration as done:
                shown = shown or done.value is not None
                continue
            coroutine.close()
            raise RuntimeError(f"{self.name}: a planned view waited on something other than its context")
        return (self.memory if shown else None), context.planned

    @property
    def memory(self) -> tuple[MemoryEntry, ...]:
        return self.context.instance.memory

    def filtered(self, audit: AuditResult) -> tuple[MemoryEntry, ...]:
        """The store with ``audit``'s flags applied in the context's filter mode (built
        once an audit: a view is asked for every step)."""
        if self._shown[0] is not audit:
            self._shown = (audit, self.flagged_view({entry: audit.step for entry in audit.flagged}))
        return self._shown[1]

    def flagged_view(self, flags: Mapping[str, int]) -> tuple[MemoryEntry, ...]:
        """The store with ``flags`` (entry id -> step of the audit that flagged it)
        applied in the context's filter mode."""
        return filter_named(self.context.filter_mode).apply(self.memory, flags)


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


class LocalVerify(_Strategy):
    """Audits only what is near: before each step, the entries within Chebyshev distance
    ``verify_radius`` of the agent that it has not checked since the grid last changed.

    Each audit is the batched audit (:meth:`StrategyContext.audit`) of those entries
    alone, against the grid as seen from where the agent stands. The flags found are
    kept: an entry stays flagged (or kept) until it is checked again, which happens
    once the grid has changed and the agent comes near it again; the view applies them
    in the task's filter mode, as OMCD's. It makes no call on a step with nothing new in
    range. Not one of the paper's strategies: opt in with ``-T strategies=localverify``.
    """

    name = "localverify"

    def __init__(self, context: StrategyContext) -> None:
        super().__init__(context)
        self.found: dict[str, int] = {}
        """The flags kept: entry id -> the step of the audit that flagged it."""
        self.checked: set[str] = set()
        """Entries audited against the current grid."""
        self.checked_grid: Grid | None = None

    def in_reach(self, agent: Pos) -> list[MemoryEntry]:
        """The entries within ``verify_radius`` of ``agent``, in store order."""
        r = self.context.verify_radius
        # an entry about no cell (an extension's) is near no cell
        return [e for e in self.memory if e.is_cell and max(abs(e.row - agent[0]), abs(e.col - agent[1])) <= r]

    def plan(self, max_steps: int) -> tuple[tuple[MemoryEntry, ...] | None, list[Planned]]:
        # what it audits follows the agent's path, which a plan does not know: at most a
        # full square of (2r+1)² entries every step (the store's first entries stand for it)
        instance, r = self.context.instance, self.context.verify_radius
        square = self.memory[: (2 * r + 1) ** 2]
        return self.memory, [self.context.audit_plan(square, instance.initial_grid, instance.start)] * max_steps

    async def view(self, step: int, grid: Grid, agent: Pos) -> tuple[MemoryEntry, ...] | None:
        if grid != self.checked_grid:
            self.checked, self.checked_grid = set(), grid
        due = [e for e in self.in_reach(agent) if e.id not in self.checked]
        if due:
            audit = await self.context.audit(due, step, grid, agent)
            self.audits.append(audit)
            for entry in due:
                if entry.id in audit.flagged:
                    self.found[entry.id] = step
                else:
                    self.found.pop(entry.id, None)
            self.checked.update(e.id for e in due)
        return self.flagged_view(self.found)


STRATEGIES: dict[str, type[_Strategy]] = {
    s.name: s for s in (NoMemory, NoFilter, SelfVerify, OMCD, Oracle, LocalVerify)
}
"""Every built-in strategy by name (``BUILTIN_STRATEGIES``, the names the settings
read): the paper's five in its order, then LocalVerify."""

FILTERING = tuple(name for name, strategy in STRATEGIES.items() if strategy.flags)
"""The strategies whose view a filter mode changes: NoMemory and NoFilter flag nothing."""


def make_strategy(name: str, context: StrategyContext) -> MemoryStrategy:
    """A new strategy of ``name`` (built-in or plug-in) for one episode."""
    cls = STRATEGIES[name] if name in STRATEGIES else plugin_strategy(name)
    strategy: MemoryStrategy = cls(context)
    return strategy
