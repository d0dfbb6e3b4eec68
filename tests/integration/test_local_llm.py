"""A real LLM end to end: SmolLM2-135M-Instruct served by llama.cpp on 127.0.0.1
(``spatialstale.llamacpp``), reached through Inspect's own ``llama-cpp-python`` provider.

The model is weak and its answers are messy; the tests check the plumbing: the
eval succeeds, every answer the server returned was either read or counted as
unreadable in the scores, and token usage was recorded. With a
response schema (``-T structured=true``) the server constrains the answer to it: the
last test runs both tasks with structured output off and on and prints how many
answers could not be read each way (``pytest -s`` shows it). Skipped when the
server's interpreter (``$SPATIALSTALE_LLAMA_PYTHON``, else this one) lacks llama_cpp
or no GGUF model is installed.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, EvalSample, resolve_sample_attachments
from inspect_ai.model import ResponseSchema

from spatialstale.evals.detection import detection
from spatialstale.protocol import DEFAULT_STRATEGIES as STRATEGIES
from spatialstale.protocol import NAVIGATE_SCHEMA, call_kind, parse_action, read_audit, read_selfverify
from spatialstale.protocol._prompts import AUDIT, AUDIT_SCHEMA, NAVIGATE, SELFVERIFY, SELFVERIFY_SCHEMA

from ._llama_support import smollm2

pytestmark = pytest.mark.slow

ENTRIES = 64
BATCH_SIZE = 32
"""Two audit calls per audit instead of seven: the same code path, a shorter test."""
MAX_TOKENS = 128
"""SmolLM2 often writes until the limit; a short one bounds the runtime."""
_ENTRY_LINE = re.compile(r"^\[(mem_\d{3,})\]", re.MULTILINE)


def run(server: str, task: str, tmp_path: Path, max_tokens: int = MAX_TOKENS, **task_args: Any) -> EvalLog:
    """``spatialstale/<task>`` (L2, batches of ``BATCH_SIZE``) against the server at ``server``."""
    [log] = eval(
        f"spatialstale/{task}",
        model=smollm2(server, max_tokens),
        task_args={"regime": "L2", "batch_size": BATCH_SIZE, **task_args},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    assert log.eval.model == "llama-cpp-python/smollm2"
    return log


def model_events(sample: EvalSample, kind: str) -> list[ModelEvent]:
    """The sample's model calls of ``kind`` (their system message's tag), prompts resolved."""
    events = resolve_sample_attachments(sample).events
    return [e for e in events if isinstance(e, ModelEvent) and call_kind(e.input) == kind]


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


def test_detection_answers_are_read_or_counted(server: str, tmp_path: Path) -> None:
    log = run(server, "detection", tmp_path, n_seeds=2)
    samples = log.samples or []
    assert len(samples) == 2
    for sample in samples:
        assert sample.error is None
        value = score_value(sample)
        calls = model_events(sample, AUDIT)
        assert len(calls) == value["calls"] == -(-ENTRIES // BATCH_SIZE) * value["windows"]
        # re-read every raw answer: the score must count exactly what could not be read
        parsed = [read_audit(e.output.completion, batch_ids(e)) for e in calls]
        assert value["unparseable"] == sum(p.error is not None for p in parsed)
        assert value["unanswered"] == sum(len(p.unanswered) for p in parsed)
        assert value["tp"] + value["fp"] + value["fn"] + value["tn"] == ENTRIES * value["windows"]
    assert_usage_recorded(log)


def test_navigation_answers_are_read_or_counted(server: str, tmp_path: Path) -> None:
    log = run(server, "navigation", tmp_path, n_seeds=1, max_steps=5, episodes=1)
    samples = log.samples or []
    assert sorted(str(s.metadata["strategy"]) for s in samples) == sorted(STRATEGIES)
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
        assert [r["parsed"] for r in episode["records"]] == readable
        audits = model_events(sample, AUDIT)
        checks = model_events(sample, SELFVERIFY)
        assert episode["audit_calls"] == len(audits) + len(checks)
        unreadable = sum(read_audit(e.output.completion, batch_ids(e)).error is not None for e in audits)
        unreadable += sum(read_selfverify(e.output.completion, batch_ids(e)).error is not None for e in checks)
        assert episode["audit_unparseable"] == unreadable
    assert_usage_recorded(log)


PLUGIN = """
from spatialstale.solvers import StrategyContext


class AuditOnce:
    \"\"\"OMCD without its re-audits: the whole memory audited once, before the first step.\"\"\"

    name = "auditonce"

    def __init__(self, context: StrategyContext) -> None:
        self.context = context
        self.audits = []
        self.kept = None

    async def view(self, step, grid, agent):
        if self.kept is None:
            result = await self.context.audit(self.context.instance.memory, step, grid, agent)
            self.audits.append(result)
            self.kept = tuple(e for e in self.context.instance.memory if e.id not in result.flagged)
        return self.kept
"""


def test_a_plugin_and_localverify_run_end_to_end(server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "smol_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    strategies = "localverify,smol_plugin:AuditOnce"
    log = run(server, "navigation", tmp_path / "logs", n_seeds=1, max_steps=5, episodes=1, strategies=strategies)
    samples = log.samples or []
    assert sorted(str(s.metadata["strategy"]) for s in samples) == ["auditonce", "localverify"]
    assert log.results is not None
    metrics = log.results.scores[0].metrics
    assert {"success_auditonce", "audit_calls_auditonce", "success_localverify", "audit_calls_localverify"} <= set(
        metrics
    )
    for sample in samples:
        assert sample.error is None
        assert sample.scores is not None
        [score] = sample.scores.values()
        episode = score.metadata or {}
        audits = model_events(sample, AUDIT)
        # every audit call the model answered is counted as the episode's cost, read or not
        assert episode["cost"]["audit_calls"] == len(audits) > 0
        unreadable = sum(read_audit(e.output.completion, batch_ids(e)).error is not None for e in audits)
        assert episode["audit_unparseable"] == unreadable
    [once] = [s for s in samples if s.metadata["strategy"] == "auditonce"]
    assert len(model_events(once, AUDIT)) == -(-ENTRIES // BATCH_SIZE)
    assert_usage_recorded(log)


# --- structured output -----------------------------------------------------------------

SCHEMAS = {"navigate": NAVIGATE_SCHEMA, "audit": AUDIT_SCHEMA, "selfverify": SELFVERIFY_SCHEMA}
_QUESTIONS = {
    "navigate": "You stand at (0,0) of a 4x4 FrozenLake grid; the goal is at (3,3). Which way do you move?",
    "audit": "Memory: [mem_000] (0,0) F. [mem_001] (0,1) H. The grid now: (0,0) F, (0,1) F. Which notes are stale?",
    "selfverify": "Memory: [mem_000] (0,0) F. [mem_001] (0,1) H. The grid now: (0,0) F, (0,1) F. Which are wrong?",
}


def fits(value: Any, schema: dict[str, Any]) -> bool:
    """Whether ``value`` fits ``schema`` (the object, array, string, boolean and enum parts used here)."""
    kind = schema.get("type")
    if "enum" in schema and value not in schema["enum"]:
        return False
    if kind == "object":
        properties = schema.get("properties", {})
        return (
            isinstance(value, dict)
            and set(schema.get("required", [])) <= value.keys() <= set(properties)
            and all(fits(v, properties[k]) for k, v in value.items())
        )
    if kind == "array":
        return isinstance(value, list) and all(fits(v, schema.get("items", {})) for v in value)
    return isinstance(value, {"string": str, "boolean": bool}[str(kind)])


@pytest.mark.parametrize("answer", sorted(SCHEMAS))
def test_a_response_schema_gets_json_that_fits_it(server: str, answer: str) -> None:
    # Inspect sends the schema as response_format json_schema, which llama-cpp-python's
    # server refuses (HTTP 422) unless the launcher rewrites it into a grammar
    schema: ResponseSchema = SCHEMAS[answer]
    output = asyncio.run(smollm2(server, 512, response_schema=schema).generate(_QUESTIONS[answer]))
    reply = json.loads(output.completion)
    assert fits(reply, schema.json_schema.model_dump(exclude_none=True)), reply


STRUCTURED_MAX_TOKENS = 512
"""Room for a whole constrained answer: a cut-off JSON answer is unreadable either way."""


def unreadable_rates(log: EvalLog) -> tuple[int, int, int, int]:
    """(unparseable audit/SelfVerify calls, calls, fallback steps, steps) of one log,
    read from its scores: detection counts ``unparseable`` of ``calls``, navigation the
    steps that ``fell back`` and its audits' ``audit_unparseable`` of ``audit_calls``."""
    unreadable = calls = fallbacks = steps = 0
    for sample in log.samples or []:
        for score in (sample.scores or {}).values():
            value = score.value if isinstance(score.value, dict) else {}
            metadata = score.metadata or {}
            unreadable += int(value.get("unparseable", 0)) + int(metadata.get("audit_unparseable", 0))
            calls += int(value.get("calls", 0)) + int(metadata.get("audit_calls", 0))
            fallbacks += int(value.get("fallbacks", 0))
            steps += int(value.get("steps", 0))
    return unreadable, calls, fallbacks, steps


def test_structured_output_makes_the_answers_readable(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if "structured" not in inspect.signature(detection).parameters:
        pytest.skip("the tasks have no -T structured yet")
    rates: dict[str, dict[str, tuple[int, int, int, int]]] = {}
    for structured in (False, True):
        mode = "on" if structured else "off"
        logs = [
            run(
                server,
                "detection",
                tmp_path / mode,
                STRUCTURED_MAX_TOKENS,
                n_seeds=1,
                batch_size=16,
                structured=structured,
            ),
            run(
                server,
                "navigation",
                tmp_path / mode,
                STRUCTURED_MAX_TOKENS,
                n_seeds=1,
                max_steps=5,
                episodes=1,
                structured=structured,
            ),
        ]
        rates[mode] = {log.eval.task.split("/")[-1]: unreadable_rates(log) for log in logs}
    with capsys.disabled():
        print("\nSmolLM2-135M, L2, text, greedy: answers that could not be read")
        for mode, by_task in rates.items():
            bad, calls, _, _ = by_task["detection"]
            audit_bad, audit_calls, fallbacks, steps = by_task["navigation"]
            print(
                f"  structured {mode:<3}: detection {bad}/{calls} audit calls unparseable; "
                f"navigation {fallbacks}/{steps} steps fell back, {audit_bad}/{audit_calls} audit calls unparseable"
            )
    on, off = rates["on"], rates["off"]
    assert on["navigation"][2] == 0, "a schema-constrained action could not be read"
    assert on["detection"][0] <= off["detection"][0]
    assert on["detection"][0] < on["detection"][1], "no structured audit answer could be read"
