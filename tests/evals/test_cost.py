"""What safety costs: the audit and navigation calls every navigation episode records.

Real ``eval()`` runs on the reference agents: the credulous navigator with the observer
as the auditor role, into a tmp log dir.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog, EvalSample

from spatialstale.env import Action, DynamicFrozenLakeEnv, make_instance
from spatialstale.evals.navigation import navigation
from spatialstale.solvers import n_batches
from tests.conftest import run_eval

NAVIGATOR = "spatialstale/credulous"
AUDITOR = {"auditor": "spatialstale/observer"}


def episode_of(sample: EvalSample) -> dict[str, Any]:
    assert sample.scores is not None
    metadata = sample.scores["episode_outcome"].metadata
    assert metadata is not None
    return metadata


def metrics_of(log: EvalLog) -> dict[str, float]:
    assert log.results is not None
    return {name: float(m.value) for name, m in log.results.scores[0].metrics.items()}


def audits_omcd_makes(seed: int, regime: str, actions: list[str]) -> int:
    """OMCD's audits over a replay of the episode's moves: one before the first step,
    and one at every later decision point where the live grid differs from the grid of
    the last audit (a realized L3 change)."""
    env = DynamicFrozenLakeEnv(instance=make_instance(seed, regime))
    env.reset()
    audited = env.grid
    audits = 1
    for i, action in enumerate(actions):
        if i and env.grid != audited:
            audits, audited = audits + 1, env.grid
        env.step(int(Action[action]))
    return audits


def test_omcd_audit_calls_are_ceil_n2_over_b_per_audit_and_the_metric_is_their_mean(tmp_path: Path) -> None:
    seeds, batch_size = [4810, 1734, 7822], 7
    log = run_eval(
        navigation(regime="L3", seeds=seeds, strategies="omcd", episodes=2, batch_size=batch_size),
        NAVIGATOR,
        tmp_path,
        model_roles=AUDITOR,
    )
    per_audit = n_batches(8 * 8, batch_size)
    assert per_audit == 10
    calls = []
    reaudits = 0
    for sample in log.samples or []:
        episode = episode_of(sample)
        cost = episode["cost"]
        actions = [r["action"] for r in episode["records"]]
        audits = audits_omcd_makes(sample.metadata["seed"], "L3", actions)
        reaudits += audits - 1
        assert cost["audit_calls"] == per_audit * audits
        assert cost["navigation_calls"] == episode["steps"] == len(actions)
        assert cost["audit_tokens"] > 0 and cost["navigation_tokens"] > 0
        # every model call of the episode is counted once, as one role's or the other's
        assert cost["audit_calls"] + cost["navigation_calls"] == sum(e.event == "model" for e in sample.events)
        assert sample.scores is not None
        value = sample.scores["episode_outcome"].value
        assert isinstance(value, dict) and value["audit_model_calls"] == cost["audit_calls"]
        calls.append(cost["audit_calls"])
    assert reaudits > 0, "no episode re-audited: the seeds test nothing of L3"
    metrics = metrics_of(log)
    assert metrics["audit_calls_omcd"] == pytest.approx(statistics.fmean(calls))
    assert metrics["audit_calls"] == pytest.approx(statistics.fmean(calls))
    # the new metric comes last: the log's first metric (its score) is unchanged
    assert next(iter(metrics)) == "success" and list(metrics)[-1].startswith("audit_calls")


def test_controls_make_no_audit_call_and_selfverify_one_per_regime_and_strategy(tmp_path: Path) -> None:
    log = run_eval(
        navigation(regime="L1,L2", seeds=[4810], strategies="nomemory,nofilter,selfverify,oracle", episodes=1),
        NAVIGATOR,
        tmp_path,
        model_roles=AUDITOR,
    )
    expected = {"nomemory": 0, "nofilter": 0, "selfverify": 1, "oracle": 0}
    for sample in log.samples or []:
        cost = episode_of(sample)["cost"]
        strategy = sample.metadata["strategy"]
        assert cost["audit_calls"] == expected[strategy], sample.id
        assert (cost["audit_tokens"] > 0) == (strategy == "selfverify"), sample.id
        assert cost["navigation_calls"] == episode_of(sample)["steps"]
        assert cost["audit_calls"] + cost["navigation_calls"] == sum(e.event == "model" for e in sample.events)
    metrics = metrics_of(log)
    assert next(iter(metrics)) == "success"
    for strategy, calls in expected.items():
        assert metrics[f"audit_calls_{strategy}"] == calls
        for regime in ("L1", "L2"):
            assert metrics[f"audit_calls_{regime}_{strategy}"] == calls
    assert metrics["audit_calls"] == pytest.approx(0.25)
