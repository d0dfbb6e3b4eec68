"""``inspect eval`` from the command line: registered names, checkout paths, bad -T values."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

ROOT = Path(__file__).resolve().parents[2]
INSPECT = [sys.executable, "-m", "inspect_ai"]


def inspect_eval(*args: str, log_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*INSPECT, "eval", *args, "--log-dir", str(log_dir), "--display", "plain"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_registered_task_runs_by_name(tmp_path: Path) -> None:
    result = inspect_eval(
        "spatialstale/detection",
        "--model",
        "spatialstale/observer",
        "-T",
        "regime=L1",
        "-T",
        "seeds=4810",
        log_dir=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    [info] = list_eval_logs(str(tmp_path))
    log = read_eval_log(info)
    assert log.status == "success"
    assert log.eval.task == "spatialstale/detection"
    assert [s.id for s in log.samples or []] == ["L1-s4810"]


def test_task_file_runs_from_a_checkout(tmp_path: Path) -> None:
    result = inspect_eval(
        "evals/navigation.py",
        "--model",
        "spatialstale/observer",
        "-T",
        "strategies=[omcd, nofilter]",
        "-T",
        "seeds=4810",
        "-T",
        "max_steps=3",
        "--epochs",
        "1",
        log_dir=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    [info] = list_eval_logs(str(tmp_path))
    log = read_eval_log(info)
    assert log.status == "success"
    assert sorted(s.id for s in log.samples or []) == ["L2-nofilter-s4810", "L2-omcd-s4810"]


@pytest.mark.parametrize(
    ("task", "arg", "message"),
    [
        ("spatialstale/detection", "regime=L4", "regime must be one of L1, L2, L3"),
        ("spatialstale/detection", "modality=smell", "modality must be one of text, vision, both"),
        ("spatialstale/detection", "batch_size=0", "batch_size must be an integer of at least 1"),
        ("spatialstale/navigation", "strategies=teleport", "strategies must be one of nomemory, nofilter"),
        ("spatialstale/navigation", "n_seeds=0", "n_seeds must be an integer of at least 1"),
    ],
)
def test_bad_task_argument_is_one_clear_line_before_any_model_call(
    task: str, arg: str, message: str, tmp_path: Path
) -> None:
    result = inspect_eval(task, "--model", "spatialstale/observer", "-T", arg, log_dir=tmp_path)
    output = " ".join((result.stdout + result.stderr).split())
    assert result.returncode != 0
    assert message in output
    assert "Traceback" not in output
    assert not list(tmp_path.glob("*.eval"))
