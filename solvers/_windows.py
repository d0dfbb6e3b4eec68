"""The detection windows of an instance, and the loop that reads every one of them.

The detection task audits the memory against the grid of each window, and the
perception probe reads the same grids; both go through :func:`window_solve`, so a
sample limit ends either the same way: the windows read so far are kept, the rest
recorded as unread, and the sample is still scored.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from inspect_ai.model import Model
from inspect_ai.solver import Generate, Solver, TaskState
from inspect_ai.util import span

from spatialstale.env import Grid, Instance, regime_of

from ._sample import auditor_model, instance_of, limit_errors, limit_reason


def detection_windows(instance: Instance) -> list[tuple[int, Grid]]:
    """(step, grid) of each audit, at the steps the instance's regime names
    (``ChangeRegime.windows``): the episode start for L1, L2, MA (and ``none``), and
    for L3 the grid right after each scheduled event.

    Detection has no navigating agent, so no scheduled flip is skipped and every event
    is realized; the observation shows the agent at S, which never flips.
    """
    return [(step, instance.grid_after(step)) for step in regime_of(instance.regime).windows(instance.drawn)]


class WindowTally(Protocol):
    """What a window's reading so far needs to say: the step of its grid."""

    step: int


Tally = TypeVar("Tally", bound=WindowTally)
Window = TypeVar("Window")


def window_solve(
    *,
    role: str,
    title: str,
    start: Callable[[Instance, int, Grid], Tally],
    read: Callable[[Model, Instance, Grid, Tally], Awaitable[object]],
    record: Callable[[Instance, Grid, Tally, bool], Window],
    keep: Callable[[TaskState, list[Window], str | None], None],
    summary: Callable[[list[Window]], str],
) -> Solver:
    """A solver body that reads the grid of every detection window in turn.

    Each window gets a span (``"{title} k (after step t)"``) and a fresh tally
    (``start``), which ``read`` fills with the model bound to ``role``; ``record``
    turns a tally into the window's record (False: ended early). ``keep`` puts the
    windows and the sample limit that ended them, if any, in the sample's store;
    ``summary`` says what they hold as the sample's completion.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        instance = instance_of(state)
        model = auditor_model(role)
        plan = detection_windows(instance)
        windows: list[Window] = []
        tally: Tally | None = None
        try:
            for number, (step, grid) in enumerate(plan, start=1):
                tally = start(instance, step, grid)
                async with span(f"{title} {number} (after step {step})", type="window"):
                    await read(model, instance, grid, tally)
                windows.append(record(instance, grid, tally, True))
        except limit_errors() as ex:
            # A sample limit ends the reading early: the sample is still scored, with the
            # batches answered so far and everything else unanswered.
            for step, grid in plan[len(windows) :]:
                started = tally if tally is not None and tally.step == step else start(instance, step, grid)
                windows.append(record(instance, grid, started, False))
            _finish(state, windows, keep, summary, limit_reason(ex))
            raise
        _finish(state, windows, keep, summary)
        return state

    return solve


def _finish(
    state: TaskState,
    windows: list[Window],
    keep: Callable[[TaskState, list[Window], str | None], None],
    summary: Callable[[list[Window]], str],
    limit: str | None = None,
) -> None:
    keep(state, windows, limit)
    state.output.completion = summary(windows) + (f"; ended early by a sample limit ({limit})" if limit else "")
