"""The memory snapshot of SPEC §3: one entry per cell, ids, texts and the explored flag."""

from __future__ import annotations

import pytest
from hypothesis import given

from spatialstale.env import Cell, Instance, make_instance
from spatialstale.env._memory import N_WALKS, WALK_LENGTH, explore
from spatialstale.env._rng import Stream

from ._support import BIG, PROPERTY, SEEDS, SIZES, reachable

TEXTS = {
    "F": "SAFE at ({r},{c}): Frozen ice - safe to walk",
    "H": "DANGER at ({r},{c}): Hole - dangerous, do not step",
}


def check_memory(instance: Instance) -> None:
    n = instance.size
    g0 = instance.g0
    memory = instance.memory
    assert len(memory) == n * n
    assert [entry.id for entry in memory] == [f"mem_{i:03d}" for i in range(n * n)]
    for i, entry in enumerate(memory):
        r, c = divmod(i, n)
        assert entry.pos == (r, c) == (entry.row, entry.col)
        assert entry.cell.value == g0[r][c]
        kind = g0[r][c]
        if kind in TEXTS:
            assert entry.text == TEXTS[kind].format(r=r, c=c)
        else:
            assert entry.text.startswith(f"SAFE at ({r},{c}): ")
            assert ("start" if kind == "S" else "goal") in entry.text.lower()
        assert entry.claim == ("DANGER" if kind == "H" else "SAFE")
        assert entry.line == f"[{entry.id}] {entry.text}"
    assert memory[0].explored
    # A walk only ever visits cells reachable from S, so nothing else can be explored.
    reach = reachable(g0)
    assert all(entry.pos in reach or g0[entry.row][entry.col] == "H" for entry in memory if entry.explored)


@PROPERTY
@given(seed=SEEDS, size=SIZES)
def test_memory_snapshot(seed: int, size: int) -> None:
    check_memory(make_instance(seed, "none", size))


@pytest.mark.parametrize(("seed", "size"), BIG)
def test_memory_snapshot_at_32(seed: int, size: int) -> None:
    check_memory(make_instance(seed, "none", size))


def test_paper_ids() -> None:
    memory = make_instance(0, "L2").memory
    assert memory[44].id == "mem_044" and memory[44].pos == (5, 4)
    assert memory[21].id == "mem_021" and memory[21].pos == (2, 5)


def test_start_and_goal_texts() -> None:
    memory = make_instance(0, "none").memory
    assert memory[0].text == "SAFE at (0,0): Start - safe to walk"
    assert memory[63].text == "SAFE at (7,7): Goal - safe to walk"
    assert memory[0].cell is Cell.START and memory[63].cell is Cell.GOAL


@PROPERTY
@given(seed=SEEDS, size=SIZES)
def test_explored_flags_are_the_walks_visits(seed: int, size: int) -> None:
    instance = make_instance(seed, "none", size)
    seen = explore(instance.g0, Stream(seed, size, "memory"))
    assert {entry.pos for entry in instance.memory if entry.explored} == set(seen)
    assert all(seen[pos].value == instance.g0[pos[0]][pos[1]] for pos in seen)


def test_walk_parameters() -> None:
    assert (N_WALKS, WALK_LENGTH) == (20, 50)


def test_walks_stop_on_holes() -> None:
    # S is walled in by holes, so every walk ends on its first move into one; only
    # the two holes (or S itself, after a move off the grid) can ever be visited.
    g0 = ("SHFF", "HFFF", "FFFF", "FFFG")
    seen = explore(g0, Stream(1, 4, "memory"))
    assert set(seen) <= {(0, 0), (0, 1), (1, 0)}
    assert seen[(0, 0)] is Cell.START
