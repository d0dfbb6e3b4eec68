"""An instance: a pure function of (instance seed, regime, grid size)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ._grid import HOLE_PROBABILITY, apply_changes, cell_at, generate_grid, goal_pos
from ._memory import build_memory
from ._plugins import is_builtin, regime_of, regime_stream, resolve_regime
from ._regime import INSTANCE_KEYS, Drawn, RegimeError, checked
from ._rng import Stream
from ._types import Change, Event, Grid, MemoryEntry, Pos

MASTER_SEED = 2024
N_DEFAULT_SEEDS = 50
SEED_RANGE = 10_000
MIN_SIZE = 4
DEFAULT_SIZE = 8


def validate_regime(regime: object) -> str:
    """The canonical regime name: a built-in's (``none``, ``L1``, ``L2``, ``L3``, ``MA``,
    any case), a plug-in's (``module:Class``, a name resolved before or an installed
    plug-in's; ``spatialstale.env._plugins``). Raises RegimeError (a ValueError)."""
    return resolve_regime(regime)


def validate_size(size: object) -> int:
    if isinstance(size, bool) or not isinstance(size, int) or size < MIN_SIZE:
        raise ValueError(f"size must be an integer of at least {MIN_SIZE}; got {size!r}")
    return size


def validate_seed(seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer; got {seed!r}")
    return seed


def default_seeds(master_seed: int = MASTER_SEED, n: int = N_DEFAULT_SEEDS) -> tuple[int, ...]:
    """The instance seeds of a study: ``n`` distinct integers in [0, 10000).

    Derivation: a ``Stream(master_seed, 0, "master")`` (PCG64 keyed by the
    SeedSequence ``[master_seed, 0, 1]``) yields raw 64-bit words; each word modulo
    10000 is a candidate, kept unless already drawn, until ``n`` are kept. They are
    returned in draw order.
    """
    validate_seed(master_seed)
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= SEED_RANGE:
        raise ValueError(f"n must be an integer from 1 to {SEED_RANGE}; got {n!r}")
    rng = Stream(master_seed, 0, "master")
    seeds: dict[int, None] = {}  # insertion-ordered; O(1) membership for n up to SEED_RANGE
    while len(seeds) < n:
        seeds.setdefault(rng.below(SEED_RANGE))
    return tuple(seeds)


@dataclass(frozen=True)
class Instance:
    """Everything random about one world, fixed before any model call.

    ``changes`` are the pre-episode changes (L1, L2, MA); ``schedule`` the online
    events (L3), each applied after the action numbered ``step``; ``record`` what the
    regime recorded to replay or show it (MA's ``route``; plain JSON, empty for most).
    All three are the regime's draw (:class:`~spatialstale.env.Drawn`). ``memory`` is the
    whole store in id order: one entry a cell and, with an extension's entries beside
    them, the entries about no cell (``MemoryEntry.is_cell`` False), which are never stale.
    """

    seed: int
    regime: str
    size: int
    g0: Grid
    memory: tuple[MemoryEntry, ...]
    changes: tuple[Change, ...] = ()
    schedule: tuple[Event, ...] = ()
    record: Mapping[str, Any] = field(default_factory=dict, hash=False)
    _initial: Grid = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_initial", apply_changes(self.g0, self.changes))

    @property
    def start(self) -> Pos:
        return (0, 0)

    @property
    def goal(self) -> Pos:
        return goal_pos(self.size)

    @property
    def id(self) -> str:
        """``L2-s4810``: the regime and seed (and the size when it is not 8)."""
        size = "" if self.size == DEFAULT_SIZE else f"-n{self.size}"
        return f"{self.regime}{size}-s{self.seed}"

    @property
    def drawn(self) -> Drawn:
        """What the regime drew for this instance: its changes, schedule and record."""
        return Drawn(self.changes, self.schedule, self.record)

    @property
    def initial_grid(self) -> Grid:
        """The grid when the episode starts: g0 with the pre-episode changes."""
        return self._initial

    def grid_after(self, step: int) -> Grid:
        """The scheduled grid after ``step`` actions, with no run-time skips."""
        grid = self._initial
        for event in self.schedule:
            if event.step <= step:
                grid = apply_changes(grid, event.changes)
        return grid

    @property
    def final_grid(self) -> Grid:
        """The grid once every scheduled change has happened."""
        return self.grid_after(len(self.schedule) and self.schedule[-1].step)

    def stale_ids(self, grid: Grid) -> frozenset[str]:
        """Paper Eq. 1: the entries whose remembered hazard differs from ``grid``'s."""
        return frozenset(e.id for e in self.memory if e.is_cell and e.cell.hazard != cell_at(grid, e.pos).hazard)

    def stale_ratio(self, grid: Grid) -> float:
        """|{p : grid[p] != g0[p]}| / n²."""
        changed = sum(a != b for row0, row in zip(self.g0, grid, strict=True) for a, b in zip(row0, row, strict=True))
        return changed / (self.size * self.size)

    def entry(self, memory_id: str) -> MemoryEntry:
        return next(e for e in self.memory if e.id == memory_id)

    def entry_at(self, pos: Pos) -> MemoryEntry:
        """The entry about the cell ``pos``."""
        return next(e for e in self.memory if e.is_cell and e.pos == pos)

    def to_dict(self) -> dict[str, object]:
        """The instance as plain data, with the regime's record (MA's ``route``) beside the
        core's keys: empty for most regimes, so their instances keep the bytes they had
        before regimes could record anything."""
        data: dict[str, object] = {
            "seed": self.seed,
            "regime": self.regime,
            "size": self.size,
            "g0": list(self.g0),
            "changes": [c.to_dict() for c in self.changes],
            "schedule": [e.to_dict() for e in self.schedule],
            "memory": [m.to_dict() for m in self.memory],
        }
        return {**data, **self.record}

    def to_json(self) -> str:
        """One canonical JSON line (sorted keys, no spaces): the data file format."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Instance:
        def records(key: str) -> list[dict[str, object]]:
            value = data.get(key, [])
            if not isinstance(value, list):
                raise ValueError(f"instance field {key!r} must be a list")
            return value

        g0 = data["g0"]
        if not isinstance(g0, list):
            raise ValueError("instance field 'g0' must be a list of row strings")
        return cls(
            seed=int(str(data["seed"])),
            regime=validate_regime(data["regime"]),
            size=int(str(data["size"])),
            g0=tuple(str(row) for row in g0),
            memory=tuple(MemoryEntry.from_dict(m) for m in records("memory")),
            changes=tuple(Change.from_dict(c) for c in records("changes")),
            schedule=tuple(Event.from_dict(e) for e in records("schedule")),
            record={key: value for key, value in data.items() if key not in INSTANCE_KEYS},
        )


def make_instance(seed: int, regime: str = "L2", size: int = DEFAULT_SIZE) -> Instance:
    """The instance of (seed, regime, size): its store one entry a cell.

    g0 and the memory snapshot depend on (seed, size) only, so one seed shows the
    same original world in every regime; the changes are the regime's draw from a
    stream of its own (``regime_stream``); a plug-in's draw is checked against the rules
    every regime keeps (``_regime.checked``; the built-ins keep them by construction). The
    ids are the paper's ``mem_{row*n+col}``.

    Raises:
        ValueError: for an unknown regime, a size below 4, a seed that is not a
            non-negative integer;
            RegimeError (a ValueError) for a plug-in regime whose draw fails or
            breaks the rules (one line).
    """
    return _make_instance(validate_seed(seed), validate_regime(regime), validate_size(size))


@lru_cache(maxsize=4096)
def _make_instance(seed: int, regime: str, size: int) -> Instance:
    g0 = generate_grid(size, HOLE_PROBABILITY, Stream(seed, size, "grid"))
    memory = build_memory(g0, Stream(seed, size, "memory"))
    change_regime = regime_of(regime)
    where = f"seed {seed}, n={size}"
    try:
        drawn = change_regime.draw(g0, regime_stream(seed, size, regime))
    except RegimeError:
        raise
    except Exception as error:  # any error of a regime's draw is the regime's: one line
        detail = " ".join(str(error).split())
        raise RegimeError(f"regime {regime}: its draw raised {type(error).__name__}: {detail} ({where})") from error
    if not is_builtin(regime):  # the built-ins keep the rules by construction, tested over many seeds
        drawn = checked(change_regime, drawn, g0, where)
    return Instance(
        seed=seed,
        regime=regime,
        size=size,
        g0=g0,
        memory=memory,
        changes=drawn.changes,
        schedule=drawn.schedule,
        record=drawn.record,
    )
