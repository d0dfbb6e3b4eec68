"""End-to-end ``eval()`` runs of both tasks against scripted models, into a tmp log dir."""

from __future__ import annotations

import inspect
import logging
import math
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.log import EvalLog, EvalSample

from spatialstale.env import DynamicFrozenLakeEnv, greedy_action, make_instance
from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.evals.perception import perception
from spatialstale.protocol import SETTINGS, parse_action
from spatialstale.scorers import claims_from_g0
from spatialstale.solvers import STRATEGIES
from tests.scripted import Call, Script, truthful_flags

SEED = 4810


def run(task: Any, script: Script, tmp_path: Path, **kwargs: Any) -> EvalLog:
    [log] = eval(task, model=script.model(), log_dir=str(tmp_path), display="none", log_realtime=False, **kwargs)
    assert log.status == "success", log.error
    assert log.samples
    return log


def model_calls(sample: EvalSample) -> int:
    return sum(1 for e in sample.events if e.event == "model")


def value(sample: EvalSample, scorer: str) -> dict[str, Any]:
    assert sample.scores is not None
    v = sample.scores[scorer].value
    assert isinstance(v, dict)
    return v


# --- detection ------------------------------------------------------------------------


# a batch that divides the n² = 64 entries (1) and two that leave a short last batch (5, 20)
@pytest.mark.parametrize("batch_size", [1, 5, 20])
@pytest.mark.parametrize("regime", ["L1", "L3"])
def test_calls_per_audit_is_ceil_n2_over_b(batch_size: int, regime: str, tmp_path: Path) -> None:
    script = Script()
    log = run(detection(regime=regime, seeds=[SEED], batch_size=batch_size), script, tmp_path)
    [sample] = log.samples or []
    windows = len(make_instance(SEED, regime).schedule) if regime == "L3" else 1
    per_audit = math.ceil(64 / batch_size)
    assert model_calls(sample) == windows * per_audit
    assert value(sample, "stale_f1")["calls"] == windows * per_audit
    assert [len(c.memory_ids) for c in script.calls[:per_audit]] == [
        min(batch_size, 64 - i * batch_size) for i in range(per_audit)
    ]


@pytest.mark.parametrize("regime", ["L1", "L2", "L3"])
def test_truthful_auditor_scores_f1_one_and_metadata_recomputes_labels(regime: str, tmp_path: Path) -> None:
    log = run(detection(regime=regime, seeds=[SEED, 1734]), Script(flag=truthful_flags), tmp_path)
    for sample in log.samples or []:
        v = value(sample, "stale_f1")
        assert (v["f1"], v["fp"], v["fn"], v["unparseable"], v["unanswered"]) == (1.0, 0, 0, 0, 0)
        meta = sample.metadata
        assert {"seed", "regime", "modality", "size", "batch_size", "n_stale", "stale_ratio"} <= set(meta)
        # The labels follow from the logged g0 and grids alone.
        assert sample.scores is not None
        for window in sample.scores["stale_f1"].metadata["windows"]:  # type: ignore[index]
            truth = {mid for mid, claim in claims_from_g0(meta["g0"]).items() if _stale(mid, claim, window["grid"])}
            assert truth == set(window["truth"])
    assert log.results is not None
    metrics = log.results.scores[0].metrics
    assert metrics["f1_mean"].value == 1.0 and metrics[f"f1_mean_{regime}"].value == 1.0


def _stale(mid: str, claim: str, grid: list[str]) -> bool:
    r, c = divmod(int(mid[4:]), len(grid))
    return (claim == "SAFE") == (grid[r][c] == "H")


def test_detection_scores_match_a_hand_computed_case(tmp_path: Path) -> None:
    instance = make_instance(SEED, "L1")
    truth = instance.stale_ids(instance.initial_grid)
    missed = sorted(truth)[0]
    false_alarm = next(m.id for m in instance.memory if m.id not in truth)
    flagged = (truth - {missed}) | {false_alarm}
    log = run(detection(regime="L1", seeds=[SEED]), Script(flag=lambda call: flagged & set(call.memory_ids)), tmp_path)
    v = value((log.samples or [])[0], "stale_f1")
    tp = len(truth) - 1
    assert (v["tp"], v["fp"], v["fn"], v["tn"]) == (tp, 1, 1, 64 - tp - 2)
    assert math.isclose(v["precision"], tp / (tp + 1)) and math.isclose(v["recall"], tp / (tp + 1))


def test_unparseable_and_unknown_answers_are_counted(tmp_path: Path) -> None:
    answers = iter(["Sorry, I cannot tell.", '[{"memory_id": "mem_999", "is_stale": true}]'] * 10)
    script = Script(audit_answer=lambda ids, flagged: next(answers))
    log = run(detection(regime="L1", seeds=[SEED]), script, tmp_path)
    v = value((log.samples or [])[0], "stale_f1")
    assert v["unparseable"] == 7  # prose (calls 1, 3, 5, 7) and unknown ids only (2, 4, 6)
    assert v["unknown_ids"] == 3
    assert v["unanswered"] == 64
    assert v["tp"] == 0 and v["fp"] == 0


@pytest.mark.parametrize("modality", ["text", "vision", "both"])
def test_modalities_show_the_listing_the_image_or_both(modality: str, tmp_path: Path) -> None:
    script = Script()
    run(detection(regime="L1", seeds=[SEED], modality=modality), script, tmp_path)
    for call in script.calls:
        assert call.has_image == (modality != "text")
        assert bool(call.grid) == (modality != "vision")
        assert len(call.memory_ids) == 10 or call is script.calls[-1]


# --- navigation -----------------------------------------------------------------------


def stay_put(call: Call) -> str:
    return '{"action": "UP"}'  # off the grid at (0,0): the agent never moves


# L3 (a change during the episode) in both modalities in the fast tier, L1 and L2 in the slow one
@pytest.mark.parametrize(
    "regime", [pytest.param("L1", marks=pytest.mark.slow), pytest.param("L2", marks=pytest.mark.slow), "L3"]
)
@pytest.mark.parametrize("modality", ["text", "vision"])
def test_every_strategy_shows_its_view(regime: str, modality: str, tmp_path: Path) -> None:
    instance = make_instance(SEED, regime)
    every = [m.id for m in instance.memory]

    def flag(call: Call) -> set[str]:
        return {i for i in call.memory_ids if int(i[4:]) % 3 == 0}

    def inconsistent(call: Call) -> set[str]:
        return {i for i in call.memory_ids if int(i[4:]) % 5 == 0}

    for strategy in STRATEGIES:
        script = Script(flag=flag, inconsistent=inconsistent, act=stay_put)
        log = run(
            navigation(regime=regime, modality=modality, seeds=[SEED], strategies=strategy, max_steps=3, episodes=1),
            script,
            tmp_path,
        )
        [sample] = log.samples or []
        assert sample.id == f"{regime}-{strategy}-s{SEED}"
        assert sample.metadata["strategy"] == strategy
        steps = script.of_kind("navigate")
        assert len(steps) == 3
        for call in steps:
            shown = call.memory_ids
            if strategy == "nomemory":
                assert shown == [] and "Memory: (none)" in call.text
            elif strategy == "nofilter":
                assert shown == every
            elif strategy == "selfverify":
                assert shown == [i for i in every if int(i[4:]) % 5]
            elif strategy == "omcd":
                assert shown == [i for i in every if int(i[4:]) % 3]
            elif strategy == "localverify":
                # from (0,0) at radius 1 it audits mem_000, 001, 008, 009 and drops the flagged
                assert shown == [i for i in every if i not in ("mem_000", "mem_009")]
            else:
                stale = instance.stale_ids(instance.initial_grid)
                assert shown == [i for i in every if i not in stale]
            assert call.has_image == (modality == "vision")
        audits = script.of_kind("audit")
        if strategy == "localverify":
            # again only where the grid changed (L3) within the 3 steps
            assert audits and all(a.memory_ids == ["mem_000", "mem_001", "mem_008", "mem_009"] for a in audits)
            assert len(audits) == 1 or regime == "L3"
        else:
            assert len(audits) == (7 if strategy == "omcd" else 0)
        assert len(script.of_kind("selfverify")) == (1 if strategy == "selfverify" else 0)


def test_l3_reaudits_after_each_realized_event_and_only_then(tmp_path: Path) -> None:
    instance = make_instance(SEED, "L3")
    assert instance.schedule
    script = Script(act=stay_put)
    log = run(navigation(regime="L3", seeds=[SEED], strategies="omcd", episodes=1), script, tmp_path)
    episode = (log.samples or [])[0].scores["episode_outcome"].metadata  # type: ignore[index]
    assert episode["outcome"] == "timeout" and episode["steps"] == 50
    # The agent stays on S, which never flips, so every scheduled event is realized;
    # the re-audit happens at the first decision point after it.
    assert [a["step"] for a in episode["audits"]] == [0] + [e.step for e in instance.schedule]
    assert len(script.of_kind("audit")) == 7 * (1 + len(instance.schedule))


def test_l3_oracle_view_tracks_the_live_grid(tmp_path: Path) -> None:
    instance = make_instance(SEED, "L3")
    script = Script(act=stay_put)
    run(navigation(regime="L3", seeds=[SEED], strategies=["oracle"], episodes=1, max_steps=20), script, tmp_path)
    for step, call in enumerate(script.of_kind("navigate")):
        stale = instance.stale_ids(instance.grid_after(step))
        assert set(call.memory_ids) == {m.id for m in instance.memory} - stale
    assert not script.of_kind("audit")


def test_fallbacks_are_counted_and_take_a_greedy_step(tmp_path: Path) -> None:
    answers = iter(["I am not sure.", '{"action": "RIGHT"}'] * 30)
    script = Script(act=lambda call: next(answers))
    log = run(navigation(regime="L1", seeds=[SEED], strategies="nomemory", max_steps=6, episodes=1), script, tmp_path)
    episode = (log.samples or [])[0].scores["episode_outcome"].metadata  # type: ignore[index]
    records = episode["records"]
    assert episode["fallbacks"] == sum(not r["parsed"] for r in records) == (len(records) + 1) // 2
    for r in records:
        if not r["parsed"]:
            assert r["action"] == greedy_action(tuple(r["position"]), (7, 7)).name


REPLAY_SEEDS = [4810, 1734, 7822, 625]


def test_episode_scores_match_an_independent_replay(tmp_path: Path) -> None:
    def act(call: Call) -> str:
        assert call.position is not None
        return '{"action": "DOWN"}' if call.position[0] < 7 else '{"action": "RIGHT"}'

    # one run of the four seeds: each sample is replayed on its own
    log = run(navigation(regime="L2", seeds=REPLAY_SEEDS, strategies="nofilter", episodes=1), Script(act=act), tmp_path)
    by_seed = {sample.metadata["seed"]: sample for sample in log.samples or []}
    assert sorted(by_seed) == sorted(REPLAY_SEEDS)
    for seed, sample in by_seed.items():
        _assert_replayed(seed, sample)


def _assert_replayed(seed: int, sample: EvalSample) -> None:
    env = DynamicFrozenLakeEnv(instance=make_instance(seed, "L2"))
    env.reset()
    done, steps, reward = False, 0, 0.0
    while not done:
        action = parse_action('{"action": "DOWN"}' if env.agent[0] < 7 else '{"action": "RIGHT"}')
        assert action is not None
        _, r, term, trunc, _ = env.step(int(action))
        done, steps, reward = term or trunc, steps + 1, float(r)
    outcome = "death" if reward < 0 else "success" if reward > 0 else "timeout"
    v = value(sample, "episode_outcome")
    assert (v[outcome], v["steps"], v["reward"], v[f"{outcome}_steps"]) == (1, steps, reward, steps)
    assert sample.scores is not None and sample.scores["episode_outcome"].answer == outcome
    if outcome == "death":
        episode = sample.scores["episode_outcome"].metadata or {}
        entry = make_instance(seed, "L2").entry(f"mem_{env.agent[0] * 8 + env.agent[1]:03d}")
        assert v["died_on_stale"] == int(entry.claim == "SAFE")
        assert episode["died_at"] == list(env.agent)


def test_epochs_and_outcome_metrics(tmp_path: Path) -> None:
    log = run(
        navigation(regime="L1", seeds=[SEED, 1734], strategies="nomemory,nofilter", max_steps=4, episodes=3),
        Script(act=stay_put),
        tmp_path,
    )
    assert len(log.samples or []) == 2 * 2 * 3
    assert log.results is not None
    metrics = log.results.scores[0].metrics
    assert metrics["timeout_nomemory"].value == 1.0 and metrics["success"].value == 0.0
    assert metrics["steps_timeout_nofilter"].value == 4.0


# --- parameters -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("task", "kwargs", "message"),
    [
        (detection, {"regime": "L4"}, "regime must be one of L1, L2, L3"),
        (detection, {"modality": "audio"}, "modality must be one of text, vision, both"),
        (detection, {"batch_size": 0}, "batch_size must be an integer of at least 1"),
        (detection, {"n_seeds": 0}, "n_seeds must be an integer of at least 1"),
        (detection, {"seeds": "1,x"}, "seeds must be an integer of at least 0"),
        (detection, {"seeds": [3, 3]}, "seeds must be distinct"),
        (detection, {"size": 2}, "size must be an integer of at least 4"),
        (
            navigation,
            {"strategies": "omcd,teleport"},
            "strategies must be one of nomemory, nofilter, selfverify, omcd, oracle",
        ),
        (navigation, {"strategies": ""}, "strategies must name at least one value"),
        (navigation, {"strategies": []}, "strategies must name at least one value"),
        (navigation, {"max_steps": -1}, "max_steps must be an integer of at least 1"),
        (
            navigation,
            {"strategy": "omcd"},
            r"unknown task parameter 'strategy' \(did you mean 'strategies'\?\); valid: ",
        ),
        (
            detection,
            {"regmie": "L1", "xyz": 1},
            r"unknown task parameters 'regmie' \(did you mean 'regime'\?\), 'xyz'; ",
        ),
        (perception, {"modalities": "text"}, r"unknown task parameter 'modalities' \(did you mean 'modality'\?\)"),
    ],
)
def test_bad_parameters_fail_with_the_valid_choices(task: Any, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        task(**kwargs)


def test_a_parameter_of_another_task_is_dropped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    # one --task-config file serves detection and navigation: not a typo
    with caplog.at_level(logging.WARNING):
        task = detection(navigate_prompt="Go.", strategies="omcd")
    assert [s.id for s in task.dataset] == [s.id for s in detection().dataset]
    assert "param 'navigate_prompt' not used by this task" in caplog.text
    assert "param 'strategies' not used by this task" in caplog.text


@pytest.mark.parametrize("task", [detection, perception, navigation])
def test_the_settings_name_every_parameter_of_their_task(task: Any) -> None:
    signature = inspect.signature(task)
    declared = {n for n, p in signature.parameters.items() if p.kind is not inspect.Parameter.VAR_KEYWORD}
    kind = SETTINGS[task.__name__]
    assert set(kind.parameter_names()) == declared


def test_list_parameters_arrive_as_strings_or_lists() -> None:
    as_string = navigation(strategies="omcd", seeds="4810, 1734", regime="l1,L2")
    as_list = navigation(strategies=["omcd"], seeds=[4810, 1734], regime=["L1", "L2"])
    ids = [s.id for s in as_string.dataset]
    assert ids == [s.id for s in as_list.dataset]
    assert ids == ["L1-omcd-s4810", "L1-omcd-s1734", "L2-omcd-s4810", "L2-omcd-s1734"]
    assert [s.id for s in detection(n_seeds=3).dataset] == ["L2-s625", "L2-s1247", "L2-s9026"]


def test_navigation_metrics_are_grouped_by_regime_and_strategy_with_the_overall_rate_first(tmp_path: Path) -> None:
    seeds = [SEED, 1734, 2024]
    log = eval(
        navigation(regime="L1,L2,L3", seeds=seeds, strategies="nofilter,oracle", episodes=1),
        model="spatialstale/credulous",
        log_dir=str(tmp_path),
        display="none",
    )[0]
    assert log.status == "success" and log.results is not None and log.samples
    metrics = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    # Inspect's log list shows the first metric as the log's score
    assert next(iter(metrics)) == "success"
    deaths: dict[tuple[str, str], list[float]] = {}
    for sample in log.samples:
        meta = sample.metadata
        deaths.setdefault((meta["regime"], meta["strategy"]), []).append(value(sample, "episode_outcome")["death"])
    for (regime, strategy), values in deaths.items():
        assert metrics[f"death_{regime}_{strategy}"] == pytest.approx(sum(values) / len(values))
    for regime in ("L1", "L2", "L3"):
        pooled = [v for (r, _), vs in deaths.items() if r == regime for v in vs]
        assert metrics[f"death_{regime}"] == pytest.approx(sum(pooled) / len(pooled))
    everything = [v for vs in deaths.values() for v in vs]
    assert metrics["death"] == pytest.approx(sum(everything) / len(everything))
    # the regimes differ, so pooling them would hide something
    assert len({metrics[f"death_{r}_nofilter"] for r in ("L1", "L2", "L3")}) > 1


def test_a_single_regime_task_has_no_per_regime_copies_of_its_metrics(tmp_path: Path) -> None:
    log = eval(
        navigation(regime="L2", seeds=[SEED], strategies="nofilter", episodes=1),
        model="spatialstale/credulous",
        log_dir=str(tmp_path),
        display="none",
    )[0]
    assert log.results is not None
    names = list(log.results.scores[0].metrics)
    assert names[:2] == ["success", "success_nofilter"] and "success_L2" not in names
