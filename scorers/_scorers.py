"""The detection and navigation scorers."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, cast

from inspect_ai.scorer import Metric, Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from spatialstale.env import entry_id
from spatialstale.protocol import (
    OUTCOMES,
    DetectionRecord,
    NavigationRecord,
    PerceptionRecord,
    extension_entry_ids,
    extension_score,
)

from . import _metrics as m
from ._pure import Confusion, detection_breakdown
from ._rates import MEMORY_COUNTS, METRICS, sample_rates

MEMORY_KEYS = tuple(c.key.removeprefix("memory_") for c in MEMORY_COUNTS)

"""Episode outcomes; ``limit`` is an episode ended early by a sample limit."""


def claims_from_g0(g0: list[str], cell_ids: list[str] | None = None) -> dict[str, str]:
    """Each cell entry's claim: the memory snapshot records g0's type at every cell.

    ``cell_ids`` are the cells' ids in row-major order when an extension's entries shuffled them
    (the sample metadata's ``cell_ids``); else the paper's ``mem_{row*n+col}``.
    """
    n = len(g0)
    ids = cell_ids or [entry_id((r, c), n) for r in range(n) for c in range(n)]
    return {ids[r * n + c]: ("DANGER" if g0[r][c] == "H" else "SAFE") for r in range(n) for c in range(n)}


def memory_counts(navigated: Mapping[str, Any] | None) -> dict[str, int]:
    """The score values of the memory an agent kept (its last judgment), ``memory_``
    before each count; none for a navigator that keeps no memory of its own."""
    memory = (navigated or {}).get("memory")
    if not isinstance(memory, Mapping):
        return {}
    judged = memory.get("judged") or {}
    return {f"memory_{key}": int(judged.get(key, 0)) for key in MEMORY_KEYS}


def memory_clause(value: Mapping[str, Any]) -> str:
    """The explanation's clause on the memory an agent kept: its lies kept and repaired."""
    if "memory_seeded" not in value:
        return ""
    return (
        f"; memory: {value['memory_lie_kept']} of {value['memory_seeded_stale']} stale entries kept, "
        f"{value['memory_repaired']} repaired, {value['memory_removed']} removed, "
        f"{value['memory_corrupted']} of {value['memory_seeded_valid']} valid corrupted, "
        f"{value['memory_added_false']} of {value['memory_added']} added claims false"
    )


def stored_windows(
    state: TaskState, record_type: type[DetectionRecord | PerceptionRecord], what: str
) -> tuple[list[dict[str, object]], str | None]:
    """The windows (as the log holds them) and the limit ``what``'s solver left in the
    store. No record at all is an infrastructure failure, not a model failure: the
    sample errors."""
    record = state.store_as(record_type)
    if record.windows is None:
        raise missing(what)
    return [w.to_dict() for w in record.windows], record.limit


def missing(what: str) -> RuntimeError:
    """The error of a sample whose store holds no record of ``what`` (``detection``)."""
    return RuntimeError(f"no {what} record in the sample store; was the {what} solver run?")


def task_metrics(task: str, key: str, *, within: str | None = None, options: Collection[str] = ()) -> list[Metric]:
    """``task``'s declared metrics (:data:`~._rates.METRICS`) in order, each grouped by
    ``key`` (:func:`~._metrics.grouped_metric`; with ``within``, navigation's ``regime``, per
    value of it and pair too): those every run has, then those of the ``options`` given."""
    chosen = [d for d in METRICS[task] if d.only is None] + [d for d in METRICS[task] if d.only in options]
    return [m.grouped_metric(m.declared(task, d.name), key, d.name, within) for d in chosen]


DETECTION_METRICS = task_metrics("detection", "regime")
"""The detection task's metrics in the paper's protocol (no extension on)."""


def extension_metrics(task: str, key: str, on: Collection[str]) -> list[Metric]:
    """The metrics the extensions ``on`` add to ``task`` (``Extension.scores``), each
    grouped by ``key``, after the others: a log without them keeps its metrics."""
    added = [d for d in METRICS[task] if d.only is not None and d.only in on]
    # within given (None) as for every other metric: the log records a metric's arguments
    return [m.grouped_metric(m.declared(task, d.name), key, d.name, None) for d in added]


@scorer(metrics=DETECTION_METRICS)
def stale_f1() -> Scorer:
    """Per-seed precision, recall and F1 of the stale flags (stale = positive class).

    L3 sums a seed's windows before its F1. Every rate of the score stands beside its
    counts, as ``_rates.SCORE_RATES`` declares it (``thaw_recall`` / ``freeze_recall``
    are NaN when the seed has no stale entry of that kind). The flag counts by claim x
    current truth and the per-window verdicts are in the metadata. With an extension's
    entries about no cell in the store (``Extension.entry_ids``) F1 is over the cell
    entries alone, and ``unanswered`` / ``conflicting`` / ``judgments`` count every
    entry, the extension's included. Each extension on for the sample (by its metadata) adds its part last
    (``Extension.score``): its counts (their rates follow from the declarations), a
    clause of the explanation and its score metadata.
    """

    async def score(state: TaskState, target: Target) -> Score:
        windows, limit = stored_windows(state, DetectionRecord, "detection")
        meta = state.metadata
        b = detection_breakdown(windows, claims_from_g0(meta["g0"], meta.get("cell_ids")), extension_entry_ids(meta))
        c = cast(Confusion, b["confusion"])
        thaw = cast(tuple[int, int], b["thaw"])
        freeze = cast(tuple[int, int], b["freeze"])
        value: dict[str, float | int] = {
            "tp": c.tp,
            "fp": c.fp,
            "fn": c.fn,
            "tn": c.tn,
            **{k: cast(int, b[k]) for k in ("unanswered", "conflicting", "judgments", "unknown_ids", "unparseable")},
            "limit": int(limit is not None),
            "thaw_detected": thaw[0],
            "thaw_total": thaw[1],
            "freeze_detected": freeze[0],
            "freeze_total": freeze[1],
            "calls": cast(int, b["calls"]),
            "windows": cast(int, b["windows"]),
        }
        parts = extension_score("detection", meta, windows)
        for part in parts:
            value |= part.counts
        # every rate beside its counts, as declared (``_rates.SCORE_RATES``)
        value = sample_rates("detection", value) | value
        return Score(
            value=cast(Any, value),
            answer=f"F1 {value['f1']:.3f} (P {value['precision']:.3f}, R {value['recall']:.3f})",
            explanation=(
                f"{b['windows']} window(s): tp={c.tp} fp={c.fp} fn={c.fn} tn={c.tn}; "
                f"thaw {thaw[0]}/{thaw[1]}, freeze {freeze[0]}/{freeze[1]}; "
                f"unparseable calls {b['unparseable']} of {b['calls']}; of {b['judgments']} entry judgments "
                f"unanswered {b['unanswered']}, conflicting {b['conflicting']}; unknown ids {b['unknown_ids']}"
                + "".join(part.note for part in parts)
                + (f"; ended early: {limit}" if limit else "")
                + "".join(part.clause for part in parts)
            ),
            metadata={
                "flags": b["flags"],
                "thaw": {"detected": thaw[0], "total": thaw[1]},
                "freeze": {"detected": freeze[0], "total": freeze[1]},
                "windows": windows,
                "limit": limit,
                **{k: v for part in parts for k, v in part.metadata.items()},
            },
        )

    return score


NAVIGATION_METRICS = task_metrics("navigation", "strategy", within="regime")
"""The navigation task's metrics in the paper's protocol (no agent memory)."""


@scorer(metrics=NAVIGATION_METRICS)
def episode_outcome() -> Scorer:
    """One episode's outcome: success, death, timeout or limit, with steps and reward.

    ``limit`` is an episode a sample limit (``--token-limit``, ``--time-limit`` …)
    ended early; the four outcome rates sum to 1. ``fallbacks`` counts steps whose
    answer held no single action (``ambiguous`` + ``unreadable``), each replaced
    by a greedy step; ``fallback_rate`` pools them over steps.

    ``died_on_stale`` is 1 when the agent died on a cell whose stale SAFE claim was in
    its memory view. The trajectory, every step and every audit are in the metadata.

    What safety costs: ``audit_model_calls`` and ``audit_tokens`` (input + output) are
    the auditor's model calls of the episode (OMCD's batches, SelfVerify's check, any
    strategy's audit), ``navigation_calls`` and ``navigation_tokens`` the navigator's,
    counted at the calls (the metadata's ``cost``); ``audit_calls_<strategy>`` is the
    mean audit model calls per episode. ``audit_calls`` counts the calls of the audits
    the strategy kept (the denominator of ``audit_unparseable_rate``).
    """

    async def score(state: TaskState, target: Target) -> Score:
        record = state.store_as(NavigationRecord)
        episode, cost = record.episode, record.cost
        if episode is None or cost is None:
            raise missing("navigation")
        outcome = episode.outcome
        steps = episode.steps
        value: dict[str, float | int] = {key: int(outcome == key) for key in OUTCOMES}
        value |= {
            "steps": steps,
            "reward": float(episode.reward),
            "fallbacks": episode.fallbacks,
            "ambiguous": episode.readings("ambiguous"),
            "unreadable": episode.readings("unreadable"),
            "audit_calls": episode.audit_calls,
            "audit_unparseable": episode.audit_unparseable,
            "audit_unanswered": episode.audit_unanswered,
            "audit_conflicting": episode.audit_conflicting,
            "died_on_stale": int(episode.died_on_stale),
        }
        value |= {
            "audit_model_calls": cost.audit_calls,
            "audit_tokens": cost.audit_tokens,
            "navigation_calls": cost.navigation_calls,
            "navigation_tokens": cost.navigation_tokens,
        }
        value |= {f"{key}_steps": steps if outcome == key else 0 for key in OUTCOMES}
        value |= memory_counts(episode.navigated)
        died = episode.died_at
        ambiguous, unreadable = value["ambiguous"], value["unreadable"]
        return Score(
            value=cast(Any, value),
            answer=outcome,
            explanation=(
                f"{outcome} after {steps} steps"
                + (f" in the hole at {tuple(died)}" if died else "")
                + (" (a stale SAFE claim about it was in the memory view)" if episode.died_on_stale else "")
                + f"; {episode.fallbacks} fallback(s)"
                + (f" ({ambiguous} ambiguous, {unreadable} unreadable)" if episode.fallbacks else "")
                + (f"; ended early: {episode.limit}" if episode.limit else "")
                + memory_clause(value)
            ),
            # the episode as the log holds it, and what its model calls cost
            metadata=episode.to_dict() | {"cost": cost.to_dict()},
        )

    return score
