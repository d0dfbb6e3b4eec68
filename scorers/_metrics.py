"""Metrics over the suite's dict-valued scores."""

from __future__ import annotations

from typing import cast

from inspect_ai.scorer import Metric, MetricProtocol, SampleScore, Value, aggregate, grouped, mean, metric, std

from spatialstale.protocol import MEAN, POOLED

from ._rates import task_metric


@metric
def declared(task: str, name: str) -> Metric:
    """``task``'s metric ``name`` as :data:`~._rates.METRICS` declares it: a rate pooled
    over the samples (the summed numerators over the summed denominators, which no
    metric of Inspect's computes), or Inspect's mean or standard deviation of each
    sample's value (``aggregate``; a NaN or missing value is left out, and a spread of
    one value is 0, of none NaN)."""
    declaration = task_metric(task, name)
    if declaration.over != POOLED:
        return aggregate(declaration.measure.name, mean() if declaration.over == MEAN else std(), on_missing="skip")

    def compute(scores: list[SampleScore]) -> Value:
        return declaration.measure.over([s.score.value for s in scores if isinstance(s.score.value, dict)])

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
