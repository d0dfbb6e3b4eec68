"""Fog (partial observability): the part of the grid an agent with a view radius sees.

The view is the Chebyshev square of radius k around the agent, ``(2k+1) x (2k+1)``
cells clipped to the grid, like a local camera (Minigrid's agent view is a square
too): k=0 shows only the agent's own cell. Every cell beyond it reads :data:`FOG_CELL`.
Nothing here is random: a fogged grid is a pure function of (grid, agent, k).
"""

from __future__ import annotations

from ._types import Grid, Pos

FULL_VIEW = "full"
"""How the full view (no fog: ``view_radius`` None, the paper's observation) is named."""

FOG_CELL = "?"
"""The letter of a cell beyond the view, in a fogged grid and in the text listing."""


def validate_view_radius(view_radius: int | None) -> int | None:
    """``view_radius`` itself when it is None (the full view) or an integer >= 0.

    Raises:
        ValueError: for anything else, naming the valid values.
    """
    if view_radius is None:
        return None
    if isinstance(view_radius, bool) or not isinstance(view_radius, int) or view_radius < 0:
        raise ValueError(f"view_radius must be an integer of at least 0 or full; got {view_radius!r}")
    return view_radius


def in_view(cell: Pos, agent: Pos, view_radius: int) -> bool:
    """Whether ``cell`` lies within Chebyshev distance ``view_radius`` of ``agent``."""
    return max(abs(cell[0] - agent[0]), abs(cell[1] - agent[1])) <= view_radius


def fog(grid: Grid, agent: Pos, view_radius: int | None) -> Grid:
    """``grid`` as seen from ``agent``: cells beyond ``view_radius`` become :data:`FOG_CELL`.

    ``None`` is the full view and returns ``grid`` unchanged (the paper's observation).
    """
    radius = validate_view_radius(view_radius)
    if radius is None:
        return grid
    size = len(grid)
    return tuple(
        "".join(grid[r][c] if in_view((r, c), agent, radius) else FOG_CELL for c in range(size)) for r in range(size)
    )


def is_fogged(grid: Grid) -> bool:
    """Whether any cell of ``grid`` lies beyond the view."""
    return any(FOG_CELL in row for row in grid)


def visible_window(grid: Grid) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The rows and columns ``((r0, r1), (c0, c1))`` (inclusive) a fogged grid shows.

    None when no cell is visible. The visible cells of :func:`fog` form this rectangle.
    """
    rows = [r for r, row in enumerate(grid) if any(cell != FOG_CELL for cell in row)]
    cols = [c for c in range(len(grid)) if any(row[c] != FOG_CELL for row in grid)]
    if not rows or not cols:
        return None
    return (rows[0], rows[-1]), (cols[0], cols[-1])


def view_radius_of(grid: Grid, agent: Pos) -> int | None:
    """The radius :func:`fog` used for ``grid``; None when nothing is fogged.

    When some cell is fogged the square is cut by the border on at most three sides,
    so some visible cell lies exactly ``k`` away from the agent: ``k`` is the largest
    Chebyshev distance from the agent to a visible cell.
    """
    if not is_fogged(grid):
        return None
    size = len(grid)
    return max(
        (max(abs(r - agent[0]), abs(c - agent[1])) for r in range(size) for c in range(size) if grid[r][c] != FOG_CELL),
        default=0,
    )


def fog_note(grid: Grid, agent: Pos, unseen: str = f"Cells marked {FOG_CELL}") -> str | None:
    """The sentence stating the fog rule (``unseen`` names the hidden cells as the
    observation shows them); None when nothing is fogged."""
    radius = view_radius_of(grid, agent)
    window = visible_window(grid)
    if radius is None or window is None:
        return None
    size = len(grid)
    if any(grid[r][c] == FOG_CELL for r in range(size) for c in range(size) if in_view((r, c), agent, radius)):
        return f"{unseen} are hidden from you."  # not a square around the agent: hidden otherwise than by fog
    (r0, r1), (c0, c1) = window
    return (
        f"{unseen} are beyond your view (radius {radius} around the agent): "
        f"you see rows {r0}-{r1} and columns {c0}-{c1}."
    )
