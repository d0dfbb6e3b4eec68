"""Perception beside detection and navigation, read from a small real run of the
reference agents: the observer reads every grid, the colour-blind agent misses every
hole in the image, and that accounts for all of its vision F1 gap."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai import eval

from spatialstale.env import make_instance
from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.evals.perception import perception
from spatialstale.report import LogError, read_logs
from spatialstale.report._perception import (
    GAP_COLUMNS,
    TABLE_COLUMNS,
    fig_perception_f1,
    perception_gap,
    probe_reading,
    probe_summary,
    probe_table,
)
from spatialstale.scorers import implied_detection
from tests.conftest import Shared

# one worker runs the module, so its module fixtures' runs are made once
pytestmark = pytest.mark.xdist_group("perception")

SEEDS = [4810, 1734, 625]
AGENTS = ["spatialstale/observer", "spatialstale/colourblind"]


@pytest.fixture(scope="module")
def log_dir(shared: Shared) -> Path:
    def make(path: Path) -> None:
        tasks = [
            task
            for modality in ("text", "vision")
            for task in (
                perception(regime="L2", seeds=SEEDS, modality=modality),
                detection(regime="L2", seeds=SEEDS, modality=modality),
                navigation(regime="L2", seeds=SEEDS, modality=modality, strategies="omcd", episodes=1, max_steps=20),
            )
        ]
        logs = eval(tasks, model=AGENTS, log_dir=str(path), display="none", max_tasks=2)
        assert all(log.status == "success" for log in logs)

    path = shared("probe", make)
    return path


@pytest.fixture(scope="module")
def table(log_dir: Path) -> pd.DataFrame:
    results = read_logs(log_dir)
    assert results.problems == []
    return probe_table(results.perception, results.detection, results.navigation)


def test_perception_logs_read_one_row_per_model_modality_and_seed(log_dir: Path) -> None:
    frame = read_logs(log_dir).perception
    assert len(frame) == len(AGENTS) * 2 * len(SEEDS)
    observer = frame[frame.model == "spatialstale/observer"]
    assert (observer.accuracy == 1.0).all() and (observer.implied_f1 == 1.0).all()
    blind = frame[(frame.model == "spatialstale/colourblind") & (frame.modality == "vision")]
    assert (blind.hole_recall == 0.0).all() and (blind.ice_recall == 1.0).all()
    assert (blind.hole_as_ice == blind.holes).all()


def test_table_sets_perception_beside_detection_and_omcd_seed_by_seed(table: pd.DataFrame) -> None:
    assert list(table.columns) == TABLE_COLUMNS
    assert len(table) == len(AGENTS) * 2 * len(SEEDS)
    assert table.detection_f1.notna().all() and table.omcd_success.notna().all()
    observer = table[table.model == "spatialstale/observer"]
    assert (observer.detection_f1 == 1.0).all() and (observer.accuracy == 1.0).all()
    blind = table[table.model == "spatialstale/colourblind"].set_index(["modality", "seed"])
    for seed in SEEDS:
        assert blind.loc[("text", seed), "detection_f1"] == 1.0
        # it reasons perfectly on what it sees, so its F1 is the one its readings imply
        assert blind.loc[("vision", seed), "detection_f1"] == pytest.approx(blind.loc[("vision", seed), "implied_f1"])
        assert blind.loc[("vision", seed), "detection_f1"] < 1.0


def test_summary_averages_each_model_regime_and_modality(table: pd.DataFrame) -> None:
    summary = probe_summary(table)
    assert len(summary) == len(AGENTS) * 2 and (summary.seeds == len(SEEDS)).all()
    row = summary[(summary.model == "spatialstale/colourblind") & (summary.modality == "vision")].iloc[0]
    assert row.hole_recall == 0.0 and row.accuracy < 1.0


def test_the_colourblind_gap_is_all_perception_and_the_observer_has_none(table: pd.DataFrame) -> None:
    gaps = perception_gap(table).set_index("model")
    assert list(gaps.reset_index().columns) == GAP_COLUMNS
    blind = gaps.loc["spatialstale/colourblind"]
    assert blind.gap > 0.1 and blind.explained == pytest.approx(1.0)
    assert math.isnan(gaps.loc["spatialstale/observer"].explained)
    reading = probe_reading(perception_gap(table))
    assert "spatialstale/colourblind, L2 (3 seeds)" in reading and "perception explains all of the" in reading
    assert "spatialstale/observer, L2 (3 seeds)" in reading and "No gap to explain" in reading


def test_figure_has_a_point_per_seed(table: pd.DataFrame, tmp_path: Path) -> None:
    path = fig_perception_f1(table, tmp_path / "perception_f1.png")
    assert path is not None and path.stat().st_size > 10_000
    assert fig_perception_f1(table.iloc[0:0], tmp_path / "none.png") is None


def test_implied_detection_of_perfect_and_blind_readings() -> None:
    instance = make_instance(4810, "L2")
    grid = instance.initial_grid
    truth = instance.stale_ids(grid)
    perfect = [{"grid": list(grid), "readings": {f"({r},{c})": grid[r][c] for r in range(8) for c in range(8)}}]
    assert implied_detection(perfect, instance.g0).f1 == 1.0
    blind = [
        {
            "grid": list(grid),
            "readings": {f"({r},{c})": grid[r][c].replace("H", "F") for r in range(8) for c in range(8)},
        }
    ]
    c = implied_detection(blind, instance.g0)
    # seeing no hole: every DANGER claim looks stale, every thaw is missed
    dangers = sum(row.count("H") for row in instance.g0)
    thaws = sum(1 for m in truth if instance.g0[int(m[4:]) // 8][int(m[4:]) % 8] != "H")
    assert (c.tp + c.fp, c.fn) == (dangers, thaws)
    nothing = [{"grid": list(grid), "readings": {}}]
    assert implied_detection(nothing, instance.g0).tp + implied_detection(nothing, instance.g0).fp == 0


def test_a_folder_without_logs_is_an_error_and_other_logs_are_passed_over(tmp_path: Path, log_dir: Path) -> None:
    with pytest.raises(LogError, match="no Inspect logs"):
        read_logs(tmp_path)
    frame = read_logs(str(log_dir)).perception
    assert set(frame.modality) == {"text", "vision"}
    assert json.dumps(sorted(frame.seed.unique().tolist())) == json.dumps(sorted(SEEDS))


def test_the_report_sets_perception_beside_detection(log_dir: Path, tmp_path: Path) -> None:
    from spatialstale.report._report import write_report

    results = read_logs(log_dir)
    assert set(results.logs.kind) == {"perception", "detection", "navigation"}
    assert len(results.perception) == len(AGENTS) * 2 * len(SEEDS)
    write_report(results, tmp_path)
    md = (tmp_path / "report.md").read_text()
    section = md[md.index("## Perception probe") : md.index("## Method")]
    blind = [line for line in section.splitlines() if line.startswith("| colourblind | L2 | vision")]
    assert len(blind) == 1
    cells = [c.strip() for c in blind[0].strip("|").split("|")]
    assert cells[6] == "0.000" and cells[7] == "1.000"  # hole recall, ice recall
    assert "perception explains all" in section
    assert (tmp_path / "fig10_perception.png").is_file()
    assert "data:image/png;base64," in (tmp_path / "report.html").read_text()


def test_a_folder_of_perception_logs_alone_gives_a_report(tmp_path: Path) -> None:
    from spatialstale.report._report import write_report

    eval(perception(regime="L2", seeds=SEEDS[:2]), model=AGENTS, log_dir=str(tmp_path / "logs"), display="none")
    results = read_logs(tmp_path / "logs")
    assert results.detection.empty and results.navigation.empty and len(results.perception) == 4
    write_report(results, tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    assert "## Perception probe" in md and md.count("| missing |") >= 1
