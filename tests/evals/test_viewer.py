"""What Inspect's viewer shows of a log: its tags (one per axis) and its headline score."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.log import EvalLog, headline_metric

from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.evals.perception import perception
from spatialstale.protocol import DEFAULT_PROMPTS

PAPER = {"L2", "text", "B=10"}
"""The tags of every task at the paper's protocol."""


def _logs(tasks: list[Task], tmp_path: Path, model: str = "spatialstale/credulous") -> list[EvalLog]:
    logs = eval(tasks, model=model, log_dir=str(tmp_path), display="none")
    assert all(log.status == "success" for log in logs), [log.error for log in logs]
    return logs


def test_a_log_is_tagged_with_its_axes_the_paper_ones_always_the_others_away_from_default(tmp_path: Path) -> None:
    tasks = [
        detection(seeds="4810"),
        detection(seeds="4810", regime="L1,L3", modality="vision", batch_size=20, prompt_set="minimal"),
        navigation(seeds="4810", episodes=1, max_steps=5),
        navigation(
            seeds="4810", episodes=1, max_steps=5, strategies="omcd", filter="unknown", view_radius=1, agent="tools"
        ),
        perception(seeds="4810", observation="holes", structured=True),
    ]
    tags = [set(log.eval.tags or []) for log in _logs(tasks, tmp_path)]
    assert tags == [
        PAPER,
        {"L1,L3", "vision", "B=20", "prompt_set=minimal"},
        PAPER | {"5 strategies", "max_steps=5"},
        PAPER | {"omcd", "max_steps=5", "filter=unknown", "view_radius=1", "agent=tools"},
        PAPER | {"observation=holes", "structured=true"},
    ]


@pytest.mark.parametrize(
    ("task", "args", "tags"),
    [
        (detection, {"size": 16}, PAPER | {"size=16"}),
        (navigation, {"strategies": "nofilter,omcd"}, PAPER | {"nofilter+omcd"}),
        (navigation, {"view_radius": "full", "filter": "delete", "agent": "prompt"}, PAPER | {"5 strategies"}),
        (navigation, {"regime": "none", "strategies": "oracle"}, {"regime=none", "text", "B=10", "oracle"}),
        # an explicit prompt other than the set's is named; the set's own text is not custom
        (detection, {"audit_prompt": "Judge {size}x{size}."}, PAPER | {"audit_prompt=custom"}),
        (detection, {"audit_prompt": str(DEFAULT_PROMPTS["audit"])}, PAPER),
        (navigation, {"agent": "tools"}, PAPER | {"5 strategies", "agent=tools"}),
    ],
)
def test_the_task_tags_each_setting(task: Any, args: dict[str, object], tags: set[str]) -> None:
    built = task(seeds="4810", **args)
    assert set(built.tags) == tags
    assert len(built.tags) == len(tags)  # one tag an axis, none twice


def test_the_headline_of_each_log_is_a_number_one_can_quote(tmp_path: Path) -> None:
    tasks = [
        navigation(seeds="4810,1734", episodes=1, strategies="nomemory,nofilter,omcd,oracle"),
        navigation(seeds="4810,1734", episodes=1, strategies="nofilter,oracle"),
        navigation(seeds="4810,1734", episodes=1, regime="L1,L2", strategies="nofilter,selfverify"),
        navigation(seeds="4810,1734", episodes=1, strategies="nofilter"),
        detection(seeds="4810,1734"),
        perception(seeds="4810,1734"),
    ]
    logs = _logs(tasks, tmp_path)
    named = []
    for log in logs:
        resolved = headline_metric(log)
        assert resolved is not None and log.results is not None
        # resolved when scored, not by the fallback to the first metric
        assert log.results.headline is not None and log.results.headline.metric == resolved.name
        named.append(resolved.name)
    assert named == ["success_omcd", "success_nofilter", "success_selfverify", "success", "f1_mean", "accuracy"]
    # the pooled success of several strategies is not what the list shows: here it differs
    several = logs[0].results
    assert several is not None
    metrics = several.scores[0].metrics
    assert metrics["success_omcd"].value == 0.0 and metrics["success"].value == 0.5  # Oracle and NoMemory succeed
