"""The declarations of every rate and metric (``scorers._rates``): each bounded rate
divides counts of one unit, every count they name is declared, and the arithmetic of
pooling, the 0/0 rules and the combined values, by hand."""

from __future__ import annotations

import math

import pytest
from inspect_ai.scorer import SampleScore, Score

from spatialstale.scorers import COUNTS, METRICS, SAMPLES, SCORE_RATES, Combined, Rate, declared
from spatialstale.scorers._rates import F1, PRECISION, sample_rates

TASKS = tuple(METRICS)


def _rates(task: str) -> list[Rate]:
    measures = [*SCORE_RATES[task], *(m.measure for m in METRICS[task])]
    return [r for m in measures for r in (m.parts if isinstance(m, Combined) else (m,))]


@pytest.mark.parametrize("task", TASKS)
def test_a_bounded_rate_divides_counts_of_one_unit(task: str) -> None:
    for rate in _rates(task):
        for key in rate.keys:
            assert key in COUNTS[task], f"{task} {rate.name}: {key!r} is not a declared count"
        if rate.bounded:
            units = {COUNTS[task][key].unit for key in (*rate.numerator, *rate.denominator)}
            assert len(units) == 1, f"{task} {rate.name} divides {units}"


@pytest.mark.parametrize("task", TASKS)
def test_every_declared_count_is_read_by_a_rate_and_every_name_is_declared_once(task: str) -> None:
    read = {key for rate in _rates(task) for key in rate.keys}
    assert read == set(COUNTS[task])
    names = [m.name for m in METRICS[task]]
    assert len(names) == len(set(names))
    assert len({m.name for m in SCORE_RATES[task]}) == len(SCORE_RATES[task])


def test_a_pooled_rate_sums_each_side_before_dividing() -> None:
    unanswered = Rate("unanswered_rate", ("unanswered",), ("judgments",))
    values = [{"unanswered": 3, "judgments": 10}, {"unanswered": 5, "judgments": 30}]
    assert unanswered.over(values) == 8 / 40  # not the mean of 0.3 and 0.1667
    share = Rate("limit_rate", ("limit",), (SAMPLES,))
    assert share.over([{"limit": 1}, {"limit": 0}, {"limit": 0}, {"limit": 1}]) == 0.5
    assert math.isnan(unanswered.over([{"unanswered": 0, "judgments": 0}]))


def test_the_empty_rule_of_precision_recall_and_edit_accuracy() -> None:
    # 0/0 is 1.0 only when nothing could have gone wrong
    assert PRECISION.of({"tp": 0, "fp": 0, "fn": 0}) == 1.0
    assert PRECISION.of({"tp": 0, "fp": 0, "fn": 2}) == 0.0
    assert PRECISION.over([{"tp": 0, "fp": 0, "fn": 0}, {"tp": 0, "fp": 0, "fn": 1}]) == 0.0
    assert PRECISION.over([{"tp": 1, "fp": 3, "fn": 0}, {"tp": 2, "fp": 0, "fn": 1}]) == 3 / 6


def test_combined_values() -> None:
    assert F1.of({"tp": 2, "fp": 2, "fn": 0}) == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert F1.of({"tp": 0, "fp": 1, "fn": 1}) == 0.0
    rates = sample_rates("perception", {"cells": 64, "holes": 0, "ices": 64, "hole_as_hole": 0, "ice_as_ice": 48})
    # no hole on the grid: hole recall NaN, balanced accuracy the ice recall alone
    assert math.isnan(rates["hole_recall"]) and rates["balanced_accuracy"] == rates["ice_recall"] == 0.75
    assert "type_accuracy" not in rates  # its count ``typed`` is missing: not computed


def test_mean_and_sd_metrics_read_each_sample_s_value_and_leave_nan_out() -> None:
    scores = [SampleScore(score=Score(value={"f1": f1}), sample_id=i) for i, f1 in enumerate((0.5, 1.0, math.nan))]
    assert declared("detection", "f1_mean")(scores) == 0.75
    assert declared("detection", "f1_std")(scores) == pytest.approx(math.sqrt(0.125))
    assert declared("detection", "f1_std")(scores[:1]) == 0.0
    assert math.isnan(declared("detection", "f1_std")(scores[2:]))


def test_the_inspect_metric_is_the_declaration() -> None:
    scores = [
        SampleScore(score=Score(value={"distractors_flagged": 1, "distractor_judgments": 8}), sample_id=1),
        SampleScore(score=Score(value={"distractors_flagged": 6, "distractor_judgments": 16}), sample_id=2),
    ]
    assert declared("detection", "distractor_flag_rate")(scores) == 7 / 24
    with pytest.raises(KeyError, match="no metric 'f1'"):
        declared("navigation", "f1")
