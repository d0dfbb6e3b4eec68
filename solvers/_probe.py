"""The perception probe: can the model read the current grid at all?

The same seeded instances and observations as the detection task (text listing, PNG
or both; the agent drawn at S), with no memory: each call asks for the type of a
batch of cells, ``batch_size`` cells a call in row-major order, so an observation
costs ⌈n²/B⌉ calls like an audit. L1/L2 read the grid after the pre-game changes;
L3 reads the grid of every detection window (after each scheduled event). The
answers are read by ``_answers.read_perception``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ContentText,
    Model,
    ResponseSchema,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import JSONSchema

from spatialstale.env import Grid, Pos

from ._answers import PerceptionParse, cell_label, read_perception
from ._audit import BatchTable, batches_of, in_batch_order
from ._detection import detection_windows, read_windows
from ._heap import freeze_startup_heap
from ._navigation import auditor_model, instance_of
from ._prompts import answer_config, cacheable, fill_prompt, observation_content, user_message

PERCEPTION_STORE_KEY = "spatialstale:perception"
PERCEPTION_MARKER = "[SpatialSTALE:perception]"
"""First line of the probe's system prompt: names the call kind in the transcript."""

DEFAULT_PERCEPTION_PROMPT = (
    PERCEPTION_MARKER
    + """
You read a FrozenLake grid of {size}x{size} cells.
Cells: S = start, F = frozen ice (safe), H = hole (lethal), G = goal. Coordinates are (row,col), row 0 at the top.
For every cell you are asked about, answer its type in the current grid: S, F, H or G.
Answer with JSON only, one object per cell, in the order given:
[{"cell": "(0,0)", "type": "S"}]"""
)

CELLS_HEADER = "Cells to read:"
CELL_TYPES = ("S", "F", "H", "G")


def all_cells(size: int) -> list[Pos]:
    """Every cell in row-major order: the order of the memory ids, so the probe's
    batches cover the same cells as the audit's."""
    return [(r, c) for r in range(size) for c in range(size)]


def cells_block(cells: Sequence[Pos]) -> str:
    """The batch as listed in a prompt, one ``(r,c)`` line per cell."""
    return "\n".join([CELLS_HEADER, *(cell_label(pos) for pos in cells)])


def perception_messages(
    cells: Sequence[Pos],
    grid: Grid,
    agent: Pos,
    modality: str,
    prompt: str = "",
    size: int = 8,
    observation: str = "full",
) -> list[ChatMessage]:
    """One probe call: instructions, the observation, then the batch of cells.

    The observation comes first because every batch of an observation shows the same
    grid: consecutive calls then share a prompt prefix that servers can cache.
    """
    return [
        ChatMessageSystem(content=fill_prompt(prompt or DEFAULT_PERCEPTION_PROMPT, size)),
        user_message(
            [*cacheable(observation_content(grid, agent, modality, observation)), ContentText(text=cells_block(cells))]
        ),
    ]


def perception_schema(cells: Sequence[Pos] | None = None) -> ResponseSchema:
    """The probe's response schema; ``cell`` is limited to the batch's coordinates when given."""
    where = JSONSchema(type="string", enum=[cell_label(p) for p in cells]) if cells is not None else None
    reading = JSONSchema(
        type="object",
        properties={
            "cell": where or JSONSchema(type="string"),
            "type": JSONSchema(type="string", enum=list(CELL_TYPES)),
        },
        required=["cell", "type"],
        additionalProperties=False,
    )
    return ResponseSchema(
        name="spatialstale_perception",
        description="The type of every cell of the batch, in the order given.",
        json_schema=JSONSchema(
            type="object",
            properties={"cells": JSONSchema(type="array", items=reading)},
            required=["cells"],
            additionalProperties=False,
        ),
        strict=True,
    )


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

    def window(self, *, complete: bool = True) -> dict[str, object]:
        """The window as logged; cells of batches not yet asked count as unanswered."""
        pending = [cell_label(pos) for pos in all_cells(len(self.grid)) if pos not in self.asked]
        return {
            "step": self.step,
            "grid": list(self.grid),
            "readings": dict(self.readings),
            "unanswered": self.unanswered + pending,
            "conflicting": list(self.conflicting),
            "unknown_cells": list(self.unknown),
            "calls": self.calls,
            "unparseable": self.unparseable,
            "complete": complete and not pending,
        }


async def probe_grid(
    model: Model,
    grid: Grid,
    agent: Pos,
    *,
    modality: str,
    batch_size: int,
    prompt: str,
    structured: bool,
    tally: ProbeTally,
    observation: str = "full",
) -> None:
    """Ask for every cell of ``grid`` in batches of ``batch_size``, one call each.

    As in the audit (:func:`in_batch_order`), the calls run concurrently and are kept
    in batch order: a span per batch, then one table of every reading, and a sample
    limit keeps the answered batches up to the first one still missing.
    """
    size = len(grid)
    table = BatchTable("| cell | truth | read |")

    async def ask(batch: Sequence[Pos]) -> PerceptionParse:
        output = await model.generate(
            perception_messages(batch, grid, agent, modality, prompt, size, observation),
            config=answer_config(perception_schema(batch), structured),
        )
        return read_perception(output.completion, batch)

    def keep(batch: Sequence[Pos], parsed: PerceptionParse) -> None:
        tally.add(batch, parsed)
        table.add(*_batch_rows(batch, grid, parsed))

    try:
        await in_batch_order(
            batches_of(all_cells(size), batch_size), ask, keep, name="perception batch", kind="perception"
        )
    finally:
        table.log("perception")


def _cells_read(windows: list[dict[str, object]]) -> str:
    read = sum(len(cast(dict[str, str], w["readings"])) for w in windows)
    return f"{len(windows)} observation(s), {read} cells read"


@solver
def perception_probe(
    *,
    modality: str = "text",
    batch_size: int = 10,
    perception_prompt: str = DEFAULT_PERCEPTION_PROMPT,
    model_role: str = "auditor",
    structured: bool = False,
    observation: str = "full",
) -> Solver:
    """Ask for the type of every cell of each observation the detection task shows.

    Args:
        modality: ``text``, ``vision`` or ``both``: how the current grid is shown.
        batch_size: cells per call (⌈n²/B⌉ calls per observation).
        perception_prompt: system prompt of every call.
        model_role: model role asked; the task's model when unbound. The default is the
            detection task's auditor role, so the probe reads the model that audits.
        structured: send a response schema with every call (structured output).
        observation: ``full`` lists every cell of the grid, ``holes`` only S, G and
            the holes (the detection task's ``-T observation``).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        freeze_startup_heap()
        instance = instance_of(state)
        model = auditor_model(model_role)

        async def probe(grid: Grid, tally: ProbeTally) -> None:
            await probe_grid(
                model,
                grid,
                instance.start,
                modality=modality,
                batch_size=batch_size,
                prompt=perception_prompt,
                structured=structured,
                tally=tally,
                observation=observation,
            )

        await read_windows(
            state,
            detection_windows(instance),
            title="observation",
            start=ProbeTally,
            read=probe,
            record=lambda tally, grid, complete: tally.window(complete=complete),
            store_key=PERCEPTION_STORE_KEY,
            summary=_cells_read,
        )
        return state

    return solve


def _batch_rows(batch: Sequence[Pos], grid: Grid, parsed: PerceptionParse) -> tuple[list[str], list[str]]:
    """A batch's rows of the observation's table, and its notes."""
    rows = []
    for pos in batch:
        read = (
            "unanswered"
            if pos in parsed.unanswered
            else "conflicting"
            if pos in parsed.conflicting
            else parsed.readings.get(pos, "?")
        )
        rows.append(f"| {cell_label(pos)} | {grid[pos[0]][pos[1]]} | {read} |")
    notes = []
    if parsed.unknown_cells:
        notes.append(f"cells outside the batch in the answer: {', '.join(parsed.unknown_cells)}")
    if parsed.error:
        notes.append(f"unparseable answer: {parsed.error}")
    return rows, notes + parsed.notes
