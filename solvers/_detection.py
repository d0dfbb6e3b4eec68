"""The detection solver (SPEC §6): one audit per detection window."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from inspect_ai.model import Model
from inspect_ai.solver import Solver, TaskState, solver

from spatialstale.env import Grid, Instance, Pos
from spatialstale.protocol import (
    DEFAULT_AUDIT_PROMPT,
    DETECTION,
    DetectionRecord,
    DetectionSettings,
    DetectionWindow,
    Sight,
    VerdictField,
    extension_memory_form,
    extension_values,
    verdict_fields,
)

from ._audit import AuditPlan, AuditTally, Truth
from ._sample import AUDITOR_ROLE
from ._windows import detection_windows, window_solve


def _window(
    instance: Instance, grid: Grid, tally: AuditTally, complete: bool, fields: Sequence[VerdictField] = ()
) -> DetectionWindow:
    result = tally.result(complete=complete)
    given = {f.record: tally.fields.get(f.name, {}) for f in fields}
    return DetectionWindow(
        audit=result,
        grid=grid,
        truth=tuple(sorted(instance.stale_ids(grid))),
        # each verdict field's value for each entry flagged stale (none for the others): scored by stale_f1
        answers={key: {mid: got[mid] for mid in sorted(result.flagged) if mid in got} for key, got in given.items()}
        if fields
        else None,
    )


def _keep(state: TaskState, windows: list[DetectionWindow], limit: str | None) -> None:
    record = state.store_as(DetectionRecord)
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
    values: Mapping[str, Any],
    drawn: bool = True,
) -> AuditPlan:
    """The audit of one detection window, as :func:`detect` makes it: the whole store
    against the window's grid, the agent at S, each entry shown as the extensions on
    (``values``: their axes) say and each verdict with their fields (``drawn=False``: an
    extension's pictures are stand-ins that name what they show, for the dry run)."""
    return AuditPlan(
        instance.memory,
        sight.seen(grid, instance.start),  # what the extensions' view shows of it
        instance.start,
        sight=sight.for_instance(instance),
        batch_size=batch_size,
        prompt=prompt,
        truth=Truth.of(instance, grid),
        form=extension_memory_form("detection", values, instance, drawn=drawn),
        fields=verdict_fields("detection", values),
    )


def detection_args(settings: DetectionSettings) -> dict[str, Any]:
    """The arguments of :func:`detect` (and :func:`detection_plan`) for a task's settings."""
    return {
        "modality": settings.modality,
        "batch_size": settings.batch_size,
        "audit_prompt": settings.prompt("audit"),
        "structured": settings.structured,
        **settings.extension_args(),
    }


@solver
def detect(
    *,
    modality: str = DETECTION.modality,
    batch_size: int = DETECTION.batch_size,
    audit_prompt: str = DEFAULT_AUDIT_PROMPT,
    audit_model_role: str = AUDITOR_ROLE,
    structured: bool = DETECTION.structured,
    **extensions: object,
) -> Solver:
    """Audit the sample's memory store in every detection window.

    Args:
        modality: ``text``, ``vision`` or ``both``: how the current grid is shown.
        batch_size: entries per audit call (⌈n²/B⌉ calls per audit).
        audit_prompt: system prompt of every audit batch.
        audit_model_role: model role of the audits; the task's model when unbound.
        structured: send a response schema with every audit call (structured output).
        **extensions: the detection extensions' axes by name (``spatialstale.protocol``'s
            ``EXTENSIONS``; each its default when absent; a bad name or value is a
            ValueError): how an audit shows its entries (``extension_memory_form``; each
            entry's text line by default), and the verdict field each one on adds to every
            audit (the prompt asks for it), recorded per window.
    """

    sight = Sight.of("detection", modality, extensions)
    values = extension_values("detection", extensions)
    fields = verdict_fields("detection", values)

    async def audit(auditor: Model, instance: Instance, grid: Grid, tally: AuditTally) -> None:
        plan = window_audit(instance, grid, sight=sight, batch_size=batch_size, prompt=audit_prompt, values=values)
        await plan.ask(auditor, step=tally.step, structured=structured, tally=tally)

    return window_solve(
        role=audit_model_role,
        title="detection window",
        start=lambda instance, step, grid: AuditTally(step, instance.memory),
        read=audit,
        record=lambda instance, grid, tally, complete: _window(instance, grid, tally, complete, fields),
        keep=_keep,
        summary=_flagged,
    )


_DETECT = inspect.signature(detect)


def detection_plan(
    instance: Instance, *, image: Callable[[Grid, Pos | None], str] | None = None, drawn: bool = True, **args: Any
) -> list[AuditPlan]:
    """Every call of one detection sample, as :func:`detect` with the keyword arguments
    ``args`` (:func:`detection_args` gives a task's) makes them: an audit a window
    (:func:`detection_windows`). ``image`` draws the grid's pictures when given, and
    ``drawn=False`` has the extensions' memory forms send stand-ins (the dry run's, which
    name what an image shows without drawing it); ``structured`` goes with a call, not
    in its prompt, and changes no call."""
    bound = _DETECT.bind(**args)
    bound.apply_defaults()
    given = bound.arguments
    sight = Sight.of("detection", given["modality"], given["extensions"], image)
    values = extension_values("detection", given["extensions"])
    batch_size, prompt = given["batch_size"], given["audit_prompt"]
    return [
        window_audit(instance, grid, sight=sight, batch_size=batch_size, prompt=prompt, values=values, drawn=drawn)
        for _, grid in detection_windows(instance)
    ]
