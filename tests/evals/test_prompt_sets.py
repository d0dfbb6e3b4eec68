"""Prompt sets end to end: real ``eval()`` runs of the three tasks against the reference
agents, into a tmp log dir, under every shipped set."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.log import EvalLog, EvalSample, resolve_sample_attachments
from inspect_ai.model import ChatMessageSystem

from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.evals.perception import perception
from spatialstale.protocol import PROMPT_KINDS, PROMPT_SETS, TaskParameterError, call_kind, fill_prompt, prompt_hash
from tests.scripted import without_tokens

SEEDS = "4810,1734"
AGENTS = ("spatialstale/observer", "spatialstale/credulous")
KINDS = {"detection": ("audit",), "navigation": ("navigate", "audit", "selfverify"), "perception": ("perception",)}
"""The call kinds each task sends, in the order of its prompt parameters."""
SCORERS = {"detection": "stale_f1", "navigation": "episode_outcome", "perception": "perception_accuracy"}
ROOT = Path(__file__).resolve().parents[2]


def tasks(**args: Any) -> dict[str, Task]:
    """The three tasks on the same small instances, with ``args`` added to each."""
    return {
        "detection": detection(regime="L2,L3", seeds=SEEDS, **args),
        "navigation": navigation(regime="L2", seeds=SEEDS, episodes=1, **args),
        "perception": perception(regime="L2", seeds=SEEDS, **args),
    }


def run(task: Task, model: str, log_dir: Path) -> EvalLog:
    [log] = eval(task, model=model, log_dir=str(log_dir), display="none", log_realtime=False)
    assert log.status == "success", log.error
    assert log.samples
    return log


def score_values(log: EvalLog, scorer: str) -> dict[tuple[str, int], Any]:
    out = {}
    for sample in log.samples or []:
        assert sample.scores is not None
        # tokens follow the prompts' wording, by design
        out[(str(sample.id), sample.epoch)] = without_tokens(sample.scores[scorer].value)
    return out


def system_prompts(sample: EvalSample) -> list[str]:
    """The system prompt of every model call of the sample, in order."""
    sample = resolve_sample_attachments(sample)
    prompts = []
    for event in sample.events:
        if event.event == "model":
            system = [m for m in event.input if isinstance(m, ChatMessageSystem)]
            assert len(system) == 1
            prompts.append(system[0].text)
    return prompts


def sent_prompts(log: EvalLog) -> set[str]:
    return {prompt for sample in log.samples or [] for prompt in system_prompts(sample)}


def sent_calls(log: EvalLog) -> set[tuple[str | None, str]]:
    """Each call's kind (its system message's tag) and system prompt, as logged."""
    return {
        (call_kind(event.input), event.input[0].text)
        for sample in log.samples or []
        for event in resolve_sample_attachments(sample).events
        if event.event == "model"
    }


@pytest.mark.parametrize("model", [AGENTS[0], *(pytest.param(a, marks=pytest.mark.slow) for a in AGENTS[1:])])
def test_default_set_reproduces_the_unnamed_run_exactly(model: str, tmp_path: Path) -> None:
    plain, named = tasks(), tasks(prompt_set="default")
    for name in plain:
        before = run(plain[name], model, tmp_path / "plain")
        after = run(named[name], model, tmp_path / "named")
        assert score_values(after, SCORERS[name]) == score_values(before, SCORERS[name])
        assert after.results is not None and before.results is not None
        assert after.results.scores[0].metrics == before.results.scores[0].metrics
        for a, b in zip(after.samples or [], before.samples or [], strict=True):
            assert system_prompts(a) == system_prompts(b)
        assert after.eval.metadata is not None and before.eval.metadata is not None
        assert after.eval.metadata["prompt_hash"] == before.eval.metadata["prompt_hash"]
        assert after.eval.metadata["prompt_set"] == before.eval.metadata["prompt_set"] == "default"


# the default set in the fast tier, the others in the slow one
@pytest.mark.parametrize(
    "set_name", [name if name == "default" else pytest.param(name, marks=pytest.mark.slow) for name in PROMPT_SETS]
)
def test_every_set_runs_every_task_and_is_recorded(set_name: str, tmp_path: Path) -> None:
    prompt_set = PROMPT_SETS[set_name]
    results: dict[tuple[str, str], EvalLog] = {}
    for model in AGENTS:
        for name, task in tasks(prompt_set=set_name).items():
            log = run(task, model, tmp_path / set_name)
            results[(model, name)] = log
            texts = {kind: prompt_set.prompt(kind) for kind in KINDS[name]}
            recorded = {
                "prompt_set": set_name,
                "prompt_set_version": prompt_set.version,
                "prompt_hash": prompt_hash(texts),
            }
            assert log.eval.metadata is not None
            assert {k: log.eval.metadata[k] for k in recorded} == recorded
            for sample in log.samples or []:
                assert sample.metadata is not None
                assert {k: sample.metadata[k] for k in recorded} == recorded
            # what reached each call is the set's text of its kind, and nothing else
            sent = sent_calls(log)
            assert sent and sent <= {(kind, fill_prompt(text, 8)) for kind, text in texts.items()}
            for sample in log.samples or []:
                assert sample.scores is not None
                assert sample.scores[SCORERS[name]].value is not None
    for sample in results[("spatialstale/observer", "detection")].samples or []:
        assert sample.scores is not None
        value = sample.scores["stale_f1"].value
        assert isinstance(value, dict)
        assert value["f1"] == 1.0 and value["unparseable"] == value["unanswered"] == 0
    for sample in results[("spatialstale/observer", "perception")].samples or []:
        assert sample.scores is not None
        value = sample.scores["perception_accuracy"].value
        assert isinstance(value, dict) and value["accuracy"] == 1.0


@pytest.mark.slow  # every set on every task
def test_the_reference_agents_answer_every_set_alike(tmp_path: Path) -> None:
    # they read the call kind from the message's tag and the grid from the listing, so no
    # wording may change what they do: the same scores under every set
    for model in AGENTS:
        by_set = {}
        for set_name in PROMPT_SETS:
            # the strategies that send each prompt kind: navigate, audit, selfverify
            task = navigation(regime="L2", seeds=SEEDS, episodes=1, prompt_set=set_name, strategies="omcd,selfverify")
            by_set[set_name] = score_values(run(task, model, tmp_path / set_name), "episode_outcome")
        assert all(scores == by_set["default"] for scores in by_set.values()), model


def test_sets_differ_where_they_say_and_only_there() -> None:
    default = PROMPT_SETS["default"]
    changed = {
        name: {kind for kind in PROMPT_KINDS if prompt_set.prompt(kind) != default.prompt(kind)}
        for name, prompt_set in PROMPT_SETS.items()
    }
    assert changed == {
        "default": set(),
        "no_rule": {"audit", "selfverify"},
        "warned": {"navigate"},
        "minimal": {"audit", "selfverify", "navigate", "perception"},
    }
    hashes = {prompt_hash({k: s.prompt(k) for k in PROMPT_KINDS}) for s in PROMPT_SETS.values()}
    assert len(hashes) == len(PROMPT_SETS)


def test_an_explicit_prompt_overrides_the_sets_and_changes_the_hash(tmp_path: Path) -> None:
    custom = "Judge each entry of the {size}x{size} grid. JSON only."
    log = run(
        detection(regime="L2", seeds="4810", prompt_set="no_rule", audit_prompt=custom),
        "spatialstale/observer",
        tmp_path,
    )
    assert sent_prompts(log) == {fill_prompt(custom, 8)}
    assert log.eval.metadata is not None
    assert log.eval.metadata["prompt_set"] == "no_rule"
    assert log.eval.metadata["prompt_hash"] == prompt_hash({"audit": custom})
    assert log.eval.metadata["prompt_hash"] != prompt_hash({"audit": PROMPT_SETS["no_rule"].audit})
    # overriding one prompt of navigation keeps the set's other two
    task = navigation(regime="L2", seeds="4810", episodes=1, strategies="selfverify,omcd", prompt_set="warned")
    nav = run(task, "spatialstale/observer", tmp_path)
    warned = PROMPT_SETS["warned"]
    assert sent_prompts(nav) == {fill_prompt(warned.prompt(k), 8) for k in ("navigate", "audit", "selfverify")}
    task = navigation(
        regime="L2", seeds="4810", episodes=1, strategies="omcd", prompt_set="warned", audit_prompt=custom
    )
    nav = run(task, "spatialstale/observer", tmp_path)
    assert sent_prompts(nav) == {fill_prompt(warned.navigate, 8), fill_prompt(custom, 8)}


@pytest.mark.parametrize("build", [detection, navigation, perception])
@pytest.mark.parametrize("value", ["nope", "default,warned", 3, None])
def test_a_bad_set_name_is_one_line_naming_the_sets(build: Any, value: object) -> None:
    with pytest.raises(TaskParameterError) as error:
        build(prompt_set=value)
    message = str(error.value)
    assert message.startswith("prompt_set must be one of default, no_rule, warned, minimal; got ")
    assert "\n" not in message


def test_the_set_name_is_case_insensitive_and_recorded_canonically(tmp_path: Path) -> None:
    log = run(detection(regime="L2", seeds="4810", prompt_set="No_Rule"), "spatialstale/observer", tmp_path)
    assert log.eval.metadata is not None and log.eval.metadata["prompt_set"] == "no_rule"


@pytest.mark.slow  # `inspect eval` subprocesses; bad -T values are pinned in the fast tier by tests/evals/test_cli.py
def test_the_cli_takes_a_set_and_rejects_a_bad_one_before_any_call(tmp_path: Path) -> None:
    inspect = [sys.executable, "-m", "inspect_ai", "eval", "spatialstale/detection"]
    common = ["--model", "spatialstale/observer", "--log-dir", str(tmp_path), "--display", "none"]
    bad = subprocess.run(
        [*inspect, *common, "-T", "prompt_set=terse"], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert bad.returncode == 1
    assert bad.stderr.strip() == "prompt_set must be one of default, no_rule, warned, minimal; got 'terse'"
    assert not list(tmp_path.glob("*.eval"))
    good = subprocess.run(
        [*inspect, *common, "-T", "prompt_set=minimal", "-T", "seeds=4810"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert good.returncode == 0, good.stderr
    assert len(list(tmp_path.glob("*.eval"))) == 1
