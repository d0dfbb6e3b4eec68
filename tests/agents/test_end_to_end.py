"""The reference agents through the real tasks: ``inspect_ai.eval`` into a temporary log dir."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.log import EvalLog

from spatialstale.env import default_seeds
from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation

SEEDS = ",".join(str(s) for s in default_seeds()[:4])


def run_eval(task: Any, model: str, log_dir: Path, **kwargs: Any) -> EvalLog:
    # No realtime sample buffer: it is what costs most time per call with these fast agents.
    [log] = eval(task, model=model, log_dir=str(log_dir), display="none", log_realtime=False, **kwargs)
    assert log.status == "success", log.error
    assert log.samples
    return log


def scores(log: EvalLog) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(sample metadata, score value) per sample."""
    rows = []
    for sample in log.samples or []:
        assert sample.scores is not None
        [score] = sample.scores.values()
        assert isinstance(score.value, dict)
        rows.append((sample.metadata, score.value))
    return rows


def test_model_usage_is_logged(tmp_path: Path) -> None:
    log = run_eval(detection(regime="L2", seeds="4810"), "spatialstale/random", tmp_path, seed=1)
    assert log.stats.model_usage["spatialstale/random"].total_tokens > 0


@pytest.mark.parametrize("modality", ["text", "vision"])
def test_observer_detection_f1_is_one(modality: str, tmp_path: Path) -> None:
    log = run_eval(detection(regime="L1,L2,L3", modality=modality, seeds=SEEDS), "spatialstale/observer", tmp_path)
    metrics = {name: m.value for name, m in log.results.scores[0].metrics.items()} if log.results else {}
    assert metrics["f1_mean_L1"] == metrics["f1_mean_L2"] == metrics["f1_mean_L3"] == 1.0
    for _, value in scores(log):
        assert value["f1"] == 1.0 and value["unparseable"] == value["unanswered"] == value["unknown_ids"] == 0


def test_observer_without_memory_always_succeeds(tmp_path: Path) -> None:
    task = navigation(regime="L1,L2", strategies="nomemory", seeds=SEEDS, episodes=1)
    outcomes = Counter(value["success"] for _, value in scores(run_eval(task, "spatialstale/observer", tmp_path)))
    assert outcomes == Counter({1: 8})


@pytest.mark.slow  # every strategy on three regimes; tests/agents/test_navigation.py keeps L1 fast
def test_credulous_navigator_with_an_observer_auditor(tmp_path: Path) -> None:
    task = navigation(regime="L1,L2,L3", seeds=SEEDS, episodes=1)
    log = run_eval(task, "spatialstale/credulous", tmp_path, model_roles={"auditor": "spatialstale/observer"})
    by_strategy: dict[str, dict[tuple[str, int], tuple[str, int]]] = {}
    for meta, value in scores(log):
        outcome = next(key for key in ("success", "death", "timeout") if value[key])
        by_strategy.setdefault(meta["strategy"], {})[(meta["regime"], meta["seed"])] = (outcome, value["steps"])
        assert value["fallbacks"] == 0
    deaths = {name: sum(o == "death" for o, _ in runs.values()) for name, runs in by_strategy.items()}
    assert deaths["nofilter"] > deaths["nomemory"] == 0, deaths
    # A perfect auditor leaves exactly the oracle's view: the same walk, seed by seed.
    assert by_strategy["omcd"] == by_strategy["oracle"]
    assert deaths["selfverify"] == deaths["omcd"] == 0
