"""Every run the report reads is accounted for: a sample no table shows is listed in the
appendix's *Runs no table shows* with its settings and why, and a report whose every
sample is in some table has no such list."""

from __future__ import annotations

from pathlib import Path

import pytest

from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.report import read_logs
from spatialstale.study import Study
from tests.conftest import SEEDS, run_eval
from tests.report._markdown import report_of, section

# one worker runs the module, so its module fixtures' runs are made once
pytestmark = pytest.mark.xdist_group("accounted")

OBSERVER = "spatialstale/observer"
HEADING = "### Runs no table shows"
SEED_ARG = ",".join(map(str, SEEDS))


def _listed(markdown: str) -> list[list[str]]:
    return [
        [c.strip() for c in line.strip(" |").split(" | ")]
        for line in section(markdown, HEADING).splitlines()
        if line.startswith(("| detection ", "| navigation ", "| perception "))
    ]


def test_the_paper_matrix_is_all_in_tables(paper_study: Study, tmp_path: Path) -> None:
    markdown = report_of(Path(paper_study.log_dir), tmp_path / "out")
    assert HEADING not in markdown


@pytest.mark.slow
def test_the_batch_sweep_at_two_sides_is_all_in_tables(growth_study: Path, tmp_path: Path) -> None:
    assert HEADING not in report_of(growth_study, tmp_path / "out")


@pytest.fixture(scope="module")
def beside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Runs the report's tables do not hold, beside runs they do: two App. K settings at
    once (distractors with edits) beside the paper's L1 detection, and navigation on a
    16x16 grid beside the same at n = 8 (the navigation tables read a model's rows at one
    side, n = 8 where it ran)."""
    folder = tmp_path_factory.mktemp("accounted")
    run_eval(detection(regime="L1", seeds=SEED_ARG), OBSERVER, folder)
    run_eval(detection(regime="L1", seeds=SEED_ARG, distractors=8, edits=True), OBSERVER, folder)
    for size in (8, 16):
        run_eval(navigation(regime="L1", seeds=SEED_ARG, strategies="nomemory", size=size), OBSERVER, folder, epochs=1)
    return folder


def test_runs_no_table_shows_are_listed_with_why(beside: Path, tmp_path: Path) -> None:
    markdown = report_of(beside, tmp_path / "out")
    listed = {row[0]: row for row in _listed(markdown)}
    assert set(listed) == {"detection", "navigation"}
    combined = listed["detection"]
    assert combined[2:5] == ["L1", "text", "distractors 8; edits true"]
    assert combined[5] == "2 / 2" and combined[6] == "F1 1.000 over 2 seeds"
    assert combined[7].startswith("App. K's tables vary one of its settings at a time")
    grid = listed["navigation"]
    assert grid[4] == "size 16" and grid[5] == "2 / 2"
    assert "no table shows size 16" in grid[7]
    # the paper's run is in the tables and not listed; every sample read is one or the other
    results = read_logs(beside)
    assert len(results.detection) == 4 and len(results.navigation) == 4
