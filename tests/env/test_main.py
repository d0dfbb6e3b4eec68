"""``python -m spatialstale.env``: stats beside the paper's, verify, and bad input."""

from __future__ import annotations

import pytest

from spatialstale.env import default_seeds, make_instance
from spatialstale.env.__main__ import main
from spatialstale.env._data import PAPER_STALE_RATIOS, stale_ratio_stats

from ._support import run_python


def test_stats_command() -> None:
    result = run_python("", "-m", "spatialstale.env", "stats")
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines() if line[:2] in ("L1", "L2", "L3")}
    assert sorted(rows) == ["L1", "L2", "L3"]
    for regime, row in rows.items():
        stats = stale_ratio_stats(regime, default_seeds())
        assert f"{stats.mean:.3f} ± {stats.std:.3f}" in row
        mean, std, low, high = PAPER_STALE_RATIOS[regime]
        assert f"{mean:.3f} ± {std:.3f}" in row and f"[{low:.3f}, {high:.3f}]" in row


def test_l1_stale_ratio_is_five_to_seven_cells() -> None:
    # The paper's range [0.078, 0.109] is 5/64 and 7/64 rounded to three places.
    stats = stale_ratio_stats("L1", default_seeds())
    assert stats.low >= 5 / 64 and stats.high <= 7 / 64
    assert round(stats.low, 3) >= 0.078 and round(stats.high, 3) <= 0.109
    for seed in default_seeds():
        instance = make_instance(seed, "L1")
        assert instance.stale_ratio(instance.initial_grid) * 64 in (5, 6, 7)


@pytest.mark.parametrize("regime", ["L2", "L3"])
def test_l2_l3_means_near_the_papers(regime: str) -> None:
    stats = stale_ratio_stats(regime, default_seeds())
    assert abs(stats.mean - PAPER_STALE_RATIOS[regime][0]) <= 0.02
    assert stats.n == 50


def test_verify_command() -> None:
    result = run_python("", "-m", "spatialstale.env", "verify")
    assert result.returncode == 0, result.stderr
    assert "matches" in result.stdout


def test_bad_size_is_a_one_line_error() -> None:
    result = run_python("", "-m", "spatialstale.env", "stats", "--size", "2")
    assert result.returncode != 0
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "size must be an integer of at least 4; got 2" in lines[0]


@pytest.mark.parametrize(
    "argv", [["stats", "--size", "3"], ["stats", "--n-seeds", "0"], ["stats", "--master-seed", "-5"]]
)
def test_bad_values_return_two(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1 and "error:" in captured.err


def test_stats_at_size_16(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", "--size", "16", "--n-seeds", "5"]) == 0
    out = capsys.readouterr().out
    assert "16x16" in out and sum(line[:2] in ("L1", "L2", "L3") for line in out.splitlines()) == 3
