"""Navigation episodes stepped through the Gymnasium env with the real prompts."""

from __future__ import annotations

from collections import Counter

import pytest

from spatialstale.env import default_seeds, make_instance

from ._support import agent, episode, run

SEEDS = default_seeds()


def outcomes(name: str, regime: str, strategy: str, seeds: tuple[int, ...], modality: str = "text") -> Counter[str]:
    async def play() -> Counter[str]:
        model = agent(name, seed=0)
        counts: Counter[str] = Counter()
        for seed in seeds:
            instance = make_instance(seed, regime)
            grid = instance.initial_grid
            stale = instance.stale_ids(grid)
            view = {
                "nomemory": None,
                "nofilter": instance.memory,
                "oracle": tuple(e for e in instance.memory if e.id not in stale),
            }[strategy]
            outcome, _ = await episode(model, instance, view, modality)
            counts[outcome] += 1
        return counts

    return run(play())


@pytest.mark.parametrize("strategy", ["nomemory", "nofilter"])
@pytest.mark.parametrize("regime", ["L1", pytest.param("L2", marks=pytest.mark.slow)])
def test_observer_reaches_the_goal_on_every_default_seed(regime: str, strategy: str) -> None:
    assert outcomes("observer", regime, strategy, SEEDS) == Counter(success=len(SEEDS))


@pytest.mark.parametrize("modality", ["vision", "both"])
def test_observer_navigates_from_pixels(modality: str) -> None:
    assert outcomes("observer", "L2", "nofilter", SEEDS[:5], modality) == Counter(success=5)


def test_observer_never_dies_under_online_changes() -> None:
    assert outcomes("observer", "L3", "nofilter", SEEDS[:10])["death"] == 0


@pytest.mark.parametrize("regime", ["L1", "L2"])
def test_credulous_pays_the_stale_memory_tax_and_oracle_removes_it(regime: str) -> None:
    seeds = SEEDS[:25]
    no_memory = outcomes("credulous", regime, "nomemory", seeds)
    no_filter = outcomes("credulous", regime, "nofilter", seeds)
    oracle = outcomes("credulous", regime, "oracle", seeds)
    assert no_memory == oracle == Counter(success=len(seeds))
    assert no_filter["death"] >= len(seeds) // 5, no_filter


def test_random_wanders() -> None:
    counts = outcomes("random", "L2", "nomemory", SEEDS[:10])
    assert counts["success"] < 10 and counts["death"] > 0
