"""The perception probe: can the model read the current grid at all?

The same seeded instances and observations as the detection task (text listing, PNG
or both; the agent drawn at S), with no memory: each call asks for the type of a
batch of cells, ``batch_size`` cells a call in row-major order, so an observation
costs ⌈n²/B⌉ calls like an audit. L1/L2 read the grid after the pre-game changes;
L3 reads the grid of every detection window (after each scheduled event). The
answers are read by ``read_perception`` (``spatialstale.protocol``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from inspect_ai.model import Model
from inspect_ai.solver import Solver, TaskState, solver

from spatialstale.env import Grid, Instance, Pos
from spatialstale.protocol import (
    DEFAULT_PERCEPTION_PROMPT,
    PERCEPTION,
    PerceptionParse,
    PerceptionRecord,
    PerceptionWindow,
    Sight,
    all_cells,
    answer_config,
    cell_label,
    perception_messages,
    perception_schema,
    read_perception,
)

from ._batches import BatchTable, answer_notes, ask_in_batches, batches_of, reading
from ._sample import AUDITOR_ROLE
from ._windows import window_solve


@dataclass
class ProbeTally:
    """One observation's readings so far, batch by batch; a sample limit that ends the
    probe midway leaves the tally of the batches that were answered."""

    step: int
    grid: Grid
    readings: dict[str, str] = field(default_factory=dict)
    asked: set[Pos] = field(default_factory=set)
    unanswered: list[str] = field(default_factory=list)
    conflicting: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    calls: int = 0
    unparseable: int = 0

    def add(self, batch: Sequence[Pos], parsed: PerceptionParse) -> None:
        self.calls += 1
        self.asked.update(batch)
        self.readings.update({cell_label(pos): cell for pos, cell in parsed.readings.items()})
        self.unanswered += [cell_label(pos) for pos in parsed.unanswered]
        self.conflicting += [cell_label(pos) for pos in parsed.conflicting]
        self.unknown += parsed.unknown_cells
        self.unparseable += parsed.error is not None

    def window(self, *, complete: bool = True) -> PerceptionWindow:
        """The window's record; cells of batches not yet asked count as unanswered."""
        pending = [cell_label(pos) for pos in all_cells(len(self.grid)) if pos not in self.asked]
        return PerceptionWindow(
            step=self.step,
            grid=self.grid,
            readings=dict(self.readings),
            unanswered=(*self.unanswered, *pending),
            conflicting=tuple(self.conflicting),
            unknown_cells=tuple(self.unknown),
            calls=self.calls,
            unparseable=self.unparseable,
            complete=complete and not pending,
        )


async def probe_grid(
    model: Model,
    grid: Grid,
    agent: Pos,
    *,
    sight: Sight,
    batch_size: int,
    prompt: str,
    structured: bool,
    tally: ProbeTally,
) -> None:
    """Ask for every cell of ``grid`` in batches of ``batch_size``, one call each.

    As in the audit (:func:`ask_in_batches`), the calls run concurrently and are kept
    in batch order: a span per batch, then one table of every reading, and a sample
    limit keeps the answered batches up to the first one still missing.
    """
    size = len(grid)

    def keep(batch: Sequence[Pos], parsed: PerceptionParse) -> list[tuple[str, str, str]]:
        tally.add(batch, parsed)
        return [
            (
                cell_label(pos),
                grid[pos[0]][pos[1]],
                reading(pos, parsed.unanswered, parsed.conflicting, parsed.readings.get(pos, "?")),
            )
            for pos in batch
        ]

    await ask_in_batches(
        model,
        batches_of(all_cells(size), batch_size),
        kind="perception",
        messages=lambda batch: perception_messages(batch, grid, agent, sight, prompt),
        config=lambda batch: answer_config(perception_schema(batch), structured, model),
        read=read_perception,
        keep=keep,
        notes=lambda parsed: answer_notes(parsed.unknown_cells, "cells outside the batch", parsed.error, parsed.notes),
        table=BatchTable(("cell", "truth", "read")),
    )


def _keep(state: TaskState, windows: list[PerceptionWindow], limit: str | None) -> None:
    record = state.store_as(PerceptionRecord)
    record.windows = windows
    record.limit = limit


def _cells_read(windows: list[PerceptionWindow]) -> str:
    read = sum(len(w.readings) for w in windows)
    return f"{len(windows)} observation(s), {read} cells read"


@solver
def perception_probe(
    *,
    modality: str = PERCEPTION.modality,
    batch_size: int = PERCEPTION.batch_size,
    perception_prompt: str = DEFAULT_PERCEPTION_PROMPT,
    model_role: str = AUDITOR_ROLE,
    structured: bool = PERCEPTION.structured,
    **extensions: object,
) -> Solver:
    """Ask for the type of every cell of each observation the detection task shows.

    Args:
        modality: ``text``, ``vision`` or ``both``: how the current grid is shown.
        batch_size: cells per call (⌈n²/B⌉ calls per observation).
        perception_prompt: system prompt of every call.
        model_role: model role asked; the task's model when unbound. The default is the
            detection task's auditor role, so the probe reads the model that audits.
        structured: send a response schema with every call (structured output).
        **extensions: the perception extensions' axes by name (``spatialstale.protocol``'s
            ``EXTENSIONS``; each its default when absent; a bad name or value is a
            ValueError): how the grid's text lists it (``observation``, the detection
            task's ``-T observation``).
    """

    sight = Sight.of("perception", modality, extensions)

    async def probe(model: Model, instance: Instance, grid: Grid, tally: ProbeTally) -> None:
        await probe_grid(
            model,
            grid,
            instance.start,
            sight=sight,
            batch_size=batch_size,
            prompt=perception_prompt,
            structured=structured,
            tally=tally,
        )

    return window_solve(
        role=model_role,
        title="observation",
        start=lambda instance, step, grid: ProbeTally(step, grid),
        read=probe,
        record=lambda instance, grid, tally, complete: tally.window(complete=complete),
        keep=_keep,
        summary=_cells_read,
    )
