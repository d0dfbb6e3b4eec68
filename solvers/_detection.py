"""The detection solver (SPEC §6): one audit per detection window."""

from __future__ import annotations

from inspect_ai.model import get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import span

from spatialstale.env import Grid, Instance

from ._audit import batched_audit
from ._navigation import instance_of
from ._prompts import DEFAULT_AUDIT_PROMPT

DETECTION_STORE_KEY = "spatialstale:detection"


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
) -> Solver:
    """Audit the sample's memory store in every detection window.

    Args:
        modality: ``text``, ``vision`` or ``both``: how the current grid is shown.
        batch_size: entries per audit call (⌈n²/B⌉ calls per audit).
        audit_prompt: system prompt of every audit batch.
        audit_model_role: model role of the audits; the task's model when unbound.
        structured: send a response schema with every audit call (structured output).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        instance = instance_of(state)
        auditor = get_model(role=audit_model_role)
        windows: list[dict[str, object]] = []
        flagged = 0
        for number, (step, grid) in enumerate(detection_windows(instance), start=1):
            async with span(f"detection window {number} (after step {step})", type="window"):
                result = await batched_audit(
                    auditor,
                    instance.memory,
                    grid,
                    instance.start,
                    modality=modality,
                    batch_size=batch_size,
                    prompt=audit_prompt,
                    step=step,
                    structured=structured,
                )
            windows.append({**result.to_dict(), "grid": list(grid), "truth": sorted(instance.stale_ids(grid))})
            flagged += len(result.flagged)
        state.store.set(DETECTION_STORE_KEY, windows)
        state.output.completion = f"{len(windows)} detection window(s), {flagged} entries flagged"
        return state

    return solve
