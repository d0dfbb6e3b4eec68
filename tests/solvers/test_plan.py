"""The loops send what their plan states: the calls a real run logs are the calls of
``detection_plan`` and ``episode_plan`` (the plan the dry run measures), prompt for prompt."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from inspect_ai.log import EvalSample, resolve_sample_attachments
from inspect_ai.model import ChatMessage, ContentImage, ContentText
from inspect_ai.tool import ToolDef

from spatialstale.env import make_instance
from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.protocol import DetectionSettings, NavigationSettings, call_kind
from spatialstale.solvers import (
    AuditPlan,
    ConversationPlan,
    StepsPlan,
    detection_args,
    detection_plan,
    episode_plan,
    navigation_args,
)
from tests.conftest import run_eval

SEED = 4810
Prompt = list[tuple[str, str]]


def _said(messages: list[ChatMessage]) -> Prompt:
    return [(m.role, m.text) for m in messages]


def _shown(messages: list[ChatMessage]) -> Prompt:
    """Each part of each message, an image by the digest of its data."""
    parts: Prompt = []
    for m in messages:
        for c in [ContentText(text=m.content)] if isinstance(m.content, str) else m.content:
            if isinstance(c, ContentText):
                parts.append((m.role, c.text))
            elif isinstance(c, ContentImage):
                parts.append((m.role, "image " + hashlib.sha256(c.image.encode()).hexdigest()))
    return parts


def _calls(sample: EvalSample, kind: str, said: Callable[[list[ChatMessage]], Prompt] = _said) -> list[Prompt]:
    """The prompt of every model call of ``kind`` the sample made, in transcript order."""
    events = resolve_sample_attachments(sample).events
    return [said(e.input) for e in events if e.event == "model" and call_kind(e.input) == kind]


def _batches(plan: AuditPlan) -> list[Prompt]:
    return [_said(plan.messages(batch)) for batch in plan.batches]


def test_a_detection_sample_makes_exactly_the_calls_of_its_plan(tmp_path: Path) -> None:
    args = {"regime": "L3", "seeds": str(SEED), "batch_size": 7}
    [sample] = run_eval(detection(**args), "spatialstale/observer", tmp_path).samples or []
    plan = detection_plan(make_instance(SEED, "L3"), **detection_args(DetectionSettings.read(args)))
    assert len(plan) > 1  # L3: a window after each scheduled event
    assert _calls(sample, "audit") == [prompt for window in plan for prompt in _batches(window)]


def test_an_audit_plan_shows_and_asks_as_the_extensions_on_say(tmp_path: Path) -> None:
    # memory crops (a picture an entry) and edits (a verdict field, a request in the prompt)
    args = {"regime": "L2", "seeds": str(SEED), "modality": "vision", "memory": "crops", "edits": True}
    [sample] = run_eval(detection(**args), "spatialstale/observer", tmp_path).samples or []
    [window] = detection_plan(make_instance(SEED, "L2"), **detection_args(DetectionSettings.read(args)))
    assert [f.name for f in window.fields] == ["edit"]
    sent = _calls(sample, "audit", _shown)
    assert sent == [_shown(window.messages(batch)) for batch in window.batches]
    # the grid's image, then a crop an entry
    assert sum(part.startswith("image ") for _, part in sent[0]) == 1 + len(window.batches[0])
    assert "edit" in sent[0][0][1]  # the prompt asks for the edits


def test_an_episode_opens_with_the_calls_of_its_plan(tmp_path: Path) -> None:
    args = {"regime": "L2", "seeds": str(SEED), "strategies": "nofilter,omcd,selfverify,oracle", "max_steps": 6}
    log = run_eval(navigation(**args), "spatialstale/credulous", tmp_path, epochs=1)
    settings = NavigationSettings.read(args)
    instance = make_instance(SEED, "L2")
    for sample in log.samples or []:
        strategy = str(sample.metadata["strategy"])
        plan = episode_plan(instance, strategy, **navigation_args(settings))
        assert isinstance(plan.navigator, StepsPlan)
        steps = _calls(sample, "navigate")
        assert 0 < len(steps) <= plan.navigator.turns  # an upper bound: the episode may end early
        audits = _calls(sample, "audit") + _calls(sample, "selfverify")
        if not plan.audits:
            assert audits == [], strategy
            continue
        # before the first step, with the agent at S: the plan's first audit, batch for batch
        first = plan.audits[0]
        opening = _batches(first) if isinstance(first, AuditPlan) else [_said(first.messages())]
        assert audits[: len(opening)] == opening, strategy
    # a view of the whole store, the agent at S: the first step is the plan's, word for word
    nofilter = next(s for s in log.samples or [] if s.metadata["strategy"] == "nofilter")
    plan = episode_plan(instance, "nofilter", **navigation_args(settings))
    assert isinstance(plan.navigator, StepsPlan)
    assert _calls(nofilter, "navigate")[0] == _said(plan.navigator.messages(0))


def test_a_tool_episode_opens_with_the_conversation_of_its_plan(tmp_path: Path) -> None:
    args = {"regime": "L2", "seeds": str(SEED), "strategies": "nofilter", "max_steps": 4, "agent": "tools"}
    [sample] = run_eval(navigation(**args), "spatialstale/credulous", tmp_path, epochs=1).samples or []
    plan = episode_plan(make_instance(SEED, "L2"), "nofilter", **navigation_args(NavigationSettings.read(args)))
    assert isinstance(plan.navigator, ConversationPlan) and plan.navigator.turns == 4
    first = next(e for e in resolve_sample_attachments(sample).events if e.event == "model")
    assert _said(first.input) == _said(plan.navigator.opening)
    assert [t.name for t in first.tools] == [ToolDef(t).name for t in plan.navigator.tools]
