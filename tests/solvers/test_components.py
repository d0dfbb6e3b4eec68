"""The suite's Inspect components on their own: the ``move`` and ``recall`` tools of the
tool navigator against a real episode, and the ``perception_probe`` solver in a task of
its own. (The tasks run them too; here each is called directly.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai.model import get_model
from inspect_ai.tool import ToolError

import spatialstale.agents  # noqa: F401  (registers the reference agents)
from spatialstale.env import Action, DynamicFrozenLakeEnv, make_instance, move
from spatialstale.evals._dataset import grid_samples
from spatialstale.protocol import PerceptionSettings, Sight
from spatialstale.scorers import perception_accuracy
from spatialstale.solvers import StrategyContext, make_strategy, perception_probe
from spatialstale.solvers._agents import AgentRun, move_tool, recall_tool

from ..conftest import run_eval


def _run(strategy: str) -> AgentRun:
    instance = make_instance(4810, "L1", 8)
    context = StrategyContext(
        instance=instance,
        auditor=get_model("spatialstale/observer"),
        sight=Sight("text"),
        batch_size=10,
        audit_prompt="",
        selfverify_prompt="",
        structured=False,
        filter_mode="delete",
    )
    env = DynamicFrozenLakeEnv(instance=instance, max_steps=20)
    env.reset()
    run = AgentRun(env, make_strategy(strategy, context), sight=context.sight, records=[], channel="recall")
    asyncio.run(run.refresh())
    return run


def test_move_tool_steps_in_the_world_and_records_the_step() -> None:
    run = _run("nofilter")
    start = run.env.agent
    action = next(a for a in Action if move(start, a, 8) != start)
    result = asyncio.run(move_tool(run)(action.name.lower()))
    assert run.env.agent == move(start, action, 8)
    assert len(run.records) == 1 and run.counts["moves"] == 1
    text = result if isinstance(result, str) else " ".join(getattr(p, "text", "") for p in result)  # type: ignore[union-attr]
    assert f"({run.env.agent[0]},{run.env.agent[1]})" in text


def test_move_tool_refuses_a_bad_direction_without_moving() -> None:
    run = _run("nofilter")
    start = run.env.agent
    with pytest.raises(ToolError, match="direction must be one of"):
        asyncio.run(move_tool(run)("north-east"))
    assert run.env.agent == start and run.counts["bad_arguments"] == 1 and not run.records


def test_recall_tool_answers_from_the_memory_view() -> None:
    run = _run("nofilter")
    assert run.view
    entry = run.view[0]
    row, col = entry.pos
    assert asyncio.run(recall_tool(run)(row, col)) == entry.line
    with pytest.raises(ToolError, match="from 0 to 7"):
        asyncio.run(recall_tool(run)(8, 0))
    assert run.counts["recalls"] == 1 and run.counts["bad_arguments"] == 1


def test_recall_tool_without_memory_says_so() -> None:
    run = _run("nomemory")
    answer = asyncio.run(recall_tool(run)(0, 0))
    assert run.view is None and "memory" in answer.lower()


@pytest.mark.parametrize("modality", ["text", "vision"])
def test_perception_probe_reads_every_cell_with_the_observer(modality: str, tmp_path: Path) -> None:
    settings = PerceptionSettings.read({"modality": modality, "n_seeds": 1, "regime": "L2"})
    task = Task(
        dataset=grid_samples(settings, task="Read the grid of"),
        solver=perception_probe(modality=modality, batch_size=7),
        scorer=perception_accuracy(),
    )
    log = run_eval(task, "spatialstale/observer", tmp_path)
    assert log.samples
    for sample in log.samples:
        [score] = sample.scores.values()  # type: ignore[union-attr]
        assert isinstance(score.value, dict)
        assert score.value["type_accuracy"] == 1.0, score.explanation
        windows = score.metadata["windows"]  # type: ignore[index]
        assert windows and all(w["calls"] == 10 for w in windows)  # ceil(64 / 7): the batch size is applied
