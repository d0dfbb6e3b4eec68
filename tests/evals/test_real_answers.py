"""Answers as real models write them, and sample limits, through the real tasks."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ModelCost, ModelInfo, set_model_info

from spatialstale.agents._policies import plan_action
from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from tests.scripted import Call, Script, truthful_flags

SEEDS = "4810,1734"
# $1 per thousand tokens, so a cost limit of a few cents bites within an episode
PRICES = ModelCost(input=1000.0, output=1000.0, input_cache_write=1000.0, input_cache_read=1000.0)


def _lines(ids: list[str], flagged: set[str]) -> list[dict[str, Any]]:
    return [{"memory_id": i, "is_stale": i in flagged, "reason": "checked"} for i in ids]


AUDIT_FORMS: dict[str, Callable[[list[str], set[str]], str]] = {
    "json lines": lambda ids, f: "\n".join(json.dumps(v) for v in _lines(ids, f)),
    "python literal": lambda ids, f: repr(_lines(ids, f)),
    "trailing commas": lambda ids, f: "[" + ",\n".join(json.dumps(v)[:-1] + ",}" for v in _lines(ids, f)) + ",]",
    "wrapper": lambda ids, f: json.dumps({"verdicts": _lines(ids, f)}),
    "keyed by id": lambda ids, f: json.dumps({i: i in f for i in ids}),
    "think then fence": lambda ids, f: (
        "<think>Let me compare each claim... mem_000 SAFE?</think>\n```json\n"
        + json.dumps(_lines(ids, f), indent=2)
        + "\n```"
    ),
    "objects in prose": lambda ids, f: (
        "My verdicts: " + "; ".join(f"{json.dumps(v)} since I checked" for v in _lines(ids, f))
    ),
    "string booleans": lambda ids, f: json.dumps([{"id": i, "stale": "yes" if i in f else "no"} for i in ids]),
}


def _run(task: Any, script: Script, tmp_path: Path, **kwargs: Any) -> EvalLog:
    [log] = eval(task, model=script.model(), log_dir=str(tmp_path), display="none", log_realtime=False, **kwargs)
    assert log.status == "success", log.error
    return log


@pytest.mark.parametrize("form", sorted(AUDIT_FORMS))
def test_a_perfect_auditor_scores_f1_1_in_every_form(form: str, tmp_path: Path) -> None:
    script = Script(flag=truthful_flags, audit_answer=AUDIT_FORMS[form])
    log = _run(detection(regime="L1,L3", seeds=SEEDS), script, tmp_path)
    for sample in log.samples or []:
        assert sample.scores is not None
        value = sample.scores["stale_f1"].value
        assert isinstance(value, dict)
        assert value["f1"] == 1.0, (form, sample.id, value)
        assert value["unparseable"] == value["unanswered"] == value["conflicting"] == 0


def _grid(call: Call) -> tuple[str, ...]:
    n = int(len(call.grid) ** 0.5)
    return tuple("".join(call.grid[(r, c)] for c in range(n)) for r in range(n))


SAYINGS: list[Callable[[str, str], str]] = [
    lambda a, b: f"I'll move {a.lower()}.",
    lambda a, b: f"Moving {b} would be a mistake here, so my move is {a}.",
    lambda a, b: f"I must not go {b}. Action: {a}",
    lambda a, b: f"<think>{b}? No, {b} is a hole. {a} then.</think>\n{a}",
    lambda a, b: f'```json\n{{"action": "{a.lower()}"}}\n```',
    lambda a, b: f"Not {b}, {a}.",
    lambda a, b: f"{b} leads into a hole, while {a} is safe. So {a}.",
    lambda a, b: f"**{a.title()}**",
]


def test_a_perfect_navigator_answering_in_sentences_is_read_without_fallbacks(tmp_path: Path) -> None:
    said = iter(range(10_000))

    def act(call: Call) -> str:
        assert call.position is not None
        grid = _grid(call)
        n = len(grid)
        action = plan_action(grid, call.position, (n - 1, n - 1)).name
        other = next(d for d in ("UP", "LEFT", "DOWN", "RIGHT") if d != action)
        return SAYINGS[next(said) % len(SAYINGS)](action, other)

    log = _run(
        navigation(regime="L1,L2", seeds=SEEDS, strategies="nomemory,nofilter", episodes=1), Script(act=act), tmp_path
    )
    for sample in log.samples or []:
        assert sample.scores is not None
        value = sample.scores["episode_outcome"].value
        assert isinstance(value, dict)
        assert value["fallbacks"] == 0 and value["success"] == 1, (sample.id, value)


def _slow(call: Call) -> str:
    time.sleep(0.02)
    return '{"action": "RIGHT"}'


@pytest.mark.parametrize(
    ("limit", "expect"),
    [
        ({"token_limit": 3000}, "token"),
        ({"message_limit": 2}, "message"),
        ({"time_limit": 1}, "time"),
        ({"working_limit": 1}, "working"),
        ({"turn_limit": 3}, "turn"),
        ({"cost_limit": 0.05, "model_cost_config": {"mockllm/model": PRICES}}, "cost"),
    ],
)
def test_sample_limits_end_episodes_and_audits_early_and_every_sample_is_scored(
    limit: dict[str, Any], expect: str, tmp_path: Path
) -> None:
    if "model_cost_config" in limit:
        # Inspect prices only models it knows; the scripted model gets an entry whose cost the run sets
        set_model_info("mockllm/model", ModelInfo(organization="tests"))
    script = Script(flag=truthful_flags, act=_slow)
    nav = _run(
        navigation(regime="L3", seeds=SEEDS, strategies="nofilter,omcd", episodes=1, max_steps=50),
        script,
        tmp_path / "nav",
        **limit,
    )
    det = _run(
        detection(regime="L3", seeds=SEEDS),
        Script(flag=lambda c: time.sleep(0.05) or truthful_flags(c)),
        tmp_path / "det",
        **limit,
    )
    outcomes = []
    for sample in nav.samples or []:
        assert sample.error is None and sample.scores is not None
        value = sample.scores["episode_outcome"].value
        assert isinstance(value, dict)
        outcomes.append(sample.scores["episode_outcome"].answer)
        assert sum(value[k] for k in ("success", "death", "timeout", "limit")) == 1
    assert "limit" in outcomes, outcomes
    metrics = nav.results.scores[0].metrics if nav.results else {}
    assert 0 < metrics["limit"].value <= 1
    limited = 0
    for sample in det.samples or []:
        assert sample.error is None and sample.scores is not None
        value = sample.scores["stale_f1"].value
        assert isinstance(value, dict)
        assert value["tp"] + value["fp"] + value["fn"] + value["tn"] == value["judgments"]
        if value["limit"]:
            limited += 1
            assert value["unanswered"] > 0
            assert sample.limit is not None and sample.limit.type == expect
    assert limited > 0
