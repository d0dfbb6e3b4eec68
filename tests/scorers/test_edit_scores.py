"""The edit scores of ``-T edits=true`` from plain window records, and ``edit_accuracy``'s
pooling and empty rule."""

from __future__ import annotations

from typing import Any

from inspect_ai.scorer import SampleScore, Score

from spatialstale.protocol._edits import cell_positions, edit_judgments
from spatialstale.scorers import declared

GRID = ["SFFF", "FHFF", "FFHF", "FFFG"]


def window(flagged: list[str], truth: list[str], edits: dict[str, str]) -> dict[str, Any]:
    return {"flagged": flagged, "truth": truth, "grid": GRID, "edits": edits}


def test_each_stale_entry_is_judged_once_and_only_stale_entries_are() -> None:
    positions = cell_positions(4)
    assert positions["mem_005"] == (1, 1) and positions["mem_010"] == (2, 2)
    windows = [
        window(
            ["mem_005", "mem_010", "mem_001", "mem_002"],
            ["mem_005", "mem_010", "mem_001", "mem_003", "mem_002"],
            {"mem_005": "DANGER at (1,1)", "mem_010": "SAFE at (2,2)", "mem_001": "??", "mem_006": "DANGER"},
        )
    ]
    judged = {e["id"]: e["judged"] for e in edit_judgments(windows, positions)}
    # mem_002 flagged without an edit, mem_003 missed: both missing; mem_006 is not stale: not judged
    assert judged == {
        "mem_005": "correct",
        "mem_010": "wrong",
        "mem_001": "unreadable",
        "mem_003": "missing",
        "mem_002": "missing",
    }


def test_an_edit_of_an_entry_left_unflagged_does_not_count() -> None:
    windows = [window([], ["mem_005"], {"mem_005": "DANGER at (1,1)"})]
    assert [e["judged"] for e in edit_judgments(windows, cell_positions(4))] == ["missing"]


def scores(*values: dict[str, int]) -> list[SampleScore]:
    return [SampleScore(score=Score(value=dict(v)), sample_id=i) for i, v in enumerate(values)]


def test_edit_accuracy_is_pooled_and_follows_recalls_empty_rule() -> None:
    metric = declared("detection", "edit_accuracy")
    pooled = scores({"edits_correct": 1, "edits_stale": 4, "fp": 0}, {"edits_correct": 3, "edits_stale": 4, "fp": 2})
    assert metric(pooled) == 0.5
    assert metric(scores({"edits_correct": 0, "edits_stale": 0, "fp": 0})) == 1.0
    assert metric(scores({"edits_correct": 0, "edits_stale": 0, "fp": 1})) == 0.0
