"""Prompts ordered for prefix caching, one rendering per grid, and the holes listing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ContentImage, ContentText, GenerateConfig, get_model

from spatialstale.env import make_instance
from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.protocol import (
    NAVIGATE_SCHEMA,
    Sight,
    TaskParameterError,
    answer_config,
    audit_messages,
    navigate_messages,
    selfverify_messages,
)
from spatialstale.protocol._prompts import AUDIT_SCHEMA, grid_listing, png_data_uri
from tests.scripted import without_tokens

BOTH = Sight("both")

INSTANCE = make_instance(4810, "L2", 8)
GRID = INSTANCE.final_grid


def _parts(messages: list[Any]) -> list[Any]:
    content = messages[1].content
    assert isinstance(content, list)
    return content


@pytest.mark.parametrize("modality", ["text", "vision", "both"])
def test_audit_and_selfverify_show_the_observation_before_the_entries(modality: str) -> None:
    for build in (audit_messages, selfverify_messages):
        parts = _parts(build(INSTANCE.memory[:10], GRID, INSTANCE.start, Sight(modality)))
        entries = parts[-1]
        # a block after the first starts on a new line: providers join parts with no separator
        assert isinstance(entries, ContentText) and entries.text.startswith("\nMemory entries:")
        observation = parts[:-1]
        assert any(isinstance(p, ContentImage) for p in observation) == (modality != "text")
        # the cacheable prefix ends at the last text part of the observation
        marked = [p for p in parts if isinstance(p, ContentText) and p.cache_breakpoint]
        assert marked == [[p for p in observation if isinstance(p, ContentText)][-1]]


def test_two_batches_of_one_audit_differ_only_in_their_entries() -> None:
    first = _parts(audit_messages(INSTANCE.memory[:10], GRID, INSTANCE.start, BOTH))
    second = _parts(audit_messages(INSTANCE.memory[10:20], GRID, INSTANCE.start, BOTH))
    assert first[:-1] == second[:-1] and first[-1] != second[-1]


def test_every_block_after_the_first_starts_on_a_new_line() -> None:
    for messages in (
        audit_messages(INSTANCE.memory[:10], GRID, INSTANCE.start, BOTH),
        navigate_messages(INSTANCE.memory, GRID, (0, 0), (7, 7), 50, BOTH),
    ):
        texts = [p.text for p in _parts(messages) if isinstance(p, ContentText)]
        assert not texts[0].startswith("\n") and all(t.startswith("\n") for t in texts[1:])
        joined = "".join(texts)
        assert "Memory entries:" in joined and ".Memory" not in joined and ".Current" not in joined


def test_navigation_keeps_memory_before_the_observation_and_position_last() -> None:
    parts = _parts(navigate_messages(INSTANCE.memory, GRID, (0, 0), (7, 7), 50, Sight("text")))
    assert isinstance(parts[0], ContentText) and parts[0].text.startswith("Memory entries:")
    assert parts[0].cache_breakpoint
    assert isinstance(parts[-1], ContentText) and parts[-1].text.startswith("\nPosition:")


def test_every_call_asks_for_prompt_caching_unless_the_model_is_told_not_to() -> None:
    assert answer_config(AUDIT_SCHEMA, False).cache_prompt is True
    structured = answer_config(NAVIGATE_SCHEMA, True, get_model("mockllm/model", memoize=False))
    assert structured.cache_prompt is True and structured.response_schema == NAVIGATE_SCHEMA
    for chosen in (False, "auto"):
        model = get_model("mockllm/model", config=GenerateConfig(cache_prompt=chosen), memoize=False)
        assert answer_config(AUDIT_SCHEMA, False, model).cache_prompt == chosen


def _run(task: Any, tmp_path: Path, model: str = "spatialstale/observer") -> EvalLog:
    [log] = eval(task, model=model, log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    return log


def test_an_audit_renders_and_encodes_its_grid_once(tmp_path: Path) -> None:
    png_data_uri.cache_clear()
    grid_listing.cache_clear()
    _run(detection(regime="L2", seeds="4810", modality="both"), tmp_path)
    # seven batches, one grid: one rendering, six reuses
    assert (png_data_uri.cache_info().misses, png_data_uri.cache_info().hits) == (1, 6)
    assert (grid_listing.cache_info().misses, grid_listing.cache_info().hits) == (1, 6)


def _scores(log: EvalLog, scorer: str) -> list[tuple[Any, Any]]:
    out = []
    for sample in log.samples or []:
        assert sample.scores is not None
        # tokens differ by the listing's length, by design
        out.append((without_tokens(sample.scores[scorer].value), without_tokens(sample.scores[scorer].metadata)))
    return out


def _input_tokens(log: EvalLog) -> int:
    assert log.stats.model_usage
    return sum(usage.input_tokens for usage in log.stats.model_usage.values())


def test_the_holes_listing_keeps_the_task_and_costs_less(tmp_path: Path) -> None:
    full = _run(detection(regime="L1,L3", seeds="4810", size=16), tmp_path / "full")
    holes = _run(detection(regime="L1,L3", seeds="4810", size=16, observation="holes"), tmp_path / "holes")
    assert _scores(full, "stale_f1") == _scores(holes, "stale_f1")
    assert all(value["f1"] == 1.0 for value, _ in _scores(holes, "stale_f1"))
    assert _input_tokens(holes) < 0.7 * _input_tokens(full)
    for sample in holes.samples or []:
        assert sample.metadata["observation"] == "holes"

    nav = {"regime": "L3", "seeds": "4810,1734", "strategies": "nofilter,omcd,selfverify", "episodes": 1}
    full = _run(navigation(**nav), tmp_path / "nav-full", "spatialstale/credulous")
    holes = _run(navigation(**nav, observation="holes"), tmp_path / "nav-holes", "spatialstale/credulous")
    assert json.dumps(_scores(full, "episode_outcome")) == json.dumps(_scores(holes, "episode_outcome"))


@pytest.mark.parametrize("task", [detection, navigation])
@pytest.mark.parametrize("value", ["sparse", "full,holes", 3])
def test_a_bad_observation_fails_with_one_line_naming_the_choices(task: Any, value: Any) -> None:
    with pytest.raises(TaskParameterError) as raised:
        task(observation=value)
    assert str(raised.value) == f"observation must be one of full, holes; got {value!r}"
