"""The Gymnasium env: check_env, equality with FrozenLake, truncation and the L3 events."""

from __future__ import annotations

import random
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.envs.toy_text.frozen_lake import FrozenLakeEnv
from gymnasium.utils.env_checker import check_env
from hypothesis import given
from hypothesis import strategies as st

from spatialstale.env import (
    ENV_ID,
    MAX_STEPS,
    Cell,
    Change,
    DynamicFrozenLakeEnv,
    Event,
    Instance,
    default_seeds,
    make_instance,
    render_rgb,
    text_observation,
)

from ._support import PROPERTY, REGIMES, SEEDS, actions_along, differing, has_path, path_to

MOVES = {0: (0, -1), 1: (1, 0), 2: (0, 1), 3: (-1, 0)}
LEFT, DOWN, RIGHT, UP = 0, 1, 2, 3


def moved(pos: tuple[int, int], action: int, n: int) -> tuple[int, int]:
    r, c = pos[0] + MOVES[action][0], pos[1] + MOVES[action][1]
    return (r, c) if 0 <= r < n and 0 <= c < n else pos


def hand_made(g0: tuple[str, ...], schedule: tuple[Event, ...]) -> Instance:
    """An L3 instance with a chosen schedule; the env never reads the memory."""
    return Instance(seed=0, regime="L3", size=len(g0), g0=g0, memory=(), schedule=schedule)


def thaw(r: int, c: int) -> Change:
    return Change(r, c, Cell.FROZEN, Cell.HOLE)


# --- Gymnasium's own checker ----------------------------------------------------------


@pytest.mark.parametrize("render_mode", [None, "ansi", "rgb_array"])
@pytest.mark.parametrize("regime", REGIMES)
def test_check_env(regime: str, render_mode: str | None) -> None:
    env = gymnasium.make(ENV_ID, regime=regime, size=8, instance_seed=17, render_mode=render_mode)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)


def test_make_builds_the_instance() -> None:
    env = gymnasium.make(ENV_ID, regime="L2", size=16, instance_seed=5)
    assert isinstance(env.unwrapped, DynamicFrozenLakeEnv)
    assert env.unwrapped.instance == make_instance(5, "L2", 16)
    assert env.observation_space == gymnasium.spaces.Discrete(256)
    assert env.action_space == gymnasium.spaces.Discrete(4)


# --- Equality with FrozenLake on a static grid ---------------------------------------


def compare_with_frozenlake(seed: int, size: int, actions: list[int]) -> None:
    ours = DynamicFrozenLakeEnv("none", size, seed)
    g0 = ours.instance.g0
    theirs = FrozenLakeEnv(desc=list(g0), is_slippery=False)
    obs, _ = ours.reset(seed=seed)
    ref_obs, _ = theirs.reset(seed=seed)
    assert int(obs) == int(ref_obs) == 0
    for t, action in enumerate(actions, start=1):
        obs, reward, terminated, truncated, info = ours.step(action)
        ref_obs, ref_reward, ref_terminated, ref_truncated, ref_info = theirs.step(action)
        assert int(obs) == int(ref_obs)
        assert terminated == ref_terminated
        assert info["prob"] == ref_info["prob"] == 1.0
        if ref_terminated and ref_reward == 0:
            assert g0[int(obs) // size][int(obs) % size] == "H"
            assert reward == -1.0
        else:
            assert reward == ref_reward
        assert not ref_truncated
        assert truncated == (not terminated and t == MAX_STEPS)
        assert info["grid"] == g0
        if terminated or truncated:
            break


@PROPERTY
@given(
    seed=SEEDS,
    size=st.integers(min_value=4, max_value=10),
    actions=st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=60),
)
def test_matches_frozenlake_on_random_actions(seed: int, size: int, actions: list[int]) -> None:
    compare_with_frozenlake(seed, size, actions)


@pytest.mark.parametrize("seed", range(25))
def test_matches_frozenlake_on_long_safe_walks(seed: int) -> None:
    # Uniform actions fall into a hole within a few steps; these walks avoid holes most
    # of the time, so truncation and the goal are reached too.
    instance = make_instance(seed, "none", 6)
    rng = random.Random(seed)
    pos = (0, 0)
    actions = []
    for _ in range(60):
        safe = [a for a in range(4) if instance.g0[moved(pos, a, 6)[0]][moved(pos, a, 6)[1]] != "H"]
        action = rng.choice(safe) if safe and rng.random() < 0.95 else rng.randrange(4)
        actions.append(action)
        pos = moved(pos, action, 6)
    compare_with_frozenlake(seed, 6, actions)


@pytest.mark.parametrize("seed", default_seeds()[:10])
def test_shortest_path_reaches_the_goal(seed: int) -> None:
    instance = make_instance(seed, "none")
    path = path_to(instance.g0, instance.goal)
    assert path is not None
    actions = actions_along(path)
    compare_with_frozenlake(seed, 8, actions)
    env = DynamicFrozenLakeEnv(instance=instance)
    env.reset()
    for action in actions[:-1]:
        _, reward, terminated, truncated, _ = env.step(action)
        assert (reward, terminated, truncated) == (0.0, False, False)
    obs, reward, terminated, truncated, _ = env.step(actions[-1])
    assert (int(obs), reward, terminated, truncated) == (63, 1.0, True, False)


# --- Episode end ---------------------------------------------------------------------


@pytest.mark.parametrize("regime", REGIMES)
def test_truncation_after_max_steps(regime: str) -> None:
    env = DynamicFrozenLakeEnv(regime, 8, 3)
    env.reset()
    for t in range(1, MAX_STEPS + 1):
        obs, reward, terminated, truncated, info = env.step(LEFT)  # off the grid: stays on S
        assert int(obs) == 0 and reward == 0.0 and not terminated
        assert truncated == (t == MAX_STEPS)
        assert info["step"] == t
    assert MAX_STEPS == 50


def test_custom_max_steps() -> None:
    env = DynamicFrozenLakeEnv("none", 8, 3, max_steps=7)
    env.reset()
    flags = [env.step(UP)[3] for _ in range(7)]
    assert flags == [False] * 6 + [True]


def test_hole_ends_the_episode_with_minus_one() -> None:
    env = DynamicFrozenLakeEnv(instance=hand_made(("SHFF", "FFFF", "FFFF", "FFFG"), ()))
    env.reset()
    obs, reward, terminated, truncated, _ = env.step(RIGHT)
    assert (int(obs), reward, terminated, truncated) == (1, -1.0, True, False)


@pytest.mark.parametrize("action", [4, -1, 1.5, "1", None])
def test_bad_action(action: object) -> None:
    env = DynamicFrozenLakeEnv("L1", 8, 1)
    env.reset()
    with pytest.raises(ValueError, match=r"0 \(LEFT\), 1 \(DOWN\), 2 \(RIGHT\) or 3 \(UP\)"):
        env.step(action)


def test_numpy_actions_are_accepted() -> None:
    env = DynamicFrozenLakeEnv("none", 8, 1)
    env.reset()
    obs, *_ = env.step(np.int64(UP))
    assert int(obs) == 0 and isinstance(obs, np.int64)


# --- L3 events -----------------------------------------------------------------------


@pytest.mark.parametrize("seed", default_seeds())
def test_events_fire_right_after_their_step(seed: int) -> None:
    instance = make_instance(seed, "L3")
    events = {event.step: event for event in instance.schedule}
    env = DynamicFrozenLakeEnv(instance=instance)
    _, info = env.reset()
    assert info["grid"] == instance.g0
    for t in range(1, MAX_STEPS + 1):
        assert env.grid == instance.grid_after(t - 1)
        _, _, terminated, _, info = env.step(LEFT)  # the agent stays on S, which never flips
        assert not terminated
        if t in events:
            assert info["applied"] == [change.to_dict() for change in events[t].changes]
        else:
            assert info["applied"] == []
        assert info["skipped"] == []
        assert env.grid == info["grid"] == instance.grid_after(t)
    assert env.applied_events == [(event.step, event.changes) for event in instance.schedule]
    assert env.skipped_flips == []


def test_flip_of_the_agents_cell_is_skipped() -> None:
    g0 = ("SFFF", "FFFF", "FFFF", "FFFG")
    event = Event(1, (thaw(0, 1), thaw(2, 2)))
    env = DynamicFrozenLakeEnv(instance=hand_made(g0, (event,)), render_mode="ansi")
    env.reset()
    obs, reward, terminated, truncated, info = env.step(RIGHT)
    assert (int(obs), reward, terminated, truncated) == (1, 0.0, False, False)
    assert info["skipped"] == [thaw(0, 1).to_dict()]
    assert info["applied"] == [thaw(2, 2).to_dict()]
    assert env.skipped_flips == [(1, thaw(0, 1))]
    assert env.applied_events == [(1, (thaw(2, 2),))]
    assert env.grid == ("SFFF", "FFFF", "FFHF", "FFFG")
    assert env.render() == text_observation(env.grid, (0, 1))
    # reset() restores the instance's start grid and forgets the run.
    _, info = env.reset()
    assert env.grid == info["grid"] == g0
    assert env.skipped_flips == [] and env.applied_events == []


def test_no_event_after_the_episode_ends() -> None:
    g0 = ("SHFF", "FFFF", "FFFF", "FFFG")
    env = DynamicFrozenLakeEnv(instance=hand_made(g0, (Event(1, (thaw(2, 2), thaw(2, 1))),)))
    env.reset()
    _, reward, terminated, _, info = env.step(RIGHT)
    assert reward == -1.0 and terminated
    assert info["applied"] == [] and env.grid == g0


def skip_trajectory(instance: Instance) -> tuple[list[int], Change] | None:
    """Actions that put the agent on a cell the first event thaws, exactly at its step."""
    if not instance.schedule:
        return None
    event = instance.schedule[0]
    for change in event.changes:
        if change.kind != "thaw":
            continue
        path = path_to(instance.g0, change.pos)
        if path is None or instance.goal in path:
            continue
        slack = event.step - (len(path) - 1)
        if slack < 0 or slack % 2:
            continue
        back, forth = actions_along([path[-1], path[-2], path[-1]])
        return actions_along(path) + [back, forth] * (slack // 2), change
    return None


def test_flip_of_the_agents_cell_is_skipped_on_real_instances() -> None:
    found = 0
    for seed in default_seeds():
        instance = make_instance(seed, "L3")
        plan = skip_trajectory(instance)
        if plan is None:
            continue
        actions, change = plan
        event = instance.schedule[0]
        env = DynamicFrozenLakeEnv(instance=instance)
        env.reset()
        for action in actions[:-1]:
            _, _, terminated, _, info = env.step(action)
            assert not terminated and info["applied"] == [] and info["skipped"] == []
        obs, _, terminated, _, info = env.step(actions[-1])
        assert not terminated
        assert int(obs) == change.row * 8 + change.col
        assert info["skipped"] == [change.to_dict()]
        assert env.skipped_flips == [(event.step, change)]
        assert info["applied"] == [c.to_dict() for c in event.changes if c != change]
        assert env.grid[change.row][change.col] == "F"
        assert differing(env.grid, instance.grid_after(event.step)) == {change.pos}
        found += 1
    assert found >= 3


@PROPERTY
@given(seed=SEEDS, size=st.integers(min_value=4, max_value=8), draws=st.lists(st.integers(0, 3), min_size=50))
def test_live_grid_keeps_a_path(seed: int, size: int, draws: list[int]) -> None:
    # The agent steps only onto cells that are not holes right now, so it lives long
    # enough to meet the events; a run-time skip may only leave a scheduled hole frozen.
    instance = make_instance(seed, "L3", size)
    env = DynamicFrozenLakeEnv(instance=instance)
    env.reset()
    skipped: set[tuple[int, int]] = set()
    for t, draw in enumerate(draws, start=1):
        safe = [a for a in range(4) if env.grid[moved(env.agent, a, size)[0]][moved(env.agent, a, size)[1]] != "H"]
        if not safe:
            break
        _, _, terminated, truncated, info = env.step(safe[draw % len(safe)])
        skipped |= {(c["row"], c["col"]) for c in info["skipped"]}
        assert has_path(env.grid)
        assert env.grid[0][0] == "S" and env.grid[size - 1][size - 1] == "G"
        # An episode that ends on an event's step never sees that event.
        scheduled = instance.grid_after(t - 1 if terminated else t)
        for r, c in differing(env.grid, scheduled):
            assert (r, c) in skipped and env.grid[r][c] == "F" and scheduled[r][c] == "H"
        if terminated or truncated:
            break


# --- Rendering through the env -------------------------------------------------------


def test_render_modes() -> None:
    instance = make_instance(2, "L3")
    for mode, expected in (
        ("ansi", text_observation(instance.g0, (0, 0))),
        (None, None),
    ):
        env = DynamicFrozenLakeEnv(instance=instance, render_mode=mode)
        env.reset()
        assert env.render() == expected
    env = DynamicFrozenLakeEnv(instance=instance, render_mode="rgb_array")
    env.reset()
    env.step(DOWN)
    frame = env.render()
    assert isinstance(frame, np.ndarray)
    assert frame.shape == (384, 384, 3) and frame.dtype == np.uint8
    assert np.array_equal(frame, render_rgb(env.grid, env.agent))


def test_a_scheduled_freeze_of_a_cell_whose_thaw_was_skipped_is_not_reported() -> None:
    g0 = ("SFFF", "FFFF", "FFFF", "FFFG")
    unfreeze = Change(0, 1, Cell.HOLE, Cell.FROZEN)
    schedule = (Event(1, (thaw(0, 1),)), Event(2, (unfreeze, thaw(2, 2))))
    env = DynamicFrozenLakeEnv(instance=hand_made(g0, schedule))
    env.reset()
    _, _, _, _, info = env.step(RIGHT)  # onto (0,1): its thaw is skipped
    assert info["skipped"] == [thaw(0, 1).to_dict()]
    _, _, _, _, info = env.step(RIGHT)  # (0,1) never thawed, so its freeze is a no-op
    assert info["applied"] == [thaw(2, 2).to_dict()]
    assert env.applied_events == [(2, (thaw(2, 2),))]
    assert env.grid == ("SFFF", "FFFF", "FFHF", "FFFG")
