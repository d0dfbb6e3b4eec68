"""What a model receives is the protocol's prompt and nothing of the harness: the three
tasks end to end on the reference agents (one seed), under every option that changes a
prompt, each call's system prompt checked against docs/prompts.md."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, resolve_sample_attachments
from inspect_ai.model import ChatMessage, ChatMessageSystem, ContentText

from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.evals.perception import perception
from spatialstale.protocol import CALL_KIND_KEY, call_kind, fill_prompt
from spatialstale.solvers import STRATEGIES
from tests.test_prompts_doc import documented

# one worker runs the module, so its module fixtures' runs are made once
pytestmark = pytest.mark.xdist_group("prompts_sent")

DOCS = documented()
ROOT = Path(__file__).resolve().parents[2]
SEED = "4810"
HARNESS = ("spatialstale", SEED, "seed", "regime")
"""Text of the harness that no input may hold (case-insensitive): the suite's name (and
so any ``[SpatialSTALE:...]`` line), the sample's seed and the protocol's words for it;
the instance's own data (ids, cells, the grid) is the task."""


def prompt(key: str, *suffixes: str) -> str:
    """A documented prompt (``minimal/audit``, falling back to the default set's kind),
    and the documented suffixes after it, each on a new line."""
    name, _, kind = key.partition("/")
    text = (DOCS.get(key) or DOCS[f"default/{kind}"]) if kind else DOCS[name]
    return "\n".join([text, *(DOCS[s] for s in suffixes)])


def prompts_of(prompt_set: str = "default", **changed: str) -> dict[str, str]:
    """The documented prompt of each kind of a navigation run under ``prompt_set``."""
    kinds = {kind: prompt(f"{prompt_set}/{kind}") for kind in ("audit", "selfverify", "navigate")}
    return kinds | changed


@dataclass(frozen=True)
class Case:
    name: str
    task: Task
    sent: dict[str, str]
    """The documented system prompt of every call kind the run makes."""
    size: int = 8
    args: dict[str, Any] = field(default_factory=dict)


NAV = {"regime": "L2", "seeds": SEED, "episodes": 1}
CUSTOM = "Judge each entry of the {size}x{size} grid against the current grid. JSON only."


def cases() -> list[Case]:
    d = {"regime": "L2", "seeds": SEED}
    every = ",".join(STRATEGIES)
    return [
        Case("detection", detection(**d), {"audit": prompt("default/audit")}),
        Case("detection no_rule", detection(**d, prompt_set="no_rule"), {"audit": prompt("no_rule/audit")}),
        Case("detection minimal", detection(**d, prompt_set="minimal"), {"audit": prompt("minimal/audit")}),
        Case("detection structured", detection(**d, structured=True), {"audit": prompt("default/audit")}),
        Case("detection edits", detection(**d, edits=True), {"audit": prompt("default/audit", "edits")}),
        Case(
            "detection crops",
            detection(**d, memory="crops", modality="vision"),
            {"audit": prompt("default/audit", "crops")},
        ),
        Case(
            "detection crops edits minimal",
            detection(**d, memory="crops", modality="both", edits=True, prompt_set="minimal"),
            {"audit": prompt("minimal/audit", "crops", "edits")},
        ),
        Case("detection MA", detection(regime="MA", seeds=SEED), {"audit": prompt("default/audit")}),
        Case("detection holes", detection(**d, observation="holes"), {"audit": prompt("default/audit")}),
        Case("detection distractors", detection(**d, distractors=4), {"audit": prompt("default/audit")}),
        Case("detection custom", detection(**d, audit_prompt=CUSTOM), {"audit": CUSTOM}),
        Case("detection n=16", detection(**d, size=16), {"audit": prompt("default/audit")}, size=16),
        Case("navigation every strategy", navigation(**NAV, strategies=every), prompts_of()),
        *(
            Case(
                f"navigation {name}",
                navigation(**NAV, strategies="omcd,selfverify", prompt_set=name),
                prompts_of(name),
            )
            for name in ("no_rule", "warned", "minimal")
        ),
        Case(
            "navigation tools warned",
            navigation(**NAV, strategies="omcd,nomemory", agent="tools", prompt_set="warned"),
            {"navigate-tools": prompt("tools"), "audit": prompt("warned/audit")},
        ),
        Case(
            "navigation memory",
            navigation(**NAV, strategies="nofilter,nomemory", agent="memory"),
            {"navigate-memory": prompt("memory")},
        ),
        Case(
            "navigation fog unknown",
            navigation(**NAV, strategies="omcd,selfverify", view_radius=1, filter="unknown"),
            prompts_of(),
        ),
        Case(
            "navigation MA",
            navigation(regime="MA", seeds=SEED, episodes=1, strategies="omcd,selfverify"),
            prompts_of(),
        ),
        Case(
            "navigation holes structured vision",
            navigation(**NAV, strategies="omcd,selfverify", observation="holes", structured=True, modality="both"),
            prompts_of(),
        ),
        Case("perception", perception(regime="L2", seeds=SEED), {"perception": prompt("default/perception")}),
        Case(
            "perception minimal vision",
            perception(regime="L2", seeds=SEED, prompt_set="minimal", modality="vision"),
            {"perception": prompt("minimal/perception")},
        ),
    ]


CASES = cases()


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, EvalLog]:
    """Every case's log: one ``eval`` of all the tasks."""
    out = eval(
        [case.task for case in CASES],
        model="spatialstale/observer",
        log_dir=str(tmp_path_factory.mktemp("prompts")),
        display="none",
        log_realtime=False,
        max_tasks=4,
    )
    assert len(out) == len(CASES)
    # eval keeps the order of the tasks it was given
    return {case.name: log for case, log in zip(CASES, out, strict=True)}


def texts(messages: list[ChatMessage]) -> list[str]:
    out: list[str] = []
    for message in messages:
        if isinstance(message.content, str):
            out.append(message.content)
        else:
            out += [part.text for part in message.content if isinstance(part, ContentText)]
    return out


def sent_by_kind(log: EvalLog) -> dict[str, set[str]]:
    """Each call kind's system prompts as sent, checking every input for harness text."""
    out: dict[str, set[str]] = {}
    for sample in log.samples or []:
        for event in resolve_sample_attachments(sample).events:
            if not isinstance(event, ModelEvent):
                continue
            sent = "\n".join(texts(event.input)).lower()
            tools = " ".join(f"{t.name} {t.description} {t.parameters.model_dump_json()}" for t in event.tools).lower()
            schema = event.config.response_schema
            asked = "" if schema is None else f"{schema.name} {schema.description} {schema.json_schema}".lower()
            for word in HARNESS:
                assert word not in sent and word not in tools and word not in asked, (word, sample.id)
            [system] = [m for m in event.input if isinstance(m, ChatMessageSystem)]
            kind = call_kind(event.input)
            assert kind is not None, sample.id
            out.setdefault(kind, set()).add(system.text)
    return out


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_each_system_prompt_is_the_documented_text_and_nothing_of_the_harness(
    case: Case, logs: dict[str, EvalLog]
) -> None:
    log = logs[case.name]
    assert log.status == "success", log.error
    sent = sent_by_kind(log)
    # every kind the run makes was made, each with exactly its documented prompt
    assert sent == {kind: {fill_prompt(text, case.size)} for kind, text in case.sent.items()}


def test_the_cases_cover_every_prompt_on_the_page() -> None:
    used = {text for case in CASES for text in case.sent.values()}
    for key, text in DOCS.items():
        if key.startswith("example") or key in ("edits", "crops"):
            continue
        assert text in used or any(text in u for u in used), key
    assert any(DOCS["edits"] in u for u in used) and any(DOCS["crops"] in u for u in used)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The benchmark's OpenAI-compatible server (the observer agent over HTTP), in its
    own process: the base URL of ``openai-api/bench``."""
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "benchmarks" / "bench_harness.py"), "--serve"],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        port = process.stdout.readline().strip()
        assert port.isdigit(), port
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_the_tag_never_reaches_the_wire_and_the_observer_reads_the_wording(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a real provider (openai-api, as for vLLM and llama.cpp) against a real HTTP server:
    # the request Inspect records as sent holds the documented prompt and no tag, the
    # logged input keeps the tag, and the observer, reading the wire, still answers right
    monkeypatch.setenv("BENCH_API_KEY", "unused")
    tasks = [
        detection(regime="L2", seeds=SEED),
        navigation(**NAV, strategies="omcd,selfverify"),
    ]
    logs = eval(
        tasks,
        model="openai-api/bench/latency-0",
        model_base_url=server,
        log_dir=str(tmp_path),
        display="none",
        log_model_api=True,
    )
    kinds = set()
    for log in logs:
        assert log.status == "success", log.error
        for sample in log.samples or []:
            for event in resolve_sample_attachments(sample, "full").events:
                if not isinstance(event, ModelEvent):
                    continue
                assert event.call is not None
                wire = json.dumps(event.call.request)
                assert "spatialstale" not in wire.lower() and CALL_KIND_KEY not in wire
                kind = call_kind(event.input)
                assert kind is not None
                kinds.add(kind)
                [system] = [m for m in event.call.request["messages"] if m["role"] in ("system", "developer")]
                assert system["content"] == fill_prompt(prompt(f"default/{kind}"), 8)
    assert kinds == {"audit", "selfverify", "navigate"}
    detected, navigated = logs
    assert detected.results is not None and detected.results.scores[0].metrics["f1_mean"].value == 1.0
    assert navigated.results is not None and navigated.results.scores[0].metrics["success"].value == 1.0
