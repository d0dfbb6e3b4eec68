"""The change regimes of SPEC §4: L1 spot, L2 cluster, L3 online, and ``none``; and MA,
where the changes come from a second, scripted agent (docs/multi-agent.md)."""

from __future__ import annotations

from ._grid import apply_changes, cell_at, flip, goal_pos, is_solvable
from ._rng import Stream
from ._types import Action, Cell, Change, Event, Grid, Pos

CHANGE_REGIMES = ("L1", "L2", "L3")
"""The regimes that change the world: L1 spot, L2 cluster, L3 online (SPEC §4): the
paper's, and the study's default."""
AGENT_REGIMES = ("MA",)
"""The regimes whose changes another agent makes: MA, a scripted agent that crossed
the lake before the episode and broke the ice of every cell it left."""
REGIMES = ("none", *CHANGE_REGIMES, *AGENT_REGIMES)
"""Every regime; ``none`` leaves the grid as it was (a static FrozenLake)."""

L1_COUNTS = (5, 6, 7)
L2_COUNTS = (12, 13, 14, 15, 16)
L2_RADIUS = 2
L3_INTERVAL = 5
L3_HORIZON = 50
L3_FIRE_PROBABILITY = 0.7
L3_FLIPS_PER_EVENT = 2
MA_LENGTHS = (6, 7, 8, 9, 10)
"""MA: the number of moves of the other agent's route, k ~ U{6..10}."""
MAX_REDRAWS = 1000


def _interior(size: int) -> list[Pos]:
    goal = goal_pos(size)
    return [(r, c) for r in range(size) for c in range(size) if (r, c) not in ((0, 0), goal)]


def _pick(grid: Grid, cells: list[Pos], taken: set[Pos], rng: Stream, *, fallback: bool) -> Pos | None:
    """Draw thaw or freeze with p=1/2, then a uniform cell of ``cells`` not in ``taken``
    whose type matches (F for a thaw, H for a freeze). With none left: any untaken
    cell when ``fallback``, else None."""
    want = Cell.FROZEN if rng.chance(0.5) else Cell.HOLE
    pool = [p for p in cells if p not in taken and cell_at(grid, p) is want]
    if not pool and fallback:
        pool = [p for p in cells if p not in taken]
    return rng.choice(pool) if pool else None


def spot_changes(g0: Grid, rng: Stream) -> tuple[Change, ...]:
    """L1: k ~ U{5,6,7} changes at distinct cells anywhere, keeping an S→G path.

    Each change picks thaw or freeze with p=1/2, then a uniform cell of the matching
    type among the cells not yet changed (when none is left, the other type). A draw
    that blocks every path is redrawn whole with the same k, so exactly k changes are
    realized.
    """
    k = rng.choice(L1_COUNTS)
    cells = _interior(len(g0))
    for _ in range(MAX_REDRAWS):
        changes: list[Change] = []
        taken: set[Pos] = set()
        for _ in range(k):
            pos = _pick(g0, cells, taken, rng, fallback=True)
            assert pos is not None  # k <= 7 and the fallback pool holds every other cell
            taken.add(pos)
            changes.append(flip(g0, pos))
        if is_solvable(apply_changes(g0, changes)):
            return tuple(changes)
    raise RuntimeError("L1: no solvable change set found")


def cluster_changes(g0: Grid, rng: Stream) -> tuple[Change, ...]:
    """L2: k ~ U{12..16} requested changes within Manhattan radius 2 of one centre.

    The centre is uniform over non-S/G cells. Each request picks thaw or freeze with
    p=1/2, then a uniform unchanged neighbourhood cell of the matching type; a request
    with no such cell is dropped. When the result blocks every path, a new centre is
    drawn and the k requests are made again.
    """
    k = rng.choice(L2_COUNTS)
    cells = _interior(len(g0))
    for _ in range(MAX_REDRAWS):
        centre = rng.choice(cells)
        hood = [p for p in cells if abs(p[0] - centre[0]) + abs(p[1] - centre[1]) <= L2_RADIUS]
        changes: list[Change] = []
        taken: set[Pos] = set()
        for _ in range(k):
            pos = _pick(g0, hood, taken, rng, fallback=False)
            if pos is not None:
                taken.add(pos)
                changes.append(flip(g0, pos))
        if changes and is_solvable(apply_changes(g0, changes)):
            return tuple(changes)
    raise RuntimeError("L2: no solvable cluster found")


def online_schedule(g0: Grid, rng: Stream) -> tuple[Event, ...]:
    """L3: after actions 5, 10, ..., 45 an event fires with p=0.7 and flips 2 cells.

    Every flip picks thaw or freeze with p=1/2, then a uniform non-S/G cell of the
    matching *current* type (a cell changed earlier may flip back). The two cells of
    an event are distinct. An event whose flips would block every path is redrawn.
    """
    grid = g0
    cells = _interior(len(g0))
    events: list[Event] = []
    for step in range(L3_INTERVAL, L3_HORIZON, L3_INTERVAL):
        if not rng.chance(L3_FIRE_PROBABILITY):
            continue
        for _ in range(MAX_REDRAWS):
            changes: list[Change] = []
            taken: set[Pos] = set()
            for _ in range(L3_FLIPS_PER_EVENT):
                pos = _pick(grid, cells, taken, rng, fallback=True)
                assert pos is not None  # two flips, and the fallback pool holds every other cell
                taken.add(pos)
                changes.append(flip(grid, pos))
            after = apply_changes(grid, changes)
            if is_solvable(after):
                grid = after
                events.append(Event(step, tuple(changes)))
                break
        else:
            raise RuntimeError("L3: no solvable event found")
    return tuple(events)


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
