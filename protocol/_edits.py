"""Reading proposed memory edits (``-T edits=true``): the corrected entry an auditor
proposes for each entry it calls stale, e.g. ``"edit": "DANGER at (3,4): Hole - dangerous"``.

An edit is read from an object's edit key (:data:`EDIT_KEYS`) or from the text forms
real models write on a line (``mem_012: stale -> DANGER at (3,4): hole``,
``replace 'SAFE at (3,4)' with 'DANGER at (3,4)'``, ``SAFE at (3,4) → DANGER at (3,4)``,
a markdown table row). :func:`edit_claim` reads what an edit states about its cell;
:func:`judge_edit` marks it against the truth. Nothing a model writes is executed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ._scan import REASON_CHARS, clip

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
            new = match.group("new").strip().strip(_QUOTES + " .").strip()
            if new:
                return clip(new, EDIT_CHARS)
    return None


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
