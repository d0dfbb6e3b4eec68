"""Change regimes as plug-ins (``module:Class`` and the ``spatialstale.regimes`` entry
points) through the real tasks, the command line and the study, on the reference agents,
into tmp log dirs. docs/regimes.md's own example is run by ``tests/test_regimes_doc.py``."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log, resolve_sample_attachments
from inspect_ai.util import Store

from spatialstale.env import default_seeds, make_instance
from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.evals.perception import perception
from spatialstale.protocol import DetectionRecord, TaskParameterError
from spatialstale.study._cli import main
from tests.conftest import metrics, run_eval, stored_episode

ROOT = Path(__file__).resolve().parents[2]
INSPECT = [sys.executable, "-m", "inspect_ai"]
SEEDS = ",".join(str(s) for s in default_seeds()[:3])
_modules = itertools.count()

PLUGIN = '''
from dataclasses import dataclass

from spatialstale.env import Cell, Change, ChangeRegime, Drawn, Event, apply_changes, flip, is_solvable


def band(g0, rng):
    """Some of the ice of a band of two rows thaws; a draw that blocks every path is redrawn."""
    n = len(g0)
    while True:
        top = rng.below(n - 1)
        ice = [(r, c) for r in (top, top + 1) for c in range(n) if g0[r][c] == Cell.FROZEN]
        changes = tuple(flip(g0, p) for p in ice if rng.chance(0.5))
        if changes and is_solvable(apply_changes(g0, changes)):
            return changes


class Band(ChangeRegime):
    name = "Band{n}"
    report_title = "Spring in a band ({n})"
    report_text = "Ice thaws in one band of two rows."

    def draw(self, g0, rng):
        return Drawn(changes=band(g0, rng))


class Late(ChangeRegime):
    """The same thaw, as one event after action 3, recorded as its row span."""

    name = "Late{n}"

    def draw(self, g0, rng):
        changes = band(g0, rng)
        rows = sorted({{c.row for c in changes}})
        return Drawn(schedule=(Event(3, changes),), record={{"thawed_rows": rows}})


@dataclass(frozen=True)
class Sign:
    count: int

    @property
    def note(self):
        return f"A sign on the shore: {{self.count}} cells of one band of rows have thawed."

    def cover(self, grid):
        return grid

    def legend(self, grid):
        return None


class Signposted(Band):
    name = "Signposted{n}"

    def overlay(self, drawn):
        return Sign(len(drawn.changes))


class Raises(ChangeRegime):
    name = "Raises{n}"

    def draw(self, g0, rng):
        raise ZeroDivisionError("no spring")


class Blocks(ChangeRegime):
    """Thaws every cell of ice: no path is left."""

    name = "Blocks{n}"

    def draw(self, g0, rng):
        return Drawn(changes=tuple(flip(g0, (r, c)) for r, row in enumerate(g0) for c, x in enumerate(row) if x == "F"))


class AtStart(ChangeRegime):
    name = "AtStart{n}"

    def draw(self, g0, rng):
        return Drawn(changes=(Change(0, 0, Cell.FROZEN, Cell.HOLE),))


class NotARegime:
    name = "NotARegime{n}"


class Clash(Band):
    name = "MA"
'''


def write_plugin(root: Path) -> tuple[str, int]:
    """A plug-in module in ``root`` under a fresh name (imported modules are cached)."""
    n = next(_modules)
    module = f"ss_regimes_{os.getpid()}_{n}"
    (root / f"{module}.py").write_text(PLUGIN.format(n=n))
    return module, n


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, int]:
    root = tmp_path / "plugins"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    return write_plugin(root)


def model_texts(log: EvalLog) -> list[str]:
    """The text of every model call's input, over every sample."""
    out = []
    for sample in log.samples or []:
        events = resolve_sample_attachments(sample).events
        out += ["\n".join(m.text for m in e.input) for e in events if isinstance(e, ModelEvent)]
    return out


def test_a_plugin_regime_runs_detection_and_navigation_like_a_builtin(plugin: tuple[str, int], tmp_path: Path) -> None:
    module, n = plugin
    name = f"Band{n}"
    log = run_eval(detection(regime=f"L2,{module}:Band", seeds=SEEDS), "spatialstale/observer", tmp_path / "det")
    ids = [str(s.id) for s in log.samples or []]
    assert sorted(ids) == sorted(f"{r}-s{s}" for r in ("L2", name) for s in SEEDS.split(","))
    assert log.eval.metadata is not None and log.eval.metadata["regimes"] == ["L2", name]
    assert log.eval.metadata["regime_sources"] == {name: f"{module}:Band"}  # the code that drew them
    assert f"L2,{name}" in log.eval.tags
    for sample in log.samples or []:
        if sample.metadata["regime"] != name:
            continue
        instance = make_instance(sample.metadata["seed"], name)
        assert sample.metadata["changes"] == [c.to_dict() for c in instance.changes]
        assert sample.metadata["n_stale"] == len(instance.changes) > 0
        assert "thawed_rows" not in sample.metadata  # Band records nothing
    # the observer reads the grid: every stale entry of every seed, in the plug-in's worlds too
    assert metrics(log)[f"f1_mean_{name}"] == metrics(log)["f1_mean_L2"] == 1.0
    nav = run_eval(
        navigation(regime=f"{module}:Band", seeds=SEEDS, episodes=1, strategies="nofilter,oracle", max_steps=30),
        "spatialstale/credulous",
        tmp_path / "nav",
    )
    episodes = {str(s.id): stored_episode(s) for s in nav.samples or []}
    assert set(episodes) == {f"{name}-{k}-s{s}" for k in ("nofilter", "oracle") for s in SEEDS.split(",")}
    # Oracle drops the stale entries: the credulous navigator never dies on one
    assert not any(e.died_on_stale for k, e in episodes.items() if "-oracle-" in k)


def test_a_plugins_schedule_record_and_overlay_reach_the_tasks(plugin: tuple[str, int], tmp_path: Path) -> None:
    module, n = plugin
    late = run_eval(detection(regime=f"{module}:Late", seeds=SEEDS), "spatialstale/observer", tmp_path / "late")
    for sample in late.samples or []:
        instance = make_instance(sample.metadata["seed"], f"Late{n}")
        [window] = DetectionRecord(store=Store(sample.store)).windows or []
        # one window, after the event: the start is g0, where nothing is stale
        assert window.audit.step == 3 and tuple(window.grid) == tuple(instance.final_grid)
        assert sample.metadata["thawed_rows"] == instance.record["thawed_rows"]
        assert json.loads(instance.to_json())["thawed_rows"] == instance.record["thawed_rows"]
    nav = run_eval(
        navigation(regime=f"{module}:Late", seeds=SEEDS, episodes=1, strategies="omcd", max_steps=8),
        "spatialstale/observer",
        tmp_path / "late-nav",
    )
    for sample in nav.samples or []:
        episode = stored_episode(sample)
        if episode.steps > 3:  # the event happened: OMCD audited again after it
            assert [a.step for a in episode.audits] == [0, 3]
    signed = run_eval(
        detection(regime=f"{module}:Signposted", seeds=SEEDS, modality="both"), "spatialstale/observer", tmp_path / "s"
    )
    texts = model_texts(signed)
    assert texts and all("A sign on the shore:" in t and "cells of one band of rows have thawed." in t for t in texts)
    assert metrics(signed)["f1_mean"] == 1.0
    # the perception probe shows the grid as it is, overlay or not
    probe = run_eval(perception(regime=f"{module}:Signposted", seeds="4810"), "spatialstale/observer", tmp_path / "p")
    assert not any("A sign on the shore" in t for t in model_texts(probe))


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            "ss_no_such_regimes:Band",
            "regime: plug-in 'ss_no_such_regimes:Band' cannot be imported: ModuleNotFoundError",
        ),
        ("{module}:Missing", "regime: plug-in '{module}:Missing' not found: module '{module}' has no 'Missing'"),
        ("{module}:band", "regime: plug-in '{module}:band' is not a class; got function"),
        ("{module}:NotARegime", "is not a change regime: subclass spatialstale.env.ChangeRegime"),
        ("{module}:Clash", "is named 'MA', a built-in regime's name; give it another name"),
        ("{module}:Raises", "regime Raises{n}: its draw raised ZeroDivisionError: no spring (seed 625, n=8)"),
        ("{module}:Blocks", "regime Blocks{n}: its draw leaves no path from S to G after its pre-episode changes"),
        ("{module}:AtStart", "regime AtStart{n}: its draw changes (0,0), which is S or G: they never change"),
        ("Spring", "regime must be one of L1, L2, L3, MA (or none), an installed plug-in's name or module:Class"),
    ],
)
def test_a_bad_plugin_fails_with_one_line_before_any_model_call(
    plugin: tuple[str, int], entry: str, message: str
) -> None:
    module, n = plugin
    for task in (detection, navigation, perception):
        with pytest.raises(TaskParameterError) as error:
            task(regime="L2," + entry.format(module=module), seeds=SEEDS)
        assert message.format(module=module, n=n) in str(error.value)
        assert "\n" not in str(error.value)


@pytest.mark.slow  # `inspect eval` subprocesses; the plug-in runs in process in the fast tier
def test_a_plugin_from_the_command_line_and_a_bad_one_fails_there(plugin: tuple[str, int], tmp_path: Path) -> None:
    module, n = plugin
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "plugins"), os.environ.get("PYTHONPATH", "")])}

    def inspect_eval(regime: str, log_dir: Path) -> subprocess.CompletedProcess[str]:
        args = ["eval", "spatialstale/detection", "--model", "spatialstale/observer", "--display", "plain"]
        args += ["-T", f"regime={regime}", "-T", "seeds=4810", "--log-dir", str(log_dir)]
        return subprocess.run([*INSPECT, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)

    good = inspect_eval(f"{module}:Band", tmp_path / "good")
    assert good.returncode == 0, good.stderr
    [info] = list_eval_logs(str(tmp_path / "good"))
    assert [str(s.id) for s in read_eval_log(info).samples or []] == [f"Band{n}-s4810"]
    bad = inspect_eval(f"{module}:Blocks", tmp_path / "bad")
    output = " ".join((bad.stdout + bad.stderr).split())
    assert bad.returncode != 0
    assert f"regime Blocks{n}: its draw leaves no path from S to G after its pre-episode changes (seed 4810" in output
    assert "Traceback" not in output
    assert not list((tmp_path / "bad").glob("*.eval"))


def test_an_entry_point_plugin_is_found_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "site"
    root.mkdir()
    module, n = write_plugin(root)
    dist = root / f"ss_regimes_dist_{n}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: ss-regimes-dist-{n}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[spatialstale.regimes]\nBand{n} = {module}:Band\n")
    monkeypatch.syspath_prepend(str(root))
    task = detection(regime=f"band{n}", seeds="4810")  # an entry point's name, any case
    assert [s.id for s in task.dataset] == [f"Band{n}-s4810"]
    (dist / "entry_points.txt").write_text(f"[spatialstale.regimes]\nOther{n} = {module}:Late\n")
    with pytest.raises(TaskParameterError, match=f"declared as 'Other{n}' but its class is named 'Late{n}'"):
        detection(regime=f"Other{n}")
    with pytest.raises(TaskParameterError, match=f"installed: Other{n}"):
        detection(regime="Spring")


def test_a_study_takes_a_plugin_regime_and_refuses_a_bad_one(
    plugin: tuple[str, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module, n = plugin
    base = ["study", "--model", "spatialstale/credulous", "--seeds", "4810", "--modalities", "text"]
    base += ["--strategies", "nofilter", "--episodes", "1", "--max-steps", "8", "--display", "none"]
    assert main([*base, "--regimes", f"L2,{module}:Band", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"detection Band{n} text B=10" in out and f"navigation Band{n} text nofilter" in out
    assert main([*base, "--regimes", f"L2,{module}:Raises", "--log-dir", str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err
        == f"spatialstale study: error: regime Raises{n}: its draw raised ZeroDivisionError: no spring (seed 4810, n=8)"
    )
    assert not (tmp_path / "bad").exists() or not list((tmp_path / "bad").glob("*.eval"))
    assert main([*base, "--regimes", f"{module}:Band", "--log-dir", str(tmp_path / "study")]) == 0
    ids = {str(s.id) for info in list_eval_logs(str(tmp_path / "study")) for s in read_eval_log(info).samples or []}
    assert ids == {f"Band{n}-s4810", f"Band{n}-nofilter-s4810"}
    assert main(["report", str(tmp_path / "study"), "--out", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "report.md").read_text()
    assert f"| L1 SR / Death | L2 SR / Death | L3 SR / Death | Band{n} SR / Death |" in report
    assert f"| Band{n} | 1 | " in report  # its stale-ratio row, beside the paper's
    assert "not in the paper" in report
    # its own part, as it declares it (report_title), beside the paper's regimes
    part = report.split(f"### Spring in a band ({n})\n\nIce thaws in one band of two rows.\n")[1]
    assert f"| model | modality | strategy | seeds | success Band{n} | death Band{n} |" in part
    assert "| regime | seeds | stale ratio mean [95 % CI] |" in part and f"| Band{n} | 1 |" in part
