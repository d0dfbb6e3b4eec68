"""The agents' pure decisions: believed maps, judgements and the step planner."""

from __future__ import annotations

from spatialstale.agents._perception import CallKind, MemoryClaim, Perception
from spatialstale.agents._policies import believed_grid, judge, plan_action
from spatialstale.env import Action

GRID = (
    "SFFF",
    "FHHF",
    "FHHF",
    "HFFG",
)


def seen(memory: tuple[MemoryClaim, ...]) -> Perception:
    return Perception(CallKind.NAVIGATE, memory, GRID, (0, 0), (3, 3), "text")


def test_observer_flags_exactly_the_disagreeing_claims() -> None:
    claims = (
        MemoryClaim("mem_005", "SAFE", (1, 1)),
        MemoryClaim("mem_001", "DANGER", (0, 1)),
        MemoryClaim("mem_012", "DANGER", (3, 0)),
        MemoryClaim("mem_015", "SAFE", (3, 3)),
    )
    verdicts = judge(claims, GRID)
    assert [stale for _, stale, _ in verdicts] == [True, True, False, False]
    assert "H in the current grid" in verdicts[0][2]


def test_credulous_map_takes_memory_over_observation() -> None:
    claims = (MemoryClaim("mem_005", "SAFE", (1, 1)), MemoryClaim("mem_001", "DANGER", (0, 1)))
    assert believed_grid(seen(claims), trust_memory=True) == ("SHFF", "FFHF", "FHHF", "HFFG")
    assert believed_grid(seen(claims), trust_memory=False) == GRID
    assert not any(stale for _, stale, _ in judge(claims, believed_grid(seen(claims), trust_memory=True) or ()))


def test_planner_follows_a_shortest_safe_path() -> None:
    assert plan_action(GRID, (0, 0), (3, 3)) is Action.RIGHT  # DOWN is a dead end
    assert plan_action(GRID, (3, 1), (3, 3)) is Action.RIGHT
    assert plan_action(GRID, (0, 3), (3, 3)) is Action.DOWN


def test_planner_without_a_path_moves_closer_or_waits() -> None:
    walled = ("SFHF", "FFHF", "HHHF", "FFFG")
    assert plan_action(walled, (0, 0), (3, 3)) is Action.DOWN  # (1,0) and (0,1) tie; DOWN first
    assert plan_action(walled, (1, 1), (3, 3)) is Action.UP  # UP and LEFT tie; UP first
    boxed = ("SHFF", "HFFF", "FFFF", "FFFG")
    assert plan_action(boxed, (0, 0), (3, 3)) is Action.UP  # into the border: stays in place
