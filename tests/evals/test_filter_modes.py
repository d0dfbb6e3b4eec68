"""``-T filter=delete|unknown`` through the real navigation task, into a tmp log dir, and the report.

``delete`` (the paper) must leave every score as it was without the parameter;
``unknown`` keeps each flagged entry in the view, marked UNKNOWN, which the
reference agents read as no memory and a scripted provider sees in its prompts.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, EvalSample, resolve_sample_attachments
from inspect_ai.model import ChatMessageUser

from spatialstale.agents._perception import perceive
from spatialstale.env import default_seeds, make_instance
from spatialstale.evals.navigation import navigation
from spatialstale.protocol import DEFAULT_NAVIGATE_PROMPT, TaskParameterError, call_kind, system_message
from spatialstale.protocol import DEFAULT_STRATEGIES as STRATEGIES
from spatialstale.report import read_logs
from spatialstale.report._navigation_stats import CONTRASTS, outcome_rates, strategy_tests
from spatialstale.report._report import write_report
from tests.conftest import episode_log
from tests.scripted import Script, truthful_flags, without_tokens

# one worker runs the module, so its shared runs are made once
pytestmark = pytest.mark.xdist_group("filter_modes")

SEEDS = ",".join(str(s) for s in default_seeds()[:2])
REGIMES = "L2,L3"
"""A regime changed before the episode and one changed during it (L1 changes before it as L2 does)."""
FILTERING = ("selfverify", "omcd", "oracle")
AGENTS = ("credulous", "observer")
UNKNOWN_LINE = re.compile(r"\[(mem_\d+)\] UNKNOWN \(flagged stale at step (\d+)\) at \((\d+),(\d+)\)")


def run(model: str | Any, tmp_path: Path, **task_args: Any) -> EvalLog:
    task = navigation(regime=REGIMES, seeds=SEEDS, episodes=1, **task_args)
    # the observer audits for every navigator: its flags are exactly the stale entries
    [log] = eval(
        task,
        model=model,
        model_roles={"auditor": "spatialstale/observer"},
        log_dir=str(tmp_path),
        display="none",
        log_realtime=False,
    )
    assert log.status == "success", log.error
    assert log.samples
    return log


def outcomes(log: EvalLog) -> dict[str, dict[str, Any]]:
    """Each sample's score value by sample id."""
    rows = {}
    for sample in log.samples or []:
        assert sample.scores is not None
        [score] = sample.scores.values()
        assert isinstance(score.value, dict)
        rows[str(sample.id)] = without_tokens(score.value)  # the unknown listing is longer
    return rows


def navigate_prompts(sample: EvalSample) -> list[str]:
    """The user text of every navigation call the sample logged."""
    texts = []
    for event in resolve_sample_attachments(sample).events:
        if isinstance(event, ModelEvent) and call_kind(event.input) == "navigate":
            texts.append("\n".join(m.text for m in event.input if isinstance(m, ChatMessageUser)))
    return texts


class Runs(dict[tuple[str, str], EvalLog]):
    """Runs by (reference navigator, mode), each made when a test first reads it: a run
    without the parameter (``none``), with ``delete`` and with ``unknown``."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        super().__init__()
        self.tmp_path_factory = tmp_path_factory

    def __missing__(self, key: tuple[str, str]) -> EvalLog:
        agent, mode = key
        args = {} if mode == "none" else {"filter": mode}
        log = self[key] = run(f"spatialstale/{agent}", self.tmp_path_factory.mktemp(f"{agent}-{mode}"), **args)
        return log


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return Runs(tmp_path_factory)


# the credulous navigator reads its memory, so its runs tell the modes apart: the fast
# tier runs it, the observer (which ignores memory) runs in the slow tier
AGENT_CASES = [pytest.param(a, marks=pytest.mark.slow) if a == "observer" else a for a in AGENTS]


@pytest.mark.parametrize("agent", AGENT_CASES)
def test_delete_reproduces_the_default_run_exactly(agent: str, logs: dict[tuple[str, str], EvalLog]) -> None:
    default, delete = outcomes(logs[(agent, "none")]), outcomes(logs[(agent, "delete")])
    assert default == delete
    assert len(default) == 2 * len(REGIMES.split(",")) * len(STRATEGIES)
    for log in (logs[(agent, "none")], logs[(agent, "delete")]):
        assert log.eval.task_args.get("filter", "delete") == "delete"
        assert {s.metadata["filter"] for s in log.samples or []} == {"delete"}
    # the default's ids are unchanged: regime-strategy-seed
    assert all(re.fullmatch(r"L\d-[a-z]+-s\d+", sample_id) for sample_id in default)


@pytest.mark.parametrize("agent", AGENT_CASES)
def test_unknown_runs_every_strategy_and_records_the_mode(agent: str, logs: dict[tuple[str, str], EvalLog]) -> None:
    log = logs[(agent, "unknown")]
    assert log.eval.task_args["filter"] == "unknown"
    assert (log.eval.metadata or {})["filter"] == "unknown"
    samples = log.samples or []
    assert {(s.metadata["regime"], s.metadata["strategy"]) for s in samples} == {
        (r, s) for r in REGIMES.split(",") for s in STRATEGIES
    }
    assert {s.metadata["filter"] for s in samples} == {"unknown"}
    assert all(str(s.id).endswith(f"-{s.metadata['strategy']}-unknown-s{s.metadata['seed']}") for s in samples)


@pytest.mark.parametrize("agent", AGENT_CASES)
def test_reference_agents_read_unknown_as_no_memory(agent: str, logs: dict[tuple[str, str], EvalLog]) -> None:
    """The observer ignores memory and the credulous agent treats UNKNOWN as absent,
    so with a perfect auditor every episode walks as it does under ``delete``."""
    delete = outcomes(logs[(agent, "delete")])
    unknown = outcomes(logs[(agent, "unknown")])
    assert {k.replace("-unknown-", "-"): v for k, v in unknown.items()} == delete
    if agent == "credulous":
        deaths = {s: sum(v["death"] for k, v in unknown.items() if f"-{s}-" in k) for s in STRATEGIES}
        assert deaths["nofilter"] > 0 == deaths["omcd"] == deaths["oracle"] == deaths["selfverify"], deaths


def test_unknown_views_list_every_flagged_entry_marked(logs: dict[tuple[str, str], EvalLog]) -> None:
    marked_somewhere = 0
    for sample in logs[("credulous", "unknown")].samples or []:
        meta = sample.metadata
        strategy = meta["strategy"]
        episode = episode_log(sample)
        prompts = navigate_prompts(sample)
        assert len(prompts) == episode["steps"]
        for prompt, record in zip(prompts, episode["records"], strict=True):
            marks = {m.group(1): int(m.group(2)) for m in UNKNOWN_LINE.finditer(prompt)}
            if strategy not in FILTERING:
                assert not marks and "UNKNOWN" not in prompt
                continue
            # the whole store stays listed: each entry as its claim or as UNKNOWN
            claims = {m.id for m in perceive([ChatMessageUser(content=prompt)]).memory}
            assert claims.isdisjoint(marks) and len(claims) + len(marks) == 64
            # a perfect auditor marks exactly the entries stale at its latest audit
            audit = max((a for a in episode["audits"] if a["step"] < record["step"]), key=lambda a: a["step"])
            assert set(marks) == set(audit["flagged"])
            assert set(marks.values()) <= {audit["step"]}
            assert record["unknown_in_view"] == len(marks)
            # a marked entry claims nothing, so it is never counted as stale in the view
            assert set(record["stale_in_view"]).isdisjoint(marks)
            if strategy != "selfverify":  # re-audited at every change: nothing stale is claimed
                assert record["stale_in_view"] == []
            assert record["view_size"] == 64
            marked_somewhere += bool(marks)
    assert marked_somewhere > 0


def test_delete_views_hold_no_unknown_mark(logs: dict[tuple[str, str], EvalLog]) -> None:
    for sample in logs[("credulous", "delete")].samples or []:
        assert not any("UNKNOWN" in prompt for prompt in navigate_prompts(sample))


@pytest.mark.parametrize("strategy", FILTERING)
def test_a_scripted_navigator_sees_the_unknown_marks(strategy: str, tmp_path: Path) -> None:
    seed = default_seeds()[0]
    script = Script(flag=truthful_flags, inconsistent=truthful_flags)
    [log] = eval(
        navigation(regime="L2", seeds=str(seed), strategies=strategy, episodes=1, filter="unknown"),
        model=script.model(),
        log_dir=str(tmp_path),
        display="none",
        log_realtime=False,
    )
    assert log.status == "success", log.error
    instance = make_instance(seed, "L2")
    navigate = script.of_kind("navigate")
    assert navigate
    first = navigate[0]
    stale = instance.stale_ids(instance.initial_grid)
    assert stale  # L2 changes the grid before the episode
    marked = {m.group(1) for m in UNKNOWN_LINE.finditer(first.text)}
    # the flagged claims are gone from what the navigator reads; their cells are marked instead
    assert marked == stale
    assert set(first.memory_ids) == {m.id for m in instance.memory} - stale


def test_the_scripted_navigator_sees_marks_from_each_reaudit(tmp_path: Path) -> None:
    seed = next(s for s in default_seeds() if make_instance(s, "L3").schedule)
    # the navigator never leaves the start (UP is off the grid), so it sees every event
    script = Script(flag=truthful_flags, act=lambda call: '{"action": "UP"}')
    [log] = eval(
        navigation(regime="L3", seeds=str(seed), strategies="omcd", episodes=1, filter="unknown"),
        model=script.model(),
        log_dir=str(tmp_path),
        display="none",
        log_realtime=False,
    )
    assert log.status == "success", log.error
    [sample] = log.samples or []
    episode = episode_log(sample)
    audit_steps = [a["step"] for a in episode["audits"]]
    seen_steps = {int(m.group(2)) for call in script.of_kind("navigate") for m in UNKNOWN_LINE.finditer(call.text)}
    flagged_steps = {a["step"] for a in episode["audits"] if a["flagged"]}
    assert len(audit_steps) > 1 and flagged_steps
    assert seen_steps == flagged_steps


@pytest.mark.parametrize("value", ["drop", "delete,unknown", 1])
def test_a_bad_filter_fails_before_any_model_call(value: object, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(TaskParameterError, match=r"^filter must be one of delete, unknown; got "):
        navigation(seeds=SEEDS, filter=value)  # type: ignore[arg-type]
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("filter must be one of delete, unknown")


def test_perception_reads_unknown_cells_and_no_claim() -> None:
    text = (
        "Memory entries:\n[mem_000] SAFE at (0,0): Start\n"
        "[mem_044] UNKNOWN (flagged stale at step 5) at (5,4)\n"
        "[mem_021] DANGER at (2,5): Hole - dangerous, do not step"
    )
    seen = perceive([system_message(DEFAULT_NAVIGATE_PROMPT, 8, "navigate"), ChatMessageUser(content=text)])
    assert [m.id for m in seen.memory] == ["mem_000", "mem_021"]
    assert seen.unknown == ((5, 4),)


def test_the_report_shows_both_modes_side_by_side(logs: dict[tuple[str, str], EvalLog], tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    for mode in ("delete", "unknown"):
        shutil.copy(logs[("credulous", mode)].location, log_dir)
    results = read_logs(log_dir)
    assert sorted(results.navigation["filter"].unique()) == ["delete", "unknown"]
    rates = outcome_rates(results.navigation).set_index(["regime", "strategy", "filter"])
    assert len(rates) == 2 * len(REGIMES.split(",")) * len(STRATEGIES)
    for regime in REGIMES.split(","):
        for strategy in STRATEGIES:
            # the credulous agent reads UNKNOWN as no memory: the two rows agree
            unknown, delete = (rates.loc[(regime, strategy, mode), "success"] for mode in ("unknown", "delete"))
            assert unknown == delete
    write_report(results, tmp_path / "report")
    report = (tmp_path / "report" / "report.md").read_text()
    table3 = report.split("### Table 3: ", 1)[1].split("\n### ", 1)[0]
    names = [line.split(" | ")[1] for line in table3.splitlines() if line.startswith("| credulous")]
    assert names[:4] == ["NoMemory", "NoMemory (unknown)", "NoFilter", "NoFilter (unknown)"]
    assert "OMCD (unknown)" in names and "OMCD" in names and "Oracle (unknown)" in names
    # paired tests compare strategies within one filter mode, never across
    tests = strategy_tests(results.navigation)
    assert sorted(tests["filter"].unique()) == ["delete", "unknown"]
    assert (tests.groupby("filter").size() == len(CONTRASTS) * 2 * len(REGIMES.split(","))).all()
