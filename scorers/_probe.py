"""The perception probe's scoring: hole vs ice, read against the observed grid.

A cell's class is *hole* (H) or *ice* (every other type: F, S and G are all safe to
stand on). A cell left unanswered or given conflicting readings counts as misread in
both recall and accuracy: the probe asks whether the model can read the grid, and a
cell it did not read is a cell it cannot use.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any, cast

from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, Value, metric, scorer
from inspect_ai.solver import TaskState

from spatialstale.env import entry_id
from spatialstale.solvers._probe import PERCEPTION_STORE_KEY

from ._metrics import limit_rate, pooled_ratio, score_values
from ._pure import Confusion, confusion, rate
from ._scorers import by, claims_from_g0

HOLE, ICE = "hole", "ice"


def cell_class(cell: str) -> str:
    """``hole`` for H, ``ice`` for every other cell type."""
    return HOLE if cell == "H" else ICE


def _label(r: int, c: int) -> str:
    return f"({r},{c})"


def perception_breakdown(windows: Sequence[Mapping[str, object]]) -> dict[str, Any]:
    """The confusion matrix of one seed's readings, summed over its observations.

    Each window holds ``grid`` (the observed rows), ``readings`` (``"(r,c)"`` to the
    type read), ``unanswered``, ``conflicting``, ``unknown_cells``, ``calls`` and
    ``unparseable``. ``matrix[truth][read]`` counts cells by true class and by what
    was read (``hole``, ``ice``, or ``none`` when unanswered or conflicting).
    """
    matrix = {truth: {HOLE: 0, ICE: 0, "none": 0} for truth in (HOLE, ICE)}
    typed = cells = unanswered = conflicting = unknown = unparseable = calls = 0
    for window in windows:
        grid = [str(row) for row in cast(list[object], window["grid"])]
        readings = cast(Mapping[str, object], window["readings"])
        unanswered += len(cast(list[object], window["unanswered"]))
        conflicting += len(cast(list[object], window.get("conflicting", [])))
        unknown += len(cast(list[object], window.get("unknown_cells", [])))
        unparseable += _int(window.get("unparseable", 0))
        calls += _int(window.get("calls", 0))
        for r, row in enumerate(grid):
            for c, truth in enumerate(row):
                read = readings.get(_label(r, c))
                cells += 1
                typed += read == truth
                matrix[cell_class(truth)][cell_class(str(read)) if isinstance(read, str) else "none"] += 1
    return {
        "matrix": matrix,
        "cells": cells,
        "typed": typed,
        "unanswered": unanswered,
        "conflicting": conflicting,
        "unknown_cells": unknown,
        "unparseable": unparseable,
        "calls": calls,
        "windows": len(windows),
    }


def perception_scores(matrix: Mapping[str, Mapping[str, int]]) -> dict[str, float]:
    """Hole recall, ice recall, their mean (balanced accuracy) and overall accuracy.

    A recall is NaN when the grid has no cell of that class; balanced accuracy is then
    the other recall. Accuracy is correct cells over all cells asked.
    """
    holes = sum(matrix[HOLE].values())
    ices = sum(matrix[ICE].values())
    hole_recall = rate(matrix[HOLE][HOLE], holes)
    ice_recall = rate(matrix[ICE][ICE], ices)
    recalls = [x for x in (hole_recall, ice_recall) if not math.isnan(x)]
    return {
        "accuracy": rate(matrix[HOLE][HOLE] + matrix[ICE][ICE], holes + ices),
        "hole_recall": hole_recall,
        "ice_recall": ice_recall,
        "balanced_accuracy": statistics.fmean(recalls) if recalls else math.nan,
    }


@metric
def mean_of(key: str) -> Metric:
    """The mean over samples of the score value ``key`` (NaN values left out)."""

    def compute(scores: list[SampleScore]) -> Value:
        values = score_values(scores, key)
        return statistics.fmean(values) if values else math.nan

    return compute


@scorer(
    metrics=[
        by(mean_of("accuracy"), "regime", "accuracy"),
        by(mean_of("balanced_accuracy"), "regime", "balanced_accuracy"),
        by(mean_of("hole_recall"), "regime", "hole_recall"),
        by(mean_of("ice_recall"), "regime", "ice_recall"),
        by(pooled_ratio("unparseable", "calls"), "regime", "unparseable_rate"),
        by(pooled_ratio("unanswered", "cells"), "regime", "unanswered_rate"),
        by(pooled_ratio("conflicting", "cells"), "regime", "conflicting_rate"),
        by(limit_rate(), "regime", "limit_rate"),
    ]
)
def perception_accuracy() -> Scorer:
    """Per-seed perception accuracy: hole recall, ice recall, balanced and overall accuracy.

    L3 sums a seed's observations before its rates. ``type_accuracy`` counts cells
    read as their exact type (S, F, H, G). The confusion matrix (true class x read
    class, ``none`` for cells not read) and every window's readings are in the metadata.
    """

    async def score(state: TaskState, target: Target) -> Score:
        record = state.store.get(PERCEPTION_STORE_KEY)
        if record is None:
            # An infrastructure failure, not a model failure: the sample errors.
            raise RuntimeError(f"no {PERCEPTION_STORE_KEY!r} record in the sample store; was the probe solver run?")
        windows = record["windows"]
        b = perception_breakdown(windows)
        matrix = b["matrix"]
        rates = perception_scores(matrix)
        value: dict[str, float | int] = {
            **rates,
            "type_accuracy": rate(b["typed"], b["cells"]),
            "holes": sum(matrix[HOLE].values()),
            "hole_as_hole": matrix[HOLE][HOLE],
            "hole_as_ice": matrix[HOLE][ICE],
            "ice_as_ice": matrix[ICE][ICE],
            "ice_as_hole": matrix[ICE][HOLE],
            "cells": b["cells"],
            "unanswered": b["unanswered"],
            "conflicting": b["conflicting"],
            "unknown_cells": b["unknown_cells"],
            "unparseable": b["unparseable"],
            "calls": b["calls"],
            "windows": b["windows"],
            "limit": int(record["limit"] is not None),
        }
        return Score(
            value=cast(Any, value),
            answer=f"accuracy {rates['accuracy']:.3f} (hole recall {rates['hole_recall']:.3f}, "
            f"ice recall {rates['ice_recall']:.3f})",
            explanation=(
                f"{b['windows']} observation(s), {b['cells']} cells: holes read as hole {matrix[HOLE][HOLE]}, "
                f"as ice {matrix[HOLE][ICE]}, not read {matrix[HOLE]['none']}; ice read as ice {matrix[ICE][ICE]}, "
                f"as hole {matrix[ICE][HOLE]}, not read {matrix[ICE]['none']}; unparseable calls "
                f"{b['unparseable']}, unanswered {b['unanswered']}, conflicting {b['conflicting']}, "
                f"cells outside the batch {b['unknown_cells']}"
                + (f"; ended early: {record['limit']}" if record["limit"] else "")
            ),
            metadata={"matrix": matrix, "windows": windows, "limit": record["limit"]},
        )

    return score


def _int(value: object) -> int:
    return int(value) if isinstance(value, int | float | str) else 0


def implied_detection(windows: Sequence[Mapping[str, Any]], g0: Sequence[str]) -> Confusion:
    """The detection confusion an auditor would get that reasons perfectly on these readings.

    Each window holds the observed ``grid`` and the ``readings`` (``"(r,c)"`` to the
    type read). An entry is stale when its claim (from ``g0``) disagrees with the
    observed cell, and flagged when it disagrees with the cell as read; a cell not
    read flags nothing. Counts are summed over the windows, as detection does for L3.
    """
    claims = claims_from_g0(list(g0))
    n = len(g0)
    total = Confusion()
    for window in windows:
        grid = [str(row) for row in window["grid"]]
        readings = window["readings"]
        truth: set[str] = set()
        flagged: set[str] = set()
        for r in range(n):
            for c in range(n):
                mid = entry_id((r, c), n)
                claims_hole = claims[mid] == "DANGER"
                if (grid[r][c] == "H") != claims_hole:
                    truth.add(mid)
                read = readings.get(f"({r},{c})")
                if isinstance(read, str) and (read == "H") != claims_hole:
                    flagged.add(mid)
        total = total + confusion(flagged, truth, claims)
    return total
