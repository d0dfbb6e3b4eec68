"""The detection solver (SPEC §6): one audit per detection window."""

from __future__ import annotations

from inspect_ai.model import Model
from inspect_ai.solver import Solver, TaskState, solver

from spatialstale.env import Grid, Instance
from spatialstale.protocol import (
    DEFAULT_AUDIT_PROMPT,
    DETECTION,
    DetectionRecord,
    DetectionWindow,
    Sight,
    extension_memory_form,
    extension_values,
)

from ._audit import AuditTally, Truth, batched_audit
from ._sample import AUDITOR_ROLE
from ._windows import window_solve


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
    record = state.store_as(DetectionRecord)
    record.windows = windows
    record.limit = limit


def _flagged(windows: list[DetectionWindow]) -> str:
    flagged = sum(len(w.audit.flagged) for w in windows)
    return f"{len(windows)} detection window(s), {flagged} entries flagged"


@solver
def detect(
    *,
    modality: str = DETECTION.modality,
    batch_size: int = DETECTION.batch_size,
    audit_prompt: str = DEFAULT_AUDIT_PROMPT,
    audit_model_role: str = AUDITOR_ROLE,
    structured: bool = DETECTION.structured,
    observation: str = DETECTION.observation,
    edits: bool = DETECTION.edits,
    **extensions: object,
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
        edits: ask for the corrected entry of each entry judged stale and record
            each window's edits (``-T edits=true``; the prompt asks for them).
        **extensions: the detection extensions' axes by name (``spatialstale.protocol``'s
            ``EXTENSIONS``; each its default when absent): how an audit shows its
            entries (``extension_memory_form``; each entry's text line by default).
    """

    sight = Sight(modality, observation)
    values = extension_values("detection", extensions)

    async def audit(auditor: Model, instance: Instance, grid: Grid, tally: AuditTally) -> None:
        await batched_audit(
            auditor,
            instance.memory,
            grid,
            instance.start,
            sight=sight.for_instance(instance),
            batch_size=batch_size,
            prompt=audit_prompt,
            step=tally.step,
            structured=structured,
            tally=tally,
            truth=Truth.of(instance, grid),
            form=extension_memory_form("detection", values, instance),
            edits=edits,
        )

    return window_solve(
        role=audit_model_role,
        title="detection window",
        start=lambda instance, step, grid: AuditTally(step, instance.memory),
        read=audit,
        record=lambda instance, grid, tally, complete: _window(instance, grid, tally, complete, edits),
        keep=_keep,
        summary=_flagged,
    )
