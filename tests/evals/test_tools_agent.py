"""``-T agent=tools`` through the real navigation task, into tmp log dirs.

The observer plays every strategy on L1-L3 exactly as the prompt navigator does (the
same moves, audits and outcomes); the credulous agent recalls memory through the tool
and dies on stale SAFE claims with raw memory only; a scripted model that misbehaves
in every way gets every sample scored with each misstep counted; each move and
recall is a ToolEvent in the log.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.event import ToolEvent
from inspect_ai.log import EvalLog, EvalSample, resolve_sample_attachments
from inspect_ai.model import Model

from spatialstale.env import default_seeds
from spatialstale.evals.navigation import navigation
from spatialstale.protocol import DEFAULT_STRATEGIES as STRATEGIES
from spatialstale.protocol import DEFAULT_TOOLS_PROMPT, TaskParameterError
from tests.conftest import episode_log, stored_episode
from tests.tool_scripted import MAX_STEPS, ODD_CALLS, RECALLS_PER_TURN, misbehaving_model, odd_arguments_model

# one worker runs the module, so its shared runs are made once
pytestmark = pytest.mark.xdist_group("tools_agent")

SEEDS = ",".join(str(s) for s in default_seeds()[:2])
REGIMES = ("L2", "L3")
"""A regime changed before the episode and one changed during it (L1 changes before it as L2 does)."""
COMPARED = ("outcome", "steps", "reward", "trajectory", "fallbacks", "died_on_stale")


def run(model: str | Model, tmp_path: Path, **task_args: Any) -> EvalLog:
    args: dict[str, Any] = {"regime": ",".join(REGIMES), "seeds": SEEDS, "episodes": 1} | task_args
    # the observer audits for every navigator: its flags are exactly the stale entries
    [log] = eval(
        navigation(**args),
        model=model,
        model_roles={"auditor": "spatialstale/observer"},
        log_dir=str(tmp_path),
        display="none",
        log_realtime=False,
    )
    assert log.status == "success", log.error
    assert log.samples
    return log


def episodes(log: EvalLog) -> dict[str, dict[str, Any]]:
    """Each sample's episode record (the score metadata) by sample id."""
    rows = {}
    for sample in log.samples or []:
        assert sample.scores is not None
        [score] = sample.scores.values()
        assert score.metadata is not None
        rows[str(sample.id)] = score.metadata
    return rows


def tool_events(sample: EvalSample) -> list[ToolEvent]:
    return [e for e in resolve_sample_attachments(sample).events if isinstance(e, ToolEvent)]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, EvalLog]:
    return {
        "observer-prompt": run("spatialstale/observer", tmp_path_factory.mktemp("observer-prompt")),
        "observer-tools": run("spatialstale/observer", tmp_path_factory.mktemp("observer-tools"), agent="tools"),
        "credulous-tools": run("spatialstale/credulous", tmp_path_factory.mktemp("credulous-tools"), agent="tools"),
    }


@pytest.mark.slow  # three navigation runs; the misstep, vision, fog and limit cases stay fast
def test_observer_plays_every_strategy_and_regime_as_the_prompt_navigator(logs: dict[str, EvalLog]) -> None:
    prompt, tools = episodes(logs["observer-prompt"]), episodes(logs["observer-tools"])
    assert len(tools) == len(SEEDS.split(",")) * len(REGIMES) * len(STRATEGIES)
    assert {k.replace("-tools-", "-"): k for k in tools}.keys() == prompt.keys()
    for sample_id, record in tools.items():
        other = prompt[sample_id.replace("-tools-", "-")]
        assert {k: record[k] for k in COMPARED} == {k: other[k] for k in COMPARED}, sample_id
        # the same audits, flag for flag (OMCD re-audits under L3 at the same steps)
        assert [(a["step"], a["flagged"]) for a in record["audits"]] == [
            (a["step"], a["flagged"]) for a in other["audits"]
        ]
        assert record["agent"] == "tools" and "agent" not in other
        counts = record["tools"]
        assert counts["moves"] == counts["turns"] == record["steps"]
        assert sum(counts[k] for k in ("no_call_turns", "stalled", "unknown_tool", "bad_arguments")) == 0


@pytest.mark.slow  # reads the slow runs above
def test_every_move_is_a_tool_event(logs: dict[str, EvalLog]) -> None:
    for log in (logs["observer-tools"], logs["credulous-tools"]):
        for sample in log.samples or []:
            events = tool_events(sample)
            counts = episode_log(sample)["tools"]
            moves = [e for e in events if e.function == "move"]
            recalls = [e for e in events if e.function == "recall"]
            assert len(moves) == counts["moves"] == episode_log(sample)["steps"]
            assert len(recalls) == counts["recalls"]
            assert all(e.error is None for e in events)
            assert all(re.fullmatch(r"up|down|left|right", str(e.arguments["direction"])) for e in moves)
            # every move but the last shows the next position
            assert all("Position: (" in str(e.result) for e in moves[:-1])
            assert "the episode is over" in str(moves[-1].result)


@pytest.mark.slow  # reads the slow runs above
def test_credulous_recalls_memory_and_dies_on_stale_claims_only_with_raw_memory(logs: dict[str, EvalLog]) -> None:
    records = episodes(logs["credulous-tools"])
    deaths = {s: sum(r["outcome"] == "death" for k, r in records.items() if f"-{s}-" in k) for s in STRATEGIES}
    assert deaths["nofilter"] > 0, deaths
    assert deaths["omcd"] == deaths["oracle"] == deaths["selfverify"] == deaths["nomemory"] == 0, deaths
    for sample_id, record in records.items():
        assert record["tools"]["recalls"] > 0, sample_id
        assert record["fallbacks"] == 0 and record["tools"]["over_budget"] == 0
        if record["outcome"] == "death":
            assert record["died_on_stale"], sample_id


@pytest.mark.slow  # reads the slow runs above
def test_metadata_ids_and_prompt(logs: dict[str, EvalLog]) -> None:
    prompt, tools = logs["observer-prompt"], logs["observer-tools"]
    assert (prompt.eval.metadata or {})["agent"] == "prompt"
    assert (tools.eval.metadata or {})["agent"] == "tools"
    assert all(re.fullmatch(r"L\d-[a-z]+-s\d+", str(s.id)) for s in prompt.samples or [])
    for sample in tools.samples or []:
        meta = sample.metadata
        assert meta["agent"] == "tools"
        assert str(sample.id) == f"{meta['regime']}-{meta['strategy']}-tools-s{meta['seed']}"
    assert {s.metadata["agent"] for s in prompt.samples or []} == {"prompt"}
    # the tool navigator's own system prompt is sent, and hashed as sent
    assert prompt.samples and tools.samples
    assert prompt.samples[0].metadata["prompt_hash"] != tools.samples[0].metadata["prompt_hash"]
    first = next(e for e in resolve_sample_attachments(tools.samples[0]).events if e.event == "model")
    assert first.input[0].text == DEFAULT_TOOLS_PROMPT.replace("{size}", "8")
    assert [t.name for t in first.tools] == ["move", "recall"]


def test_a_misbehaving_tool_model_is_scored_with_every_misstep_counted(tmp_path: Path) -> None:
    """Unknown tools, bad arguments, no tool call, endless recalls, calls after the end."""
    log = run(misbehaving_model(), tmp_path, regime="L2,L3", seeds="625", agent="tools", max_steps=MAX_STEPS)
    assert len(log.samples or []) == 2 * len(STRATEGIES)
    for sample in log.samples or []:
        assert sample.error is None
        assert sample.scores
        [score] = sample.scores.values()
        assert isinstance(score.value, dict) and score.metadata is not None
        # on seed 625 the default steps and the scripted moves stay on ice up to the budget
        assert score.answer == "timeout"
        assert score.metadata["tools"] == {
            "turns": 12,
            "moves": 2,
            "recalls": 64,
            "no_call_turns": 2,
            "stalled": 1,
            "unknown_tool": 1,
            "bad_arguments": 4,
            "over_budget": RECALLS_PER_TURN * 7 - 64,
            "after_end": 2,
        }
        assert (stored_episode(sample).navigated or {})["tools"] == score.metadata["tools"]
        # the two answers without a tool call and the stalled step fell back to greedy steps
        assert score.value["fallbacks"] == 3 == score.value["unreadable"]
        assert [r["parsed"] for r in score.metadata["records"]] == [False, False, True, False, True]
        errors = [e.error.message for e in tool_events(sample) if e.error is not None]
        assert any("teleport not found" in m for m in errors)
        assert any("direction must be one of up, down, left, right; got 'north'" in m for m in errors)
        assert any("row and col must be integers from 0 to 7" in m for m in errors)


def test_vision_observations_reach_the_tool_navigator(tmp_path: Path) -> None:
    """Each move's result carries the PNG; the observer reads it as in the prompt navigator."""
    args: dict[str, Any] = {"regime": "L3", "seeds": SEEDS.split(",")[0], "strategies": "nofilter,omcd"}
    prompt = episodes(run("spatialstale/observer", tmp_path / "prompt", modality="vision", **args))
    tools = run("spatialstale/observer", tmp_path / "tools", modality="vision", agent="tools", **args)
    for sample_id, record in episodes(tools).items():
        assert record["trajectory"] == prompt[sample_id.replace("-tools-", "-")]["trajectory"]
    sample = (tools.samples or [])[0]
    first_move = next(e for e in tool_events(sample) if e.function == "move")
    assert isinstance(first_move.result, list)
    assert any(getattr(part, "type", "") == "image" for part in first_move.result)


@pytest.mark.parametrize("value", ["tool", "prompt,tools", 3])
def test_a_bad_agent_fails_before_any_call(value: object, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(
        TaskParameterError, match=r"agent must be one of prompt, tools, memory, or module:function; got"
    ):
        navigation(agent=value)  # type: ignore[arg-type]
    assert capsys.readouterr().err.strip().startswith("agent must be one of prompt, tools")


def test_fog_reaches_the_tool_navigator(tmp_path: Path) -> None:
    """Under ``view_radius`` every observation is fogged; the observer recalls what it cannot see."""
    seed = SEEDS.split(",")[0]
    log = run(
        "spatialstale/observer",
        tmp_path,
        regime="L2",
        seeds=seed,
        strategies="nofilter,oracle",
        agent="tools",
        view_radius=1,
    )
    for sample in log.samples or []:
        assert str(sample.id).endswith(f"-r1-tools-s{seed}")
        [score] = (sample.scores or {}).values()
        assert score.metadata is not None and score.metadata["view_radius"] == 1
        events = tool_events(sample)
        moves = [e for e in events if e.function == "move"]
        assert moves and all("=?" in str(e.result) for e in moves[:-1])
        # memory counts only where it cannot see: every recalled cell lay beyond the view
        assert 0 < score.metadata["tools"]["recalls"] == sum(e.function == "recall" for e in events)
        first = next(e for e in resolve_sample_attachments(sample).events if e.event == "model")
        assert "=?" in first.input[1].text


def test_a_message_limit_ends_the_conversation_and_the_episode_is_scored(tmp_path: Path) -> None:
    """One conversation per episode, so --message-limit bites within it (outcome ``limit``)."""
    [log] = eval(
        navigation(regime="L2", seeds=SEEDS.split(",")[0], strategies="nofilter", episodes=1, agent="tools"),
        model="spatialstale/observer",
        log_dir=str(tmp_path),
        display="none",
        log_realtime=False,
        message_limit=12,
    )
    [sample] = log.samples or []
    [score] = (sample.scores or {}).values()
    assert score.answer == "limit"
    assert isinstance(score.value, dict) and score.value["limit"] == 1
    # system + first observation, then an assistant message and a tool result per move
    assert 0 < score.value["steps"] == (12 - 2) // 2
    tools = (stored_episode(sample).navigated or {})["tools"]
    assert isinstance(tools, dict) and tools["moves"] == score.value["steps"]
    # the episode record keeps the agent and its counts as far as the episode went
    assert score.metadata is not None and score.metadata["agent"] == "tools"
    assert score.metadata["tools"]["moves"] == score.value["steps"]
    # the conversation is the sample's messages: the viewer's Messages tab shows it
    assert len(sample.messages) == 12
    assert sum(m.role == "tool" for m in sample.messages) == score.value["steps"]


def test_the_random_agent_moves_through_the_tool(tmp_path: Path) -> None:
    log = run("spatialstale/random", tmp_path, regime="L2", seeds=SEEDS, strategies="nomemory,omcd", agent="tools")
    for sample in log.samples or []:
        [score] = (sample.scores or {}).values()
        assert score.metadata is not None
        counts = score.metadata["tools"]
        assert counts["moves"] == counts["turns"] == score.metadata["steps"] > 0
        assert counts["recalls"] == 0 == score.metadata["fallbacks"]


def test_odd_arguments_get_tool_errors_and_are_counted(tmp_path: Path) -> None:
    """Wrong types, missing or extra arguments, huge values: a tool error each, never a crash."""
    log = run(
        odd_arguments_model(), tmp_path, regime="L2", seeds="625", strategies="nofilter", agent="tools", max_steps=3
    )
    [sample] = log.samples or []
    assert sample.error is None
    [score] = (sample.scores or {}).values()
    assert score.metadata is not None
    counts = score.metadata["tools"]
    assert counts["bad_arguments"] == len(ODD_CALLS) - 2
    assert counts["recalls"] == 1 and counts["moves"] == score.metadata["steps"] > 0
    assert score.metadata["records"][0]["action"] == "DOWN"
    errors = [e.error.message for e in tool_events(sample) if e.error is not None]
    assert len(errors) == len(ODD_CALLS) - 2
    # a refusal quotes what was sent, but never echoes a huge argument back
    assert max(len(m) for m in errors) < 300
