"""Reading model answers: audit verdicts, SelfVerify's inconsistent ids, a navigation action.

Every reader reads by the grammar of ``_scan`` (reasoning stripped, JSON-like values
anywhere), applies its own rules (``read_audit``, ``read_selfverify``, ``read_action``)
and reports what it could not read. The perception probe's reader is in ``_cells``.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Literal

from spatialstale.env import Action

from ._scan import (
    MEMORY_ID,
    REASON_CHARS,
    IdBook,
    Scan,
    batch_error,
    clip,
    lowered,
    partition,
    scan,
    scan_notes,
    stale_value,
    strip_reasoning,
)
from ._seams import VerdictField

ACTION_WORDS = {"UP": Action.UP, "DOWN": Action.DOWN, "LEFT": Action.LEFT, "RIGHT": Action.RIGHT}

# --- audit ------------------------------------------------------------------------

ID_KEYS = ("memory_id", "id", "entry_id", "mem_id", "memoryid", "entry", "memory", "memory_entry", "mem", "key")
STALE_KEYS = ("is_stale", "stale", "isstale", "is_outdated", "outdated", "changed", "is_changed")
VALID_KEYS = ("is_valid", "valid", "is_consistent", "consistent", "still_valid", "holds", "is_correct", "correct")
WORD_KEYS = ("verdict", "status", "label", "judgment", "judgement", "result", "assessment", "decision", "answer")
REASON_KEYS = ("reason", "reasoning", "explanation", "justification", "rationale", "why", "evidence")


def _object_verdict(low: dict[str, Any]) -> tuple[bool | None, bool]:
    """(stale?, conflicting) from an object's verdict keys (normalised by
    :func:`lowered`); conflicting when they disagree."""
    readings = set()
    for key in STALE_KEYS + WORD_KEYS:
        if key in low and (reading := stale_value(low[key])) is not None:
            readings.add(reading)
    for key in VALID_KEYS:
        if key in low and (reading := stale_value(low[key])) is not None:
            readings.add(not reading)
    if len(readings) > 1:
        return None, True
    return (readings.pop() if readings else None), False


def _reason(low: dict[str, Any]) -> str:
    return next((clip(low[k], REASON_CHARS) for k in REASON_KEYS if isinstance(low.get(k), str)), "")


@dataclass(frozen=True)
class _Record:
    raw_id: str
    stale: bool | None
    reason: str = ""
    conflicting: bool = False
    fields: tuple[tuple[str, str], ...] = ()
    """The extensions' verdict fields the object holds: (name, value)."""


def _fields(low: Mapping[str, Any], fields: Sequence[VerdictField]) -> tuple[tuple[str, str], ...]:
    return tuple((f.name, value) for f in fields if (value := f.read(low)) is not None)


def _records(found: Scan, book: IdBook, fields: Sequence[VerdictField] = ()) -> list[_Record]:
    """Verdict records from scanned objects: ``{"memory_id": …, "is_stale": …}`` objects,
    and objects keyed by memory id (``{"mem_001": true}``, ``{"mem_001": {"is_stale": …}}``)."""
    records: list[_Record] = []
    for obj in found.dicts:
        low = lowered(obj)
        raw_id = next(
            (low[k] for k in ID_KEYS if isinstance(low.get(k), str | int) and not isinstance(low[k], bool)), None
        )
        if raw_id is not None:
            stale, conflicting = _object_verdict(low)
            if stale is not None or conflicting or MEMORY_ID.match(str(raw_id)):
                records.append(_Record(clip(raw_id), stale, _reason(low), conflicting, _fields(low, fields)))
                continue
        for key, value in obj.items():
            if MEMORY_ID.match(str(key)) is None:
                continue
            if isinstance(value, dict):
                inner = lowered(value)
                stale, conflicting = _object_verdict(inner)
                records.append(_Record(clip(key), stale, _reason(inner), conflicting, _fields(inner, fields)))
            elif not isinstance(value, list):
                records.append(_Record(clip(key), stale_value(value)))
    return records


_LINE_VERDICT = re.compile(
    r"^[\s>*\-•|#\d.)]*\[?(?P<id>mem[_\- ]?\d{1,6})\]?\**\s*(?:[:=|\-\u2013\u2014]+|\bis\b)\s*[*_`\"']*"
    r"(?P<word>not\s+stale|stale|valid|true|false|yes|no|outdated|current|consistent|inconsistent|fresh|unchanged)\b",
    re.IGNORECASE | re.MULTILINE,
)


def _line_records(text: str, limit: int) -> list[_Record]:
    """``mem_001: stale`` lines, read when an answer has no structured verdict at all."""
    return [_Record(m.group("id"), stale_value(m.group("word"))) for m in islice(_LINE_VERDICT.finditer(text), limit)]


@dataclass
class AuditParse:
    """What one audit answer says about its batch.

    ``verdicts`` maps each answered id of the batch to (is_stale, reason).
    ``unanswered`` are batch ids with no readable verdict (left unflagged);
    ``conflicting`` are batch ids given contradicting verdicts (left unflagged,
    counted apart from unanswered); ``unknown_ids`` are ids the answer names that
    are not in the batch (ignored). ``error`` is set when not one verdict for the
    batch could be read; ``notes`` say what else was off (truncated, reasoning only).
    ``fields`` holds, by verdict field (an extension's, ``_seams.VerdictField``), its
    value for each id judged stale, when the answer gives one.
    """

    verdicts: dict[str, tuple[bool, str]] = field(default_factory=dict)
    unanswered: list[str] = field(default_factory=list)
    conflicting: list[str] = field(default_factory=list)
    unknown_ids: list[str] = field(default_factory=list)
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    fields: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def flagged(self) -> set[str]:
        return {mid for mid, (stale, _) in self.verdicts.items() if stale}


def read_audit(
    text: str,
    batch_ids: Iterable[str],
    cells: Mapping[str, tuple[int, int]] | None = None,
    fields: Sequence[VerdictField] = (),
) -> AuditParse:
    """Read an audit answer for a batch of memory ids.

    A verdict is an object naming a memory id (``memory_id``, ``id``, ``entry`` …)
    and a verdict (``is_stale``/``stale``/``outdated`` as a boolean or a word such as
    "stale"/"valid"/"yes"; ``is_valid``/``consistent`` read inverted; ``verdict``/
    ``status``/``label`` words), or an object keyed by memory id
    (``{"mem_001": true}``, ``{"mem_001": {"is_stale": true}}``, ``{"mem_001":
    "stale"}``), found anywhere in the answer (module grammar). Only when there is
    none, ``mem_001: stale`` lines are read. An id given the same verdict twice
    counts once; an id given contradicting verdicts is ``conflicting``.

    Each of ``fields`` (the extensions' verdict fields) is read for an entry judged
    stale from its object (:meth:`VerdictField.read`), else, given the batch's ``cells``
    (id -> (row, col)), from the answer's prose (:meth:`VerdictField.read_prose`).
    """
    book = IdBook(batch_ids)
    result = AuditParse()
    answer = strip_reasoning(text)
    limit = 4 * len(book.ids) + 64
    found = scan(answer, limit)
    result.notes = scan_notes(found, answer, text)
    records = _records(found, book, fields) or _line_records(answer, limit)
    readings: dict[str, list[tuple[bool, str]]] = {}
    given: dict[str, dict[str, str]] = {f.name: {} for f in fields}
    conflicted: set[str] = set()
    for record in records:
        mid = book.lookup(record.raw_id)
        if mid is None:
            if record.raw_id not in result.unknown_ids:
                result.unknown_ids.append(record.raw_id)
        elif record.conflicting:
            conflicted.add(mid)
        elif record.stale is not None:
            readings.setdefault(mid, []).append((record.stale, record.reason))
            for name, value in record.fields if record.stale else ():
                given[name].setdefault(mid, value)
    result.verdicts, result.unanswered, result.conflicting = partition(book.ids, readings, conflicted, lambda v: v[0])
    flagged = result.flagged
    for f in fields:
        found_in_prose = f.read_prose(answer, cells) if cells is not None else {}
        result.fields[f.name] = {mid: v for mid, v in {**found_in_prose, **given[f.name]}.items() if mid in flagged}
    result.error = batch_error(book.ids, result.verdicts, result.conflicting, records, ("verdict", "entry", "verdicts"))
    return result


# --- SelfVerify -------------------------------------------------------------------

INCONSISTENT_KEYS = (
    "inconsistent", "inconsistent_ids", "inconsistent_entries", "stale", "stale_ids", "stale_entries",
    "remove", "to_remove", "entries_to_remove", "flagged", "outdated", "invalid",
)  # fmt: skip
CONSISTENT_KEYS = ("consistent", "consistent_ids", "consistent_entries", "valid", "valid_ids", "keep", "to_keep")


def _id_items(value: Any) -> list[Any] | None:
    """The ids a list value names: strings, ``{"memory_id": …}`` objects, or a comma list."""
    if isinstance(value, str):
        return [part for part in re.split(r"[,;\s]+", value) if part]
    if isinstance(value, list):
        out: list[Any] = []
        for item in value:
            if isinstance(item, dict):
                low = lowered(item)
                item = next((low[k] for k in ID_KEYS if k in low), None)
            if isinstance(item, str):
                out.append(item)
            elif item is not None:
                out.append(clip(item))
        return out
    return None


@dataclass
class SelfVerifyParse:
    """The ids a SelfVerify answer calls inconsistent (``flagged``), ids it both
    flags and clears (``conflicting``: kept, counted), and ids not in the store."""

    flagged: set[str] = field(default_factory=set)
    conflicting: list[str] = field(default_factory=list)
    unknown_ids: list[str] = field(default_factory=list)
    error: str | None = None
    notes: list[str] = field(default_factory=list)


_LABELLED_IDS = re.compile(
    r"\b(?:inconsistent|stale|remove)(?:\s+(?:entries|ids|memories))?\s*[:=]\s*(?P<ids>[^\n]*)", re.IGNORECASE
)
_ANY_ID = re.compile(r"mem[_\- ]?\d{1,6}", re.IGNORECASE)


def _lines_with(text: str, words: tuple[str, ...], limit: int = 64) -> list[str]:
    """The first ``limit`` lines of ``text`` holding any of ``words`` (any case)."""
    low = text.lower()
    starts: set[int] = set()
    for word in words:
        at = low.find(word)
        while at >= 0 and len(starts) < limit:
            starts.add(low.rfind("\n", 0, at) + 1)
            at = low.find(word, at + len(word))
    out = []
    for start in sorted(starts)[:limit]:
        end = low.find("\n", start)
        out.append(text[start : end if end >= 0 else len(text)])
    return out


def _known(book: IdBook, raws: list[Any], unknown: list[str]) -> set[str]:
    """The store ids ``raws`` name; the others are appended to ``unknown`` (once each)."""
    out: set[str] = set()
    for raw in raws:
        mid = book.lookup(raw)
        if mid is not None:
            out.add(mid)
        elif (clipped := clip(raw)) and clipped not in unknown:
            unknown.append(clipped)
    return out


def read_selfverify(text: str, store_ids: Iterable[str]) -> SelfVerifyParse:
    """Read a SelfVerify answer: the ids it calls inconsistent.

    Read, wherever they are in the answer (module grammar): a list (or one id, or a
    comma-separated string) under ``inconsistent``/``stale``/``remove`` …, also
    inside any wrapper; a bare top-level list of ids; per-entry verdicts as in the
    audit. Ids listed under ``consistent``/``valid``/``keep``, or given a valid
    verdict, clear an entry; an entry both flagged and cleared is ``conflicting``
    and kept. Only when there is no such value, an ``Inconsistent: mem_012,
    mem_044`` line is read. An answer with none of these is an ``error`` and flags
    nothing.
    """
    book = IdBook(store_ids)
    result = SelfVerifyParse()
    answer = strip_reasoning(text)
    found = scan(answer, 2 * len(book.ids) + 64)
    result.notes = scan_notes(found, answer, text)
    flag_raw: list[Any] = []
    clear_raw: list[Any] = []
    readable = False
    for container, depth in found.containers:
        if isinstance(container, list):
            if depth == 0 and all(isinstance(x, str) for x in container):
                flag_raw += container
                readable = True
            continue
        low = lowered(container)
        for keys, bucket in ((INCONSISTENT_KEYS, flag_raw), (CONSISTENT_KEYS, clear_raw)):
            for key in keys:
                items = _id_items(low.get(key)) if key in low else None
                if items is not None:
                    bucket += items
                    readable = True
    for record in _records(found, book):
        readable = True
        if record.stale is not None:
            (flag_raw if record.stale else clear_raw).append(record.raw_id)
    if not readable:
        for line in _lines_with(answer, ("inconsistent", "stale", "remove")):
            for match in _LABELLED_IDS.finditer(line):
                flag_raw += _ANY_ID.findall(match.group("ids"))
                readable = True
    if not readable:
        result.error = "no list of inconsistent ids found"
        return result
    flagged = _known(book, flag_raw, result.unknown_ids)
    cleared = _known(book, clear_raw, result.unknown_ids)
    result.conflicting = sorted(flagged & cleared)
    result.flagged = flagged - cleared
    return result


# --- navigation -------------------------------------------------------------------

ACTION_KEYS = ("action", "move", "direction", "next_action", "next_move", "answer", "final_answer", "choice")
_LETTERS = {"U": "UP", "D": "DOWN", "L": "LEFT", "R": "RIGHT"}
_DIRECTION = r"(?P<dir>up|down|left|right)"
_COMMIT_BEFORE = re.compile(
    r"(?:\b(?:final\s+)?(?:action|move|answer|decision|choice|direction)\b(?:\s+(?:is|will\s+be|would\s+be))?"
    r"|\bI(?:\s+will|'ll|\s+choose\s+to|\s+am\s+going\s+to|'m\s+going\s+to|\s+should|\s+must|\s+would)?\s+"
    r"(?:move|go|step|head|choose|pick|take|select)"
    r"|\b(?:let's|let\s+us)\s+(?:move|go|step|head)"
    r"|\bmy\s+(?:next\s+)?(?:move|action|choice)(?:\s+is)?"
    r"|\bchoose|\bgo|\bmove)"
    r"[\s:=\-\u2013\u2014>*`\"'(\[]*$",
    re.IGNORECASE,
)
"""A label or a verb of commitment right before a direction: "Action:", "I'll go"."""
MAX_DIRECTIONS = 64
"""Directions read from one answer; an answer naming more is not read past them (counted)."""
_WINDOW = 300
"""Characters around a direction that its clause is looked for in."""
_CLAUSE = re.compile(r"[.;!?\n]+|,\s*(?:but|so|then|therefore|thus|hence|instead)\b|\b(?:but|so|therefore|thus)\b")
_NEGATION_BEFORE = re.compile(
    r"\b(?:not|never|no|avoid\w*|without|instead\s+of|rather\s+than|cannot|can't|won't|don't|shouldn't|mustn't|"
    r"isn't|wouldn't|neither|nor|against|except)\b|n't\b",
    re.IGNORECASE,
)
_NEGATION_AFTER = re.compile(
    r"\b(?:mistake|hole|holes|danger\w*|unsafe|blocked|lethal|wrong|bad|death|die|dies|fatal|deadly|"
    r"not|isn't|impossible|off\s+the\s+grid|wall|risky)\b",
    re.IGNORECASE,
)
_NOT_WORD = string.punctuation + string.whitespace
"""What may stand around a direction given on its own: "**Right.**"."""
_SCAN_BUDGET = 4 * MAX_DIRECTIONS


def _direction_spans(text: str) -> tuple[list[tuple[int, int]], bool]:
    """Where the first ``MAX_DIRECTIONS`` direction words stand (any case, whole words),
    and whether there were more. ``str.find`` keeps this fast on any text."""
    low = text.lower()
    spans: list[tuple[int, int]] = []
    overlong = False
    for word in ("up", "down", "left", "right"):
        at, seen = low.find(word), 0
        while at >= 0:
            seen += 1
            if seen > _SCAN_BUDGET:
                overlong = True
                break
            end = at + len(word)
            if (at == 0 or not _wordy(low[at - 1])) and (end == len(low) or not _wordy(low[end])):
                spans.append((at, end))
            at = low.find(word, end)
    spans.sort()
    if len(spans) > MAX_DIRECTIONS:
        overlong = True
        del spans[MAX_DIRECTIONS:]
    return spans, overlong


def _wordy(char: str) -> bool:
    return char.isalnum() or char == "_"


ActionStatus = Literal["read", "ambiguous", "unreadable"]


@dataclass(frozen=True)
class ActionParse:
    """The action an answer commits to; ``status`` says why there is none.

    ``read``: one action. ``ambiguous``: the answer commits to different actions,
    or names directions only to reject them. ``unreadable``: no direction at all.
    ``candidates`` lists what was considered, for the transcript.
    """

    action: Action | None
    status: ActionStatus
    candidates: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def _direction(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    word = value.strip().strip("\"'`*.!").upper()
    word = _LETTERS.get(word, word)
    if word in ACTION_WORDS:
        return word
    match = re.fullmatch(r"(?:MOVE|GO|STEP)\s*(?:TO\s+THE\s+)?(UP|DOWN|LEFT|RIGHT)", word)
    return match.group(1) if match else None


_PARENS = re.compile(r"\([^()\n]{0,40}\)")
_SUBCLAUSE = re.compile(r",\s+|\s[\u2013\u2014-]\s|\bwhile\b|\bwhereas\b")


def _mask_parens(text: str) -> str:
    """``text`` with short parenthesised asides blanked, same length: a coordinate such
    as ``(1, 0)`` must not split a clause, nor its contents count as words."""
    return _PARENS.sub(lambda m: "(" + " " * (len(m.group()) - 2) + ")", text)


def _negated(masked: str, start: int, end: int) -> bool:
    """Whether the direction at ``[start, end)`` is rejected within its sub-clause:
    a negation before it ("not", "avoid", "rather than" …) or a verdict after it
    ("would be a mistake", "is a hole" …)."""
    left = max((m.end() for m in _CLAUSE.finditer(masked, 0, start)), default=0)  # masked is a short window
    left = max([left, *(m.end() for m in _SUBCLAUSE.finditer(masked, left, start))])
    right_clause = _CLAUSE.search(masked, end)
    right = right_clause.start() if right_clause else len(masked)
    right_sub = _SUBCLAUSE.search(masked, end, right)
    if right_sub:
        right = right_sub.start()
    return bool(_NEGATION_BEFORE.search(masked, left, start) or _NEGATION_AFTER.search(masked, end, right))


def read_action(text: str) -> ActionParse:
    """Read the action a navigation answer commits to.

    In order: (1) ``action``/``move``/``direction`` values of JSON-like objects; (2)
    labelled or stated moves ("Action: UP", "my move is right", "I'll go DOWN"),
    any letter case, unless negated in their clause; (3) a direction named on its
    own ("RIGHT", "**Right.**"); (4) upper-case direction words in the text that
    their clause does not reject ("not", "avoid", "would be a mistake", "… is a
    hole" …); when several remain, the one stated in the last sentence that names
    a direction. The first rule that finds anything decides: one distinct action is
    read; different ones are ``ambiguous``. Directions named only to be rejected
    are ``ambiguous`` too; no direction at all is ``unreadable``.
    """
    answer = strip_reasoning(text)
    found = scan(answer, MAX_DIRECTIONS)
    notes = tuple(scan_notes(found, answer, text))
    json_moves = []
    for obj in found.dicts:
        low = lowered(obj)
        for key in ACTION_KEYS:
            if key in low and (move := _direction(low[key])) is not None:
                json_moves.append(move)
                break
    if json_moves:
        return _decide(json_moves, notes)
    directions, overlong = _direction_spans(answer)
    if overlong:
        notes += ("overlong: stopped reading before the end of the answer",)
    committed: list[str] = []
    rejected: list[str] = []
    mentions: list[str] = []
    mention_at: list[tuple[int, str]] = []
    for start, end in directions:
        lo = max(0, start - _WINDOW)
        window = _mask_parens(answer[lo : end + _WINDOW])
        here, there = start - lo, end - lo
        word = answer[start:end]
        negated = _negated(window, here, there)
        if _COMMIT_BEFORE.search(window, max(0, here - 60), here):
            (rejected if negated else committed).append(word.upper())
        elif word.isupper() or (word.istitle() and (start == 0 or answer[start - 1] in "*`\"'\n")):
            if negated:
                rejected.append(word.upper())
            else:
                mentions.append(word.upper())
                mention_at.append((start, word.upper()))
    if committed:
        return _decide(committed, notes)
    bare = answer.strip(_NOT_WORD).upper()
    if bare in ACTION_WORDS:
        return _decide([bare], notes)
    if len(set(mentions)) > 1:
        last = _last_sentence(answer, mention_at)
        if len(last) == 1:
            return ActionParse(ACTION_WORDS[last.pop()], "read", tuple(mentions), notes)
    if mentions:
        return _decide(mentions, notes)
    if rejected:
        return ActionParse(None, "ambiguous", tuple(f"not {w}" for w in rejected), notes)
    return ActionParse(None, "unreadable", (), notes)


def _last_sentence(text: str, mention_at: list[tuple[int, str]]) -> set[str]:
    """The distinct directions mentioned in the sentence of the last mention."""
    last = mention_at[-1][0]
    start = max(text.rfind(c, 0, last) for c in ".!?\n") + 1
    return {word for at, word in mention_at if at >= start}


def _decide(moves: list[str], notes: tuple[str, ...]) -> ActionParse:
    distinct = sorted(set(moves))
    if len(distinct) == 1:
        return ActionParse(ACTION_WORDS[distinct[0]], "read", tuple(moves), notes)
    return ActionParse(None, "ambiguous", tuple(moves), notes)


def parse_action(text: str) -> Action | None:
    """The action ``read_action`` reads, or None when it reads none."""
    return read_action(text).action
