"""Pure grid functions: generation, solvability, moves and flips."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from ._rng import Stream
from ._types import Action, Cell, Change, Grid, Pos

HOLE_PROBABILITY = 0.25


def goal_pos(size: int) -> Pos:
    return (size - 1, size - 1)


def cell_at(grid: Grid, pos: Pos) -> Cell:
    return Cell(grid[pos[0]][pos[1]])


def generate_grid(size: int, hole_p: float, rng: Stream) -> Grid:
    """Draw grids until one has an S to G path (the paper's rejection sampling).

    Cells are drawn in row-major order; S and G draw nothing.
    """
    goal = goal_pos(size)
    while True:
        rows = []
        for r in range(size):
            row = []
            for c in range(size):
                if (r, c) == (0, 0):
                    row.append("S")
                elif (r, c) == goal:
                    row.append("G")
                else:
                    row.append("H" if rng.uniform() < hole_p else "F")
            rows.append("".join(row))
        grid = tuple(rows)
        if is_solvable(grid):
            return grid


def is_solvable(grid: Grid) -> bool:
    """True when a 4-connected path over non-hole cells joins S and G."""
    size = len(grid)
    goal = goal_pos(size)
    seen = {(0, 0)}
    frontier = deque([(0, 0)])
    while frontier:
        r, c = frontier.popleft()
        if (r, c) == goal:
            return True
        for dr, dc in ((1, 0), (0, 1), (-1, 0), (0, -1)):
            nr, nc = r + dr, c + dc
            if 0 <= nr < size and 0 <= nc < size and (nr, nc) not in seen and grid[nr][nc] != "H":
                seen.add((nr, nc))
                frontier.append((nr, nc))
    return False


def move(pos: Pos, action: Action, size: int) -> Pos:
    """The cell reached by ``action``; a move off the grid stays in place."""
    dr, dc = action.delta
    r, c = pos[0] + dr, pos[1] + dc
    if 0 <= r < size and 0 <= c < size:
        return (r, c)
    return pos


def apply_changes(grid: Grid, changes: Iterable[Change]) -> Grid:
    """The grid with each change's cell set to its ``after`` type."""
    rows = [list(row) for row in grid]
    for change in changes:
        rows[change.row][change.col] = change.after.value
    return tuple("".join(row) for row in rows)


def flip(grid: Grid, pos: Pos) -> Change:
    """The change that flips a frozen cell to a hole or a hole to frozen ice."""
    before = cell_at(grid, pos)
    if before is Cell.FROZEN:
        return Change(pos[0], pos[1], Cell.FROZEN, Cell.HOLE)
    if before is Cell.HOLE:
        return Change(pos[0], pos[1], Cell.HOLE, Cell.FROZEN)
    raise ValueError(f"only F and H cells flip; {pos} is {before.value}")


def changed_cells(g0: Grid, grid: Grid) -> set[Pos]:
    """Every position whose type differs between the two grids."""
    return {
        (r, c)
        for r, (row0, row) in enumerate(zip(g0, grid, strict=True))
        for c, (a, b) in enumerate(zip(row0, row, strict=True))
        if a != b
    }


def shortest_path(grid: Grid, start: Pos, goal: Pos) -> list[Pos] | None:
    """A shortest 4-connected path over non-hole cells, both ends included.

    Ties break in a fixed neighbour order (DOWN, RIGHT, UP, LEFT), so the path is a
    pure function of its inputs.
    """
    size = len(grid)
    parent: dict[Pos, Pos | None] = {start: None}
    frontier = deque([start])
    while frontier:
        pos = frontier.popleft()
        if pos == goal:
            path = [pos]
            while (prev := parent[path[-1]]) is not None:
                path.append(prev)
            return path[::-1]
        for dr, dc in ((1, 0), (0, 1), (-1, 0), (0, -1)):
            nxt = (pos[0] + dr, pos[1] + dc)
            if 0 <= nxt[0] < size and 0 <= nxt[1] < size and nxt not in parent and grid[nxt[0]][nxt[1]] != "H":
                parent[nxt] = pos
                frontier.append(nxt)
    return None


def greedy_action(pos: Pos, goal: Pos) -> Action:
    """One step toward the goal: DOWN while above its row, else RIGHT, UP or LEFT.

    This is the fallback for an unparseable navigator answer; it ignores hazards, as
    the paper's "single greedy step toward the goal" does.
    """
    if pos[0] < goal[0]:
        return Action.DOWN
    if pos[1] < goal[1]:
        return Action.RIGHT
    if pos[0] > goal[0]:
        return Action.UP
    return Action.LEFT
