"""What a navigator is shown of the other agent of regime MA: its route, not its changes.

The other agent crossed the lake before the episode and broke the ice of every cell
it left (``_regimes.agent_route``). The observation never shows those cells: each
cell of its route is covered by its tracks, and the prompt tells its moves and its
habit, so a model must infer which memories the route made stale.

A covered grid (:func:`cover_tracks`) is the grid as seen, with the route's cells
replaced by letters of their own: a cell the other agent left holds the arrow of the
move it made from there (:data:`TRACK_CELLS`), the cell where it stands now holds
:data:`OTHER_AGENT_CELL` (its ice is unbroken). The text listing writes a track as
``?`` and the other agent as ``A`` (:func:`listed`); the image draws a track as a brown
tile with a white arrow and the other agent as a blue circle on ice (``_render``).
Nothing here is random: a covered grid is a pure function of (grid, route).
"""

from __future__ import annotations

from itertools import pairwise

from ._fog import FOG_CELL
from ._types import Action, Grid, Pos

TRACK_CELLS = {Action.LEFT: "<", Action.DOWN: "v", Action.RIGHT: ">", Action.UP: "^"}
"""The letter of a cell the other agent left, in a covered grid: the way it moved on."""

OTHER_AGENT_CELL = "A"
"""The letter of the cell where the other agent stands (the route's last cell)."""

TRACK_LISTED = "?"
"""How the text listing writes a track: its ice cannot be seen, as under fog."""

TRACKS_NOTE = (
    "Cells of the other agent's route marked ? are covered by its tracks: their ice cannot be seen. "
    "A marks the other agent, standing on ice."
)
"""The line of the text listing that says what ``?`` on the route and ``A`` are."""

_ACTION_OF = {action.delta: action for action in Action}


def route_moves(route: tuple[Pos, ...]) -> tuple[Action, ...]:
    """The moves of a route: the action from each cell to the next."""
    return tuple(_ACTION_OF[(b[0] - a[0], b[1] - a[1])] for a, b in pairwise(route))


def cover_tracks(grid: Grid, route: tuple[Pos, ...]) -> Grid:
    """``grid`` with the other agent's route covered, as the observation shows it.

    Every cell the other agent left becomes the arrow of its move from there, the
    cell it stands on :data:`OTHER_AGENT_CELL`. A cell beyond the view (fog's ``?``)
    stays hidden: fog hides tracks like everything else, while the prompt still
    tells the whole route (:func:`other_agent_note`). No route: ``grid`` unchanged.
    """
    if not route:
        return grid
    letters = {pos: TRACK_CELLS[action] for pos, action in zip(route, route_moves(route), strict=False)}
    letters[route[-1]] = OTHER_AGENT_CELL
    rows = [list(row) for row in grid]
    for (r, c), letter in letters.items():
        if rows[r][c] != FOG_CELL:
            rows[r][c] = letter
    return tuple("".join(row) for row in rows)


def is_track(cell: str) -> bool:
    """Whether a covered grid's letter is a track (a cell the other agent left)."""
    return cell in _TRACK_LETTERS


_TRACK_LETTERS = frozenset(TRACK_CELLS.values())


def has_tracks(grid: Grid) -> bool:
    """Whether a covered grid shows any track or the other agent."""
    return any(is_track(cell) or cell == OTHER_AGENT_CELL for row in grid for cell in row)


def listed(cell: str) -> str:
    """A letter as the text listing writes it: a track as ``?``, every other as it is."""
    return TRACK_LISTED if cell in _TRACK_LETTERS else cell


HABIT = "Its habit: it breaks the ice of every cell it leaves."


def other_agent_note(route: tuple[Pos, ...]) -> str:
    """What the prompt tells of the other agent: where it started, its moves, where
    it stands, and its habit. The whole route, whatever the fog hides."""
    start, end = route[0], route[-1]
    moves = ", ".join(action.name for action in route_moves(route))
    return (
        f"Another agent crossed the lake before you: it started at ({start[0]},{start[1]}) and moved {moves}, "
        f"and now stands at ({end[0]},{end[1]}). {HABIT}"
    )
