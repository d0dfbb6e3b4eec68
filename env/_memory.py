"""The memory snapshot: random-walk exploration of g0 plus controlled completion."""

from __future__ import annotations

from ._grid import cell_at, goal_pos, move
from ._rng import Stream
from ._types import Action, Cell, Grid, MemoryEntry, Pos

N_WALKS = 20
WALK_LENGTH = 50

_ACTIONS = tuple(Action)


def entry_id(pos: Pos, size: int) -> str:
    """``mem_{row*n+col:03d}``: (5,4) on an 8x8 grid is ``mem_044``."""
    return f"mem_{pos[0] * size + pos[1]:03d}"


def entry_text(pos: Pos, cell: Cell) -> str:
    """The natural-language claim a model reads for a remembered cell."""
    r, c = pos
    if cell is Cell.HOLE:
        return f"DANGER at ({r},{c}): Hole - dangerous, do not step"
    if cell is Cell.START:
        return f"SAFE at ({r},{c}): Start - safe to walk"
    if cell is Cell.GOAL:
        return f"SAFE at ({r},{c}): Goal - safe to walk"
    return f"SAFE at ({r},{c}): Frozen ice - safe to walk"


def explore(g0: Grid, rng: Stream, n_walks: int = N_WALKS, walk_length: int = WALK_LENGTH) -> dict[Pos, Cell]:
    """Random walks from S on g0; the first visit to a cell records its type.

    Each walk takes at most ``walk_length`` uniform actions and ends early on a hole
    or the goal. A move off the grid is an action that stays in place.
    """
    size = len(g0)
    goal = goal_pos(size)
    seen: dict[Pos, Cell] = {(0, 0): Cell.START}
    for _ in range(n_walks):
        pos = (0, 0)
        for _ in range(walk_length):
            pos = move(pos, _ACTIONS[rng.below(4)], size)
            cell = cell_at(g0, pos)
            seen.setdefault(pos, cell)
            if cell is Cell.HOLE or pos == goal:
                break
    return seen


def build_memory(g0: Grid, rng: Stream) -> tuple[MemoryEntry, ...]:
    """Exactly n² entries in id order; unvisited cells are completed from g0."""
    size = len(g0)
    seen = explore(g0, rng)
    entries = []
    for r in range(size):
        for c in range(size):
            cell = cell_at(g0, (r, c))
            entries.append(
                MemoryEntry(
                    id=entry_id((r, c), size),
                    row=r,
                    col=c,
                    cell=seen.get((r, c), cell),
                    text=entry_text((r, c), cell),
                    explored=(r, c) in seen,
                )
            )
    return tuple(entries)
