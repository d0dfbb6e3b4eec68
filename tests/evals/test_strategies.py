"""Strategies as plug-ins (``module:Class`` and the ``spatialstale.strategies`` entry
points) and the built-in LocalVerify, through the real navigation task on the
reference agents, into tmp log dirs."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from spatialstale.env import default_seeds, make_instance
from spatialstale.evals.navigation import navigation
from spatialstale.protocol import NAVIGATION, TaskParameterError
from spatialstale.study._calls import sample_calls
from spatialstale.study._cli import main
from tests.conftest import episode_log

ROOT = Path(__file__).resolve().parents[2]
INSPECT = [sys.executable, "-m", "inspect_ai"]
SEEDS = ",".join(str(s) for s in default_seeds()[:3])
REGIMES = "L1,L2,L3"
_modules = itertools.count()

PLUGIN = '''
from spatialstale.solvers import StrategyContext


class Copycat:
    """NoFilter written outside the suite: the whole store, unchanged."""

    name = "copycat{n}"

    def __init__(self, context: StrategyContext) -> None:
        self.context = context
        self.audits = []

    async def view(self, step, grid, agent):
        return self.context.instance.memory


class AuditOnce:
    """An audit of the whole store before the first step, through the context's helper."""

    name = "auditonce{n}"

    def __init__(self, context: StrategyContext) -> None:
        self.context = context
        self.audits = []

    async def view(self, step, grid, agent):
        if not self.audits:
            self.audits.append(await self.context.audit(self.context.instance.memory, step, grid, agent))
        return tuple(e for e in self.context.instance.memory if e.id not in self.audits[0].flagged)


class NoView:
    name = "noview{n}"


class SyncView:
    name = "syncview{n}"

    def view(self, step, grid, agent):
        return None


class Clash(Copycat):
    name = "omcd"


class BadName(Copycat):
    name = "Bad-Name"


def not_a_class(context):
    return None
'''


def write_plugin(root: Path) -> tuple[str, int]:
    """A plug-in module in ``root`` under a fresh name (imported modules are cached)."""
    n = next(_modules)
    module = f"ss_plugin_{os.getpid()}_{n}"
    (root / f"{module}.py").write_text(PLUGIN.format(n=n))
    return module, n


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, int]:
    root = tmp_path / "plugins"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    return write_plugin(root)


def run(task: Any, tmp_path: Path, model: str = "spatialstale/credulous") -> EvalLog:
    [log] = eval(
        task,
        model=model,
        model_roles={"auditor": "spatialstale/observer"},
        log_dir=str(tmp_path / "logs"),
        display="none",
        log_realtime=False,
    )
    assert log.status == "success", log.error
    return log


def episodes(log: EvalLog) -> dict[str, dict[str, Any]]:
    return {str(s.id): episode_log(s) for s in log.samples or []}


# --- plug-ins ----------------------------------------------------------------------------


def test_a_plugin_imitating_nofilter_walks_as_nofilter(plugin: tuple[str, int], tmp_path: Path) -> None:
    module, n = plugin
    name = f"copycat{n}"
    log = run(navigation(regime=REGIMES, seeds=SEEDS, episodes=1, strategies=f"nofilter,{module}:Copycat"), tmp_path)
    runs = episodes(log)
    assert len(runs) == 2 * 3 * 3
    pairs = [(k, k.replace("-nofilter-", f"-{name}-")) for k in runs if "-nofilter-" in k]
    assert all(theirs in runs for _, theirs in pairs)
    # the same worlds, the same walks: the credulous navigator trusts the whole store in both
    for ours, theirs in pairs:
        assert runs[theirs]["outcome"] == runs[ours]["outcome"]
        assert [r["position"] for r in runs[theirs]["records"]] == [r["position"] for r in runs[ours]["records"]]
    assert any(runs[k]["outcome"] == "death" for k, _ in pairs)  # the comparison is not vacuous
    metrics = {m for score in log.results.scores for m in score.metrics} if log.results else set()
    assert {f"success_{name}", f"death_{name}", f"success_L2_{name}", "death_nofilter"} <= metrics
    assert {s.metadata["strategy"] for s in log.samples or []} == {"nofilter", name}
    assert f"nofilter+{name}" in log.eval.tags


def test_a_plugin_audits_through_the_context(plugin: tuple[str, int], tmp_path: Path) -> None:
    module, n = plugin
    log = run(navigation(regime="L2", seeds=SEEDS, episodes=1, strategies=f"omcd,{module}:AuditOnce"), tmp_path)
    runs = episodes(log)
    for sample_id, episode in runs.items():
        if f"-auditonce{n}-" in sample_id:
            omcd = runs[sample_id.replace(f"-auditonce{n}-", "-omcd-")]
            # one batched audit at B=10 of 64 entries, flagging what OMCD's flags (L2: no re-audit)
            assert [a["calls"] for a in episode["audits"]] == [7]
            assert episode["audits"][0]["flagged"] == omcd["audits"][0]["flagged"]
            assert episode["outcome"] == omcd["outcome"]


def test_an_entry_point_plugin_is_found_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "site"
    root.mkdir()
    module, n = write_plugin(root)
    dist = root / f"ss_plugin_dist_{n}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: ss-plugin-dist-{n}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[spatialstale.strategies]\ncopycat{n} = {module}:Copycat\n")
    monkeypatch.syspath_prepend(str(root))
    log = run(navigation(regime="L2", seeds=SEEDS, episodes=1, strategies=f"nofilter,copycat{n}"), tmp_path)
    assert sorted({str(s.id).split("-")[1] for s in log.samples or []}) == sorted(["nofilter", f"copycat{n}"])
    # an entry point whose class names itself otherwise fails
    (dist / "entry_points.txt").write_text(f"[spatialstale.strategies]\nother{n} = {module}:Copycat\n")
    with pytest.raises(TaskParameterError, match=f"declared as 'other{n}' but its class is named 'copycat{n}'"):
        navigation(strategies=f"other{n}")


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("ss_no_such_module:Copycat", r"cannot be imported: ModuleNotFoundError: No module named 'ss_no_such_module'"),
        ("{module}:Missing", r"not found: module '{module}' has no 'Missing'"),
        ("{module}:not_a_class", r"is not a class; got function"),
        ("{module}:NoView", r"has no view\(step, grid, agent\) method"),
        ("{module}:SyncView", r"must define view as async def"),
        ("{module}:Clash", r"is named 'omcd', a built-in strategy's name"),
        ("{module}:BadName", r"needs a class attribute name of lower-case letters"),
        ("mymemory", r"strategies must be one of nomemory, nofilter, selfverify, omcd, oracle, localverify, an "),
    ],
)
def test_a_bad_plugin_fails_with_one_line(plugin: tuple[str, int], entry: str, message: str) -> None:
    module, _ = plugin
    with pytest.raises(TaskParameterError, match=message.format(module=module)) as error:
        navigation(strategies="nofilter," + entry.format(module=module))
    assert "\n" not in str(error.value)


@pytest.mark.slow  # two `inspect eval` subprocesses; the regime plug-in's CLI test stays fast
def test_a_plugin_runs_from_the_command_line_and_a_bad_one_fails_there(plugin: tuple[str, int], tmp_path: Path) -> None:
    module, n = plugin
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "plugins"), os.environ.get("PYTHONPATH", "")])}

    def inspect_eval(strategies: str, log_dir: Path) -> subprocess.CompletedProcess[str]:
        args = ["eval", "spatialstale/navigation", "--model", "spatialstale/credulous", "--display", "plain"]
        return subprocess.run(
            [
                *INSPECT,
                *args,
                "-T",
                f"strategies={strategies}",
                "-T",
                "seeds=4810",
                "-T",
                "episodes=1",
                "--log-dir",
                str(log_dir),
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    good = inspect_eval(f"nofilter,{module}:Copycat", tmp_path / "good")
    assert good.returncode == 0, good.stderr
    [info] = list_eval_logs(str(tmp_path / "good"))
    assert sorted(str(s.id) for s in read_eval_log(info).samples or []) == [f"L2-copycat{n}-s4810", "L2-nofilter-s4810"]
    bad = inspect_eval(f"nofilter,{module}:NoView", tmp_path / "bad")
    output = " ".join((bad.stdout + bad.stderr).split())
    assert bad.returncode != 0
    assert f"strategies: plug-in '{module}:NoView' has no view(step, grid, agent) method" in output
    assert "Traceback" not in output
    assert not list((tmp_path / "bad").glob("*.eval"))


# --- LocalVerify -------------------------------------------------------------------------


def test_the_default_strategies_are_the_papers_five() -> None:
    assert NAVIGATION.strategies == ("nomemory", "nofilter", "selfverify", "omcd", "oracle")
    assert [s.id for s in navigation(seeds="4810").dataset] == [
        f"L2-{s}-s4810" for s in ("nomemory", "nofilter", "selfverify", "omcd", "oracle")
    ]
    task = navigation(seeds="4810", strategies="LocalVerify")
    [sample] = task.dataset
    assert sample.id == "L2-localverify-s4810"
    assert sample.metadata is not None and sample.metadata["verify_radius"] == 1


@pytest.mark.parametrize("value", [-1, "-1", "x", 1.5, True])
def test_a_bad_verify_radius_fails_before_any_model_call(value: object) -> None:
    with pytest.raises(TaskParameterError, match="verify_radius must be an integer of at least 0"):
        navigation(strategies="localverify", verify_radius=value)


@pytest.mark.parametrize(
    ("radius", "agent", "n_seeds"),
    # (the first 12 default seeds hold the first 6: one run of 12 at radius 1 covers both)
    [
        pytest.param(1, "prompt", 12, marks=pytest.mark.slow),
        pytest.param(2, "prompt", 12, marks=pytest.mark.slow),
        pytest.param(1, "tools", 12, marks=pytest.mark.slow),
    ],
)
def test_localverify_never_lets_credulous_step_into_a_hole_memory_calls_safe(
    radius: int, agent: str, n_seeds: int, tmp_path: Path
) -> None:
    seeds = ",".join(str(s) for s in default_seeds()[:n_seeds])
    task = navigation(
        regime=REGIMES, seeds=seeds, episodes=1, strategies="nofilter,localverify", verify_radius=radius, agent=agent
    )
    runs = episodes(run(task, tmp_path))
    local = {k: v for k, v in runs.items() if "-localverify" in k}
    raw = {k: v for k, v in runs.items() if "-nofilter" in k}
    assert len(local) == len(raw) == n_seeds * 3
    # raw memory leads the credulous navigator into stale SAFE claims: the property can fail
    assert sum(e["died_on_stale"] for e in raw.values()) > 0
    assert not [k for k, e in local.items() if e["died_on_stale"]]
    for episode in local.values():
        audits = episode["audits"]
        assert audits and audits[0]["step"] == 0
        # at most one audit a step, each of at most (2r+1)^2 entries in batches of 10
        assert len({a["step"] for a in audits}) == len(audits)
        assert all(1 <= a["calls"] <= -(-((2 * radius + 1) ** 2) // 10) for a in audits)
    assert sum(e["outcome"] == "death" for e in local.values()) < sum(e["outcome"] == "death" for e in raw.values())


# --- the study, its dry run and the report ------------------------------------------------


def test_the_dry_run_bounds_localverify_by_a_full_square_each_step() -> None:
    settings = replace(NAVIGATION, strategies=("localverify",), max_steps=12, batch_size=4, verify_radius=1)
    instance = make_instance(4810, "L2")
    _, auditor = sample_calls(settings, instance, "localverify")
    assert auditor.calls == 12 * 3  # ⌈9 / 4⌉ calls a step
    wider = replace(settings, verify_radius=2)
    assert sample_calls(wider, instance, "localverify")[1].calls == 12 * 7  # ⌈25 / 4⌉


def test_a_study_runs_a_plugin_and_the_report_gives_it_a_row(
    plugin: tuple[str, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module, n = plugin
    log_dir = tmp_path / "study"
    argv = ["study", "--model", "spatialstale/credulous", "--seeds", "4810,1734", "--regimes", "L2"]
    argv += ["--no-detection", "--episodes", "1", "--max-steps", "12", "--display", "none"]
    argv += ["--strategies", f"nofilter,localverify,{module}:Copycat", "--log-dir", str(log_dir)]
    assert main([*argv, "--dry-run"]) == 0
    assert f"copycat{n}" in capsys.readouterr().out
    assert main(argv) == 0
    ids = {str(s.id) for info in list_eval_logs(str(log_dir)) for s in read_eval_log(info).samples or []}
    assert {f"L2-{s}-s{seed}" for s in ("nofilter", "localverify", f"copycat{n}") for seed in (4810, 1734)} == ids


@pytest.mark.parametrize("strategies", ["nofilter,localverify", "nofilter,{module}:Copycat"])
def test_the_report_gives_localverify_and_a_plugin_a_row(
    strategies: str, plugin: tuple[str, int], tmp_path: Path
) -> None:
    module, n = plugin
    run(navigation(regime="L2", seeds=SEEDS, episodes=1, strategies=strategies.format(module=module)), tmp_path)
    assert main(["report", str(tmp_path / "logs"), "--out", str(tmp_path / "report")]) == 0
    lines = (tmp_path / "report" / "report.md").read_text().splitlines()
    name = "localverify" if "localverify" in strategies else f"copycat{n}"
    # a row wherever NoFilter has one (Table 3, Table 6, ...)
    assert sum(f"| {name} |" in line for line in lines) >= sum("| nofilter |" in line for line in lines) > 0
