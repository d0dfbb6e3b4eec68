"""The report's *What safety costs* section: audit calls per episode against the death
rate, from navigation logs that record the cost and from logs from before it did."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log, write_eval_log

from spatialstale.evals.navigation import navigation
from spatialstale.report import read_logs
from spatialstale.report._figures import STRATEGY_MARKERS, strategy_markers
from spatialstale.study._cli import main
from tests.conftest import run_eval

# one worker runs the module, so its module fixtures' runs are made once
pytestmark = pytest.mark.xdist_group("cost")

COST_VALUES = ("audit_model_calls", "audit_tokens", "navigation_calls", "navigation_tokens")


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every strategy on L2 and L3, two seeds, one episode: credulous navigator, observer auditor."""
    folder = tmp_path_factory.mktemp("cost-logs")
    run_eval(
        navigation(regime="L2,L3", seeds=[4810, 1734], episodes=1),
        "spatialstale/credulous",
        folder,
        model_roles={"auditor": "spatialstale/observer"},
    )
    return folder


def _report(log_dir: Path, out: Path) -> str:
    assert main(["report", str(log_dir), "--out", str(out)]) == 0
    return (out / "report.md").read_text()


def _section(markdown: str) -> str:
    assert "## What safety costs" in markdown
    return markdown.split("## What safety costs")[1].split("\n## ")[0]


def _rows(section: str, regime: str, strategy: str) -> list[list[str]]:
    rows = [[c.strip() for c in line.strip(" |").split(" | ")] for line in section.splitlines() if line.startswith("|")]
    return [r for r in rows if len(r) == 8 and r[2] == regime and r[3] == strategy]


def test_the_report_tables_and_draws_audit_calls_against_death(logs: Path, tmp_path: Path) -> None:
    markdown = _report(logs, tmp_path / "out")
    section = _section(markdown)
    assert "not recorded" not in section and "nan" not in section.lower()
    nav = read_logs(str(logs)).navigation
    for regime in ("L2", "L3"):
        omcd = nav[(nav.regime == regime) & (nav.strategy == "omcd")]
        [row] = _rows(section, regime, "OMCD")
        # two seeds are too few for a bootstrap interval, and the cell says so
        assert row[5] == f"{statistics.fmean(omcd.audit_calls):.1f} (no CI)"
        for strategy, calls in (("NoMemory", 0), ("NoFilter", 0), ("SelfVerify", 1), ("Oracle", 0)):
            [row] = _rows(section, regime, strategy)
            assert row[5].startswith(f"{calls:.1f} "), row
    figure = tmp_path / "out" / "fig12_safety_cost.png"
    assert figure.stat().st_size > 10_000
    assert "fig12_safety_cost.png" in section and "down and to the left" in section


def test_a_log_from_before_the_cost_was_recorded_reads_not_recorded(logs: Path, tmp_path: Path) -> None:
    old = tmp_path / "old"
    old.mkdir()
    [info] = list_eval_logs(str(logs))
    log = read_eval_log(info)
    log.eval.task_version = 3
    for sample in log.samples or []:
        for score in (sample.scores or {}).values():
            assert isinstance(score.value, dict) and score.metadata is not None
            for key in COST_VALUES:
                del score.value[key]
            del score.metadata["cost"]
    write_eval_log(log, str(old / Path(info.name).name))
    assert read_logs(str(old)).navigation.audit_calls.isna().all()
    markdown = _report(old, tmp_path / "out")
    section = _section(markdown)
    assert "nan" not in section.lower()
    assert "not recorded" in section and "before navigation task version 4" in section
    assert "Fig. 12: not drawn" in section
    [row] = _rows(section, "L2", "OMCD")
    assert row[5] == row[6] == "not recorded" and row[7] != "missing"
    assert not (tmp_path / "out" / "fig12_safety_cost.png").exists()


def test_every_strategy_gets_its_own_marker() -> None:
    markers = strategy_markers([*STRATEGY_MARKERS, "localverify", "mine"])
    assert len(set(markers.values())) == len(markers)
    assert all(markers[s] == m for s, m in STRATEGY_MARKERS.items())
