"""How much of a study runs at once: two tasks a model unless its tasks are small, the
samples that can then be in flight, the peak the dry run states and the options that
bound it. (The memory itself is measured by ``benchmarks/bench_study_memory.py``, not
asserted here.)"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from spatialstale.study import Study, run_study, study_seeds, study_tasks
from spatialstale.study._cli import main
from spatialstale.study._concurrency import (
    BASE_MB,
    SAMPLE_MB,
    expected_peak_mb,
    samples_in_flight,
    tasks_at_once,
)

OBSERVER, CREDULOUS = "spatialstale/observer", "spatialstale/credulous"


def _study(models: tuple[str, ...], n_seeds: int, episodes: int = 5, **options: Any) -> Study:
    return Study(models, study_tasks(seeds=study_seeds(None, n_seeds), episodes=episodes), options=options)


def test_the_papers_matrix_runs_two_tasks_a_model_at_once() -> None:
    # 50 seeds: a detection task holds 50 samples, a navigation task 250 runs (5 epochs)
    one = _study((OBSERVER,), 50)
    assert tasks_at_once(one) == 2
    # the two largest tasks, each at Inspect's adaptive maximum of 100 samples
    assert samples_in_flight(one) == 200
    assert expected_peak_mb(one) == BASE_MB + 200 * SAMPLE_MB
    two = _study((OBSERVER, CREDULOUS), 50)
    assert (tasks_at_once(two), samples_in_flight(two)) == (4, 400)


def test_a_study_of_small_tasks_runs_more_of_them_up_to_inspects_own_limit() -> None:
    # 5 seeds: navigation tasks of 25 runs; 2 x 100 connections take 8 of them
    assert tasks_at_once(_study((OBSERVER,), 5)) == 8
    # a fixed number of connections needs fewer: 2 x 20 over tasks of up to 20 samples
    assert tasks_at_once(_study((OBSERVER,), 5, max_connections=20)) == 2
    # tiny tasks: never beyond Inspect's max(models, 10), never below two a model
    assert tasks_at_once(_study((OBSERVER, CREDULOUS), 2, episodes=1)) == 10
    many = tuple(f"spatialstale/model{k}" for k in range(7))
    assert tasks_at_once(_study(many, 2, episodes=1)) == 14


def test_the_options_given_win() -> None:
    study = _study((OBSERVER,), 50, max_tasks=3, max_samples=4)
    assert (tasks_at_once(study), samples_in_flight(study)) == (3, 12)
    # --max-connections is each task's limit unless --max-samples says otherwise
    assert samples_in_flight(_study((OBSERVER,), 50, max_connections=8)) == 16


def test_the_dry_run_states_the_expected_peak_and_the_options_that_bound_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = ["study", "--model", OBSERVER, "--n-seeds", "3", "--regimes", "L2", "--dry-run"]

    def line(*options: str) -> str:
        assert main([*base, *options]) == 0
        [found] = [text.strip() for text in capsys.readouterr().out.splitlines() if "peak memory" in text]
        return found

    default = line()
    assert default.startswith("peak memory: ~") and " MB expected " in default
    assert default.endswith("--max-tasks, --max-samples and --max-connections bound it")
    bounded = line("--max-tasks", "1", "--max-samples", "4")
    assert "up to 4 samples in flight: 1 task at once, --max-tasks, each up to 4, --max-samples" in bounded
    peak = float(re.search(r"~([\d,]+) MB expected", bounded).group(1).replace(",", ""))  # type: ignore[union-attr]
    assert peak == round(BASE_MB + 4 * SAMPLE_MB)


def test_a_study_hands_its_eval_set_the_tasks_at_once(tmp_path: Path) -> None:
    # one connection: two tasks at once, where Inspect's eval set would run ten
    tasks = study_tasks(seeds=[4810], regimes=["L1"], modalities=["text"], navigation_on=False)
    study = Study((OBSERVER,), tasks, log_dir=str(tmp_path), options={"max_connections": 1})
    assert tasks_at_once(study) == 2
    ok, _ = run_study(study, display="none", progress=False)
    assert ok
    [info] = list_eval_logs(str(tmp_path))
    assert read_eval_log(info, header_only=True).eval.config.max_tasks == 2
