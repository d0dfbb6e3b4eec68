"""Distractors, a memory extension at the seams: ``-T distractors=K`` (the paper's App. K).

Detection and navigation with K entries about no cell (the rules of the game, past
episodes, the agent itself) in the memory store beside the n² cell entries, drawn
from a versioned bank (``spatialstale.env.with_distractor_entries``, ``env/data/distractors``)
with ids shuffled among the cells', so neither an id nor a position in the listing
tells one apart. They are never stale, so flagging one is an error.

It plugs into the settings (its axis; any memory shown as pictures refused), the
memory (the entries in the instance's store: every audit judges them, a navigator's
memory view shows them, and the dry run counts ⌈(n² + K)/B⌉ calls an audit; each
sample's metadata records them with the cells' ids), the transcript (an audit table
marks each ``distractor flagged`` or ``distractor kept``, and its summary line counts
them apart) and the scores (``distractors_flagged`` / ``distractor_judgments`` beside
F1 over the cell entries alone, and the metric ``distractor_flag_rate`` when K > 0).
The report's section reads the axis from the logs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from spatialstale.env import DISTRACTOR_BANK_VERSION, MAX_DISTRACTORS, Instance, MemoryEntry, with_distractor_entries

from ._axes import axis
from ._errors import TaskParameterError
from ._measures import Count, Rate, TaskMetric
from ._seams import Extension, MemoryPart, ReportColumn, ReportPart, ReportTable, ScorePart, Scores

NAME = "distractors"
ENTRIES = "distractor_entries"
"""The sample metadata key of the distractors: each one's id, topic and text."""

RESULTS = ("distractor flagged", "distractor kept")
"""How an audit table marks a distractor's verdict: never stale, so flagged is wrong;
counted apart from the cell entries, as the score counts ``distractors_flagged`` apart
from ``fp``."""


def distractor_count(value: object, name: str) -> int:
    """An integer from 0 to the bank's size (distractors are drawn without replacement)."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_DISTRACTORS:
        raise TaskParameterError(
            f"{name} must be an integer from 0 to {MAX_DISTRACTORS} (the distractor bank's size); got {value!r}"
        )
    return value


@dataclass(frozen=True)
class DistractorsAxes:
    """The distractors' axis, read by the detection and navigation settings."""

    distractors: int = axis(
        0,
        "K non-spatial memory entries (rules, past episodes, the agent itself), never stale, "
        "with ids shuffled among the cells'; 0 in the paper",
        read=distractor_count,
        title="distractors",
        flag="--distractors",
        in_id=lambda k: f"-d{k}",
        recorded=True,
    )


FLAG_RATE = Rate("distractor_flag_rate", ("distractors_flagged",), ("distractor_judgments",))

SCORES = Scores(
    counts=(
        Count("distractors_flagged", "distractor judgments", "a distractor flagged stale (`-T distractors=K`)"),
        Count("distractor_judgments", "distractor judgments", "a distractor judged in a window: K every window"),
    ),
    metrics=(TaskMetric("distractor_flag_rate", FLAG_RATE, only=NAME),),
    when=" (with `-T distractors=K`, K > 0)",
    columns=("distractors_flagged", "distractor_judgments"),
)
"""Detection's, with K > 0: the share of distractor judgments flagged stale, pooled."""


@dataclass(frozen=True)
class DistractorMarks:
    """An audit table's marks of a distractor's verdict: never stale, so flagged is wrong."""

    wrong: tuple[str, ...] = RESULTS[:1]

    def mark(self, entry: MemoryEntry, flagged: bool) -> str | None:
        if entry.is_cell:
            return None
        return RESULTS[0] if flagged else RESULTS[1]

    def note(self, results: Mapping[str, int], named: Callable[[str], str]) -> str | None:
        total = sum(results.get(r, 0) for r in RESULTS)
        if not total:
            return None
        flagged, kept = (results.get(r, 0) for r in RESULTS)
        return f"of the {total} distractors, {flagged} flagged{named(RESULTS[0])}, {kept} kept"


def _k(values: Mapping[str, Any]) -> int:
    return int(values.get(NAME) or 0)


class DistractorEntries(MemoryPart):
    """The memory stage: K distractors in the store, recorded in each sample with the
    cells' ids (with the seed, the size and the bank's version they recompute every
    distractor and every id), marked apart in an audit's table."""

    marks = DistractorMarks()

    def add(self, instance: Instance, values: Mapping[str, Any]) -> Instance:
        return with_distractor_entries(instance, _k(values))

    def metadata(self, instance: Instance) -> dict[str, object]:
        # nothing in the paper's protocol, whose ids are fixed
        extra = [m for m in instance.memory if not m.is_cell]
        if not extra:
            return {}
        cells = sorted((m for m in instance.memory if m.is_cell), key=lambda m: m.pos)
        return {
            "distractor_bank": DISTRACTOR_BANK_VERSION,
            "cell_ids": [m.id for m in cells],
            ENTRIES: [{"id": m.id, "topic": m.topic, "text": m.text} for m in extra],
        }

    def entry_ids(self, metadata: Mapping[str, Any]) -> frozenset[str]:
        return frozenset(str(d["id"]) for d in metadata.get(ENTRIES, []))


ENTRIES_PART = DistractorEntries()


@dataclass(frozen=True)
class DistractorsExtension(Extension):
    name: str = "distractors"
    kinds: tuple[str, ...] = ("detection", "navigation")
    axes: type = DistractorsAxes

    def check(self, values: Mapping[str, Any]) -> None:
        # a memory shown otherwise than as its text lines draws each entry as a picture of its cell
        shown = values.get("memory", "text")
        if shown != "text" and _k(values):
            raise TaskParameterError(
                f"memory={shown} draws each entry as a picture of its cell and distractors are about no cell: "
                f"use distractors=0 with memory={shown}; got distractors={_k(values)}"
            )

    def memory(self) -> MemoryPart:
        return ENTRIES_PART

    def active(self, values: Mapping[str, Any]) -> bool:
        return _k(values) > 0

    def scores(self, kind: str) -> Scores | None:
        return SCORES if kind == "detection" else None

    def score(self, kind: str, metadata: Mapping[str, Any], windows: Sequence[Mapping[str, Any]]) -> ScorePart | None:
        ids = ENTRIES_PART.entry_ids(metadata)
        if kind != "detection" or not ids:
            return None
        flagged = sum(len(ids & set(w["flagged"])) for w in windows)
        judged = len(ids) * len(windows)
        # among the score's own counts, before a sample limit's clause
        note = f"; distractors flagged {flagged} of {judged}"
        return ScorePart({"distractors_flagged": flagged, "distractor_judgments": judged}, note=note)

    def report(self) -> ReportPart:
        return REPORT


REPORT = ReportPart(
    NAME,
    "Distractor entries",
    "`-T distractors=K`: K memory entries about no cell (rules, past episodes, the agent itself), never stale, "
    "mixed into the store. F1 is over the cells' entries alone, as in the paper; *distractors flagged* is the "
    "share of distractor judgments the auditor called stale (0 is right).",
    (
        ReportTable(
            "detection",
            "F1 and distractors flagged per K",
            (
                ReportColumn("model", "model"),
                ReportColumn("regime", "regime"),
                ReportColumn("modality", "modality"),
                ReportColumn("K", "value"),
                ReportColumn("seeds", "seeds"),
                ReportColumn("F1 with K", "runs"),
                ReportColumn("F1 with 0", "base"),
                ReportColumn("Δ F1", "delta"),
                ReportColumn("p", "p"),
                ReportColumn("distractors flagged", "share", ("distractors_flagged",), ("distractor_judgments",)),
            ),
        ),
        ReportTable(
            "navigation",
            "Death per strategy with K distractors",
            (
                ReportColumn("model", "model"),
                ReportColumn("regime", "regime"),
                ReportColumn("modality", "modality"),
                ReportColumn("strategy", "strategy"),
                ReportColumn("K", "value"),
                ReportColumn("seeds", "seeds"),
                ReportColumn("death with K", "runs"),
                ReportColumn("death with 0", "base"),
                ReportColumn("Δ death", "delta"),
                ReportColumn("p", "p"),
                ReportColumn("audit calls an episode", "average", ("audit_calls",)),
            ),
            "In navigation the distractors sit in the memory view, and OMCD and SelfVerify audit them like any "
            "entry (⌈(n² + K)/B⌉ calls an audit): death per strategy with K distractors beside death without them "
            "(per-seed rates).",
        ),
    ),
)
"""The report's part: F1 and the distractors flagged, and death per strategy, with K
distractors beside K = 0 on the same seeds."""

DISTRACTORS = DistractorsExtension()
