"""A real LLM end to end: SmolLM2-135M-Instruct served by llama.cpp on 127.0.0.1,
reached through Inspect's own ``openai-api`` and ``vllm`` providers.

The model is weak and its answers are messy; the tests check the plumbing: the
eval succeeds, every answer the server returned was either read or counted as
unreadable in the scores, and token usage was recorded. Detection goes through
both providers, navigation (one episode per strategy) through openai-api. Skipped
when the server's interpreter (``$SPATIALSTALE_LLAMA_PYTHON``, else this one) lacks
llama_cpp or no GGUF model is installed.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, EvalSample, resolve_sample_attachments

from spatialstale.agents.llama_server import PROVIDERS, llama_server, run_suite
from spatialstale.solvers import STRATEGIES, parse_action, parse_audit, parse_selfverify
from spatialstale.solvers._prompts import AUDIT_MARKER, NAVIGATE_MARKER, SELFVERIFY_MARKER

from ._llama_support import LLAMA_PYTHON, local_llm_missing

pytestmark = pytest.mark.slow

ENTRIES = 64
BATCH_SIZE = 32
"""Two audit calls per audit instead of seven: the same code path, a shorter test."""
MAX_TOKENS = 128
"""SmolLM2 often writes until the limit; a short one bounds the runtime."""
_ENTRY_LINE = re.compile(r"^\[(mem_\d{3,})\]", re.MULTILINE)


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, str]]:
    reason = local_llm_missing()
    if reason:
        pytest.skip(reason)
    api_key = secrets.token_urlsafe(12)
    with llama_server(server_python=LLAMA_PYTHON, api_key=api_key) as base_url:
        yield base_url, api_key


def run(server: tuple[str, str], provider: str, task: str, tmp_path: Path, **task_args: Any) -> EvalLog:
    base_url, api_key = server
    [log] = run_suite(
        base_url,
        providers=[provider],
        tasks=[task],
        task_args={"regime": "L2", "batch_size": BATCH_SIZE, **task_args},
        api_key=api_key,
        log_dir=str(tmp_path),
        max_tokens=MAX_TOKENS,
    )
    assert log.status == "success", log.error
    assert log.eval.model.startswith(provider + "/")
    return log


def model_events(sample: EvalSample, marker: str) -> list[ModelEvent]:
    """The sample's model calls whose system prompt starts with ``marker``, prompts resolved."""
    events = resolve_sample_attachments(sample).events
    return [e for e in events if isinstance(e, ModelEvent) and e.input[0].text.startswith(marker)]


def batch_ids(event: ModelEvent) -> list[str]:
    return _ENTRY_LINE.findall(event.input[-1].text)


def score_value(sample: EvalSample) -> dict[str, Any]:
    assert sample.scores is not None
    [score] = sample.scores.values()
    assert isinstance(score.value, dict)
    return score.value


def assert_usage_recorded(log: EvalLog) -> None:
    usage = log.stats.model_usage
    assert usage, "no model usage in the log"
    assert all(u.input_tokens > 0 and u.output_tokens > 0 for u in usage.values()), usage
    for sample in log.samples or []:
        for event in sample.events:
            if isinstance(event, ModelEvent):
                assert event.output.usage is not None and event.output.usage.input_tokens > 0


@pytest.mark.parametrize("provider", PROVIDERS)
def test_detection_answers_are_read_or_counted(server: tuple[str, str], provider: str, tmp_path: Path) -> None:
    log = run(server, provider, "detection", tmp_path, n_seeds=2)
    samples = log.samples or []
    assert len(samples) == 2
    for sample in samples:
        assert sample.error is None
        value = score_value(sample)
        calls = model_events(sample, AUDIT_MARKER)
        assert len(calls) == value["calls"] == -(-ENTRIES // BATCH_SIZE) * value["windows"]
        # re-read every raw answer: the score must count exactly what could not be read
        parsed = [parse_audit(e.output.completion, batch_ids(e)) for e in calls]
        assert value["unparseable"] == sum(p.error is not None for p in parsed)
        assert value["unanswered"] == sum(len(p.unanswered) for p in parsed)
        assert value["tp"] + value["fp"] + value["fn"] + value["tn"] == ENTRIES * value["windows"]
    assert_usage_recorded(log)


def test_navigation_answers_are_read_or_counted(server: tuple[str, str], tmp_path: Path) -> None:
    # one client suffices here: the detection tests already take both paths to the server
    log = run(server, "openai-api", "navigation", tmp_path, n_seeds=1, max_steps=5, episodes=1)
    samples = log.samples or []
    assert sorted(str(s.metadata["strategy"]) for s in samples) == sorted(STRATEGIES)
    for sample in samples:
        assert sample.error is None
        value = score_value(sample)
        assert sample.scores is not None
        [score] = sample.scores.values()
        episode = score.metadata or {}
        steps = model_events(sample, NAVIGATE_MARKER)
        assert len(steps) == value["steps"] <= 5
        readable = [parse_action(e.output.completion) is not None for e in steps]
        assert value["fallbacks"] == readable.count(False)
        assert [r["parsed"] for r in episode["records"]] == readable
        audits = model_events(sample, AUDIT_MARKER)
        checks = model_events(sample, SELFVERIFY_MARKER)
        assert episode["audit_calls"] == len(audits) + len(checks)
        unreadable = sum(parse_audit(e.output.completion, batch_ids(e)).error is not None for e in audits)
        unreadable += sum(parse_selfverify(e.output.completion, batch_ids(e)).error is not None for e in checks)
        assert episode["audit_unparseable"] == unreadable
    assert_usage_recorded(log)
