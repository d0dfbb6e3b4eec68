"""Every number a task reports, declared once: what it counts, over what.

A rate is one numerator over one denominator, each a score value (or the sum of a few)
counting one unit: calls, entry judgments, cell readings, steps, samples. Every sample's
score carries both counts, so a rate is recomputed from the sample's score values, and
those from its records (the score metadata's windows, or the episode's steps and
audits). A task's metric either pools a rate over the samples (the summed numerators
over the summed denominators) or summarises a per-sample value over them (the paper's
mean per-seed F1).

The scorers write the per-sample rates of :data:`SCORE_RATES`, the tasks' metrics are
built from :data:`METRICS`, and docs/tasks.md lists both as :func:`metrics_markdown`
writes them (``tests/test_docs.py`` fails when the two differ). The declarations' types
are the protocol's (``spatialstale.protocol``); an extension's counts, rates and metrics
(``Extension.scores``) are listed after the task's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spatialstale.protocol import (
    MEAN,
    POOLED,
    SAMPLES,
    SD,
    Combined,
    Count,
    Measure,
    Rate,
    TaskMetric,
    extension_scores,
)


def _counts(*counts: Count) -> dict[str, Count]:
    return {c.key: c for c in counts}


def _in(unit: str, **meanings: str) -> tuple[Count, ...]:
    """Counts in ``unit``: each key's meaning, what one of them is."""
    return tuple(Count(key, unit, meaning) for key, meaning in meanings.items())


def _extension_counts(task: str) -> tuple[Count, ...]:
    return tuple(c for scores in extension_scores(task).values() for c in scores.counts)


def _extension_rates(task: str) -> tuple[Measure, ...]:
    return tuple(r for scores in extension_scores(task).values() for r in scores.rates)


def _extension_metrics(task: str) -> tuple[TaskMetric, ...]:
    return tuple(m for scores in extension_scores(task).values() for m in scores.metrics)


def _unread_counts(
    call: str, reading: str, judged: str, unanswered: str, conflicting: str, *more: Count
) -> tuple[Count, ...]:
    """The counts of a task that reads answers: its calls, what they left unread, and
    the samples (one a seed) a sample limit ended early."""
    a = "an" if call[0] in "aeiou" else "a"
    return (
        Count("calls", f"{call}s", f"{a} {call} (one a batch)"),
        Count("unparseable", f"{call}s", f"{a} {call} whose answer held no readable {reading}"),
        Count("unanswered", judged, unanswered),
        Count("conflicting", judged, conflicting),
        *more,
        Count("limit", "samples", "a sample a sample limit ended early (still scored)"),
        Count(SAMPLES, "samples", "a sample: one seed"),
    )


# navigation, an agent that keeps its memory (the memory navigator): the episode's last
# judgment of its memory files (``spatialstale.protocol``'s ``_agent_memory``)
MEMORY_COUNTS = (
    *_in(
        "seeded entries",
        memory_seeded="a cell entry the memory was seeded with",
        memory_seeded_stale="a seeded entry stale against the grid at the end",
        memory_seeded_valid="a seeded entry valid against the grid at the end",
        memory_lie_kept="a stale seeded entry whose old claim is still the only one made",
        memory_repaired="a stale seeded entry whose cell memory now claims the truth of (only)",
        memory_removed="a seeded entry whose cell memory no longer makes any claim about",
        memory_corrupted="a valid seeded entry whose cell memory now claims the opposite of",
        memory_kept_valid="a valid seeded entry whose claim is still the only one made",
        memory_conflicted="a seeded entry whose cell memory claims both safe and dangerous",
    ),
    *_in(
        "added cells",
        memory_added="a cell not seeded that memory now makes a claim about",
        memory_added_false="an added cell whose claim is false against the grid",
    ),
    *_in(
        "clauses",
        memory_clauses="a clause of the memory files (a line, split at ; and at a sentence's end)",
        memory_unplaced="a clause of the memory files that names no cell",
        memory_unreadable="a clause naming a cell whose claim cannot be read (none, or both)",
    ),
)
MEMORY_RATES = (
    Rate("lies_kept_rate", ("memory_lie_kept",), ("memory_seeded_stale",)),
    Rate("repaired_rate", ("memory_repaired",), ("memory_seeded_stale",)),
    Rate("removed_rate", ("memory_removed",), ("memory_seeded",)),
    Rate("corrupted_rate", ("memory_corrupted",), ("memory_seeded_valid",)),
    Rate("kept_valid_rate", ("memory_kept_valid",), ("memory_seeded_valid",)),
    Rate("conflicted_rate", ("memory_conflicted",), ("memory_seeded",)),
    Rate("added_false_rate", ("memory_added_false",), ("memory_added",)),
    Rate("unplaced_rate", ("memory_unplaced",), ("memory_clauses",)),
    Rate("unreadable_rate", ("memory_unreadable",), ("memory_clauses",)),
)
"""The rates of the memory an agent keeps, each of two counts of one unit, in [0, 1]."""

COUNTS: dict[str, dict[str, Count]] = {
    "detection": _counts(
        *_in(
            "cell judgments",
            tp="a stale cell entry flagged stale (each window judges every cell entry)",
            fp="a valid cell entry flagged stale",
            fn="a stale cell entry not flagged",
            thaw_detected="a stale SAFE entry (its cell became a hole) flagged",
            thaw_total="a stale SAFE entry",
            freeze_detected="a stale DANGER entry (its hole became ice) flagged",
            freeze_total="a stale DANGER entry",
        ),
        *_unread_counts(
            "audit call",
            "verdict",
            "entry judgments",
            "an entry left without a verdict, entries about no cell included (so left unflagged; every entry "
            "of a batch a sample limit kept from being asked too)",
            "an entry given contradicting verdicts, entries about no cell included (left unflagged)",
            Count(
                "judgments",
                "entry judgments",
                "an entry of the store judged in a window: n² cell entries and any entries about no cell, every window",
            ),
        ),
        *_extension_counts("detection"),
    ),
    "navigation": _counts(
        *_in(
            "samples",
            success="an episode that reached the goal",
            death="an episode that ended in a hole",
            timeout="an episode that ran out of steps",
            limit="an episode a sample limit ended early",
        ),
        *_in(
            "steps",
            success_steps="a step of an episode that reached the goal",
            death_steps="a step of an episode that ended in a hole",
            timeout_steps="a step of an episode that ran out of steps",
            steps="a step taken",
            fallbacks="a step whose answer held no single action (a greedy step taken instead)",
        ),
        *_in(
            "audit calls",
            audit_calls="a model call of an audit the strategy kept",
            audit_unparseable="a call of a kept audit whose answer held no readable verdict",
            audit_model_calls="an audit model call of the episode, whichever strategy made it",
        ),
        Count(SAMPLES, "samples", "a sample: one episode"),
        *MEMORY_COUNTS,
    ),
    "perception": _counts(
        *_in(
            "cell readings",
            cells="a cell of an observation asked about (n² every observation)",
            holes="a hole asked about",
            ices="an ice cell (F, S or G) asked about",
            hole_as_hole="a hole read as a hole",
            ice_as_ice="an ice cell read as ice",
            typed="a cell read as its exact type (S, F, H or G)",
        ),
        *_unread_counts(
            "call",
            "reading",
            "cell readings",
            "a cell left unread (every cell of a batch a sample limit kept from being asked too)",
            "a cell given contradicting readings",
        ),
    ),
}
"""The counts of each task's scores that a rate divides, by task kind and score value."""


# detection, per sample (the cell entries alone; an extension's entries have their own rates)
PRECISION = Rate("precision", ("tp",), ("tp", "fp"), clean="fn")
RECALL = Rate("recall", ("tp",), ("tp", "fn"), clean="fp")
F1 = Combined("f1", (PRECISION, RECALL), "f1")
THAW_RECALL = Rate("thaw_recall", ("thaw_detected",), ("thaw_total",))
FREEZE_RECALL = Rate("freeze_recall", ("freeze_detected",), ("freeze_total",))

# perception, per sample
ACCURACY = Rate("accuracy", ("hole_as_hole", "ice_as_ice"), ("cells",))
HOLE_RECALL = Rate("hole_recall", ("hole_as_hole",), ("holes",))
ICE_RECALL = Rate("ice_recall", ("ice_as_ice",), ("ices",))
BALANCED_ACCURACY = Combined("balanced_accuracy", (HOLE_RECALL, ICE_RECALL), "mean")
TYPE_ACCURACY = Rate("type_accuracy", ("typed",), ("cells",))

SCORE_RATES: dict[str, tuple[Measure, ...]] = {
    "detection": (PRECISION, RECALL, F1, THAW_RECALL, FREEZE_RECALL, *_extension_rates("detection")),
    "navigation": (),
    "perception": (ACCURACY, BALANCED_ACCURACY, HOLE_RECALL, ICE_RECALL, TYPE_ACCURACY),
}
"""The rates each sample's score holds beside its counts (an extension's only when it is
on, when its counts are there)."""


def _pooled(name: str, numerator: str, denominator: str, *, bounded: bool = True) -> Rate:
    return Rate(name, (numerator,), (denominator,), bounded=bounded)


def _unread(task: str) -> tuple[TaskMetric, ...]:
    judged = "judgments" if task == "detection" else "cells"
    return (
        TaskMetric("unparseable_rate", _pooled("unparseable_rate", "unparseable", "calls")),
        TaskMetric("unanswered_rate", _pooled("unanswered_rate", "unanswered", judged)),
        TaskMetric("conflicting_rate", _pooled("conflicting_rate", "conflicting", judged)),
        TaskMetric("limit_rate", _pooled("limit_rate", "limit", SAMPLES)),
    )


METRICS: dict[str, tuple[TaskMetric, ...]] = {
    "detection": (
        TaskMetric("f1_mean", F1, MEAN),
        TaskMetric("f1_std", F1, SD),
        TaskMetric("micro_precision", PRECISION),
        TaskMetric("micro_recall", RECALL),
        TaskMetric("micro_f1", F1),
        *_unread("detection"),
        *_extension_metrics("detection"),
    ),
    "navigation": (
        *(TaskMetric(outcome, _pooled(outcome, outcome, SAMPLES)) for outcome in ("success", "death", "timeout")),
        *(
            TaskMetric(f"steps_{outcome}", _pooled(f"steps_{outcome}", f"{outcome}_steps", outcome, bounded=False))
            for outcome in ("success", "death", "timeout")
        ),
        TaskMetric("limit", _pooled("limit", "limit", SAMPLES)),
        TaskMetric("fallback_rate", _pooled("fallback_rate", "fallbacks", "steps")),
        TaskMetric("audit_unparseable_rate", _pooled("audit_unparseable_rate", "audit_unparseable", "audit_calls")),
        # last, so a log's first metric (its score in the log list) is still ``success``
        TaskMetric("audit_calls", _pooled("audit_calls", "audit_model_calls", SAMPLES, bounded=False)),
        *(TaskMetric(rate.name, rate, only="memory") for rate in MEMORY_RATES),
    ),
    "perception": (
        TaskMetric("accuracy", ACCURACY, MEAN),
        TaskMetric("balanced_accuracy", BALANCED_ACCURACY, MEAN),
        TaskMetric("hole_recall", HOLE_RECALL, MEAN),
        TaskMetric("ice_recall", ICE_RECALL, MEAN),
        *_unread("perception"),
    ),
}
"""Each task's metrics, in the order a log lists them (before the grouping by regime
and strategy): the first is the overall score Inspect's log list shows when a task
names no headline."""


def task_metric(task: str, name: str) -> TaskMetric:
    """The declaration of ``task``'s metric ``name``."""
    for declared in METRICS[task]:
        if declared.name == name:
            return declared
    raise KeyError(f"{task} has no metric {name!r}")


def sample_rates(task: str, value: Mapping[str, Any]) -> dict[str, float]:
    """Every rate of :data:`SCORE_RATES` whose counts ``value`` holds, by name."""
    return {m.name: m.of(value) for m in SCORE_RATES[task] if all(k in value for k in m.keys if k != SAMPLES)}


def _sum_text(keys: tuple[str, ...]) -> str:
    return " + ".join(f"`{k}`" for k in keys)


def _sides(measure: Measure) -> tuple[str, str, str]:
    """A measure's numerator, denominator and 0/0 rule, as the docs write them."""
    if isinstance(measure, Combined):
        a, b = (f"`{p.name}`" for p in measure.parts)
        if measure.how == "f1":
            return f"2 P R / (P + R) of P = {a}, R = {b}", "-", "0.0 when P + R = 0"
        return f"the mean of {a} and {b}", "-", "the one defined when the other is NaN"
    empty = "NaN" if measure.clean is None else f"1.0 when `{measure.clean}` = 0 too, else 0.0"
    return _sum_text(measure.numerator), _sum_text(measure.denominator), empty


def _unit(task: str, measure: Measure) -> str:
    if isinstance(measure, Combined):
        return "-"
    top, bottom = (COUNTS[task][keys[0]].unit for keys in (measure.numerator, measure.denominator))
    return top if top == bottom else f"{top} per {bottom.removesuffix('s')}"


_ONLY = {name: scores.when for task in METRICS for name, scores in extension_scores(task).items()}


def _over(m: TaskMetric) -> str:
    if m.over == POOLED and isinstance(m.measure, Combined):
        return "pooled: P and R of the counts summed over the samples"
    if m.over == POOLED:
        return "pooled: each side summed over the samples"
    if m.over == MEAN:
        return f"mean of each sample's `{m.measure.name}` (NaN left out)"
    return f"standard deviation (ddof = 1) of each sample's `{m.measure.name}`; 0.0 with one sample"


def metrics_markdown(task: str) -> str:
    """The markdown tables of ``task``'s metrics, its per-sample rates and their counts,
    as docs/tasks.md lists them."""
    lines = [
        "| metric | numerator | denominator | 0/0 | unit | over the samples |",
        "|---|---|---|---|---|---|",
    ]
    for m in METRICS[task]:
        if m.over == POOLED:
            top, bottom, empty = _sides(m.measure)
            unit = _unit(task, m.measure)
        else:
            top, bottom, empty, unit = "-", "-", "-", "-"
        lines.append(f"| `{m.name}`{_ONLY.get(m.only or '', '')} | {top} | {bottom} | {empty} | {unit} | {_over(m)} |")
    if SCORE_RATES[task]:
        lines += ["", "| rate of each sample's score | numerator | denominator | 0/0 | unit |", "|---|---|---|---|---|"]
        lines += [f"| `{m.name}` | {' | '.join(_sides(m))} | {_unit(task, m)} |" for m in SCORE_RATES[task]]
    lines += ["", "| count | unit | one of them is |", "|---|---|---|"]
    lines += [
        f"| `{c.key}`{' (not a score value)' if c.key == SAMPLES else ''} | {c.unit} | {c.meaning} |"
        for c in COUNTS[task].values()
    ]
    return "\n".join(lines)
