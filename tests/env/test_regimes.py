"""The change regimes of SPEC §4, checked from the realized changes alone."""

from __future__ import annotations

import pytest
from hypothesis import given

from spatialstale.env import Instance, make_instance
from spatialstale.env._rng import Stream

from ._support import BIG, FLIP, PROPERTY, SEEDS, SIZES, differing, set_cells


def corners(n: int) -> set[tuple[int, int]]:
    return {(0, 0), (n - 1, n - 1)}


def check_pre_episode_changes(instance: Instance) -> None:
    """L1/L2: distinct non-S/G cells, each a real flip of its g0 type, and nothing else."""
    g0, n = instance.g0, instance.size
    positions = [change.pos for change in instance.changes]
    assert len(set(positions)) == len(positions)
    assert not set(positions) & corners(n)
    for change in instance.changes:
        assert change.before.value == g0[change.row][change.col]
        assert change.after.value == FLIP[change.before.value]
        assert change.kind == ("thaw" if change.after.value == "H" else "freeze")
    assert instance.schedule == ()
    expected = set_cells(g0, {change.pos: change.after.value for change in instance.changes})
    assert instance.initial_grid == expected
    assert differing(g0, instance.initial_grid) == set(positions)


def check_l1(instance: Instance) -> None:
    check_pre_episode_changes(instance)
    # k is the stream's first draw, U{5,6,7}; exactly k changes are realized.
    k = (5, 6, 7)[Stream(instance.seed, instance.size, "L1").below(3)]
    assert len(instance.changes) == k


def check_l2(instance: Instance) -> None:
    check_pre_episode_changes(instance)
    n = instance.size
    assert 1 <= len(instance.changes) <= 16
    k = (12, 13, 14, 15, 16)[Stream(instance.seed, instance.size, "L2").below(5)]
    assert len(instance.changes) <= k
    centres = [
        (r, c)
        for r in range(n)
        for c in range(n)
        if (r, c) not in corners(n) and all(abs(ch.row - r) + abs(ch.col - c) <= 2 for ch in instance.changes)
    ]
    assert centres, instance.changes


def check_l3(instance: Instance) -> None:
    n = instance.size
    assert instance.changes == ()
    assert instance.initial_grid == instance.g0
    steps = [event.step for event in instance.schedule]
    assert steps == sorted(set(steps))
    assert set(steps) <= set(range(5, 50, 5))
    grid = instance.g0
    for event in instance.schedule:
        assert instance.grid_after(event.step - 1) == grid
        assert len(event.changes) == 2
        assert event.changes[0].pos != event.changes[1].pos
        for change in event.changes:
            assert change.pos not in corners(n)
            assert change.before.value == grid[change.row][change.col]
            assert change.after.value == FLIP[change.before.value]
        grid = set_cells(grid, {change.pos: change.after.value for change in event.changes})
        assert instance.grid_after(event.step) == grid
    assert instance.final_grid == grid


CHECKS = {"L1": check_l1, "L2": check_l2, "L3": check_l3}


@PROPERTY
@given(seed=SEEDS, size=SIZES)
def test_l1(seed: int, size: int) -> None:
    check_l1(make_instance(seed, "L1", size))


@PROPERTY
@given(seed=SEEDS, size=SIZES)
def test_l2(seed: int, size: int) -> None:
    check_l2(make_instance(seed, "L2", size))


@PROPERTY
@given(seed=SEEDS, size=SIZES)
def test_l3(seed: int, size: int) -> None:
    check_l3(make_instance(seed, "L3", size))


@pytest.mark.parametrize("regime", sorted(CHECKS))
@pytest.mark.parametrize(("seed", "size"), BIG)
def test_regimes_at_32(seed: int, size: int, regime: str) -> None:
    CHECKS[regime](make_instance(seed, regime, size))


def test_l1_uses_every_count() -> None:
    counts = {len(make_instance(seed, "L1").changes) for seed in range(60)}
    assert counts == {5, 6, 7}


def test_l2_changes_cluster_and_vary() -> None:
    counts = [len(make_instance(seed, "L2").changes) for seed in range(60)]
    assert max(counts) > 8
    assert len(set(counts)) > 3


def test_l3_fires_about_seven_times_in_ten() -> None:
    fired = sum(len(make_instance(seed, "L3").schedule) for seed in range(100))
    # 900 slots at p=0.7: 630 expected, sd about 14.
    assert 560 < fired < 700


def test_thaws_and_freezes_both_occur() -> None:
    kinds = {change.kind for seed in range(20) for change in make_instance(seed, "L2").changes}
    assert kinds == {"thaw", "freeze"}
