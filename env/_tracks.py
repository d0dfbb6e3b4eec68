"""Regime MA: the world changed by another agent, and what a navigator is shown of it.

The other agent crossed the lake before the episode and broke the ice of every cell
it left (:class:`OtherAgent`, :func:`agent_route`). The observation never shows those
cells: each cell of its route is covered by its tracks, and the prompt tells its
moves and its habit (:class:`Tracks`, the regime's overlay), so a model must infer
which memories the route made stale.

A covered grid (:func:`cover_tracks`) is the grid as seen, with the route's cells
replaced by letters of their own: a cell the other agent left holds the arrow of the
move it made from there (:data:`TRACK_CELLS`), the cell where it stands now holds
:data:`OTHER_AGENT_CELL` (its ice is unbroken). The text listing writes a track as
``?`` and the other agent as ``A`` (:func:`listed`); the image draws a track as a brown
tile with a white arrow and the other agent as a blue circle on ice (``_render``).
Nothing here is random: a covered grid is a pure function of (grid, route).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Protocol

from ._fog import FOG_CELL
from ._grid import apply_changes, cell_at, flip, is_solvable
from ._regime import ChangeRegime, Drawn
from ._regimes import MAX_REDRAWS, _interior
from ._rng import Stream
from ._types import Action, Cell, Change, Grid, Pos

MA_LENGTHS = (6, 7, 8, 9, 10)
"""MA: the number of moves of the other agent's route, k ~ U{6..10}."""
ROUTE = "route"
"""The key of MA's record (the instance's JSON and every sample's metadata): the
route, a list of ``[row, col]``, start first."""

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
TRACKS_IMAGE_LEGEND = (
    "Brown with a white arrow = a cell covered by the other agent's tracks (the arrow points the way it moved); "
    "blue circle = the other agent, on ice."
)
"""Added to the image header when the other agent's route is drawn."""

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


class OtherAgent(ChangeRegime):
    """MA: another agent crossed the lake before the episode and broke the ice of every
    cell it left. Its route is recorded (``route``), and every observation covers the
    route with its tracks and tells its moves and habit (:class:`Tracks`)."""

    name = "MA"
    report_title = "A world changed by another agent (MA)"
    report_text = (
        "`-T regime=MA`: the changes come from a second, scripted agent with a seeded route and a stated habit; "
        "the model sees its moves but not the cells it changed."
    )

    def draw(self, g0: Grid, rng: Stream) -> Drawn:
        route = agent_route(g0, rng)
        return Drawn(changes=route_changes(g0, route), record={ROUTE: [list(pos) for pos in route]})

    def overlay(self, drawn: Drawn) -> Tracks:
        return Tracks(route_of(drawn))


class Recorded(Protocol):
    """An instance, or a regime's draw: anything that holds a regime's record."""

    @property
    def record(self) -> Mapping[str, Any]: ...


def route_of(instance: Recorded) -> tuple[Pos, ...]:
    """The other agent's route of an MA instance, start first (empty for any other
    regime's): read from its record, where it is a list of ``[row, col]``."""
    return tuple((int(r), int(c)) for r, c in instance.record.get(ROUTE, ()))


@dataclass(frozen=True)
class Tracks:
    """What every observation shows of the other agent: its story before the grid
    (:func:`other_agent_note`), its route covered by its tracks (:func:`cover_tracks`),
    and the image legend's line for them."""

    route: tuple[Pos, ...]

    @property
    def note(self) -> str:
        return other_agent_note(self.route)

    def cover(self, grid: Grid) -> Grid:
        return cover_tracks(grid, self.route)

    def legend(self, grid: Grid) -> str | None:
        # fog can hide the whole route: then nothing drawn needs a legend
        return TRACKS_IMAGE_LEGEND if has_tracks(grid) else None


def route_changes(g0: Grid, route: tuple[Pos, ...]) -> tuple[Change, ...]:
    """MA's habit: the other agent breaks the ice of every cell it leaves, so every
    cell of its route but the last (where it now stands) thaws, in route order."""
    return tuple(flip(g0, pos) for pos in route[:-1])


def agent_route(g0: Grid, rng: Stream) -> tuple[Pos, ...]:
    """MA: the other agent's route, k ~ U{6..10} moves of a self-avoiding random walk.

    The walk starts at a cell drawn uniformly among the frozen non-S/G cells of
    ``g0`` (in row-major order) and visits only such cells, never one twice; each
    move is uniform among the allowed neighbours, taken in the order LEFT, DOWN,
    RIGHT, UP (``Action``'s). A walk that gets stuck before k moves is redrawn whole,
    start included; so is a route whose thaws (:func:`route_changes`) block every
    S→G path, with the same k. The route holds k + 1 cells, the start first.

    Rarely (about 1 seed in 100 at n=8, none of the 50 default seeds; more often on
    small grids) no draw of k moves succeeds in ``MAX_REDRAWS`` draws; then k is
    lowered by one and the draws go on from the same stream, down to a single move.
    """
    k = rng.choice(MA_LENGTHS)
    ice = [p for p in _interior(len(g0)) if cell_at(g0, p) is Cell.FROZEN]
    for moves in range(k, 0, -1):
        route = _walk(g0, ice, moves, rng)
        if route is not None:
            return route
    raise RuntimeError("MA: no solvable route found")


def _walk(g0: Grid, ice: list[Pos], moves: int, rng: Stream) -> tuple[Pos, ...] | None:
    """A self-avoiding walk of ``moves`` moves over ``ice`` whose thaws keep an S→G
    path, within ``MAX_REDRAWS`` draws; None when every draw fails."""
    walkable = set(ice)
    for _ in range(MAX_REDRAWS if ice else 0):
        route = [rng.choice(ice)]
        while len(route) <= moves:
            here = route[-1]
            steps = [(here[0] + a.delta[0], here[1] + a.delta[1]) for a in Action]
            options = [p for p in steps if p in walkable and p not in route]
            if not options:
                break
            route.append(rng.choice(options))
        if len(route) == moves + 1 and is_solvable(apply_changes(g0, route_changes(g0, tuple(route)))):
            return tuple(route)
    return None
