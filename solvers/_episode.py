"""An episode as played and logged: each step's record and the finished episode.

Both navigators (the per-step prompt navigator of ``_navigation`` and the tool-using
one of ``_tools``) step the world through :func:`take_step` and end an episode with
:meth:`Episode.finished` or :meth:`Episode.interrupted`, so their records count stale
and UNKNOWN entries alike and the scorer reads either unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Self

from spatialstale.env import Action, Cell, DynamicFrozenLakeEnv, Grid, MemoryEntry, Pos, cell_at

from ._audit import AuditResult
from ._strategies import UnknownEntry

OUTCOMES = ("success", "death", "timeout", "limit")
"""How an episode ends: on the goal, in a hole, out of steps, or cut short by a sample
limit (Inspect's token, message, time ... limits)."""

ANSWER_EXCERPT = 300
"""Characters of a navigation answer kept in its step record."""


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

    @classmethod
    def finished(
        cls,
        env: DynamicFrozenLakeEnv,
        audits: Sequence[AuditResult],
        records: Sequence[StepRecord],
        view: Sequence[MemoryEntry] | None,
        reward: float,
        view_radius: int | None,
        **extra: Any,
    ) -> Self:
        """The episode ``env`` ended: death on a hole, success on the goal, or a
        timeout; ``view`` is the memory view of its last step."""
        instance = env.instance
        died = cell_at(env.grid, env.agent) is Cell.HOLE
        reached = env.agent == instance.goal
        outcome = "death" if died else "success" if reached else "timeout"
        death_entry = instance.entry_at(env.agent) if died else None
        return cls(
            outcome=outcome,
            steps=env.steps,
            reward=reward,
            records=tuple(records),
            audits=tuple(audits),
            died_at=env.agent if died else None,
            stale_in_view_at_death=records[-1].stale_in_view if died else (),
            died_on_stale=bool(
                died and death_entry is not None and death_entry.claim == "SAFE" and death_entry in (view or ())
            ),
            final_grid=env.grid,
            view_radius=view_radius,
            **extra,
        )

    @classmethod
    def interrupted(
        cls,
        env: DynamicFrozenLakeEnv,
        audits: Sequence[AuditResult],
        records: Sequence[StepRecord],
        limit: str,
        view_radius: int | None,
        **extra: Any,
    ) -> Self:
        """The episode a sample limit ended after the steps in ``records``: outcome ``limit``."""
        return cls(
            outcome="limit",
            steps=env.steps,
            reward=0.0,
            records=tuple(records),
            audits=tuple(audits),
            final_grid=env.grid,
            limit=limit,
            view_radius=view_radius,
            **extra,
        )


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
