"""The batches of an audit run concurrently, with the results and log order of asking
them one after another."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import anyio
import pytest
from inspect_ai import eval
from inspect_ai.event import InfoEvent, ModelEvent, SpanBeginEvent
from inspect_ai.log import EvalLog, EvalSample, resolve_sample_attachments
from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, modelapi
from inspect_ai.tool import ToolChoice, ToolInfo

from spatialstale.agents._perception import CallKind, perceive
from spatialstale.agents._policies import AGENTS
from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from tests.scripted import without_tokens
from tests.solvers.test_transcript import table_rows

IN_FLIGHT = {"now": 0, "peak": 0}


@modelapi(name="delayed")
def delayed() -> type[ModelAPI]:
    return DelayedAgent


class DelayedAgent(ModelAPI):
    """A reference agent whose answers to later audit batches come back first: each
    batch sleeps longer the earlier its entries, so completion order is reversed."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None, **kwargs: Any):
        super().__init__(model_name, base_url, api_key, [], kwargs.pop("config", GenerateConfig()))
        self.policy = AGENTS[model_name]

    async def generate(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        seen = perceive(input)
        first = int(seen.memory[0].id[4:]) if seen.kind is CallKind.AUDIT and seen.memory else 0
        IN_FLIGHT["now"] += 1
        IN_FLIGHT["peak"] = max(IN_FLIGHT["peak"], IN_FLIGHT["now"])
        try:
            await anyio.sleep(0.01 + 0.06 * (1 - first / 64))
        finally:
            IN_FLIGHT["now"] -= 1
        return ModelOutput.from_content(model=self.model_name, content=self.policy.answer(seen, random.Random(0)))


def _run(task: Any, model: str, tmp_path: Path, **kwargs: Any) -> EvalLog:
    IN_FLIGHT.update(now=0, peak=0)
    [log] = eval(task, model=model, log_dir=str(tmp_path), display="none", **kwargs)
    assert log.status == "success", log.error
    return log


def _batch_spans(sample: EvalSample) -> list[str]:
    return [e.name for e in sample.events if isinstance(e, SpanBeginEvent) and e.type == "audit"]


def _audit_tables(sample: EvalSample) -> list[tuple[str, str]]:
    """Each audit table as (the span it stands in, its text)."""
    names = {e.id: e.name for e in sample.events if isinstance(e, SpanBeginEvent)}
    return [
        (names[str(e.span_id)], str(e.data))
        for e in resolve_sample_attachments(sample).events
        if isinstance(e, InfoEvent) and e.source == "audit"
    ]


@pytest.mark.parametrize("connections", [1, 8])
def test_an_audit_issues_its_batches_together_and_logs_them_in_batch_order(connections: int, tmp_path: Path) -> None:
    _run(detection(regime="L2", seeds="4810"), "delayed/observer", tmp_path / "one", max_connections=connections)
    # the connection limit bounds the calls in flight, and with room an audit's 7 go at once
    assert IN_FLIGHT["peak"] == min(connections, 7)
    log = _run(detection(regime="L2,L3", seeds="4810"), "delayed/observer", tmp_path / "delayed")
    reference = _run(detection(regime="L2,L3", seeds="4810"), "spatialstale/observer", tmp_path / "instant")
    for sample, same in zip(log.samples or [], reference.samples or [], strict=True):
        assert sample.scores is not None and same.scores is not None
        assert sample.scores["stale_f1"].value == same.scores["stale_f1"].value
        assert sample.scores["stale_f1"].metadata == same.scores["stale_f1"].metadata
        spans = _batch_spans(sample)
        windows = len(spans) // 7
        in_order = [f"audit batch {k} of 7" for k in range(1, 8)] * windows
        assert spans == in_order and windows >= 1
        # one table per audit, in its window's span, with every entry in batch order
        tables = _audit_tables(sample)
        assert [where for where, _ in tables] == [
            f"detection window {k} (after step {step})"
            for k, step in enumerate([w["step"] for w in sample.scores["stale_f1"].metadata["windows"]], start=1)
        ]
        for _, text in tables:
            assert [line.split(" | ")[0].lstrip("| ") for line in table_rows(text)] == [
                f"mem_{i:03d}" for i in range(64)
            ]
        # each batch's span holds its own call: the entries it asks about, and no other
        names = {e.id: e.name for e in sample.events if isinstance(e, SpanBeginEvent)}
        for event in resolve_sample_attachments(sample).events:
            if isinstance(event, ModelEvent):
                number = int(names[str(event.span_id)].split()[2])
                ids = [m.id for m in perceive(event.input).memory]
                assert ids == [f"mem_{i:03d}" for i in range(10 * (number - 1), min(10 * number, 64))]


def test_omcd_reaudits_concurrently_and_the_episode_is_unchanged(tmp_path: Path) -> None:
    task = navigation(regime="L3", seeds="4810,1734", strategies="omcd,selfverify", episodes=1)
    log = _run(task, "delayed/observer", tmp_path / "delayed", max_connections=8)
    assert IN_FLIGHT["peak"] > 1
    reference = _run(
        navigation(regime="L3", seeds="4810,1734", strategies="omcd,selfverify", episodes=1),
        "spatialstale/observer",
        tmp_path / "instant",
    )
    for sample, same in zip(log.samples or [], reference.samples or [], strict=True):
        assert sample.scores is not None and same.scores is not None
        # the delayed provider reports no token usage; everything else is the same
        ours, theirs = sample.scores["episode_outcome"], same.scores["episode_outcome"]
        assert without_tokens(ours.value) == without_tokens(theirs.value)
        assert without_tokens(ours.metadata) == without_tokens(theirs.metadata)
