"""Instances: the invariants of SPEC §1-4 over many seeds and sizes, labels, round trips."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spatialstale.env import Instance, make_instance

from ._support import BIG, PROPERTY, REGIMES, SEEDS, SIZES, differing, has_path


def realized_grids(instance: Instance) -> list[tuple[str, ...]]:
    """The grids a run can see: the start grid and the grid after every L3 event."""
    return [instance.initial_grid, *(instance.grid_after(event.step) for event in instance.schedule)]


def expected_stale_ids(g0: tuple[str, ...], grid: tuple[str, ...]) -> frozenset[str]:
    """Paper Eq. 1 from the two grids alone: h(g0[p]) != h(grid[p])."""
    n = len(g0)
    return frozenset(
        f"mem_{r * n + c:03d}" for r in range(n) for c in range(n) if (g0[r][c] == "H") != (grid[r][c] == "H")
    )


def check_corners(instance: Instance) -> None:
    n = instance.size
    grids = [instance.g0, instance.initial_grid, *(instance.grid_after(step) for step in range(0, 51))]
    for grid in grids:
        assert len(grid) == n and all(len(row) == n for row in grid)
        assert set("".join(grid)) <= set("SFHG")
        assert grid[0][0] == "S"
        assert grid[n - 1][n - 1] == "G"
        assert "".join(grid).count("S") == 1 and "".join(grid).count("G") == 1


def check_paths(instance: Instance) -> None:
    assert has_path(instance.g0)
    for grid in realized_grids(instance):
        assert has_path(grid), grid


def check_labels(instance: Instance) -> None:
    grids = [instance.g0, *realized_grids(instance), instance.final_grid]
    for grid in grids:
        stale = instance.stale_ids(grid)
        assert stale == expected_stale_ids(instance.g0, grid)
        assert instance.stale_ratio(grid) == len(differing(instance.g0, grid)) / instance.size**2
        # Changes flip F and H only, so a changed cell and a stale entry are the same thing.
        assert len(stale) == len(differing(instance.g0, grid))
    assert instance.stale_ids(instance.g0) == frozenset()


def check_instance(instance: Instance) -> None:
    check_corners(instance)
    check_paths(instance)
    check_labels(instance)


@PROPERTY
@given(seed=SEEDS, size=SIZES, regime=st.sampled_from(REGIMES))
def test_instance_invariants(seed: int, size: int, regime: str) -> None:
    instance = make_instance(seed, regime, size)
    assert (instance.seed, instance.regime, instance.size) == (seed, regime, size)
    check_instance(instance)


@pytest.mark.parametrize("regime", REGIMES)
@pytest.mark.parametrize(("seed", "size"), BIG)
def test_instance_invariants_at_32(seed: int, size: int, regime: str) -> None:
    check_instance(make_instance(seed, regime, size))


@PROPERTY
@given(seed=SEEDS, size=SIZES)
def test_g0_and_memory_do_not_depend_on_the_regime(seed: int, size: int) -> None:
    instances = [make_instance(seed, regime, size) for regime in REGIMES]
    assert len({i.g0 for i in instances}) == 1
    assert len({i.memory for i in instances}) == 1


@PROPERTY
@given(seed=SEEDS, size=SIZES, regime=st.sampled_from(REGIMES))
def test_round_trip(seed: int, size: int, regime: str) -> None:
    instance = make_instance(seed, regime, size)
    line = instance.to_json()
    again = Instance.from_dict(json.loads(line))
    assert again == instance
    assert again.to_json() == line
    assert again.initial_grid == instance.initial_grid
    assert again.final_grid == instance.final_grid
    assert "\n" not in line


def test_to_json_is_canonical() -> None:
    data = json.loads(make_instance(3, "L3").to_json())
    assert list(data) == sorted(data)
    assert set(data) == {"seed", "regime", "size", "g0", "changes", "schedule", "memory"}


def test_static_instance_never_changes() -> None:
    instance = make_instance(5, "none")
    assert instance.changes == () and instance.schedule == ()
    assert instance.initial_grid == instance.g0 == instance.final_grid


def test_id_names_regime_seed_and_size() -> None:
    assert make_instance(4810, "L2").id == "L2-s4810"
    assert make_instance(4810, "L1", 16).id == "L1-n16-s4810"


def test_entry_lookup_by_id() -> None:
    instance = make_instance(11, "L1")
    assert instance.entry("mem_044").pos == (5, 4)
    assert instance.entry("mem_021").pos == (2, 5)
    for entry in instance.memory:
        assert instance.entry(entry.id) is entry
