"""The detection solver (SPEC §6): one audit per detection window."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai.model import Model
from inspect_ai.solver import Solver, TaskState, solver

from spatialstale.env import Grid, Instance, MemoryEntry, Pos
from spatialstale.protocol import (
    DEFAULT_AUDIT_PROMPT,
    DETECTION,
    DetectionRecord,
    DetectionSettings,
    DetectionWindow,
    Pictures,
    Sight,
)

from ._audit import AuditPlan, AuditTally, Truth
from ._sample import AUDITOR_ROLE
from ._windows import detection_windows, window_solve


def _window(instance: Instance, grid: Grid, tally: AuditTally, complete: bool, edits: bool = False) -> DetectionWindow:
    result = tally.result(complete=complete)
    return DetectionWindow(
        audit=result,
        grid=grid,
        truth=tuple(sorted(instance.stale_ids(grid))),
        # the edit proposed for each entry flagged stale (none for the others): scored by stale_f1
        edits={mid: tally.edits[mid] for mid in sorted(result.flagged) if mid in tally.edits} if edits else None,
    )


def _keep(state: TaskState, windows: list[DetectionWindow], limit: str | None) -> None:
    record = DetectionRecord(store=state.store)
    record.windows = windows
    record.limit = limit


def _flagged(windows: list[DetectionWindow]) -> str:
    flagged = sum(len(w.audit.flagged) for w in windows)
    return f"{len(windows)} detection window(s), {flagged} entries flagged"


def window_audit(
    instance: Instance,
    grid: Grid,
    *,
    sight: Sight,
    batch_size: int,
    prompt: str,
    memory: str,
    edits: bool,
    crop: Callable[[Grid, MemoryEntry], str] | None = None,
) -> AuditPlan:
    """The audit of one detection window, as :func:`detect` makes it: the whole store
    against the window's grid, the agent at S (``crop``: how a memory crop is drawn,
    when not as sent)."""
    pictures = None
    if memory == "crops":
        pictures = Pictures(instance.g0) if crop is None else Pictures(instance.g0, crop)
    return AuditPlan(
        instance.memory,
        grid,
        instance.start,
        sight=sight.for_instance(instance),
        batch_size=batch_size,
        prompt=prompt,
        truth=Truth.of(instance, grid),
        pictures=pictures,
        edits=edits,
    )


def detection_args(settings: DetectionSettings) -> dict[str, Any]:
    """The arguments of :func:`detect` (and :func:`detection_plan`) for a task's settings."""
    return {
        "modality": settings.modality,
        "batch_size": settings.batch_size,
        "audit_prompt": settings.prompt("audit"),
        "structured": settings.structured,
        "observation": settings.observation,
        "memory": settings.memory,
        "edits": settings.edits,
    }


def detection_plan(
    instance: Instance,
    *,
    modality: str = DETECTION.modality,
    batch_size: int = DETECTION.batch_size,
    audit_prompt: str = DEFAULT_AUDIT_PROMPT,
    structured: bool = DETECTION.structured,
    observation: str = DETECTION.observation,
    memory: str = DETECTION.memory,
    edits: bool = DETECTION.edits,
    image: Callable[[Grid, Pos | None], str] | None = None,
    crop: Callable[[Grid, MemoryEntry], str] | None = None,
) -> list[AuditPlan]:
    """Every call of one detection sample, as :func:`detect` (same arguments) makes
    them: an audit a window (:func:`detection_windows`). ``image`` and ``crop`` draw
    the pictures when given (the dry run's stand-ins name them without drawing);
    ``structured`` goes with a call, not in its prompt, and changes no call."""
    sight = Sight(modality, observation) if image is None else Sight(modality, observation, image=image)
    return [
        window_audit(
            instance,
            grid,
            sight=sight,
            batch_size=batch_size,
            prompt=audit_prompt,
            memory=memory,
            edits=edits,
            crop=crop,
        )
        for _, grid in detection_windows(instance)
    ]


@solver
def detect(
    *,
    modality: str = DETECTION.modality,
    batch_size: int = DETECTION.batch_size,
    audit_prompt: str = DEFAULT_AUDIT_PROMPT,
    audit_model_role: str = AUDITOR_ROLE,
    structured: bool = DETECTION.structured,
    observation: str = DETECTION.observation,
    memory: str = DETECTION.memory,
    edits: bool = DETECTION.edits,
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
        memory: ``text`` (each entry's claim, the paper) or ``crops`` (each entry's
            id, then a picture of its cell's neighbourhood as remembered).
        edits: ask for the corrected entry of each entry judged stale and record
            each window's edits (``-T edits=true``; the prompt asks for them).
    """

    sight = Sight(modality, observation)

    async def audit(auditor: Model, instance: Instance, grid: Grid, tally: AuditTally) -> None:
        plan = window_audit(
            instance, grid, sight=sight, batch_size=batch_size, prompt=audit_prompt, memory=memory, edits=edits
        )
        await plan.ask(auditor, step=tally.step, structured=structured, tally=tally)

    return window_solve(
        role=audit_model_role,
        title="detection window",
        start=lambda instance, step, grid: AuditTally(step, instance.memory),
        read=audit,
        record=lambda instance, grid, tally, complete: _window(instance, grid, tally, complete, edits),
        keep=_keep,
        summary=_flagged,
    )
