"""``benchmarks/bench_harness.py --quick`` runs end to end: its server, the tasks, both
bare-Inspect baselines and every table. Its times are figures to read, not asserted;
what a run cannot change (calls, shared prefixes, the table's shape) is checked."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the benchmark script with ``args`` from the checkout."""
    return subprocess.run(
        [sys.executable, "benchmarks/bench_harness.py", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def _rows(output: str, name: str) -> list[list[str]]:
    """The cells of every table row named ``name``, in the order printed."""
    lines = [line for line in output.splitlines() if line.startswith(f"| {name} |")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


def test_quick_run_prints_every_figure() -> None:
    result = _bench("--quick", "--sections", "cost,trips", "--cases", "detection text")
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    cost, prefix = _rows(out, "detection text n=8")
    # 4 seeds of an 8x8 grid at B=10: 7 audit calls each
    assert cost[1:3] == ["4", "28"]
    events, bare_events = cost[3].rstrip(")").split(" (")
    assert float(events) > float(bare_events) > 0
    for ratio in (cost[6], cost[8]):
        assert ratio.endswith("x") and math.isfinite(float(ratio[:-1])) and float(ratio[:-1]) > 0
    # the observation comes before the batch, so consecutive audits share most of a prompt
    assert float(prefix[1]) >= 0.70 and prefix[2:] == ["-", "-"]
    assert "round trips" in out


def test_bad_section_is_a_one_line_error() -> None:
    result = _bench("--sections", "speed")
    assert result.returncode == 2
    assert "--sections must name any of cost, efficiency, trips, agents; got speed" in result.stderr


def test_server_answers_vision_as_the_observer_agent(tmp_path: Path) -> None:
    """The server reads each image it is sent: a vision navigation run against it makes
    the calls the ``observer`` provider makes on the same samples. (At the full size,
    where the server's caches turn over and a stale reading would change an episode.)"""
    from inspect_ai import eval as inspect_eval

    from spatialstale.evals.navigation import navigation

    result = _bench("--sections", "cost", "--cases", "navigation vision")
    assert result.returncode == 0, result.stderr[-2000:]
    [cost, _] = _rows(result.stdout, "navigation vision n=8")
    task = navigation(
        regime="L3", modality="vision", strategies="nofilter,selfverify,omcd", n_seeds=8, episodes=1, max_steps=50
    )
    [log] = inspect_eval(task, model="spatialstale/observer", log_dir=str(tmp_path), display="none")
    assert log.samples is not None
    calls = sum(len([e for e in sample.events if e.event == "model"]) for sample in log.samples)
    assert cost[1:3] == [str(len(log.samples)), str(calls)]
