"""Stepping an episode: each step taken against the memory view, and its info table.

Every navigator (the per-step prompt navigator of ``_navigation`` and the loops of
``_navigators``) steps the world through :func:`take_step` and ends an episode with
``Episode.finished`` or ``Episode.interrupted`` (``spatialstale.protocol``), so their
records count stale and UNKNOWN entries alike and the scorer reads any unchanged. A
navigator that converses states its calls as a :class:`ConversationPlan`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from inspect_ai.model import ChatMessage, ChatMessageAssistant
from inspect_ai.tool import Tool

from spatialstale.env import Action, DynamicFrozenLakeEnv, MemoryEntry, cell_at
from spatialstale.protocol import WHOLE_GRID, StepRecord, View, WithheldEntry

ANSWER_EXCERPT = 300
"""Characters of a navigation answer kept in its step record."""


def step_table(
    record: StepRecord,
    view: View = WHOLE_GRID,
    *,
    how: str | None = None,
    recalled: Sequence[str] | None = None,
) -> str:
    """The info table of one step: where the agent stood, what its memory view held,
    what it did and where it got to, with the world's changes and the view's note under it.

    Args:
        record: the step.
        view: what of the grid the navigator saw (the observation seam); its step
            note goes under the table.
        how: how the action was obtained (default: read from the answer, or the fallback).
        recalled: the cells a navigator with a recall tool recalled before the step
            (a column of its own; None leaves the column out).
    """
    size = "none" if record.view_size is None else str(record.view_size)
    if how is None:
        how = "read" if record.parsed else f"**fallback** (greedy; answer {record.reading})"
    head = ["step", "position", "action", "answer", "memory view", "stale in view"]
    cells = [str(record.step), str(record.position), record.action, how, size, ", ".join(record.stale_in_view) or "-"]
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
    if (note := view.step_note(record.position)) is not None:
        rows.append("")
        rows.append(note)
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

    Every navigator steps through here, so their records count stale and UNKNOWN
    entries alike.
    """
    stale = env.instance.stale_ids(env.grid)
    # an entry marked UNKNOWN makes no claim, so it cannot mislead as a stale one can
    stale_in_view = tuple(e.id for e in view or () if e.id in stale and not isinstance(e, WithheldEntry))
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
        unknown_in_view=sum(isinstance(e, WithheldEntry) for e in view or ()),
    )
    return StepTaken(record, float(reward), terminated, truncated)


@dataclass(frozen=True)
class ConversationPlan:
    """The calls of one episode at most of a navigator that converses, as its loop makes
    them (``_navigators.NavigatorLoop.plan``), every step taken with the agent at S: a
    turn a step, each resending the conversation so far with ``tools``, so the prompt
    grows by one exchange (``answer`` and the ``result`` it gets back) a turn. The
    dry run measures the opening and one exchange, the same length at every step.

    Attributes:
        tools: the tools given with every call.
        opening: the conversation's first messages (the system prompt, the situation).
        answer: a turn's answer, as the conversation keeps it.
        result: what the answer gets back (the step's outcome and the next situation).
        turns: the turns of the episode.
    """

    tools: Sequence[Tool]
    opening: list[ChatMessage]
    answer: str
    result: ChatMessage
    turns: int

    @property
    def exchange(self) -> list[ChatMessage]:
        """What one turn adds to the conversation: the answer and its result."""
        return [ChatMessageAssistant(content=self.answer), self.result]
