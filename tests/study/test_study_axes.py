"""The study's navigation axes (``--filters``, ``--view-radii``, ``--agents``): real
studies on the reference agents through the CLI, the task arguments and sample
metadata their logs record, the paper's default cells left exactly as they were, the
dry run's counts and prices of the new cells, and one-line errors for bad values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from spatialstale.env import Instance, make_instance
from spatialstale.protocol import NAVIGATION, PROMPT_SETS
from spatialstale.report import read_logs
from spatialstale.study import Calls, Study, TaskSpec, account, estimate_task, study_tasks
from spatialstale.study._calls import sample_calls
from spatialstale.study._cli import main
from spatialstale.study._estimate import format_plan, plan

# one worker runs the module, so its module fixtures' runs are made once
pytestmark = pytest.mark.xdist_group("study_axes")

CREDULOUS = "spatialstale/credulous"
SEEDS = (4810, 1734)
PAPER_NAVIGATION_ARGS = {"regime", "modality", "strategies", "batch_size", "seeds", "size", "max_steps", "episodes"}
"""The task arguments a navigation cell of the paper's protocol has always passed."""


def navigation_episode(instance: Instance, strategy: str, max_steps: int, **values: Any) -> tuple[Calls, Calls]:
    """The dry run's (navigator, auditor) calls of one episode under these settings."""
    settings = NAVIGATION.replace(max_steps=max_steps, **values)
    return sample_calls(settings, instance, strategy)


def _logs(log_dir: str) -> list[EvalLog]:
    return [read_eval_log(info.name) for info in list_eval_logs(log_dir)]


def _study_argv(log_dir: Path, *axes: str) -> list[str]:
    return [
        "study",
        "--model",
        CREDULOUS,
        "--seeds",
        ",".join(map(str, SEEDS)),
        "--regimes",
        "L2",
        "--no-detection",
        "--episodes",
        "1",
        "--max-steps",
        "12",
        "--log-dir",
        str(log_dir),
        "--display",
        "none",
        *axes,
    ]


@pytest.fixture(scope="module")
def filter_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    log_dir = tmp_path_factory.mktemp("filters")
    assert main(_study_argv(log_dir, "--filters", "delete,unknown")) == 0
    return log_dir


def test_the_default_study_passes_the_task_arguments_it_always_passed() -> None:
    tasks = study_tasks(seeds=SEEDS)
    navigation = [t for t in tasks if t.kind == "navigation"]
    # one task per (regime, strategy): each log's headline success is one strategy's
    assert [t.name for t in navigation] == [
        f"navigation {regime} text {strategy}"
        for regime in ("L1", "L2", "L3")
        for strategy in ("nomemory", "nofilter", "selfverify", "omcd", "oracle")
    ]
    for spec in navigation:
        assert set(spec.args()) == PAPER_NAVIGATION_ARGS
        assert spec.axes() == {}
    # naming the defaults explicitly is the same study: same cells, same eval-set identity
    explicit = study_tasks(seeds=SEEDS, axes={"filter": ["delete"], "view_radius": [None], "agent": ["prompt"]})
    assert explicit == tasks


def test_each_axis_value_adds_navigation_cells_with_its_task_argument() -> None:
    tasks = study_tasks(
        seeds=SEEDS,
        regimes=["L2"],
        detection_on=False,
        axes={"filter": ["delete", "unknown"], "view_radius": [None, 1], "agent": ["prompt", "tools"]},
    )
    # per (view radius, agent): five strategies under delete, three under unknown
    assert len(tasks) == 2 * 2 * 5 + 2 * 2 * 3
    extra = []
    for t in tasks:
        args = {k: v for k, v in t.args().items() if k not in PAPER_NAVIGATION_ARGS}
        if args not in extra:
            extra.append(args)
    assert extra == [
        {},
        {"view_radius": 1},
        {"agent": "tools"},
        {"view_radius": 1, "agent": "tools"},
        {"filter": "unknown"},
        {"filter": "unknown", "view_radius": 1},
        {"filter": "unknown", "agent": "tools"},
        {"filter": "unknown", "view_radius": 1, "agent": "tools"},
    ]
    # a filter mode changes only the strategies that flag entries
    assert {t.strategies for t in tasks if t.settings.filter == "unknown"} == {("selfverify",), ("omcd",), ("oracle",)}
    assert {t.strategies for t in tasks if t.settings.filter == "delete"} == {
        (s,) for s in ("nomemory", "nofilter", "selfverify", "omcd", "oracle")
    }
    assert tasks[-1].name == "navigation L2 text oracle filter=unknown agent=tools view_radius=1"


def test_view_radii_read_full_and_integers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*_study_argv(tmp_path, "--view-radii", "full,1,2,FULL,0"), "--dry-run"]
    assert main(argv) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith(CREDULOUS)]
    assert list(dict.fromkeys(row.split()[5] for row in rows)) == ["full", "1", "2", "0"]


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        # the messages are the tasks' own: one vocabulary for -T and the study
        ("--filters", "delete,erase", "filter must be one of delete, unknown; got 'erase'"),
        ("--agents", "prompt,react", "agent must be one of prompt, tools, memory, or module:function; got 'react'"),
        ("--view-radii", "full,-1", "view_radius must be full or an integer of at least 0; got '-1'"),
        ("--view-radii", "1.5", "view_radius must be full or an integer of at least 0; got '1.5'"),
        ("--view-radii", "near", "view_radius must be full or an integer of at least 0; got 'near'"),
        # the -T names spell the same options
        ("--view-radius", "-2", "view_radius must be full or an integer of at least 0; got '-2'"),
        ("--filter", "delete,erase", "filter must be one of delete, unknown; got 'erase'"),
        ("--agent", "react", "agent must be one of prompt, tools, memory, or module:function; got 'react'"),
        ("--prompt-sets", "default,terse", "prompt_set must be one of default, no_rule, warned, minimal; got 'terse'"),
        (
            "--filters",
            "unknown --strategies nomemory,nofilter",
            "nothing to run: skipped 2 navigation tasks: filter=unknown changes only the strategies that flag "
            "entries (selfverify, omcd, oracle, localverify); nomemory, nofilter run at filter=delete only",
        ),
    ],
)
def test_a_bad_axis_value_fails_before_anything_runs_with_one_line(
    flag: str, value: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_study_argv(tmp_path / "logs", flag, *value.split())) == 2
    err = capsys.readouterr().err
    assert err == f"spatialstale study: error: {message}\n"
    assert not (tmp_path / "logs").exists()


def test_a_filter_study_runs_each_mode_as_its_own_cell(filter_study: Path) -> None:
    logs = _logs(str(filter_study))
    assert all(log.status == "success" for log in logs)
    expected = study_tasks(seeds=SEEDS, regimes=["L2"], detection_on=False, episodes=1, max_steps=12)
    expected += study_tasks(
        seeds=SEEDS, regimes=["L2"], detection_on=False, episodes=1, max_steps=12, axes={"filter": ["unknown"]}
    )
    assert sorted(json.dumps(log.eval.task_args_passed, sort_keys=True) for log in logs) == sorted(
        json.dumps(spec.args(), sort_keys=True) for spec in expected
    )
    for log in logs:
        mode = log.eval.task_args_passed.get("filter", "delete")
        assert log.eval.metadata is not None and log.eval.metadata["filter"] == mode
        for sample in log.samples or []:
            assert sample.metadata["filter"] == mode
            assert ("-unknown-" in str(sample.id)) == (mode == "unknown")
    # the run is complete as the study accounts for it, and the loader keeps the modes apart
    assert account(Study((CREDULOUS,), tuple(expected), log_dir=str(filter_study))).complete
    nav = read_logs(filter_study).navigation
    assert nav.groupby("filter").strategy.apply(lambda s: tuple(sorted(set(s)))).to_dict() == {
        "delete": ("nofilter", "nomemory", "omcd", "oracle", "selfverify"),
        "unknown": ("omcd", "oracle", "selfverify"),
    }
    assert set(nav.view_radius) == {"full"} and set(nav.agent) == {"prompt"}


def test_the_dry_run_counts_a_filter_studys_cells(filter_study: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_study_argv(filter_study, "--filters", "delete,unknown", "--dry-run")) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0]
    assert header.split()[:4] == ["model", "task", "filter", "samples"]
    rows = [line.split() for line in out.splitlines()[2:] if line.startswith(CREDULOUS)][: 5 + 3]
    assert [row[4:7] for row in rows] == [
        *([s, "delete", "2"] for s in ("nomemory", "nofilter", "selfverify", "omcd", "oracle")),
        *([s, "unknown", "2"] for s in ("selfverify", "omcd", "oracle")),
    ]
    # NoMemory and NoFilter flag nothing: their unknown cells would repeat the delete ones
    assert "\n  skipped 2 navigation tasks: filter=unknown changes only the strategies that flag entries" in out
    for log in _logs(str(filter_study)):
        spec = TaskSpec.make(
            "navigation",
            regime="L2",
            seeds=SEEDS,
            strategies=tuple(log.eval.task_args_passed["strategies"]),
            max_steps=12,
            episodes=1,
            filter=log.eval.task_args_passed.get("filter", "delete"),
        )
        estimate = estimate_task(spec)
        assert estimate.samples == len(log.samples or [])
        calls = sum(1 for s in log.samples or [] for e in s.events if e.event == "model")
        assert calls <= estimate.total.calls


def test_each_prompt_set_is_priced_with_its_own_prompts() -> None:
    instance = make_instance(SEEDS[0], "L3", 8)
    default = navigation_episode(instance, "omcd", 12)
    for name, prompts in PROMPT_SETS.items():
        navigator, auditor = navigation_episode(instance, "omcd", 12, prompt_set=name)
        assert (navigator.calls, auditor.calls) == (default[0].calls, default[1].calls)
        grow = len(prompts.navigate) - len(PROMPT_SETS["default"].navigate)
        audit_grow = len(prompts.audit) - len(PROMPT_SETS["default"].audit)
        # every call carries its set's system prompt (chars / 4, filled size aside)
        assert navigator.prompt_tokens - default[0].prompt_tokens == pytest.approx(12 * grow / 4, abs=12)
        assert auditor.prompt_tokens - default[1].prompt_tokens == pytest.approx(
            auditor.calls * audit_grow / 4, abs=auditor.calls
        )
        if name == "minimal":
            assert navigator.prompt_tokens < default[0].prompt_tokens
    tasks = study_tasks(
        seeds=SEEDS[:1], regimes=["L1"], modalities=["text"], axes={"prompt_set": ["default", "minimal"]}
    )
    rows = plan(Study(("m",), tasks))
    by_set = {(r.estimate.spec.kind, r.estimate.spec.settings.prompt_set): r.estimate.total.prompt_tokens for r in rows}
    assert by_set[("detection", "minimal")] < by_set[("detection", "default")]
    assert by_set[("navigation", "minimal")] < by_set[("navigation", "default")]
    printed = format_plan(Study(("m",), tasks), rows)
    assert printed.splitlines()[0].split()[:3] == ["model", "task", "prompt"]


@pytest.fixture(scope="module")
def fog_tools_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    log_dir = tmp_path_factory.mktemp("fog_tools")
    axes = ("--strategies", "nomemory,oracle", "--view-radii", "full,1", "--agents", "prompt,tools")
    assert main(_study_argv(log_dir, *axes)) == 0
    return log_dir


@pytest.mark.slow  # a study of eight cells; the filter study stays fast
def test_a_fog_and_tools_study_records_each_cells_radius_and_agent(fog_tools_study: Path) -> None:
    logs = _logs(str(fog_tools_study))
    assert all(log.status == "success" for log in logs)
    cells = set()
    for log in logs:
        args = log.eval.task_args_passed
        radius, agent = args.get("view_radius"), args.get("agent", "prompt")
        cells.add((radius, agent))
        # an axis at the paper's value is not passed at all
        passed = {key for key, away in (("view_radius", radius is not None), ("agent", agent != "prompt")) if away}
        assert set(args) - PAPER_NAVIGATION_ARGS == passed
        assert log.eval.metadata is not None
        assert (log.eval.metadata["view_radius"], log.eval.metadata["agent"]) == (radius, agent)
        for sample in log.samples or []:
            assert (sample.metadata["view_radius"], sample.metadata["agent"]) == (radius, agent)
            assert ("-r1-" in str(sample.id)) == (radius == 1)
            assert ("-tools-" in str(sample.id)) == (agent == "tools")
    assert cells == {(None, "prompt"), (None, "tools"), (1, "prompt"), (1, "tools")}
    nav = read_logs(fog_tools_study).navigation
    assert nav.groupby(["view_radius", "agent"]).size().to_dict() == {
        (radius, agent): 2 * 2 for radius in ("1", "full") for agent in ("prompt", "tools")
    }


def test_the_dry_run_counts_and_prices_fog_and_tools_cells(capsys: pytest.CaptureFixture[str]) -> None:
    axes = ("--strategies", "nomemory,oracle", "--view-radii", "full,1", "--agents", "prompt,tools", "--dry-run")
    assert main(_study_argv(Path("unused"), *axes)) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:6] == ["model", "task", "agent", "view", "radius", "samples"]
    rows = {(line.split()[6], line.split()[5]): line.split() for line in lines[2:10] if "nomemory" in line}
    assert set(rows) == {("full", "prompt"), ("full", "tools"), ("1", "prompt"), ("1", "tools")}
    for (_, agent), row in rows.items():
        samples, epochs, nav_calls = int(row[7]), int(row[8]), int(row[9].replace(",", ""))
        assert (samples, epochs, nav_calls) == (2, 1, 2 * 12)
        assert " ".join(row[-5:] if agent == "tools" else row[-2:]) == (
            "estimate (a turn a step)" if agent == "tools" else "upper bound"
        )
    # a tool conversation resends its history: its prompts outgrow the per-step navigator's
    tokens = {key: int(row[11].replace(",", "")) for key, row in rows.items()}
    assert tokens[("full", "tools")] > tokens[("full", "prompt")]
    assert tokens[("1", "prompt")] != tokens[("full", "prompt")]


def test_a_tool_conversation_grows_by_one_exchange_a_turn() -> None:
    instance = make_instance(SEEDS[0], "L2", 8)
    short, _ = navigation_episode(instance, "nomemory", 10, agent="tools")
    long, _ = navigation_episode(instance, "nomemory", 20, agent="tools")
    assert (short.calls, long.calls) == (10, 20)
    # prompt tokens are quadratic in the turns (each turn resends all earlier exchanges)
    assert long.prompt_tokens > 3 * short.prompt_tokens
    assert long.cached_tokens < long.prompt_tokens
    fogged, _ = navigation_episode(instance, "nomemory", 10, agent="tools", view_radius=1)
    assert fogged.calls == 10 and fogged.prompt_tokens != short.prompt_tokens
