"""Pure scoring functions over plain data; the Inspect scorers wrap these."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

from ._rates import F1, PRECISION, RECALL


@dataclass(frozen=True)
class Confusion:
    """Entry-level confusion counts, stale being the positive class; its rates are the
    declared ones (``_rates``: 0/0 is 1.0 only when nothing could have gone wrong)."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    def __add__(self, other: Confusion) -> Confusion:
        return Confusion(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn, self.tn + other.tn)

    @property
    def precision(self) -> float:
        return PRECISION.of(asdict(self))

    @property
    def recall(self) -> float:
        return RECALL.of(asdict(self))

    @property
    def f1(self) -> float:
        return F1.of(asdict(self))


def confusion(predicted: Iterable[str], truth: Iterable[str], universe: Iterable[str]) -> Confusion:
    """Counts over ``universe`` for a predicted stale set against the true one.

    Ids outside ``universe`` are ignored.
    """
    ids = set(universe)
    p, t = set(predicted) & ids, set(truth) & ids
    return Confusion(tp=len(p & t), fp=len(p - t), fn=len(t - p), tn=len(ids - p - t))


def detection_breakdown(
    windows: Sequence[Mapping[str, object]], claims: Mapping[str, str], others: Collection[str] = ()
) -> dict[str, object]:
    """Everything a detection score reports, from the windows of one seed.

    Each window holds ``flagged`` and ``truth`` (stale ids), ``unanswered``,
    ``conflicting`` (optional), ``unknown_ids`` and ``unparseable``; ``claims`` maps
    every cell entry's id to SAFE or DANGER, and ``others`` are the ids of the
    entries about no cell (an extension's). The confusion, thaws, freezes and flag counts are over the
    cell entries; ``unanswered``, ``conflicting`` and their denominator ``judgments``
    (every entry once a window) are over all of them. A stale SAFE entry is a thaw (the
    cell became a hole), a stale DANGER entry a freeze. Flag rates are split by claim x
    current truth (safe or hole).
    """
    universe = list(claims)
    total = Confusion()
    thaw = [0, 0]
    freeze = [0, 0]
    flags = {f"{claim}_{now}": [0, 0] for claim in ("SAFE", "DANGER") for now in ("safe", "hole")}
    unanswered = conflicting = unknown = unparseable = calls = 0
    for window in windows:
        flagged = set(_strings(window["flagged"]))
        truth = set(_strings(window["truth"]))
        total = total + confusion(flagged, truth, universe)
        unanswered += len(_strings(window["unanswered"]))
        conflicting += len(_strings(window.get("conflicting", [])))
        unknown += len(_strings(window["unknown_ids"]))
        unparseable += _int(window.get("unparseable", 0))
        calls += _int(window.get("calls", 0))
        for mid in universe:
            claim = claims[mid]
            stale = mid in truth
            is_hole = (claim == "SAFE") == stale
            cell = flags[f"{claim}_{'hole' if is_hole else 'safe'}"]
            cell[1] += 1
            cell[0] += mid in flagged
            if stale:
                counter = thaw if claim == "SAFE" else freeze
                counter[1] += 1
                counter[0] += mid in flagged
    return {
        "confusion": total,
        "thaw": (thaw[0], thaw[1]),
        "freeze": (freeze[0], freeze[1]),
        "flags": {k: {"flagged": v[0], "total": v[1]} for k, v in flags.items()},
        "unanswered": unanswered,
        "conflicting": conflicting,
        "judgments": (len(universe) + len(set(others))) * len(windows),
        "unknown_ids": unknown,
        "unparseable": unparseable,
        "calls": calls,
        "windows": len(windows),
    }


def _strings(value: object) -> list[str]:
    if not isinstance(value, list | tuple):
        raise ValueError(f"expected a list of ids, got {type(value).__name__}")
    return [str(v) for v in value]


def _int(value: object) -> int:
    return int(value) if isinstance(value, int | float | str) else 0
