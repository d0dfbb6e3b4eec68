"""Agent navigators through the real navigation task, into tmp log dirs: the memory
navigator (``-T agent=memory``) on both reference agents, a user's ``react()`` agent
named ``module:function``, and the bad plug-ins that must fail before any model call.

The memory metrics come out as the mechanism predicts: the credulous agent never
changes its memory, so it keeps every lie and repairs none; the observer rewrites every
line it sees lie, so with the whole grid in view it repairs every stale entry. Every
label is recomputed from the log alone (each snapshot's files and grid).
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.event import ToolEvent
from inspect_ai.log import EvalLog, resolve_sample_attachments

from spatialstale.env import make_instance
from spatialstale.evals.navigation import navigation
from spatialstale.protocol import LABELS, TaskParameterError, judge
from tests.conftest import episode_log, run_eval

pytestmark = pytest.mark.xdist_group("agents")

SEEDS = "625,1247"
AGENTS = textwrap.dedent(
    """
    from inspect_ai.agent import Agent, AgentState, agent, react

    TITLE = "scouts"

    def scout(tools):
        return react(prompt="Reach the goal; avoid holes.", tools=tools, submit=False)


    def keeper(tools, memory):
        return react(prompt="Reach the goal; keep your memory true.", tools=[*tools, memory], submit=False)


    def not_an_agent(tools):
        return 42


    def broken(tools):
        raise RuntimeError("no agent today")


    @agent
    def quitter() -> Agent:
        async def execute(state: AgentState) -> AgentState:
            return state

        return execute


    def quits(tools):
        return quitter()


    @agent
    def crasher() -> Agent:
        async def execute(state: AgentState) -> AgentState:
            raise RuntimeError("the agent fell over")

        return execute


    def crashes(tools):
        return crasher()
    """
)


@pytest.fixture(scope="module")
def user_module(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("user_agents")
    (folder / "my_test_agents.py").write_text(AGENTS)
    sys.path.insert(0, str(folder))
    return "my_test_agents"


def run(model: str, tmp_path: Path, **task_args: Any) -> EvalLog:
    args: dict[str, Any] = {"regime": "L1,L2", "seeds": SEEDS, "episodes": 1} | task_args
    return run_eval(navigation(**args), model, tmp_path, model_roles={"auditor": "spatialstale/observer"})


@pytest.fixture(scope="module")
def memory_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, EvalLog]:
    # the credulous agent with OMCD too (its world changes before the episode); the
    # observer under L3 as well, where lies appear during the episode
    credulous = run(
        "spatialstale/credulous",
        tmp_path_factory.mktemp("memory-credulous"),
        agent="memory",
        strategies="nomemory,nofilter,selfverify,omcd",
    )
    observer = run(
        "spatialstale/observer",
        tmp_path_factory.mktemp("memory-observer"),
        agent="memory",
        strategies="nomemory,nofilter,selfverify",
        regime="L1,L2,L3",
    )
    return {"credulous": credulous, "observer": observer}


def test_the_credulous_agent_keeps_every_lie_and_repairs_none(memory_logs: dict[str, EvalLog]) -> None:
    log = memory_logs["credulous"]
    deaths = 0
    for sample in log.samples or []:
        [score] = (sample.scores or {}).values()
        value = score.value
        assert isinstance(value, dict)
        assert value["memory_repaired"] == 0 and value["memory_removed"] == 0 and value["memory_corrupted"] == 0
        assert value["memory_lie_kept"] == value["memory_seeded_stale"], sample.id
        deaths += int(value["death"])
        if sample.metadata["strategy"] == "nofilter":
            assert value["memory_seeded"] == 64
    assert deaths > 0, "raw memory leads the credulous agent into a hole"
    metrics = {k: v.value for s in log.results.scores for k, v in s.metrics.items()}  # type: ignore[union-attr]
    assert metrics["repaired_rate"] == 0.0 and metrics["lies_kept_rate"] == 1.0


def test_the_observer_repairs_every_lie_it_sees(memory_logs: dict[str, EvalLog]) -> None:
    log = memory_logs["observer"]
    stale = 0
    for sample in log.samples or []:
        [score] = (sample.scores or {}).values()
        value = score.value
        assert isinstance(value, dict)
        assert score.answer == "success"
        assert value["memory_lie_kept"] == 0 and value["memory_corrupted"] == 0
        assert value["memory_repaired"] == value["memory_seeded_stale"], sample.id
        stale += int(value["memory_seeded_stale"])
        record = episode_log(sample)["memory"]
        assert next(s["when"] for s in record["snapshots"]) == "start"
        assert record["snapshots"][-1]["when"] == "end"
    assert stale > 0
    metrics = {k: v.value for s in log.results.scores for k, v in s.metrics.items()}  # type: ignore[union-attr]
    assert metrics["repaired_rate"] == 1.0 and metrics["lies_kept_rate"] == 0.0


@pytest.mark.parametrize("model", ["credulous", "observer"])
def test_every_memory_label_is_recomputed_from_the_log(memory_logs: dict[str, EvalLog], model: str) -> None:
    for sample in memory_logs[model].samples or []:
        meta = sample.metadata
        instance = make_instance(int(meta["seed"]), str(meta["regime"]), int(meta["size"]))
        record = episode_log(sample)["memory"]
        seeded = [e for e in instance.memory if e.id in set(record["seeded"])]
        for snapshot in record["snapshots"]:
            grid = tuple(snapshot["grid"])
            again = judge(seeded, snapshot["files"], grid, instance.stale_ids(grid))
            assert dict(again.labels) == snapshot["labels"], (sample.id, snapshot["step"])
            assert dict(again.counts) == snapshot["counts"]
        assert set(record["judged"]) >= set(LABELS)


def test_every_memory_operation_is_a_tool_event(memory_logs: dict[str, EvalLog]) -> None:
    sample = next(s for s in memory_logs["observer"].samples or [] if s.metadata["strategy"] == "nofilter")
    events = [e for e in resolve_sample_attachments(sample).events if isinstance(e, ToolEvent)]
    commands = [e.arguments.get("command") for e in events if e.function == "memory"]
    assert "view" in commands and "str_replace" in commands
    assert sum(e.function == "move" for e in events) == episode_log(sample)["steps"]


def test_a_re_auditing_strategy_is_refused_with_agent_memory_where_the_world_changes() -> None:
    with pytest.raises(TaskParameterError, match="omcd re-audit"):
        navigation(agent="memory", regime="L3", strategies="omcd")
    with pytest.raises(TaskParameterError, match="localverify audits at every step"):
        navigation(agent="memory", regime="L1", strategies="localverify")
    navigation(agent="memory", regime="L1", strategies="omcd")  # the world changes before the episode


def test_a_users_react_agent_navigates(user_module: str, tmp_path: Path) -> None:
    log = run("spatialstale/credulous", tmp_path, agent=f"{user_module}:scout", strategies="nofilter,omcd")
    outcomes = {}
    for sample in log.samples or []:
        assert sample.error is None
        assert str(sample.id).split("-")[2] == "scout"
        record = episode_log(sample)
        assert record["agent"] == f"{user_module}:scout"
        assert record["tools"]["recalls"] > 0
        outcomes[sample.metadata["strategy"]] = [*outcomes.get(sample.metadata["strategy"], []), record["outcome"]]
        # the agent's own system prompt, not the suite's
        assert sample.messages[0].role == "system" and "Reach the goal; avoid holes." in sample.messages[0].text
    assert "death" in outcomes["nofilter"] and set(outcomes["omcd"]) == {"success"}


def test_a_users_agent_given_the_memory_tool_is_judged(user_module: str, tmp_path: Path) -> None:
    log = run("spatialstale/observer", tmp_path, agent=f"{user_module}:keeper", strategies="nofilter", regime="L2")
    for sample in log.samples or []:
        [score] = (sample.scores or {}).values()
        assert isinstance(score.value, dict)
        assert score.value["memory_repaired"] == score.value["memory_seeded_stale"] > 0


def test_a_users_agent_that_returns_early_times_out(user_module: str, tmp_path: Path) -> None:
    log = run("spatialstale/observer", tmp_path, agent=f"{user_module}:quits", strategies="nofilter", regime="L1")
    for sample in log.samples or []:
        record = episode_log(sample)
        assert record["outcome"] == "timeout" and record["steps"] == 0
        assert record["tools"]["returned_early"] == 1


def test_an_agent_that_raises_errors_its_sample_only(user_module: str, tmp_path: Path) -> None:
    [log] = eval(
        navigation(agent=f"{user_module}:crashes", regime="L1", seeds="625", episodes=1, strategies="nofilter"),
        model="spatialstale/observer",
        log_dir=str(tmp_path),
        display="none",
        log_realtime=False,
        fail_on_error=False,
    )
    [sample] = log.samples or []
    assert sample.error is not None and "the agent fell over" in sample.error.message


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("no_such_module_here:scout", "cannot be imported: ModuleNotFoundError"),
        ("{module}:nowhere", "not found"),
        ("{module}:TITLE", "is not a function; got str"),
        ("{module}:not_an_agent", "must return an Inspect Agent"),
        ("{module}:broken", "raised RuntimeError: no agent today"),
        ("scoutt", "agent must be one of prompt, tools, memory"),
    ],
)
def test_a_bad_plugin_fails_before_any_call(user_module: str, name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        navigation(agent=name.format(module=user_module))


def test_an_installed_package_declares_a_short_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # an installed package, as pip lays it out: its module and a dist-info with its entry points
    (tmp_path / "scouts_pkg.py").write_text(AGENTS)
    info = tmp_path / "scouts_pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: scouts-pkg\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[spatialstale.navigators]\nfarscout = scouts_pkg:scout\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    log = run("spatialstale/observer", tmp_path / "logs", agent="farscout", strategies="nofilter", regime="L1")
    for sample in log.samples or []:
        assert episode_log(sample)["agent"] == "farscout" and str(sample.id).split("-")[2] == "farscout"
    with pytest.raises(ValueError, match="agent must be one of prompt, tools, memory, farscout, or module:function"):
        navigation(agent="farscoot")


def test_a_users_agent_takes_no_navigate_prompt(user_module: str) -> None:
    with pytest.raises(ValueError, match="brings its own prompt"):
        navigation(agent=f"{user_module}:scout", navigate_prompt="Go to the goal.")


@pytest.mark.parametrize("agent", ["tools", "memory"])
def test_the_observer_reads_the_image_a_move_returns(agent: str, tmp_path: Path) -> None:
    # the reference provider takes no image in a tool result, so Inspect moves the move's
    # picture into a user message after it, as for OpenAI's chat API: read there too
    log = run("spatialstale/observer", tmp_path, agent=agent, modality="vision", strategies="nofilter", regime="L2")
    for sample in log.samples or []:
        record = episode_log(sample)
        assert record["outcome"] == "success" and record["fallbacks"] == 0, sample.id
