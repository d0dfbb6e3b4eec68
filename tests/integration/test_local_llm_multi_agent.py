"""Regime MA with a real LLM: SmolLM2-135M-Instruct served by llama.cpp on 127.0.0.1.

The plumbing of ``test_local_llm`` under ``-T regime=MA``: detection and navigation run
end to end, every sample is scored, every raw answer is either read or counted as
unreadable, and every prompt tells the other agent's route and habit while covering
the cells it broke. Skipped, with the reason, when the server's interpreter
(``$SPATIALSTALE_LLAMA_PYTHON``, else this one) lacks llama_cpp or no GGUF model is
installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.log import EvalLog

from spatialstale.env import make_instance
from spatialstale.protocol import parse_action, read_audit, read_selfverify
from spatialstale.protocol._prompts import AUDIT, NAVIGATE, SELFVERIFY

from ._llama_support import smollm2
from .test_local_llm import BATCH_SIZE, ENTRIES, MAX_TOKENS, batch_ids, model_events, score_value

pytestmark = pytest.mark.slow

TOLD = "Another agent crossed the lake before you"


def run(server: str, task: str, tmp_path: Path, **task_args: Any) -> EvalLog:
    [log] = eval(
        f"spatialstale/{task}",
        model=smollm2(server, MAX_TOKENS),
        task_args={"regime": "MA", "batch_size": BATCH_SIZE, **task_args},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    return log


def assert_route_told_and_broken_cells_covered(text: str, seed: int) -> None:
    instance = make_instance(seed, "MA")
    assert TOLD in text
    for change in instance.changes:
        assert f"({change.row},{change.col})=H" not in text


def test_detection_in_ma(server: str, tmp_path: Path) -> None:
    log = run(server, "detection", tmp_path, n_seeds=2)
    samples = log.samples or []
    assert len(samples) == 2
    for sample in samples:
        assert sample.error is None and sample.metadata["route"]
        value = score_value(sample)
        calls = model_events(sample, AUDIT)
        assert len(calls) == value["calls"] == -(-ENTRIES // BATCH_SIZE)
        parsed = [read_audit(e.output.completion, batch_ids(e)) for e in calls]
        assert value["unparseable"] == sum(p.error is not None for p in parsed)
        assert value["unanswered"] == sum(len(p.unanswered) for p in parsed)
        assert value["tp"] + value["fp"] + value["fn"] + value["tn"] == ENTRIES
        for event in calls:
            assert_route_told_and_broken_cells_covered(event.input[-1].text, sample.metadata["seed"])
        print(f"SmolLM2 MA detection {sample.id}: f1={value['f1']:.3f} unparseable={value['unparseable']}")


def test_navigation_in_ma(server: str, tmp_path: Path) -> None:
    log = run(server, "navigation", tmp_path, n_seeds=1, max_steps=5, episodes=1, strategies="nofilter,omcd,selfverify")
    samples = log.samples or []
    assert sorted(str(s.metadata["strategy"]) for s in samples) == ["nofilter", "omcd", "selfverify"]
    for sample in samples:
        assert sample.error is None
        value = score_value(sample)
        assert sample.scores is not None
        [score] = sample.scores.values()
        episode = score.metadata or {}
        steps = model_events(sample, NAVIGATE)
        assert len(steps) == value["steps"] <= 5
        readable = [parse_action(e.output.completion) is not None for e in steps]
        assert value["fallbacks"] == readable.count(False)
        audits = model_events(sample, AUDIT)
        checks = model_events(sample, SELFVERIFY)
        assert episode["audit_calls"] == len(audits) + len(checks)
        unreadable = sum(read_audit(e.output.completion, batch_ids(e)).error is not None for e in audits)
        unreadable += sum(read_selfverify(e.output.completion, batch_ids(e)).error is not None for e in checks)
        assert episode["audit_unparseable"] == unreadable
        for event in [*steps, *audits, *checks]:
            assert_route_told_and_broken_cells_covered(event.input[-1].text, sample.metadata["seed"])
        print(f"SmolLM2 MA navigation {sample.id}: {score.answer} fallbacks={value['fallbacks']}")
