"""The detection solver (SPEC §6): one audit per detection window."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeVar, cast

import anyio
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import LimitExceededError, span

from spatialstale.env import Grid, Instance

from ._audit import AuditResult, AuditTally, batched_audit
from ._heap import freeze_startup_heap
from ._navigation import auditor_model, instance_of, limit_reason
from ._prompts import DEFAULT_AUDIT_PROMPT

DETECTION_STORE_KEY = "spatialstale:detection"


def _window(result: AuditResult, grid: Grid, instance: Instance) -> dict[str, object]:
    return {**result.to_dict(), "grid": list(grid), "truth": sorted(instance.stale_ids(grid))}


class WindowTally(Protocol):
    """What a window's reading so far needs to say: the step of its grid."""

    step: int


Tally = TypeVar("Tally", bound=WindowTally)


async def read_windows(
    state: TaskState,
    plan: Sequence[tuple[int, Grid]],
    *,
    title: str,
    start: Callable[[int, Grid], Tally],
    read: Callable[[Grid, Tally], Awaitable[object]],
    record: Callable[[Tally, Grid, bool], dict[str, object]],
    store_key: str,
    summary: Callable[[list[dict[str, object]]], str],
) -> None:
    """Read the grid of every window of ``plan`` in turn and store the windows.

    Each window gets a span (``"{title} k (after step t)"``) and a fresh tally
    (``start``), which ``read`` fills; ``record`` turns a tally into the window as
    logged (False: ended early). The windows and the sample limit that ended them, if
    any, go to the store under ``store_key``; ``summary`` says what they hold as the
    sample's completion.
    """
    windows: list[dict[str, object]] = []
    tally: Tally | None = None
    try:
        for number, (step, grid) in enumerate(plan, start=1):
            tally = start(step, grid)
            async with span(f"{title} {number} (after step {step})", type="window"):
                await read(grid, tally)
            windows.append(record(tally, grid, True))
    except (LimitExceededError, anyio.get_cancelled_exc_class()) as ex:
        # A sample limit ends the reading early: the sample is still scored, with the
        # batches answered so far and everything else unanswered.
        for step, grid in plan[len(windows) :]:
            started = tally if tally is not None and tally.step == step else start(step, grid)
            windows.append(record(started, grid, False))
        _finish(state, store_key, windows, summary, limit_reason(ex))
        raise
    _finish(state, store_key, windows, summary)


def _finish(
    state: TaskState,
    store_key: str,
    windows: list[dict[str, object]],
    summary: Callable[[list[dict[str, object]]], str],
    limit: str | None = None,
) -> None:
    state.store.set(store_key, {"windows": windows, "limit": limit})
    state.output.completion = summary(windows) + (f"; ended early by a sample limit ({limit})" if limit else "")


def _flagged(windows: list[dict[str, object]]) -> str:
    flagged = sum(len(cast(list[str], w["flagged"])) for w in windows)
    return f"{len(windows)} detection window(s), {flagged} entries flagged"


def detection_windows(instance: Instance) -> list[tuple[int, Grid]]:
    """(step, grid) of each audit: the episode start for L1/L2 (and ``none``), and
    for L3 the grid right after each scheduled event.

    Detection has no navigating agent, so no L3 flip is skipped and every scheduled
    event is realized; the observation shows the agent at S, which never flips.
    """
    if instance.regime == "L3":
        return [(event.step, instance.grid_after(event.step)) for event in instance.schedule]
    return [(0, instance.initial_grid)]


@solver
def detect(
    *,
    modality: str = "text",
    batch_size: int = 10,
    audit_prompt: str = DEFAULT_AUDIT_PROMPT,
    audit_model_role: str = "auditor",
    structured: bool = False,
    observation: str = "full",
) -> Solver:
    """Audit the sample's memory store in every detection window.

    Args:
        modality: ``text``, ``vision`` or ``both``: how the current grid is shown.
        batch_size: entries per audit call (⌈n²/B⌉ calls per audit).
        audit_prompt: system prompt of every audit batch.
        audit_model_role: model role of the audits; the task's model when unbound.
        structured: send a response schema with every audit call (structured output).
        observation: ``full`` lists every cell of the grid, ``holes`` only S, G and
            the holes (the same grid in less text; for large grids).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        freeze_startup_heap()
        instance = instance_of(state)
        auditor = auditor_model(audit_model_role)

        async def audit(grid: Grid, tally: AuditTally) -> None:
            await batched_audit(
                auditor,
                instance.memory,
                grid,
                instance.start,
                modality=modality,
                batch_size=batch_size,
                prompt=audit_prompt,
                step=tally.step,
                structured=structured,
                tally=tally,
                observation=observation,
            )

        await read_windows(
            state,
            detection_windows(instance),
            title="detection window",
            start=lambda step, grid: AuditTally(step, instance.memory),
            read=audit,
            record=lambda tally, grid, complete: _window(tally.result(complete=complete), grid, instance),
            store_key=DETECTION_STORE_KEY,
            summary=_flagged,
        )
        return state

    return solve
