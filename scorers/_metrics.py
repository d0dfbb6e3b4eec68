"""Metrics over the suite's dict-valued scores."""

from __future__ import annotations

import math
from typing import cast

from inspect_ai.scorer import Metric, MetricProtocol, SampleScore, Value, metric

from ._rates import task_metric


@metric
def declared(task: str, name: str) -> Metric:
    """``task``'s metric ``name`` as :data:`~._rates.METRICS` declares it: a rate pooled
    over the samples, or the mean or spread of a per-sample value."""
    declaration = task_metric(task, name)

    def compute(scores: list[SampleScore]) -> Value:
        values = [s.score.value for s in scores if isinstance(s.score.value, dict)]
        return declaration.value(values)

    return compute


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
