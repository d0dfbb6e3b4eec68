"""``benchmarks/bench_study_memory.py`` runs end to end on a small study: both variants,
the child's peak memory, the dry run's expected peak. Its figures are read, not
asserted; what a run cannot change (the table's shape, its options) is checked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "benchmarks/bench_study_memory.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_small_study_prints_both_variants_figures() -> None:
    small = "--regimes L2 --modalities text --strategies omcd --episodes 1"
    result = _bench("--seeds", "1", "--models", "1", "--repeat", "1", "--a", small, "--b", f"{small} --max-tasks 1")
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [line for line in result.stdout.splitlines() if line.startswith("| 1 | 1 |")]
    [cells] = [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]
    a_peak, expected, b_peak = (float(cells[k].replace(",", "")) for k in (2, 3, 4))
    # a Python process with Inspect loaded holds more than 50 MB; the dry run states its peak
    assert a_peak > 50 and b_peak > 50 and expected > 50
    assert "B: this checkout --regimes L2" in result.stdout and "--max-tasks 1" in result.stdout


def test_variant_b_must_differ() -> None:
    result = _bench("--seeds", "1")
    assert result.returncode == 2
    assert "give variant B: --b OPTIONS, --b-checkout DIR and/or --b-env NAME=VALUE" in result.stderr
