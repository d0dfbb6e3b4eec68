"""The detection solver (SPEC §6): one audit per detection window."""

from __future__ import annotations

from typing import cast

import anyio
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import LimitExceededError, span

from spatialstale.env import Grid, Instance

from ._audit import AuditResult, AuditTally, batched_audit
from ._navigation import auditor_model, instance_of, limit_reason
from ._prompts import DEFAULT_AUDIT_PROMPT

DETECTION_STORE_KEY = "spatialstale:detection"


def _window(result: AuditResult, grid: Grid, instance: Instance) -> dict[str, object]:
    return {**result.to_dict(), "grid": list(grid), "truth": sorted(instance.stale_ids(grid))}


def _finish(state: TaskState, windows: list[dict[str, object]], limit: str | None = None) -> None:
    state.store.set(DETECTION_STORE_KEY, {"windows": windows, "limit": limit})
    flagged = sum(len(cast(list[str], w["flagged"])) for w in windows)
    state.output.completion = f"{len(windows)} detection window(s), {flagged} entries flagged" + (
        f"; ended early by a sample limit ({limit})" if limit else ""
    )


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
        instance = instance_of(state)
        auditor = auditor_model(audit_model_role)
        plan = detection_windows(instance)
        windows: list[dict[str, object]] = []
        tally: AuditTally | None = None
        try:
            for number, (step, grid) in enumerate(plan, start=1):
                tally = AuditTally(step, instance.memory)
                async with span(f"detection window {number} (after step {step})", type="window"):
                    await batched_audit(
                        auditor,
                        instance.memory,
                        grid,
                        instance.start,
                        modality=modality,
                        batch_size=batch_size,
                        prompt=audit_prompt,
                        step=step,
                        structured=structured,
                        tally=tally,
                        observation=observation,
                    )
                windows.append(_window(tally.result(), grid, instance))
        except (LimitExceededError, anyio.get_cancelled_exc_class()) as ex:
            # A sample limit ends the audits early: the sample is still scored, with the
            # batches answered so far and every other entry unanswered.
            for step, grid in plan[len(windows) :]:
                started = tally is not None and tally.step == step
                result = (tally if started and tally else AuditTally(step, instance.memory)).result(complete=False)
                windows.append(_window(result, grid, instance))
            _finish(state, windows, limit=limit_reason(ex))
            raise
        _finish(state, windows)
        return state

    return solve
