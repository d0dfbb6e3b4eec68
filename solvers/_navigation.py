"""The per-step navigator (SPEC §7) and the navigation solver."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import anyio
from inspect_ai.log import transcript
from inspect_ai.model import GenerateConfig, Model, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import LimitExceededError, span

from spatialstale.env import (
    Action,
    Cell,
    DynamicFrozenLakeEnv,
    Grid,
    Instance,
    MemoryEntry,
    Pos,
    cell_at,
    entry_id,
    fog,
    greedy_action,
    make_instance,
    validate_view_radius,
)

from ._answers import ActionParse, read_action
from ._audit import AuditResult
from ._heap import freeze_startup_heap
from ._prompts import (
    DEFAULT_AUDIT_PROMPT,
    DEFAULT_NAVIGATE_PROMPT,
    DEFAULT_SELFVERIFY_PROMPT,
    NAVIGATE_SCHEMA,
    answer_config,
    navigate_messages,
)
from ._strategies import DEFAULT_FILTER, MemoryStrategy, StrategyContext, UnknownEntry, make_strategy

EPISODE_STORE_KEY = "spatialstale:episode"
ANSWER_EXCERPT = 300


@dataclass(frozen=True)
class StepRecord:
    """One action: where the agent stood, what it saw of memory and what it did."""

    step: int
    position: Pos
    action: str
    parsed: bool
    answer: str
    reading: str
    view_size: int | None
    stale_in_view: tuple[str, ...]
    new_position: Pos
    cell: str
    applied: tuple[Pos, ...] = ()
    skipped: tuple[Pos, ...] = ()
    unknown_in_view: int = 0
    """Entries the view lists as UNKNOWN (``filter=unknown``); not counted as stale."""

    def to_dict(self) -> dict[str, object]:
        return {
            "step": self.step,
            "position": list(self.position),
            "action": self.action,
            "parsed": self.parsed,
            "reading": self.reading,
            "answer": self.answer,
            "view_size": self.view_size,
            "stale_in_view": list(self.stale_in_view),
            "new_position": list(self.new_position),
            "cell": self.cell,
            "applied": [list(p) for p in self.applied],
            "skipped": [list(p) for p in self.skipped],
            "unknown_in_view": self.unknown_in_view,
        }


@dataclass(frozen=True)
class Episode:
    """A finished episode: the outcome, the trajectory and what memory was shown."""

    outcome: str
    steps: int
    reward: float
    records: tuple[StepRecord, ...]
    audits: tuple[AuditResult, ...]
    died_at: Pos | None = None
    stale_in_view_at_death: tuple[str, ...] = ()
    died_on_stale: bool = False
    final_grid: Grid = field(default=())
    limit: str | None = None
    view_radius: int | None = None
    """The fog radius the episode was played under; None is the full view (the paper)."""

    @property
    def fallbacks(self) -> int:
        return sum(not r.parsed for r in self.records)

    def readings(self, status: str) -> int:
        """Steps whose answer was read with ``status`` (read, ambiguous, unreadable)."""
        return sum(r.reading == status for r in self.records)

    @property
    def trajectory(self) -> list[Pos]:
        return [self.records[0].position, *(r.new_position for r in self.records)] if self.records else []

    def to_dict(self) -> dict[str, object]:
        return {
            "outcome": self.outcome,
            "steps": self.steps,
            "reward": self.reward,
            "fallbacks": self.fallbacks,
            "ambiguous": self.readings("ambiguous"),
            "unreadable": self.readings("unreadable"),
            "limit": self.limit,
            # named only under fog, so a full-view record reads as before the parameter
            **({"view_radius": self.view_radius} if self.view_radius is not None else {}),
            "trajectory": [list(p) for p in self.trajectory],
            "died_at": list(self.died_at) if self.died_at else None,
            "stale_in_view_at_death": list(self.stale_in_view_at_death),
            "died_on_stale": self.died_on_stale,
            "audits": [a.to_dict() for a in self.audits],
            "audit_calls": sum(a.calls for a in self.audits),
            "audit_unparseable": sum(a.unparseable for a in self.audits),
            "audit_unanswered": sum(len(a.unanswered) for a in self.audits),
            "audit_conflicting": sum(len(a.conflicting) for a in self.audits),
            "final_grid": list(self.final_grid),
            "records": [r.to_dict() for r in self.records],
        }


async def choose_action(
    navigator: Model,
    view: tuple[MemoryEntry, ...] | None,
    env: DynamicFrozenLakeEnv,
    *,
    modality: str,
    prompt: str,
    structured: bool = False,
    observation: str = "full",
    view_radius: int | None = None,
) -> tuple[Action, ActionParse, str]:
    """One navigator call. An answer without one readable action falls back to a greedy step.

    The navigator sees the grid within ``view_radius`` of the agent (all of it when None).
    """
    instance = env.instance
    messages = navigate_messages(
        view,
        fog(env.grid, env.agent, view_radius),
        env.agent,
        instance.goal,
        env.max_steps - env.steps,
        modality,
        prompt,
        instance.size,
        observation,
    )
    output = await navigator.generate(messages, config=answer_config(NAVIGATE_SCHEMA, structured, navigator))
    reading = read_action(output.completion)
    if reading.action is None:
        return greedy_action(env.agent, instance.goal), reading, output.completion
    return reading.action, reading, output.completion


def step_table(
    record: StepRecord,
    view_radius: int | None = None,
    *,
    how: str | None = None,
    recalled: Sequence[str] | None = None,
) -> str:
    """The info table of one step: where the agent stood, what its memory view held,
    what it did and where it got to, with the world's changes and the fog under it.

    Args:
        record: the step.
        view_radius: the fog's radius (None: the whole grid was seen).
        how: how the action was obtained (default: read from the answer, or the fallback).
        recalled: the cells the tool navigator recalled before the step (a column of
            its own; None leaves the column out).
    """
    view = "none" if record.view_size is None else str(record.view_size)
    if how is None:
        how = "read" if record.parsed else f"**fallback** (greedy; answer {record.reading})"
    head = ["step", "position", "action", "answer", "memory view", "stale in view"]
    cells = [str(record.step), str(record.position), record.action, how, view, ", ".join(record.stale_in_view) or "-"]
    if recalled is not None:
        head.append("recalled")
        cells.append(", ".join(recalled) or "-")
    head.append("now at")
    cells.append(f"{record.new_position} = {record.cell}")
    rows = [f"| {' | '.join(head)} |", "|" + "---|" * len(head), f"| {' | '.join(cells)} |"]
    if record.applied or record.skipped:
        rows.append("")
        rows.append(f"World changed after this step at {list(record.applied)}; skipped flips: {list(record.skipped)}")
    if record.unknown_in_view:
        rows.append("")
        rows.append(f"{record.unknown_in_view} entries of the view are marked UNKNOWN (flagged stale).")
    if view_radius is not None:
        rows.append("")
        rows.append(f"Fog: the navigator saw only the cells within {view_radius} of {record.position}.")
    return "\n".join(rows)


@dataclass(frozen=True)
class StepTaken:
    """What :func:`take_step` did: the step's record and what the world returned."""

    record: StepRecord
    reward: float
    terminated: bool
    truncated: bool


def take_step(
    env: DynamicFrozenLakeEnv,
    view: tuple[MemoryEntry, ...] | None,
    action: Action,
    *,
    parsed: bool,
    reading: str,
    answer: str,
) -> StepTaken:
    """Take ``action`` in the world and record it against the memory view it was chosen with.

    Both navigators (per-step prompts and tools) step through here, so their records
    count stale and UNKNOWN entries alike.
    """
    stale = env.instance.stale_ids(env.grid)
    # an entry marked UNKNOWN makes no claim, so it cannot mislead as a stale one can
    stale_in_view = tuple(e.id for e in view or () if e.id in stale and not isinstance(e, UnknownEntry))
    position = env.agent
    _, reward, terminated, truncated, info = env.step(int(action))
    record = StepRecord(
        step=env.steps,
        position=position,
        action=action.name,
        parsed=parsed,
        reading=reading,
        answer=answer[:ANSWER_EXCERPT],
        view_size=None if view is None else len(view),
        stale_in_view=stale_in_view,
        new_position=env.agent,
        cell=cell_at(env.grid, env.agent).value,
        applied=tuple((c["row"], c["col"]) for c in info["applied"]),
        skipped=tuple((c["row"], c["col"]) for c in info["skipped"]),
        unknown_in_view=sum(isinstance(e, UnknownEntry) for e in view or ()),
    )
    return StepTaken(record, float(reward), terminated, truncated)


async def run_episode(
    env: DynamicFrozenLakeEnv,
    strategy: MemoryStrategy,
    navigator: Model,
    *,
    modality: str,
    prompt: str,
    structured: bool = False,
    records: list[StepRecord] | None = None,
    observation: str = "full",
    view_radius: int | None = None,
) -> Episode:
    """Step the agent until it dies, reaches the goal or runs out of steps.

    Each step is appended to ``records`` (a new list when None) as it is taken, so a
    caller keeps the steps of an episode that a sample limit interrupts. Each step
    shows the grid within ``view_radius`` of the agent (None: the whole grid).
    """
    instance: Instance = env.instance
    env.reset()
    records = [] if records is None else records
    reward = 0.0
    terminated = truncated = False
    view: tuple[MemoryEntry, ...] | None = None
    while not (terminated or truncated):
        step = env.steps + 1
        async with span(f"step {step}", type="step"):
            view = await strategy.view(env.steps, env.grid, env.agent)
            action, reading, answer = await choose_action(
                navigator,
                view,
                env,
                modality=modality,
                prompt=prompt,
                structured=structured,
                observation=observation,
                view_radius=view_radius,
            )
            taken = take_step(
                env, view, action, parsed=reading.action is not None, reading=reading.status, answer=answer
            )
            reward, terminated, truncated = taken.reward, taken.terminated, taken.truncated
            records.append(taken.record)
            transcript().info(step_table(taken.record, view_radius), source="navigation")
    died = terminated and cell_at(env.grid, env.agent) is Cell.HOLE
    outcome = "death" if died else "success" if terminated else "timeout"
    death_entry = instance.entry(entry_id(env.agent, instance.size)) if died else None
    return Episode(
        outcome=outcome,
        steps=env.steps,
        reward=reward,
        records=tuple(records),
        audits=tuple(strategy.audits),
        died_at=env.agent if died else None,
        stale_in_view_at_death=records[-1].stale_in_view if died else (),
        died_on_stale=bool(
            died and death_entry is not None and death_entry.claim == "SAFE" and death_entry in (view or ())
        ),
        final_grid=env.grid,
        view_radius=view_radius,
    )


def _store(state: TaskState, episode: Episode) -> None:
    state.store.set(EPISODE_STORE_KEY, episode.to_dict())
    state.output.completion = f"{episode.outcome} after {episode.steps} steps" + (
        f" ({episode.limit})" if episode.limit else ""
    )


def limit_reason(ex: BaseException) -> str:
    """How a sample limit reads in the log: Inspect's message, or, for a time or
    working limit (which cancels the sample's task), a note saying so."""
    if isinstance(ex, LimitExceededError):
        return ex.message
    return "time or working limit (cancelled)"


def auditor_model(role: str) -> Model:
    """The model bound to ``role``, else the task's model. The run's ``--seed`` is
    passed on, since Inspect gives a role model the run's connection settings but not
    its seed; a seed in the role's own spec wins."""
    return get_model(role=role, config=GenerateConfig(seed=get_model().config.seed))


def instance_of(state: TaskState) -> Instance:
    """The sample's instance, rebuilt from its metadata (a pure function of it)."""
    meta = state.metadata
    return make_instance(int(meta["seed"]), str(meta["regime"]), int(meta["size"]))


@solver
def navigate(
    *,
    modality: str = "text",
    batch_size: int = 10,
    max_steps: int = 50,
    navigate_prompt: str = DEFAULT_NAVIGATE_PROMPT,
    audit_prompt: str = DEFAULT_AUDIT_PROMPT,
    selfverify_prompt: str = DEFAULT_SELFVERIFY_PROMPT,
    audit_model_role: str = "auditor",
    structured: bool = False,
    observation: str = "full",
    filter_mode: str = DEFAULT_FILTER,
    view_radius: int | None = None,
    agent: str = "prompt",
) -> Solver:
    """Play one episode with the sample's memory strategy (``metadata["strategy"]``).

    Args:
        modality: ``text``, ``vision`` or ``both``: how the live grid is shown.
        batch_size: entries per audit call (OMCD).
        max_steps: the step budget; the episode times out after it.
        navigate_prompt: system prompt of every navigation step.
        audit_prompt: system prompt of every audit batch (OMCD).
        selfverify_prompt: system prompt of SelfVerify's single check.
        audit_model_role: model role of the audits; the navigator's model when unbound.
        structured: send a response schema with every audit, SelfVerify and navigation call.
        observation: ``full`` lists every cell of the grid, ``holes`` only S, G and
            the holes (the same grid in less text; for large grids).
        filter_mode: how SelfVerify, OMCD and Oracle apply their flags: ``delete``
            removes a flagged entry from the view, ``unknown`` lists it as
            ``UNKNOWN (flagged stale at step t)``. NoMemory and NoFilter ignore it.
        view_radius: fog: every navigation step and every audit of the episode (OMCD,
            SelfVerify) sees only the cells within this Chebyshev distance of the
            agent, the rest as unknown (``?`` in the listing, grey in the image);
            Oracle still knows the truth. None (the default) shows the whole grid.
        agent: ``prompt`` (one call per step, the memory view in the prompt) or
            ``tools`` (one conversation per episode with ``move`` and ``recall``
            tools; see ``_tools``). ``navigate_prompt`` is the system prompt of either.
    """
    # imported here: the tool navigator builds on this module's Episode and StepRecord
    from ._tools import NAVIGATORS, interrupted_tool_episode, run_tool_episode

    if agent not in NAVIGATORS:
        raise ValueError(f"agent must be one of {', '.join(NAVIGATORS)}; got {agent!r}")
    view_radius = validate_view_radius(view_radius)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        freeze_startup_heap()
        instance = instance_of(state)
        context = StrategyContext(
            instance=instance,
            auditor=auditor_model(audit_model_role),
            modality=modality,
            batch_size=batch_size,
            audit_prompt=audit_prompt,
            selfverify_prompt=selfverify_prompt,
            structured=structured,
            observation=observation,
            filter_mode=filter_mode,
            view_radius=view_radius,
        )
        strategy = make_strategy(str(state.metadata["strategy"]), context)
        env = DynamicFrozenLakeEnv(instance=instance, max_steps=max_steps)
        records: list[StepRecord] = []
        try:
            if agent == "tools":
                # the tool navigator's conversation is the sample's messages: the
                # viewer's Messages tab shows it, and Inspect's message limit applies to
                # it as to any agent's (the per-step navigator has no conversation)
                state.messages = []
                episode: Episode = await run_tool_episode(
                    env,
                    strategy,
                    get_model(),
                    modality=modality,
                    prompt=navigate_prompt,
                    records=records,
                    observation=observation,
                    view_radius=view_radius,
                    messages=state.messages,
                )
            else:
                episode = await run_episode(
                    env,
                    strategy,
                    get_model(),
                    modality=modality,
                    prompt=navigate_prompt,
                    structured=structured,
                    records=records,
                    observation=observation,
                    view_radius=view_radius,
                )
        except (LimitExceededError, anyio.get_cancelled_exc_class()) as ex:
            # A sample limit ends the episode early: it is scored as outcome "limit".
            episode = Episode(
                outcome="limit",
                steps=env.steps,
                reward=0.0,
                records=tuple(records),
                audits=tuple(strategy.audits),
                final_grid=env.grid,
                limit=limit_reason(ex),
                view_radius=view_radius,
            )
            if agent == "tools":
                episode = interrupted_tool_episode(episode)
            _store(state, episode)
            raise
        _store(state, episode)
        return state

    return solve
