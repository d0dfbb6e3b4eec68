"""The built-in change regimes of SPEC §4: L1 spot, L2 cluster, L3 online, and ``none``.

Each is a :class:`~spatialstale.env.ChangeRegime` (``_regime``) whose ``draw`` calls one
pure function of (g0, stream) below. MA, where the changes come from a second, scripted
agent, lives with what it shows (``_tracks``; docs/multi-agent.md).
"""

from __future__ import annotations

from ._grid import apply_changes, cell_at, flip, goal_pos, is_solvable
from ._regime import ChangeRegime, Drawn
from ._rng import Stream
from ._types import Cell, Change, Event, Grid, Pos

STATIC = "none"
"""The regime that leaves the grid as it was (a static FrozenLake)."""
CHANGE_REGIMES = ("L1", "L2", "L3")
"""The regimes that change the world: L1 spot, L2 cluster, L3 online (SPEC §4): the
paper's, and the study's default."""

L1_COUNTS = (5, 6, 7)
L2_COUNTS = (12, 13, 14, 15, 16)
L2_RADIUS = 2
L3_INTERVAL = 5
L3_HORIZON = 50
L3_FIRE_PROBABILITY = 0.7
L3_FLIPS_PER_EVENT = 2
MAX_REDRAWS = 1000


class Static(ChangeRegime):
    """``none``: nothing changes; the dynamics are Gymnasium's FrozenLake's."""

    name = STATIC

    def draw(self, g0: Grid, rng: Stream) -> Drawn:
        return Drawn()


class Spot(ChangeRegime):
    """L1 spot: a few scattered changes before the episode (:func:`spot_changes`)."""

    name = "L1"

    def draw(self, g0: Grid, rng: Stream) -> Drawn:
        return Drawn(changes=spot_changes(g0, rng))


class Cluster(ChangeRegime):
    """L2 cluster: many changes around one centre before the episode (:func:`cluster_changes`)."""

    name = "L2"

    def draw(self, g0: Grid, rng: Stream) -> Drawn:
        return Drawn(changes=cluster_changes(g0, rng))


class Online(ChangeRegime):
    """L3 online: events during the episode (:func:`online_schedule`)."""

    name = "L3"

    def draw(self, g0: Grid, rng: Stream) -> Drawn:
        return Drawn(schedule=online_schedule(g0, rng))

    def windows(self, drawn: Drawn) -> tuple[int, ...]:
        """After each event only (SPEC §6): the episode starts on g0, where nothing is stale."""
        return tuple(event.step for event in drawn.schedule)


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
