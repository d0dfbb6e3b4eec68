"""App. E in the report: F1 [95 % CI] and calls an audit per grid side n and batch
size B, Fig. E (F1 vs B, a line per n) and the B that is enough at each n; a sweep at
one grid side still renders Table 5 as before, with its n column."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.log import list_eval_logs, read_eval_log
from PIL import Image

from spatialstale.report import read_logs
from spatialstale.report._detection_stats import batch_sweep, enough_batch
from spatialstale.report._navigation_stats import main_grid
from tests.report._markdown import report_of as _report
from tests.report._markdown import rows as _rows
from tests.report._markdown import section as _section


@pytest.mark.slow
def test_report_shows_f1_and_calls_per_n_and_b(growth_study: Path, tmp_path: Path) -> None:
    markdown = _report(growth_study, tmp_path / "out")
    growth = _section(markdown, "### App. E: how B should grow with n")
    rows = _rows(growth, "observer")
    assert [(int(r[1]), int(r[2])) for r in rows] == [(8, b) for b in (1, 5, 10, 20)] + [
        (16, b) for b in (1, 5, 10, 20, 40, 80)
    ]
    for _, n, b, seeds, f1, calls in rows:
        assert seeds == "2"
        assert float(calls) == math.ceil(int(n) ** 2 / int(b))
        # the observer audits perfectly: every seed alike, so no interval (and 2 seeds are too few)
        assert f1.startswith("[1.000 (no CI)](<")
    credulous = _rows(growth, "credulous")
    assert len(credulous) == 10 and all("missing" not in " ".join(r) for r in credulous)
    # the answer: with F1 flat in B, the largest B (fewest calls) matches the best B at each n
    assert "observer, n = 8: B = 20 matched the mean F1 of the best B = 1 (1.000 (no CI))" in growth
    assert "observer, n = 16: B = 80 matched the mean F1" in growth
    assert "with 4.0 calls an audit instead of 256.0" in growth
    assert "![Fig. E" in growth and (tmp_path / "out" / "figE_batch_growth.png").exists()
    with Image.open(tmp_path / "out" / "figE_batch_growth.png") as image:
        width, height = image.size
        assert width > 2 * height  # a panel per model
    table5 = _section(markdown, "### Table 5: batch size vs F1 and calls (L1, text)")
    assert [(int(r[1]), int(r[2])) for r in _rows(table5, "observer")] == [(int(r[1]), int(r[2])) for r in rows]


def test_enough_batch_takes_the_cheapest_b_within_the_best_ci() -> None:
    sweep = pd.DataFrame(
        {
            "model": ["m"] * 4,
            "size": [16] * 4,
            "batch_size": [1, 10, 40, 80],
            "seeds": [5] * 4,
            "f1_mean": [0.80, 0.90, 0.86, 0.60],
            "f1_std": [0.1] * 4,
            "f1_low": [0.7, 0.85, 0.8, 0.5],
            "f1_high": [0.9, 0.95, 0.9, 0.7],
            "calls_per_seed": [256.0, 26.0, 7.0, 4.0],
            "calls_per_audit": [256.0, 26.0, 7.0, 4.0],
        }
    )
    [answer] = enough_batch(sweep).to_dict("records")
    assert (answer["best_b"], answer["b"], answer["calls"]) == (10, 40, 7.0)
    one_seed = sweep.assign(f1_low=math.nan, f1_high=math.nan)
    assert enough_batch(one_seed).b.tolist() == [10]


@pytest.mark.slow
def test_a_single_size_sweep_renders_as_before_with_its_n(growth_study: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for info in list_eval_logs(str(growth_study)):
        path = Path(info.name.removeprefix("file://"))
        if read_eval_log(str(path), header_only=True).eval.task_args.get("size") == 8:
            shutil.copy(path, logs / path.name)
    det = read_logs(logs).detection
    assert set(det["size"]) == {8} and len(batch_sweep(det)) == 8
    markdown = _report(logs, tmp_path / "out")
    table5 = _section(markdown, "### Table 5: batch size vs F1 and calls (L1, text)")
    assert "| model | n | B | seeds | F1 mean ± std | calls a seed | F1 - F1(B=10) |" in table5
    rows = _rows(table5, "observer")
    assert [(r[1], r[2], r[3], r[5], r[6]) for r in rows] == [
        ("8", "1", "2", "64.0", "+0.000"),
        ("8", "5", "2", "13.0", "+0.000"),
        ("8", "10", "2", "7.0", "+0.000"),
        ("8", "20", "2", "4.0", "+0.000"),
    ]
    growth = _section(markdown, "### App. E: how B should grow with n")
    assert len(_rows(growth, "observer")) == 4 and "n = 16" not in growth


def test_the_papers_tables_read_one_grid_side_per_model() -> None:
    nav = pd.DataFrame(
        {"model": ["a", "a", "b", "b", "c"], "size": [16, 8, 32, 16, 16], "success": [0.0, 1.0, 0.0, 1.0, 1.0]}
    )
    kept = main_grid(nav)
    assert kept[["model", "size"]].values.tolist() == [["a", 8], ["b", 16], ["c", 16]]
    assert main_grid(nav.drop(columns="size")).equals(nav.drop(columns="size"))
