"""What a change regime is: the public interface every regime implements, built-in or plug-in.

A regime decides how the world changes, before and during an episode. It is a subclass
of :class:`ChangeRegime` with a ``name`` and one method, :meth:`ChangeRegime.draw`:
from the original grid g0 and a random stream of its own it draws a :class:`Drawn`,
the changes applied before the episode, the events that happen during it (each after
a given number of actions) and any data it needs recorded in the instance to replay
it. Two hooks have defaults that fit most regimes: :meth:`ChangeRegime.windows` (the
steps at which the detection task audits the memory) and :meth:`ChangeRegime.overlay`
(what every observation shows beyond the grid: the other agent's tracks and story, in
regime MA).

The core (building an instance, the detection windows, the navigation env's events,
the prompt's observation) asks the regime through this interface and names none: L1,
L2, L3, MA and ``none`` implement it (``_regimes``, ``_tracks``), and so does a regime
written outside the suite (``_plugins``). A plug-in's every draw is checked
(:func:`checked`; the built-ins keep the rules by construction, and ``tests/env`` checks
them over many seeds): a draw that touches S or G, flips a cell from what it is not, or
leaves no path from S to G fails with one line naming the regime, the seed and the grid
side.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from ._grid import goal_pos, is_solvable
from ._rng import Stream
from ._types import Cell, Change, Event, Grid

INSTANCE_KEYS = frozenset({"seed", "regime", "size", "g0", "changes", "schedule", "memory"})
"""The keys of an instance's JSON record that the core writes; a regime's own record
(:attr:`Drawn.record`) uses others."""


class RegimeError(ValueError):
    """A regime that cannot be used: not found, not a regime, or a draw that breaks the
    rules. Its message is one line."""


@dataclass(frozen=True)
class Drawn:
    """What a regime draws for one instance.

    Attributes:
        changes: applied to g0 before the episode starts, in order (L1, L2, MA).
        schedule: events during the episode, in increasing ``step`` order: each event's
            changes happen right after action number ``step`` (L3).
        record: data the regime needs recorded to replay or show the instance (MA: its
            ``route``): plain JSON values under keys of their own, written into the
            instance's JSON record and every sample's metadata. Empty for most regimes,
            so their records hold nothing more.
    """

    changes: tuple[Change, ...] = ()
    schedule: tuple[Event, ...] = ()
    record: Mapping[str, Any] = field(default_factory=dict)


class Overlay(Protocol):
    """What a regime adds to every observation of an instance's grid (see
    :meth:`ChangeRegime.overlay`): a note told before the grid, the grid as shown, and a
    line the image's legend adds for what the cover draws."""

    @property
    def note(self) -> str:
        """Told before the grid in every observation, whatever fog hides."""
        ...

    def cover(self, grid: Grid) -> Grid:
        """``grid`` (as the caller may see it: fogged cells are ``?``) as shown."""
        ...

    def legend(self, grid: Grid) -> str | None:
        """What the image header adds for a covered ``grid``, if anything."""
        ...


class ChangeRegime(ABC):
    """A change regime: subclass it, give it a ``name`` and implement :meth:`draw`.

    The class is constructed once, with no arguments; its instances hold no state
    between draws (an instance of the world is a pure function of the seed, the grid
    side and the regime).

    Attributes:
        name: the regime's name everywhere: ``-T regime=<name>``, sample ids
            (``<name>-s4810``), metrics (``f1_mean_<name>``), the study and the report.
            Letters, digits and underscores, starting with a letter.
    """

    name: ClassVar[str]
    report_title: ClassVar[str | None] = None
    """The heading of the regime's own part of the report's section beyond the paper: its
    stale ratio and detection F1 beside the paper's regimes, and navigation in it beside
    their death rates. None (the default): no part; its rows and columns in the report's
    tables of regimes are all it has."""
    report_text: ClassVar[str] = ""
    """The opening paragraph of that part (Markdown)."""

    @abstractmethod
    def draw(self, g0: Grid, rng: Stream) -> Drawn:
        """The changes of one instance, drawn from ``rng`` alone (never another source
        of randomness), given its original grid ``g0`` (``len(g0)`` is the side n).

        ``rng`` is the regime's own stream, keyed by the instance seed, the grid side
        and the regime's name; g0 and the memory come from streams of their own, so one
        seed shows the same original world in every regime. Keep S (0, 0) and G
        (n-1, n-1) as they are and leave a path from S to G after the pre-episode
        changes and after every event: redraw until that holds.
        """

    def windows(self, drawn: Drawn) -> tuple[int, ...]:
        """The steps after which the detection task audits the memory of an instance
        whose draw is ``drawn`` (``Instance.drawn``), each against the grid scheduled
        then: the start (step 0) when the episode starts changed or nothing is
        scheduled, and the step of each event."""
        start = (0,) if drawn.changes or not drawn.schedule else ()
        return (*start, *(event.step for event in drawn.schedule))

    def overlay(self, drawn: Drawn) -> Overlay | None:
        """What every observation of an instance whose draw is ``drawn`` shows beyond the
        grid (MA: the other agent's tracks and story, from its record); None, the
        default, shows the grid as it is."""
        return None


def checked(regime: ChangeRegime, drawn: object, g0: Grid, where: str) -> Drawn:
    """``drawn`` if it keeps the rules every regime keeps, else a one-line RegimeError.

    The rules: a :class:`Drawn` of :class:`~spatialstale.env.Change` and
    :class:`~spatialstale.env.Event` records; no change at S or G or off the grid; each
    change flips F and H and starts from the cell as it is when it happens; events
    after action 1 or later, in increasing order; a path from S to G after the
    pre-episode changes and after every event; a record of JSON values under keys the
    core does not use.
    """

    def fail(why: str) -> RegimeError:
        return RegimeError(f"regime {regime.name}: its draw {why} ({where})")

    if not isinstance(drawn, Drawn):
        raise fail(f"must return a spatialstale.env.Drawn; got {type(drawn).__name__}")
    n = len(g0)
    corners = {(0, 0), goal_pos(n)}

    def flips(grid: Grid, changes: object, what: str) -> Grid:
        if not isinstance(changes, tuple) or not all(isinstance(c, Change) for c in changes):
            raise fail(f"gave {what} that are not a tuple of spatialstale.env.Change")
        rows = [list(row) for row in grid]
        for change in changes:
            at = f"({change.row},{change.col})"
            if not all(isinstance(i, int) and 0 <= i < n for i in change.pos):
                raise fail(f"changes {at}, off the {n}x{n} grid")
            if change.pos in corners:
                raise fail(f"changes {at}, which is S or G: they never change")
            if not (isinstance(change.before, Cell) and isinstance(change.after, Cell)) or {
                change.before,
                change.after,
            } != {Cell.FROZEN, Cell.HOLE}:
                raise fail(f"changes {at} from {change.before!s} to {change.after!s}: a change flips F and H")
            now = rows[change.row][change.col]
            if now != change.before.value:
                raise fail(f"changes {at} from {change.before.value}, but it is {now} then")
            rows[change.row][change.col] = change.after.value
        grid = tuple("".join(row) for row in rows)
        if not is_solvable(grid):
            raise fail(f"leaves no path from S to G after its {what}")
        return grid

    grid = flips(g0, drawn.changes, "pre-episode changes")
    if not isinstance(drawn.schedule, tuple) or not all(isinstance(e, Event) for e in drawn.schedule):
        raise fail("gave a schedule that is not a tuple of spatialstale.env.Event")
    last = 0
    for event in drawn.schedule:
        if isinstance(event.step, bool) or not isinstance(event.step, int) or event.step <= last:
            raise fail(f"schedules an event at step {event.step!r}: steps are integers from 1, increasing")
        last = event.step
        grid = flips(grid, event.changes, f"event at step {event.step}")
    return Drawn(drawn.changes, drawn.schedule, _record(drawn.record, fail))


def _record(record: object, fail: Any) -> dict[str, Any]:
    """``record`` as plain JSON values (tuples become lists), so that an instance read back
    from its JSON equals the one drawn."""
    if not isinstance(record, Mapping):
        raise fail(f"gave a record that is not a mapping; got {type(record).__name__}")
    clash = sorted(str(key) for key in record if key in INSTANCE_KEYS or not isinstance(key, str))
    if clash:
        raise fail(f"records {', '.join(clash)}: keys of its own, other than {', '.join(sorted(INSTANCE_KEYS))}")
    try:
        plain: dict[str, Any] = json.loads(json.dumps(dict(record), allow_nan=False))
    except (TypeError, ValueError) as error:
        raise fail(f"gave a record that is not plain JSON: {error}") from None
    return plain
