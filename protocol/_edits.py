"""Memory edits, an answer extension at the seams (``-T edits=true``, the paper's App. K):
for each entry an auditor calls stale it also proposes the corrected entry, e.g.
``"edit": "DANGER at (3,4): Hole - dangerous"``, judged against the cell's current type.

It plugs into the settings (its axis, read by the detection settings), the prompt
(:data:`EDITS_REQUEST` after the audit prompt), the answer (:class:`EditField`: the
schema's nullable ``edit``, how an edit is read, recorded per window and judged, and what
the reference agents and the dry run write) and the scores (``edits_correct`` ...
``edits_stale`` and the metric ``edit_accuracy``, :class:`EditsExtension`); the
report's App. K section reads the counts from the logs.

An edit is read from an object's edit key (:data:`EDIT_KEYS`) or from the text forms
real models write on a line (``mem_012: stale -> DANGER at (3,4): hole``,
``replace 'SAFE at (3,4)' with 'DANGER at (3,4)'``, ``SAFE at (3,4) → DANGER at (3,4)``,
a markdown table row). :func:`edit_claim` reads what an edit states about its cell;
:func:`judge_edit` marks it against the truth. Nothing a model writes is executed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from random import Random
from typing import Any, Literal

from spatialstale.env import Cell, Pos, entry_id, entry_text

from ._answers import read_audit
from ._axes import axis, boolean
from ._measures import Count, Rate, TaskMetric
from ._scan import REASON_CHARS, clip
from ._seams import Extension, ReportColumn, ReportPart, ReportTable, ScorePart, Scores

NAME = "edits"
"""The axis (``-T edits``), the sample metadata key and the window record's key."""

EDITS_REQUEST = """
For every entry you judge stale, also give the corrected entry under "edit", in the memory's own wording:
{"memory_id": "mem_028", "is_stale": true, "reason": "(3,4) is H in the current grid; the SAFE claim is stale", \
"edit": "DANGER at (3,4): Hole - dangerous, do not step"}"""
"""What ``-T edits=true`` adds at the end of the audit prompt (of any prompt set), so the
prompt up to it, and with it the default prompt, is unchanged."""

EDIT_KEYS = (
    "edit", "proposed_edit", "corrected", "corrected_entry", "correction", "replacement", "new_entry",
    "fix", "edited", "new_text", "replace_with", "updated_entry", "corrected_claim",
)  # fmt: skip
"""The object keys an edit is read from (normalised: lower case, ``_``), first found wins."""

EDIT_CHARS = REASON_CHARS
"""Characters of an edit kept: the memory's wording takes about 50."""

EditJudgment = Literal["correct", "wrong", "missing", "unreadable"]
EDIT_JUDGMENTS: tuple[EditJudgment, ...] = ("correct", "wrong", "missing", "unreadable")


def edit_value(low: Mapping[str, Any]) -> str | None:
    """The edit an object (keys normalised by ``lowered``) proposes, as text: a string as
    given, an object's or a list's strings joined; None when it holds none (null, empty)."""
    for key in EDIT_KEYS:
        if key in low and (text := _as_text(low[key])) is not None:
            return text
    return None


def _as_text(value: Any, depth: int = 0) -> str | None:
    if value is None or depth > 3:
        return None
    if isinstance(value, str):
        return clip(value, EDIT_CHARS) or None
    if isinstance(value, bool | int | float):
        return clip(value, EDIT_CHARS)  # read as text: no claim in it, so unreadable
    parts = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    joined = " ".join(t for p in list(parts)[:16] if (t := _as_text(p, depth + 1)) is not None)
    return clip(joined, EDIT_CHARS) or None


# --- text forms --------------------------------------------------------------------

_QUOTES = "\"'`*\u201c\u201d\u2018\u2019"
_REPLACE = re.compile(r"\breplace\b(?P<old>[^\n]*?)\bwith\b\s*(?P<new>[^\n]+)", re.IGNORECASE)
_UPDATE = re.compile(r"\b(?:update|change|rewrite)\b(?P<old>[^\n]*?)\b(?:to|into)\b\s*(?P<new>[^\n]+)", re.IGNORECASE)
_LABELLED = re.compile(
    r"\b(?:edit|proposed\s+edit|corrected(?:\s+entry)?|correction|replacement|new\s+entry|fix)\b\s*[:=]\s*"
    r"(?P<new>[^\n]+)",
    re.IGNORECASE,
)
_ARROWED = re.compile(r"(?P<old>[^\n]*?)\s*(?:->|-->|=>|→|⟶|⇒|➔)\s*(?P<new>[^\n]+)")
_CLAIM_CELL = re.compile(r"\b(?:SAFE|DANGER|UNSAFE|HOLE|ICE|FROZEN|START|GOAL)\b[^|\n]*?\(\s*\d+\s*,\s*\d+\s*\)")
_COORD = re.compile(r"[(\[]\s*(\d{1,4})\s*,\s*(\d{1,4})\s*[)\]]")
_ID = re.compile(r"\bmem(?:ory)?[_\- ]?(?:id[_\- ]?)?0*(\d{1,6})\b", re.IGNORECASE)

MAX_EDIT_LINES = 256
"""Lines of an answer read for text-form edits; the rest are not read."""


def line_edit(line: str) -> str | None:
    """The replacement a line proposes, if it proposes one: after ``replace X with``,
    an ``edit:`` label or an arrow; in a markdown table row, the last cell in the
    memory's wording (``DANGER at (3,4) ...``)."""
    if line.count("|") >= 2:
        cells = [c.strip().strip(_QUOTES) for c in line.strip().strip("|").split("|")]
        worded = [c for c in cells if _CLAIM_CELL.search(c)]
        if worded:
            return clip(worded[-1], EDIT_CHARS) or None
    for pattern in (_REPLACE, _LABELLED, _UPDATE, _ARROWED):
        match = pattern.search(line)
        if match:
            new = _balanced(match.group("new").strip().strip(_QUOTES + " .").strip())
            if new:
                return clip(new, EDIT_CHARS)
    return None


def _balanced(text: str) -> str:
    """``text`` without the closing brackets at its end that it never opened: the edit of
    ``stale (edit: DANGER at (3,4): hole)`` is ``DANGER at (3,4): hole``."""
    while text and text[-1] in ")]" and text.count(text[-1]) > text.count("(" if text[-1] == ")" else "["):
        text = text[:-1].rstrip()
    return text


def text_edits(text: str, cells: Mapping[str, tuple[int, int]]) -> dict[str, str]:
    """Edits proposed in prose, one a line, by id: a line naming an entry's id, or, when
    it names none, the entry whose cell is the first coordinate on the line (``replace
    'SAFE at (3,4)' with ...``). The first edit of an id wins; ids not in ``cells``
    are left out."""
    by_number = {_number(mid): mid for mid in cells}
    by_cell = {pos: mid for mid, pos in cells.items()}
    out: dict[str, str] = {}
    for line in text.splitlines()[:MAX_EDIT_LINES]:
        # an object's edit is read from its key; its other values (a reason "F -> H") are not edits
        new = None if "{" in line else line_edit(line)
        if new is None:
            continue
        named = _ID.search(line)
        if named is not None:
            mid = by_number.get(int(named.group(1)))
        else:
            at = _COORD.search(line)
            mid = by_cell.get((int(at.group(1)), int(at.group(2)))) if at else None
        if mid is not None:
            out.setdefault(mid, new)
    return out


def _number(mid: str) -> int:
    match = _ID.search(mid)
    return int(match.group(1)) if match else -1


# --- what an edit states -----------------------------------------------------------

_TYPE_WORDS = re.compile(
    r"\b(?P<hole>DANGER|DANGEROUS|UNSAFE|HOLE|HOLES|LETHAL|DEADLY)\b|\b(?P<safe>SAFE|ICE|FROZEN)\b"
    r"|\b(?P<other>START|GOAL)\b|(?<![\w'\u2019])(?P<letter>[HFSG])(?![\w'\u2019])",
    re.IGNORECASE,
)
_PAST = re.compile(
    r"\b(?:was|were|previously|formerly|before|used\s+to\s+be|instead\s+of|no\s+longer|not|never|isn't|wasn't|"
    r"from|old|rather\s+than)\b",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[,;.:!?()\[\]|\n]|\s[-\u2013\u2014]\s|->|→|=>|\bnow\b|\bbut\b", re.IGNORECASE)


def _claims(edit: str) -> set[bool]:
    """The hazards an edit states of its cell: True for a hole, False for no hazard
    (safe ice, the start or the goal). A word in a clause that names the old state or
    negates it ("was safe ice", "not safe", "no longer frozen") is not a claim."""
    found: set[bool] = set()
    for match in _TYPE_WORDS.finditer(edit):
        word = match.group()
        if match.group("letter") is not None and not word.isupper():
            continue
        start = max((m.end() for m in _CLAUSE_END.finditer(edit, 0, match.start())), default=0)
        if _PAST.search(edit, start, match.start()):
            continue
        if match.group("letter") is not None:
            found.add(word.upper() == "H")
        else:
            found.add(match.group("hole") is not None)
    return found


@dataclass(frozen=True)
class EditClaim:
    """What an edit states: ``hole`` True (a hole), False (no hazard), None (neither or
    both: unreadable), and the cells it names."""

    hole: bool | None
    cells: tuple[tuple[int, int], ...] = ()


def edit_claim(edit: str) -> EditClaim:
    """Read an edit: the hazard it states of its cell, and every ``(r,c)`` it names."""
    claims = _claims(edit)
    cells = tuple(dict.fromkeys((int(m.group(1)), int(m.group(2))) for m in _COORD.finditer(edit)))
    return EditClaim(next(iter(claims)) if len(claims) == 1 else None, cells)


def judge_edit(edit: str | None, pos: tuple[int, int], now_hole: bool) -> EditJudgment:
    """A stale entry's proposed edit against the cell's current type.

    ``missing``: no edit. ``unreadable``: it states both a hole and no hazard, or
    neither. ``wrong``: it names a cell other than ``pos``, or states the wrong
    hazard. ``correct``: it states the cell's current hazard (and names no other cell).
    """
    if edit is None or not edit.strip():
        return "missing"
    claim = edit_claim(edit)
    if any(cell != tuple(pos) for cell in claim.cells):
        return "wrong"
    if claim.hole is None:
        return "unreadable"
    return "correct" if claim.hole == now_hole else "wrong"


def edit_counts(judgments: Iterable[EditJudgment]) -> dict[str, int]:
    """``edits_correct``, ``edits_wrong``, ``edits_missing``, ``edits_unreadable``."""
    listed = list(judgments)
    return {f"edits_{j}": sum(x == j for x in listed) for j in EDIT_JUDGMENTS}


# --- the extension -----------------------------------------------------------------


@dataclass(frozen=True)
class EditsAxes:
    """The edits' axis, read by the detection settings."""

    edits: bool = axis(
        False,
        "for each entry judged stale, also ask for the corrected entry, scored by edit_accuracy (App. K); "
        "off in the paper",
        read=boolean,
        title="edits",
        flag="--edits",
        in_id=lambda on: "-edits",
        show=lambda on: str(on).lower(),
        recorded=True,
    )


_ASKED = re.compile(r"[\"']edit[\"']\s*:")
"""An audit prompt that asks for an ``edit`` of each stale entry (its example's key)."""


def corrected(pos: Pos, cell: str) -> str:
    """The entry about ``pos`` as memory would word it were the cell ``cell`` (S, F, H or
    G; anything else, an unseen cell, as ice)."""
    return entry_text(pos, Cell(cell) if cell in "SFHG" else Cell.FROZEN)


@dataclass(frozen=True)
class EditField:
    """The ``edit`` each audit verdict gains: the corrected entry, or null."""

    name: str = "edit"
    record: str = NAME
    judged: str = "edit judged"

    def read(self, low: Mapping[str, Any]) -> str | None:
        return edit_value(low)

    def read_prose(self, answer: str, cells: Mapping[str, Pos]) -> dict[str, str]:
        return text_edits(answer, cells)

    def judge(self, value: str | None, pos: Pos, now: Cell) -> str:
        return judge_edit(value, pos, now is Cell.HOLE)

    def asked(self, prompt: str) -> bool:
        return _ASKED.search(prompt) is not None

    def believed(self, pos: Pos, cell: str) -> str:
        # the edit states what the auditor believes is at the cell now
        return corrected(pos, cell)

    def guessed(self, pos: Pos, rng: Random) -> str:
        """A coin's edit: one in five names the wrong cell, the others a random type."""
        r, c = pos
        if rng.random() < 0.2:
            return f"DANGER at ({r + 1},{c}): Hole - dangerous, do not step"
        return corrected(pos, rng.choice("HF"))


EDIT = EditField()


def read_edits(
    text: str, batch_ids: Iterable[str], cells: Mapping[str, tuple[int, int]] | None = None
) -> dict[str, str]:
    """The edits an audit answer proposes for the entries it judges stale, by id (prose
    is read only given the batch's ``cells``): ``read_audit`` with the edit field."""
    return read_audit(text, batch_ids, cells, (EDIT,)).fields[EDIT.name]


EDIT_COUNTS = tuple(f"edits_{judgment}" for judgment in EDIT_JUDGMENTS)
"""Each truly stale entry is exactly one of these, as the score names them."""

EDIT_ACCURACY = Rate("edit_accuracy", ("edits_correct",), ("edits_stale",), clean="fp")

SCORES = Scores(
    counts=(
        Count(
            "edits_correct",
            "cell judgments",
            "a stale cell entry flagged with an edit that states its cell's current type (`-T edits=true`)",
        ),
        Count("edits_stale", "cell judgments", "a stale cell entry (`-T edits=true`; equals `tp + fn`)"),
    ),
    rates=(EDIT_ACCURACY,),
    metrics=(TaskMetric("edit_accuracy", EDIT_ACCURACY, only=NAME),),
    when=" (with `-T edits=true`)",
    columns=EDIT_COUNTS,
)
"""Added after the others with ``-T edits=true``: ``edit_accuracy``, the truly stale
entries given a correct edit over the truly stale entries, pooled."""


def cell_positions(size: int, cell_ids: Sequence[str] | None = None) -> dict[str, tuple[int, int]]:
    """Each cell entry's (row, col), by id: ``cell_ids`` are the cells' ids in row-major
    order when an extension's entries shuffled them (the sample metadata's ``cell_ids``); else the
    paper's ``mem_{row*n+col}``."""
    ids = cell_ids or [entry_id((r, c), size) for r in range(size) for c in range(size)]
    return {ids[r * size + c]: (r, c) for r in range(size) for c in range(size)}


def edit_judgments(
    windows: Sequence[Mapping[str, Any]], positions: Mapping[str, tuple[int, int]]
) -> list[dict[str, Any]]:
    """Each truly stale entry of each window with the edit proposed for it (``None``
    when it was not flagged, or flagged without one) and its judgment against the
    window's grid: ``correct``, ``wrong``, ``missing`` or ``unreadable``."""
    out: list[dict[str, Any]] = []
    for index, window in enumerate(windows):
        flagged = set(window["flagged"])
        edits = window.get(NAME) or {}
        for mid in window["truth"]:
            if mid not in positions:
                continue
            r, c = positions[mid]
            now_hole = window["grid"][r][c] == "H"
            edit = edits.get(mid) if mid in flagged else None
            judged = judge_edit(edit, (r, c), now_hole)
            out.append({"window": index, "id": mid, "now": "H" if now_hole else "F", "edit": edit, "judged": judged})
    return out


@dataclass(frozen=True)
class EditsExtension(Extension):
    name: str = "edits"
    kinds: tuple[str, ...] = ("detection",)
    axes: type = EditsAxes

    def active(self, values: Mapping[str, Any]) -> bool:
        return bool(values.get(NAME))

    def prompt(self, call: str, values: Mapping[str, Any], prompt: str) -> str:
        # after the set's audit prompt (and what other extensions made of it): the set's texts are unchanged
        return prompt + EDITS_REQUEST if call == "audit" and self.active(values) else prompt

    def verdict_field(self) -> EditField:
        return EDIT

    def scores(self, kind: str) -> Scores:
        return SCORES

    def score(self, kind: str, metadata: Mapping[str, Any], windows: Sequence[Mapping[str, Any]]) -> ScorePart | None:
        if not self.active(metadata):
            return None
        edits = edit_judgments(windows, cell_positions(len(metadata["g0"]), metadata.get("cell_ids")))
        counts = {**edit_counts(e["judged"] for e in edits), "edits_stale": len(edits)}
        clause = (
            f"; edits of the {len(edits)} stale entries: correct {counts['edits_correct']}, wrong "
            f"{counts['edits_wrong']}, missing {counts['edits_missing']}, unreadable {counts['edits_unreadable']}"
        )
        return ScorePart(counts, clause, {NAME: edits})

    def report(self) -> ReportPart:
        return REPORT


REPORT = ReportPart(
    NAME,
    "Memory edits",
    "`-T edits=true`: for each entry it calls stale the auditor proposes the corrected entry. *Edit accuracy*: "
    "the share of truly stale entries whose proposed edit states the cell's current type (mean of per-seed "
    "shares); *right / stale* pools them. *Wrong*: an edit stating another type, or about another cell; "
    "*missing*: a stale entry without an edit (including one not flagged); *unreadable*: an edit that states "
    "no type, or both.",
    (
        ReportTable(
            "detection",
            "Edit accuracy beside F1",
            (
                ReportColumn("model", "model"),
                ReportColumn("regime", "regime"),
                ReportColumn("modality", "modality"),
                ReportColumn("seeds", "seeds"),
                ReportColumn("F1", "runs"),
                ReportColumn("edit accuracy", "ratio", EDIT_COUNTS[:1], EDIT_COUNTS),
                ReportColumn("right / stale", "pooled", EDIT_COUNTS[:1], EDIT_COUNTS),
                *(ReportColumn(count.removeprefix("edits_"), "total", (count,)) for count in EDIT_COUNTS[1:]),
                ReportColumn("Δ F1 vs no edits", "delta"),
                ReportColumn("p", "p"),
            ),
        ),
    ),
)
"""The report's part: edit accuracy (each truly stale entry is exactly one of
:data:`EDIT_COUNTS`) beside F1 without edits on the same seeds."""

EDITS = EditsExtension()
