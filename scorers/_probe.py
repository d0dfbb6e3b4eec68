"""The perception probe's scoring: hole vs ice, read against the observed grid.

A cell's class is *hole* (H) or *ice* (every other type: F, S and G are all safe to
stand on). A cell left unanswered or given conflicting readings counts as misread in
both recall and accuracy: the probe asks whether the model can read the grid, and a
cell it did not read is a cell it cannot use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from spatialstale.env import entry_id
from spatialstale.protocol import PerceptionRecord

from ._pure import Confusion, confusion
from ._rates import sample_rates
from ._scorers import claims_from_g0, stored_windows, task_metrics

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


@scorer(metrics=task_metrics("perception", "regime"))
def perception_accuracy() -> Scorer:
    """Per-seed perception accuracy: hole recall, ice recall, balanced and overall accuracy.

    L3 sums a seed's observations before its rates. ``type_accuracy`` counts cells
    read as their exact type (S, F, H, G). Every rate stands beside its counts, as
    ``_rates.SCORE_RATES`` declares it: a recall is NaN when the grid has no cell of
    that class, and balanced accuracy is then the other recall. The confusion matrix
    (true class x read class, ``none`` for cells not read) and every window's readings
    are in the metadata.
    """

    async def score(state: TaskState, target: Target) -> Score:
        windows, limit = stored_windows(state, PerceptionRecord, "perception")
        b = perception_breakdown(windows)
        matrix = b["matrix"]
        value: dict[str, float | int] = {
            "holes": sum(matrix[HOLE].values()),
            "ices": sum(matrix[ICE].values()),
            "typed": b["typed"],
            "hole_as_hole": matrix[HOLE][HOLE],
            "hole_as_ice": matrix[HOLE][ICE],
            "ice_as_ice": matrix[ICE][ICE],
            "ice_as_hole": matrix[ICE][HOLE],
            **{
                k: b[k]
                for k in ("cells", "unanswered", "conflicting", "unknown_cells", "unparseable", "calls", "windows")
            },
            "limit": int(limit is not None),
        }
        # every rate beside its counts, as declared (``_rates.SCORE_RATES``)
        value = sample_rates("perception", value) | value
        return Score(
            value=cast(Any, value),
            answer=f"accuracy {value['accuracy']:.3f} (hole recall {value['hole_recall']:.3f}, "
            f"ice recall {value['ice_recall']:.3f})",
            explanation=(
                f"{b['windows']} observation(s), {b['cells']} cells: holes read as hole {matrix[HOLE][HOLE]}, "
                f"as ice {matrix[HOLE][ICE]}, not read {matrix[HOLE]['none']}; ice read as ice {matrix[ICE][ICE]}, "
                f"as hole {matrix[ICE][HOLE]}, not read {matrix[ICE]['none']}; unparseable calls "
                f"{b['unparseable']}, unanswered {b['unanswered']}, conflicting {b['conflicting']}, "
                f"cells outside the batch {b['unknown_cells']}" + (f"; ended early: {limit}" if limit else "")
            ),
            metadata={"matrix": matrix, "windows": windows, "limit": limit},
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
