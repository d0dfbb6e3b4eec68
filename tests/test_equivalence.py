"""The equivalence matrix (``python -m tests.equivalence``): two runs of the same code give
the same logs, and the comparison finds a changed score, or a changed store, where it is."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log, write_eval_log

from tests.equivalence import MATRIX, _logs, compare, main, run

SMALL = "det-limit"
"""The matrix's quickest entry: one sample, ended by a message limit at its first call."""


def test_the_matrix_names_every_task_and_reference_agent() -> None:
    assert {e.task for e in MATRIX} == {"detection", "navigation", "perception"}
    assert {e.model for e in MATRIX} == {"observer", "credulous", "random", "colourblind"}
    assert len({e.name for e in MATRIX}) == len(MATRIX)


def test_a_changed_score_and_a_changed_store_are_found(tmp_path: Path) -> None:
    run(tmp_path / "first", [SMALL])
    shutil.copytree(tmp_path / "first", tmp_path / "second")
    assert compare(tmp_path / "first", tmp_path / "second", store=True).same

    path = _logs(tmp_path / "second")[SMALL]
    log = read_eval_log(str(path))
    [sample] = log.samples or []
    sample.store = {**sample.store, "extra": 1}
    write_eval_log(log, str(path))
    outcome = compare(tmp_path / "first", tmp_path / "second")
    assert outcome.same and outcome.store == {SMALL: 1}
    assert not compare(tmp_path / "first", tmp_path / "second", store=True).same

    assert sample.scores is not None
    value = sample.scores["stale_f1"].value
    assert isinstance(value, dict)
    fn = value["fn"]
    value["fn"] += 1
    write_eval_log(log, str(path))
    outcome = compare(tmp_path / "first", tmp_path / "second")
    assert not outcome.same
    assert outcome.differences[SMALL] == [f".samples.{sample.id}@1.scores.stale_f1.value.fn: {fn} != {fn + 1}"]
    assert main(["compare", str(tmp_path / "first"), str(tmp_path / "second")]) == 1


@pytest.mark.slow
def test_the_whole_matrix_gives_the_same_logs_twice(tmp_path: Path) -> None:
    run(tmp_path / "first")
    run(tmp_path / "second")
    outcome = compare(tmp_path / "first", tmp_path / "second", store=True)
    assert outcome.entries == len(MATRIX)
    assert outcome.same, outcome.differences
