"""Metrics over the suite's dict-valued scores."""

from __future__ import annotations

from typing import cast

from inspect_ai.scorer import Metric, MetricProtocol, SampleScore, Value, grouped, metric

from ._rates import task_metric


@metric
def declared(task: str, name: str) -> Metric:
    """``task``'s metric ``name`` as :data:`~._rates.METRICS` declares it: a rate pooled
    over the samples, or the mean or spread of a per-sample value.

    Not Inspect's ``aggregate(key, mean(), on_missing="skip")`` (or ``std()``) for the
    mean and the spread, though both leave a NaN sample value out: Inspect's sums in
    numpy's order where the declaration sums exactly (``statistics.fmean``,
    ``statistics.stdev``), so a log's value could move in its last digit (the mean of
    0.1, 0.2 and 0.3 is 0.19999999999999998 here, 0.20000000000000004 there), and its
    spread of no defined value is NaN where the declaration's is 0.0. A pooled rate
    divides counts summed over the samples, which no metric of Inspect's does.
    """
    declaration = task_metric(task, name)

    def compute(scores: list[SampleScore]) -> Value:
        values = [s.score.value for s in scores if isinstance(s.score.value, dict)]
        return declaration.value(values)

    return compute


def _first(values: Value, name: str) -> dict[str, Value]:
    """``values`` (a dict) with its entry ``name`` moved first."""
    out = cast(dict[str, Value], values)
    return {name: out[name]} | {k: v for k, v in out.items() if k != name}


@metric
def grouped_metric(inner: Metric, key: str, label: str, within: str | None = None) -> Metric:
    """``inner`` overall (``label``, first), per ``key`` (``label_<group>``) and, when the
    samples hold several values of ``within``, per value of it and per pair
    (``label_<value>``, then ``label_<value>_<group>``).

    Inspect's :func:`~inspect_ai.scorer.grouped` does the grouping (a sample without
    ``key`` or ``within`` metadata is its error); this metric only orders its keys and
    names the pairs. Inspect's puts the overall value (``all_label``) after the groups,
    and Inspect's log list shows a log's first metric as its score, so the overall value
    is moved first here. No samples at all give ``{label: NaN}``, as Inspect's does. The
    pairs nest one ``grouped`` in another: per value of ``within``, the value over its
    samples (``all_label`` "") and per ``key`` (``_<group>``).
    """
    per_key = cast(MetricProtocol, grouped(inner, key, all_label=label, name_template=f"{label}_{{group_name}}"))
    pairs = (
        cast(
            MetricProtocol,
            grouped(
                grouped(inner, key, all_label="", name_template="_{group_name}"),
                within,
                all=False,
                name_template=f"{label}_{{group_name}}",
            ),
        )
        if within is not None
        else None
    )

    def compute(scores: list[SampleScore]) -> Value:
        out = _first(per_key(scores), label)
        by_within = cast(dict[str, Value], pairs(scores)) if pairs is not None else {}
        if len(by_within) > 1:  # one value of ``within`` (a task of one regime): no copies
            for name, values in by_within.items():
                out |= {name + part: v for part, v in _first(values, "").items()}
        return cast(Value, out)

    return compute
