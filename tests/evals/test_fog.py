"""``-T view_radius=k`` (fog) through the real navigation task, into tmp log dirs.

The default (the whole grid, the paper) must leave ids, prompts and scores as they
were without the parameter; under fog every navigation step and every audit of the
episode sees only the square around the agent, the reference agents read it from the
text and from the image, and memory starts to matter: with k=1 on L2 the credulous
navigator without memory no longer always succeeds, while with the oracle's memory it
does at least as well on every seed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.event import InfoEvent, ModelEvent
from inspect_ai.log import EvalLog, EvalSample, list_eval_logs, read_eval_log, resolve_sample_attachments

from spatialstale.agents._perception import perceive
from spatialstale.env import FOG_CELL, default_seeds, fog, holes_observation, make_instance
from spatialstale.evals.navigation import navigation
from spatialstale.protocol import DEFAULT_STRATEGIES as STRATEGIES
from spatialstale.protocol import Sight, TaskParameterError, call_kind, navigate_messages
from spatialstale.protocol._prompts import FOG_IMAGE_OBSERVATION_HEADER, IMAGE_OBSERVATION_HEADER
from tests.conftest import episode_log
from tests.scripted import Call, Script

# one worker runs the module, so its module fixtures' runs are made once
pytestmark = pytest.mark.xdist_group("fog")

SEEDS = ",".join(str(s) for s in default_seeds()[:2])
CELL = re.compile(r"\((\d+),(\d+)\)=([SFHG?])")
AGENT_AT = re.compile(r"Agent at \((\d+),(\d+)\)")
DONE_WHEN_SEEDS = list(default_seeds()[:10])
"""The first ten default seeds, as they come: the Done-when study of issue 12."""


def run(model: str | Any, tmp_path: Path, auditor: str | None = None, **task_args: Any) -> EvalLog:
    args: dict[str, Any] = {"regime": "L2,L3", "seeds": SEEDS, "episodes": 1, **task_args}
    [log] = eval(
        navigation(**args),
        model=model,
        model_roles={"auditor": auditor} if auditor else None,
        log_dir=str(tmp_path),
        display="none",
        log_realtime=False,
    )
    assert log.status == "success", log.error
    assert log.samples
    return log


def calls(sample: EvalSample) -> list[tuple[str, str, list[Any]]]:
    """Each model call of a sample: its kind, its user text and its user content."""
    out = []
    for event in resolve_sample_attachments(sample).events:
        if isinstance(event, ModelEvent):
            user = event.input[-1]
            content = user.content if isinstance(user.content, list) else []
            out.append((str(call_kind(event.input)), user.text, content))
    return out


def fingerprint(log: EvalLog) -> dict[str, Any]:
    """Ids, scores and every prompt and answer of a log, by sample id."""
    rows = {}
    for sample in log.samples or []:
        assert sample.scores is not None
        [score] = sample.scores.values()
        resolved = resolve_sample_attachments(sample)
        prompts = [
            [m.model_dump_json(exclude={"id"}) for m in e.input] + [e.output.completion]
            for e in resolved.events
            if isinstance(e, ModelEvent)
        ]
        rows[str(sample.id)] = (score.value, score.answer, json.dumps(score.metadata, sort_keys=True), prompts)
    return rows


@pytest.mark.slow  # every strategy twice; fog reaching every step and audit stays fast
@pytest.mark.parametrize("agent", ["credulous", "observer"])
def test_the_full_view_is_the_run_without_the_parameter(agent: str, tmp_path: Path) -> None:
    """Ids, prompts (text and image), answers and scores are those of a run without it."""
    runs = [
        run(f"spatialstale/{agent}", tmp_path / name, "spatialstale/observer", modality="both", **args)
        for name, args in (("none", {}), ("full", {"view_radius": "full"}), ("null", {"view_radius": None}))
    ]
    default = fingerprint(runs[0])
    assert len(default) == 2 * 2 * len(STRATEGIES)
    assert all(re.fullmatch(r"L\d-[a-z]+-s\d+", sample_id) for sample_id in default)
    for log in runs[1:]:
        assert fingerprint(log) == default
    for log in runs:
        assert (log.eval.metadata or {})["view_radius"] is None
        assert {s.metadata["view_radius"] for s in log.samples or []} == {None}
        for sample in log.samples or []:
            assert "view_radius" not in episode_log(sample)
            events = resolve_sample_attachments(sample).events
            assert not any(isinstance(e, InfoEvent) and "Fog:" in str(e.data) for e in events)
            for _, text, content in calls(sample):
                assert "beyond your view" not in text and "=?" not in text
                assert IMAGE_OBSERVATION_HEADER in text and FOG_IMAGE_OBSERVATION_HEADER not in text
                assert any(getattr(part, "type", "") == "image" for part in content)


@pytest.mark.parametrize(
    ("value", "shown"), [(-1, "-1"), ("far", "'far'"), (1.5, "1.5"), (True, "True"), ("1,2", "'1,2'")]
)
def test_a_bad_radius_fails_before_any_model_call(value: object, shown: str) -> None:
    with pytest.raises(TaskParameterError) as error:
        navigation(view_radius=value)  # type: ignore[arg-type]
    assert str(error.value) == f"view_radius must be full or an integer of at least 0; got {shown}"


def test_the_radius_is_read_from_text_as_inspect_passes_it() -> None:
    task = navigation(seeds=SEEDS, strategies="omcd", view_radius="2")
    assert (task.metadata or {})["view_radius"] == 2
    assert [s.id for s in task.dataset] == [f"L2-omcd-r2-s{s}" for s in default_seeds()[:2]]
    both = navigation(seeds=SEEDS, strategies="omcd", view_radius=0, filter="unknown")
    assert [s.id for s in both.dataset] == [f"L2-omcd-unknown-r0-s{s}" for s in default_seeds()[:2]]


def _visible(text: str) -> dict[tuple[int, int], str]:
    return {(int(r), int(c)): t for r, c, t in CELL.findall(text) if t != FOG_CELL}


def test_fog_reaches_every_step_and_every_audit_and_is_recorded(tmp_path: Path) -> None:
    """k=1: the navigator and the auditors (OMCD, SelfVerify) see the 3x3 square only."""
    log = run("spatialstale/credulous", tmp_path, "spatialstale/observer", view_radius=1)
    assert (log.eval.metadata or {})["view_radius"] == 1
    assert log.eval.task_args["view_radius"] == 1
    kinds_seen = set()
    for sample in log.samples or []:
        meta = sample.metadata
        assert meta["view_radius"] == 1
        assert str(sample.id) == f"{meta['regime']}-{meta['strategy']}-r1-s{meta['seed']}"
        episode = episode_log(sample)
        assert episode["view_radius"] == 1
        instance = make_instance(meta["seed"], meta["regime"])
        trajectory = [tuple(p) for p in episode["trajectory"]]
        navigate_calls = 0
        for kind, text, _ in calls(sample):
            kinds_seen.add(kind)
            position = AGENT_AT.search(text)
            assert position is not None
            agent = (int(position.group(1)), int(position.group(2)))
            if kind == "navigate":
                assert agent == trajectory[navigate_calls]
                navigate_calls += 1
            assert "Cells marked ? are beyond your view (radius 1 around the agent)" in text
            cells = CELL.findall(text)
            assert len(cells) == 64
            visible = _visible(text)
            assert set(visible) == {
                (r, c) for r in range(8) for c in range(8) if max(abs(r - agent[0]), abs(c - agent[1])) <= 1
            }
            if meta["regime"] == "L2":  # the grid does not change during an L2 episode
                assert visible == {(r, c): instance.initial_grid[r][c] for r, c in visible}
        assert navigate_calls == episode["steps"]
        fog_notes = [
            str(e.data)
            for e in resolve_sample_attachments(sample).events
            if isinstance(e, InfoEvent) and e.source == "navigation"
        ]
        assert len(fog_notes) == episode["steps"]
        assert all("Fog: the navigator saw only the cells within 1 of" in note for note in fog_notes)
    assert {"navigate", "audit", "selfverify"} <= kinds_seen


def test_an_auditor_under_fog_flags_only_what_it_sees(tmp_path: Path) -> None:
    """The observer auditing OMCD flags exactly the stale entries in the square around S."""
    log = run("spatialstale/credulous", tmp_path, "spatialstale/observer", strategies="omcd,oracle", view_radius=2)
    checked = 0
    for sample in log.samples or []:
        meta = sample.metadata
        instance = make_instance(meta["seed"], meta["regime"])
        first = episode_log(sample)["audits"][0]
        stale = instance.stale_ids(instance.initial_grid)
        if meta["strategy"] == "oracle":
            assert set(first["flagged"]) == stale  # the oracle knows the truth beyond the view
            continue
        near = {e.id for e in instance.memory if max(e.row, e.col) <= 2}
        assert set(first["flagged"]) == stale & near
        checked += bool(stale - near)
    assert checked  # some stale entry lay beyond the view and was kept


def flags_in_view(call: Call) -> set[str]:
    """The entries whose claim the visible cells contradict (the script's reader
    takes only S, F, H, G tokens, so ``call.grid`` holds the visible cells)."""
    out = set()
    for mid, claim in call.claims.items():
        cell = call.grid.get(divmod(int(mid[4:]), 8))
        if cell is not None and (claim == "SAFE") == (cell == "H"):
            out.add(mid)
    return out


def test_a_scripted_navigator_sees_only_the_square(tmp_path: Path) -> None:
    seed = default_seeds()[0]
    # UP is off the grid at the start, so the agent stays at S and its square stays put
    script = Script(flag=flags_in_view, act=lambda call: '{"action": "UP"}')
    [log] = eval(
        navigation(regime="L2", seeds=str(seed), strategies="omcd", episodes=1, view_radius=2, max_steps=3),
        model=script.model(),
        log_dir=str(tmp_path),
        display="none",
        log_realtime=False,
    )
    assert log.status == "success", log.error
    for call in script.calls:
        # the script's own reader takes S, F, H, G tokens: the visible square only
        assert set(call.grid) == {(r, c) for r in range(3) for c in range(3)}, call.kind
        assert f"{FOG_CELL}" in call.text
    assert script.of_kind("navigate") and script.of_kind("audit")


@pytest.mark.parametrize("modality", ["text", "vision", "both"])
@pytest.mark.parametrize("observation", ["full", "holes"])
def test_the_reference_agents_read_the_fogged_observation(modality: str, observation: str) -> None:
    instance = make_instance(default_seeds()[1], "L2")
    grid = instance.initial_grid
    for agent, k in (((0, 0), 1), ((3, 4), 2), ((7, 6), 0), ((5, 5), 3)):
        seen = fog(grid, agent, k)
        messages = navigate_messages(
            None, seen, agent, (7, 7), 10, Sight.of("navigation", modality, {"observation": observation})
        )
        read = perceive(messages)
        assert read.grid == seen, (agent, k)
        assert read.agent == agent and read.goal == (7, 7)
        text = messages[-1].text
        if modality != "text":
            assert FOG_IMAGE_OBSERVATION_HEADER in text
            assert f"Grey cells are beyond your view (radius {k} around the agent)" in text
        if modality != "vision" and observation == "holes":
            assert holes_observation(seen, agent) in text


def outcomes_by_seed(log: EvalLog) -> dict[str, dict[int, str]]:
    table: dict[str, dict[int, str]] = {}
    for sample in log.samples or []:
        assert sample.scores is not None
        [score] = sample.scores.values()
        table.setdefault(sample.metadata["strategy"], {})[sample.metadata["seed"]] = str(score.answer)
    return table


@pytest.fixture(scope="module")
def done_when(tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    [log] = eval(
        navigation(
            regime="L2",
            seeds=",".join(map(str, DONE_WHEN_SEEDS)),
            strategies="nomemory,nofilter,oracle",
            episodes=1,
            view_radius=1,
        ),
        model="spatialstale/credulous",
        log_dir=str(tmp_path_factory.mktemp("done-when")),
        display="none",
        log_realtime=False,
    )
    assert log.status == "success", log.error
    return log


@pytest.mark.slow  # eleven seeds; fog reaching every step and audit stays fast
def test_under_fog_nomemory_is_no_longer_an_upper_bound(done_when: EvalLog) -> None:
    """Issue 12's Done-when: k=1 on L2, the credulous navigator."""
    table = outcomes_by_seed(done_when)
    nomemory, oracle = table["nomemory"], table["oracle"]
    assert set(nomemory) == set(oracle) == set(DONE_WHEN_SEEDS)
    assert any(outcome != "success" for outcome in nomemory.values())
    rank = {"death": 0, "timeout": 1, "success": 2}
    assert all(rank[oracle[seed]] >= rank[nomemory[seed]] for seed in DONE_WHEN_SEEDS), table
    assert any(rank[oracle[seed]] > rank[nomemory[seed]] for seed in DONE_WHEN_SEEDS), table
    # k=1 shows every neighbour, so without memory the agent never steps into a hole;
    # raw memory's stale SAFE claims still kill the credulous agent
    assert "death" not in nomemory.values()
    assert "death" in table["nofilter"].values()
    # memory the oracle cleaned is a map of known-safe cells: the planner keeps to them
    assert "death" not in oracle.values()


def test_the_agents_walk_alike_from_the_fogged_image_and_the_listing(tmp_path: Path) -> None:
    """The grey of the image reads as the ``?`` of the listing: the same episodes."""
    runs = {
        modality: run(
            "spatialstale/credulous",
            tmp_path / modality,
            "spatialstale/observer",
            regime="L2",
            strategies="nomemory,omcd,oracle",
            view_radius=1,
            modality=modality,
        )
        for modality in ("text", "vision")
    }
    trajectories = {
        modality: {str(s.id): episode_log(s)["trajectory"] for s in log.samples or []} for modality, log in runs.items()
    }
    assert trajectories["text"] == trajectories["vision"]
    assert any(len(t) > 3 for t in trajectories["text"].values())
    for sample in runs["vision"].samples or []:
        for _, text, content in calls(sample):
            assert "Grey cells are beyond your view (radius 1 around the agent)" in text
            assert "=?" not in text and "Cells marked" not in text
            assert any(getattr(part, "type", "") == "image" for part in content)


def test_the_observer_fills_only_the_cells_it_cannot_see_from_memory() -> None:
    from spatialstale.agents._policies import believed_grid

    instance = make_instance(default_seeds()[0], "L2")
    grid = instance.initial_grid
    agent = (3, 3)
    seen = fog(grid, agent, 1)
    read = perceive(navigate_messages(instance.memory, seen, agent, (7, 7), 10, Sight("text")))
    observer = believed_grid(read, trust_memory=False)
    credulous = believed_grid(read, trust_memory=True)
    assert observer is not None and credulous is not None
    remembered = {e.pos: ("H" if e.claim == "DANGER" else "F") for e in instance.memory}
    for r in range(8):
        for c in range(8):
            walkable = {"S": "F", "G": "F"}
            if seen[r][c] != FOG_CELL:
                assert observer[r][c] == seen[r][c]  # its eyes win where it sees
            else:
                assert walkable.get(observer[r][c], observer[r][c]) == remembered[(r, c)]
            assert walkable.get(credulous[r][c], credulous[r][c]) == remembered[(r, c)]  # memory wins everywhere
    # without memory the unseen cells stay unknown (walkable to the planner)
    bare = perceive(navigate_messages(None, seen, agent, (7, 7), 10, Sight("text")))
    assert believed_grid(bare, trust_memory=False) == seen


INSPECT_EVAL = [sys.executable, "-m", "inspect_ai", "eval", "spatialstale/navigation"]


def _inspect_eval(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*INSPECT_EVAL, "--model", "spatialstale/credulous", *args, "--log-dir", str(tmp_path), "--display", "none"],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow  # `inspect eval` subprocesses; bad -T values are pinned in the fast tier by tests/evals/test_cli.py
def test_the_command_line_takes_a_radius_and_refuses_a_bad_one_in_one_line(tmp_path: Path) -> None:
    ok = _inspect_eval(
        tmp_path / "ok", "-T", "view_radius=1", "-T", "seeds=625", "-T", "strategies=oracle", "--epochs", "1"
    )
    assert ok.returncode == 0, ok.stderr
    [info] = list_eval_logs(str(tmp_path / "ok"))
    log = read_eval_log(info)
    assert [s.id for s in log.samples or []] == ["L2-oracle-r1-s625"]
    assert log.eval.task_version == 6
    bad = _inspect_eval(tmp_path / "bad", "-T", "view_radius=far")
    assert bad.returncode == 1
    assert bad.stderr.strip() == "view_radius must be full or an integer of at least 0; got 'far'"
    assert not list_eval_logs(str(tmp_path / "bad"))


def test_under_fog_the_planners_keep_to_known_cells_where_they_can() -> None:
    from spatialstale.agents._policies import plan_action
    from spatialstale.env import Action

    # straight DOWN crosses unknown cells; the known route goes RIGHT first
    grid = (
        "SFFF",
        "?HHF",
        "?HHF",
        "???G",
    )
    assert plan_action(grid, (0, 0), (3, 3)) is Action.RIGHT
    # with no known route the unknown is walkable: the fewest unknown cells, then the shortest
    assert plan_action(("S???", "????", "????", "???G"), (0, 0), (3, 3)) is Action.DOWN
    # the same grid fully known is planned as before fog existed (the shortest path)
    assert plan_action(tuple(row.replace("?", "F") for row in grid), (0, 0), (3, 3)) is Action.DOWN
