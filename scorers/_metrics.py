"""Metrics over the suite's dict-valued scores."""

from __future__ import annotations

import math
import statistics
from typing import cast

from inspect_ai.scorer import Metric, MetricProtocol, SampleScore, Value, metric

from ._pure import Confusion, _ratio


def score_values(scores: list[SampleScore], key: str) -> list[float]:
    """The numbers under ``key`` of each dict-valued score (NaN values left out)."""
    out = []
    for s in scores:
        value = s.score.value
        if isinstance(value, dict) and isinstance(value.get(key), int | float):
            number = float(value[key])
            if not math.isnan(number):
                out.append(number)
    return out


def _sum(scores: list[SampleScore], key: str) -> float:
    return sum(score_values(scores, key))


@metric
def f1_mean() -> Metric:
    """The headline: the mean of per-seed F1."""

    def compute(scores: list[SampleScore]) -> Value:
        values = score_values(scores, "f1")
        return statistics.fmean(values) if values else math.nan

    return compute


@metric
def f1_std() -> Metric:
    """The sample standard deviation (ddof=1) of per-seed F1."""

    def compute(scores: list[SampleScore]) -> Value:
        values = score_values(scores, "f1")
        return statistics.stdev(values) if len(values) > 1 else 0.0

    return compute


def _micro(scores: list[SampleScore]) -> tuple[float, float, float]:
    pooled = Confusion(*(int(_sum(scores, k)) for k in ("tp", "fp", "fn")))
    return pooled.precision, pooled.recall, pooled.f1


@metric
def micro_precision() -> Metric:
    """Precision of the confusion counts pooled over every sample."""

    def compute(scores: list[SampleScore]) -> Value:
        return _micro(scores)[0]

    return compute


@metric
def micro_recall() -> Metric:
    """Recall of the confusion counts pooled over every sample."""

    def compute(scores: list[SampleScore]) -> Value:
        return _micro(scores)[1]

    return compute


@metric
def micro_f1() -> Metric:
    """F1 of the confusion counts pooled over every sample."""

    def compute(scores: list[SampleScore]) -> Value:
        return _micro(scores)[2]

    return compute


def _rate(key: str) -> Metric:
    def compute(scores: list[SampleScore]) -> Value:
        values = score_values(scores, key)
        return statistics.fmean(values) if values else math.nan

    return compute


@metric
def success_rate() -> Metric:
    """Share of episodes that reached the goal."""
    return _rate("success")


@metric
def death_rate() -> Metric:
    """Share of episodes that ended in a hole."""
    return _rate("death")


@metric
def timeout_rate() -> Metric:
    """Share of episodes that ran out of steps."""
    return _rate("timeout")


def _steps(outcome: str) -> Metric:
    # ``<outcome>_steps`` is the episode's steps when it ended that way, else 0; the
    # ratio of sums stays the mean over episodes after the epochs' mean reduction.
    def compute(scores: list[SampleScore]) -> Value:
        episodes = _sum(scores, outcome)
        return _sum(scores, f"{outcome}_steps") / episodes if episodes else math.nan

    return compute


@metric
def success_steps() -> Metric:
    """Mean steps of the successful episodes."""
    return _steps("success")


@metric
def death_steps() -> Metric:
    """Mean steps of the fatal episodes."""
    return _steps("death")


@metric
def timeout_steps() -> Metric:
    """Mean steps of the timed-out episodes."""
    return _steps("timeout")


@metric
def pooled_ratio(numerator: str, denominator: str) -> Metric:
    """sum(numerator) / sum(denominator) over the samples (NaN when nothing was counted):
    e.g. unparseable calls per call, unanswered entries per judgment, fallbacks per step."""

    def compute(scores: list[SampleScore]) -> Value:
        total = _sum(scores, denominator)
        return _sum(scores, numerator) / total if total else math.nan

    return compute


@metric
def edit_accuracy() -> Metric:
    """Truly stale entries given a correct edit over the truly stale entries, pooled
    (``edits_correct`` / ``edits_stale``). With no stale entry at all it follows recall's
    empty rule: 1.0 when nothing was flagged either, else 0.0."""

    def compute(scores: list[SampleScore]) -> Value:
        return _ratio(int(_sum(scores, "edits_correct")), int(_sum(scores, "edits_stale")), _sum(scores, "fp") == 0)

    return compute


@metric
def mean_of(key: str) -> Metric:
    """The mean of ``key`` over the samples (NaN when none holds it): e.g. the audit
    model calls per episode."""
    return _rate(key)


@metric
def limit_rate() -> Metric:
    """Share of samples a sample limit ended early (still scored on what was done)."""
    return _rate("limit")


def _group(scores: list[SampleScore], key: str) -> dict[str, list[SampleScore]]:
    groups: dict[str, list[SampleScore]] = {}
    for s in scores:
        metadata = s.sample_metadata or {}
        if key not in metadata:
            raise ValueError(f"sample {s.sample_id} has no {key!r} metadata to group its metrics by")
        groups.setdefault(str(metadata[key]), []).append(s)
    return groups


@metric
def grouped_metric(inner: Metric, key: str, label: str, within: str | None = None) -> Metric:
    """``inner`` overall (``label``, first), per ``key`` (``label_<group>``) and, when the
    samples hold several values of ``within``, per value of it and per pair."""
    compute = cast(MetricProtocol, inner)

    def grouped(scores: list[SampleScore]) -> Value:
        out: dict[str, Value] = {label: compute(scores) if scores else math.nan}
        out |= {f"{label}_{g}": compute(group) for g, group in _group(scores, key).items()}
        outer = _group(scores, within) if within is not None and scores else {}
        if len(outer) > 1:
            for w, group in outer.items():
                out[f"{label}_{w}"] = compute(group)
                out |= {f"{label}_{w}_{g}": compute(sub) for g, sub in _group(group, key).items()}
        return cast(Value, out)

    return grouped
