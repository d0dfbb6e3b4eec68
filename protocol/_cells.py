"""Reading the perception probe's answers: the type of each cell asked about.

Answers are read by the grammar of ``_scan`` (reasoning stripped, JSON-like values
anywhere), as the audit's are; see :func:`read_perception`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from ._prompts import cell_label
from ._scan import (
    ID_CHARS,
    REASON_CHARS,
    Scan,
    batch_error,
    lowered,
    norm_key,
    partition,
    scan,
    scan_notes,
    stale_value,
    strip_reasoning,
)

# --- perception -------------------------------------------------------------------

CELL_WORDS = {
    "h": "H", "hole": "H", "holes": "H", "a_hole": "H", "water": "H", "lethal": "H", "hazard": "H",
    "danger": "H", "dangerous": "H", "deadly": "H", "unsafe": "H",
    "f": "F", "ice": "F", "frozen": "F", "frozen_ice": "F", "safe": "F", "frozen_lake": "F", "frozen_(safe)": "F",
    "s": "S", "start": "S", "starting": "S",
    "g": "G", "goal": "G", "finish": "G",
}  # fmt: skip
"""Cell types as a model may name them; the type is the letter of the grid listing."""
_CELL_NEGATIONS = {"not", "no", "isn't", "never", "non"}
ROW_KEYS = ("row", "r", "row_index", "y")
COL_KEYS = ("col", "column", "c", "col_index", "column_index", "x")
COORD_KEYS = ("cell", "coord", "coords", "coordinate", "coordinates", "pos", "position", "location", "loc", "at")
TYPE_KEYS = ("type", "cell_type", "cell", "value", "label", "tile", "kind", "content", "state", "terrain", "answer")
HOLE_KEYS = ("is_hole", "hole", "is_hazard", "hazard", "lethal", "is_lethal")
_COORD = re.compile(
    r"^\W*(?:row\s*|r\s*)?(\d{1,4})(?:\s*[,;/x]\s*|\s+|\W*(?:col(?:umn)?|c)\s*)(\d{1,4})\W*$", re.IGNORECASE
)
_PROSE_CELL = re.compile(
    r"\(\s*(?P<r>\d{1,4})\s*,\s*(?P<c>\d{1,4})\s*\)\**\s*(?:[:=|\-\u2013\u2014>]+|\bis\b(?:\s+an?\b)?)\s*[*_`\"']*"
    r"(?P<word>[A-Za-z]+(?:[ _]ice)?)\b"
    r"|\(\s*(?P<tr>\d{1,4})\s*,\s*(?P<tc>\d{1,4})\s*,\s*[\"']?(?P<tword>[A-Za-z]+(?:[ _]ice)?)[\"']?\s*\)",
    re.IGNORECASE,
)
"""``(1,2): hole``, ``(1,2) = H``, ``(1,2) is a hole``, a Python tuple ``(1, 2, 'H')``."""


def cell_value(value: Any) -> str | None:
    """A cell type (``S``, ``F``, ``H``, ``G``) named by ``value``, or None.

    A boolean reads as hole (True) or ice (False), for keys such as ``is_hole``. A
    phrase is read by its words: ``"Hole - dangerous, do not step"`` is a hole; words
    naming different types, or a negated one (``"not a hole"``), read as nothing.
    """
    if isinstance(value, bool):
        return "H" if value else "F"
    if not isinstance(value, str):
        return None
    whole = norm_key(value).strip("_.!*`\"'")
    if whole in CELL_WORDS:
        return CELL_WORDS[whole]
    words = [w for w in re.findall(r"[a-z']+", value.lower()[:REASON_CHARS]) if w not in ("a", "an")]
    named = set()
    for i, word in enumerate(words):
        if word in CELL_WORDS and len(word) > 1:
            if i and words[i - 1] in _CELL_NEGATIONS:
                return None
            named.add(CELL_WORDS[word])
    return named.pop() if len(named) == 1 else None


def coordinate(value: Any) -> tuple[int, int] | None:
    """A coordinate as a model may write it: ``"(1,2)"``, ``"1, 2"``, ``"r1c2"``,
    ``"row 1, col 2"``, ``[1, 2]``; None for anything else."""
    if isinstance(value, list) and len(value) == 2 and all(_index(v) is not None for v in value):
        return (_index(value[0]) or 0, _index(value[1]) or 0)
    if isinstance(value, str):
        match = _COORD.match(value[:ID_CHARS])
        if match:
            return (int(match.group(1)), int(match.group(2)))
    return None


def _index(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and 0 <= value < 10_000:
        return value
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 4:
        return int(value.strip())
    if isinstance(value, float) and value.is_integer() and 0 <= value < 10_000:
        return int(value)
    return None


@dataclass(frozen=True)
class _CellRecord:
    pos: tuple[int, int]
    cell: str | None
    conflicting: bool = False


def hole_or_not(cell: str) -> bool:
    """The class a reading counts in: two readings of one cell conflict when one is a hole
    and the other is not (S, F and G are all "not a hole")."""
    return cell == "H"


def _object_cell(low: dict[str, Any], skip: str | None = None) -> tuple[str | None, bool]:
    """(type, conflicting) from an object's type keys (``skip`` is its coordinate key)."""
    readings = []
    for key in TYPE_KEYS:
        if key != skip and key in low and (cell := cell_value(low[key])) is not None and not isinstance(low[key], bool):
            readings.append(cell)
    for key in HOLE_KEYS:
        if key != skip and key in low and isinstance(low[key], bool | str):
            hole = low[key] if isinstance(low[key], bool) else stale_value(low[key])
            if hole is not None:
                readings.append("H" if hole else "F")
    if len({cell == "H" for cell in readings}) > 1:
        return None, True
    # a named type is more exact than a hole flag: S, F and G are all "not a hole"
    return (readings[0] if readings else None), False


def _cell_records(found: Scan) -> list[_CellRecord]:
    """Cell readings from scanned containers: ``{"row", "col", "cell"}`` objects,
    ``{"cell": "(r,c)", "type": …}`` objects, objects keyed by coordinate
    (``{"(1,2)": "ice"}``, ``{"(1,2)": {"type": "H"}}``) and ``[r, c, "H"]`` lists."""
    records: list[_CellRecord] = []
    for container, _ in found.containers:
        if isinstance(container, list):
            if len(container) == 3 and (at := coordinate(container[:2])) is not None:
                cell = cell_value(container[2]) if not isinstance(container[2], bool) else None
                if cell is not None:
                    records.append(_CellRecord(at, cell))
            continue
        low = lowered(container)
        row = next((_index(low[k]) for k in ROW_KEYS if k in low and _index(low[k]) is not None), None)
        col = next((_index(low[k]) for k in COL_KEYS if k in low and _index(low[k]) is not None), None)
        pos: tuple[int, int] | None = (row, col) if row is not None and col is not None else None
        skip = None
        if pos is None:
            for key in COORD_KEYS:
                if key in low and (pos := coordinate(low[key])) is not None:
                    skip = key
                    break
        if pos is not None:
            cell, conflicting = _object_cell(low, skip)
            if cell is not None or conflicting:
                records.append(_CellRecord(pos, cell, conflicting))
                continue
        for key, value in container.items():
            if (pos := coordinate(str(key))) is None:
                continue
            if isinstance(value, dict):
                cell, conflicting = _object_cell(lowered(value))
                records.append(_CellRecord(pos, cell, conflicting))
            elif not isinstance(value, list):
                records.append(_CellRecord(pos, cell_value(value)))
    return records


def _prose_cell_records(text: str, limit: int) -> list[_CellRecord]:
    """``(1,2): hole`` lines and ``(1, 2, 'H')`` tuples, read when an answer has no
    structured reading at all."""
    records = []
    for match in islice(_PROSE_CELL.finditer(text), limit):
        if match.group("r") is not None:
            pos, word = (int(match.group("r")), int(match.group("c"))), match.group("word")
        else:
            pos, word = (int(match.group("tr")), int(match.group("tc"))), match.group("tword")
        records.append(_CellRecord(pos, cell_value(word)))
    return records


@dataclass
class PerceptionParse:
    """What one perception answer says about its batch of cells.

    ``readings`` maps each answered cell of the batch to its type (``S``, ``F``,
    ``H`` or ``G``); ``unanswered`` are batch cells with no readable type;
    ``conflicting`` are batch cells read both as a hole and as not a hole (neither
    counts as read). The three partition the batch. ``unknown_cells`` are cells the
    answer names outside the batch (ignored). ``error`` is set when not one cell of
    the batch could be read; ``notes`` say what else was off.
    """

    readings: dict[tuple[int, int], str] = field(default_factory=dict)
    unanswered: list[tuple[int, int]] = field(default_factory=list)
    conflicting: list[tuple[int, int]] = field(default_factory=list)
    unknown_cells: list[str] = field(default_factory=list)
    error: str | None = None
    notes: list[str] = field(default_factory=list)


def read_perception(text: str, cells: Iterable[tuple[int, int]]) -> PerceptionParse:
    """Read a perception answer: the type of each asked cell of the grid.

    A reading is an object naming a cell (``row`` and ``col``, or a coordinate under
    ``cell``/``coord``/``position`` …) and a type (``type``/``cell``/``value`` … as
    ``H``/``F``/``S``/``G`` or a word such as "hole", "ice", "frozen", "goal";
    ``is_hole`` as a boolean), an object keyed by coordinate (``{"(1,2)": "ice"}``,
    ``{"(1,2)": {"type": "H"}}``) or an ``[r, c, "H"]`` list, found anywhere in the
    answer (module grammar). Only when there is none, ``(1,2): hole`` lines and
    ``(1, 2, 'H')`` tuples are read. A cell given the same class twice counts once
    (the first type named is kept); a cell read both as a hole and as not a hole is
    ``conflicting``.
    """
    batch = list(dict.fromkeys(cells))
    asked = set(batch)
    result = PerceptionParse()
    answer = strip_reasoning(text)
    limit = 4 * len(batch) + 64
    found = scan(answer, limit)
    result.notes = scan_notes(found, answer, text)
    records = [r for r in _cell_records(found) if r.cell is not None or r.conflicting]
    records = records or [r for r in _prose_cell_records(answer, limit) if r.cell is not None]
    readings: dict[tuple[int, int], list[str]] = {}
    conflicted: set[tuple[int, int]] = set()
    for record in records:
        if record.pos not in asked:
            if (label := cell_label(record.pos)) not in result.unknown_cells:
                result.unknown_cells.append(label)
        elif record.conflicting:
            conflicted.add(record.pos)
        elif record.cell is not None:
            readings.setdefault(record.pos, []).append(record.cell)
    result.readings, result.unanswered, result.conflicting = partition(batch, readings, conflicted, hole_or_not)
    result.error = batch_error(
        batch, result.readings, result.conflicting, records, ("reading", "cell", "cell readings")
    )
    return result
