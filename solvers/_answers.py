"""Reading model answers: audit verdicts, SelfVerify's inconsistent ids, a navigation action.

Real models rarely answer in exactly the form a prompt shows. The readers here read
an answer as a person would, and say what they could not read so the caller can
count it. None of them executes, evaluates or imports anything a model writes.

The grammar, shared by the three readers:

1. **Reasoning is not the answer.** ``<think>…</think>`` (also ``thinking``,
   ``reasoning``) blocks are dropped; after a lone closing tag only what follows it
   is read; an unclosed opening tag drops the rest of the answer (a truncated
   thought holds no answer).
2. **Values anywhere in the text.** Every JSON-like value in the remaining text is
   scanned: inside code fences or prose, one after another (JSON Lines), nested
   in any wrapper object. The scanner is tolerant: Python literals
   (``'single quotes'``, ``True``/``False``/``None``), trailing or missing commas,
   bare keys, mismatched closers. A truncated answer keeps every container that
   was closed; one cut off mid-way is not read, but the closed ones inside it are.
3. **Bounded.** The scanner is one pass over the text with an explicit stack
   (nesting deeper than ``MAX_DEPTH`` is skipped, never recursed into). It stops,
   saying so (``overlong``), after ``MAX_TOKENS`` tokens or after a number of
   closed containers sized to the question (a few per entry asked about), far
   beyond what any real answer holds. No recursion limit can be hit, and reading
   a 1 MB answer costs about as much as reading a short one
   (``benchmarks/bench_answers.py``).

Each reader then applies its own rules (see ``read_audit``, ``read_selfverify``,
``read_action``) and reports the readings it could not make: unanswered entries,
conflicting verdicts, unknown ids, and ambiguous or missing actions.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice
from typing import Any, Literal

from spatialstale.env import Action

MAX_DEPTH = 32
"""Containers nested deeper than this are skipped (no answer form needs more than 4)."""
MAX_TOKENS = 10_000
"""Tokens read from one answer; a run of prose between two brackets or quotes is one token."""
MAX_CONTAINERS = 4_096
"""The default bound on closed containers read from one answer; readers pass their own."""
REASON_CHARS = 500
ID_CHARS = 40

ACTION_WORDS = {"UP": Action.UP, "DOWN": Action.DOWN, "LEFT": Action.LEFT, "RIGHT": Action.RIGHT}

# --- reasoning blocks -------------------------------------------------------------

_REASONING_TAGS = "think|thinking|reasoning|reflection"
_BLOCK = re.compile(rf"<({_REASONING_TAGS})>.*?</\1\s*>", re.DOTALL | re.IGNORECASE)
_CLOSE_TAG = re.compile(rf"</(?:{_REASONING_TAGS})\s*>", re.IGNORECASE)
_OPEN_TAG = re.compile(rf"<(?:{_REASONING_TAGS})>", re.IGNORECASE)


def strip_reasoning(text: str) -> str:
    """The answer without its reasoning blocks (rule 1 of the module grammar)."""
    text = _BLOCK.sub(" ", text)
    closes = list(_CLOSE_TAG.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    opened = _OPEN_TAG.search(text)
    if opened:
        text = text[: opened.start()]
    return text


# --- the scanner ------------------------------------------------------------------

_DQ = r'"(?:[^"\\\n]|\\.)*"'
_SQ = r"'(?:[^'\\\n]|\\.)*'"
_FLAT = re.compile(r"\{(?:[^{}\[\]\"']|" + _DQ + "|" + _SQ + r")*\}")
"""An object with no nested container: the common verdict, decoded in one step."""
_TOKEN = re.compile(
    r"\s*(?:"
    rf"(?P<dq>{_DQ})"
    rf"|(?P<sq>{_SQ})(?=\s*[:,\]}}])"
    r"|(?P<open>[\[{]+)"
    r"|(?P<close>[\]}]+)"
    r"|(?P<punct>[:,])"
    r"|(?P<word>[^\[\]{}:,\"']+|[\"'])"
    r")"
)
_NEXT_OPEN = re.compile(r"[\[{]")
_PAIR = re.compile(
    rf"(?P<key>{_DQ}|{_SQ}|[A-Za-z_][\w\- ]*?)\s*:\s*(?P<value>{_DQ}|{_SQ}|[^,}}\n]*)",
)
_ESCAPE = re.compile(r"\\(.)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}
_LITERALS: dict[str, Any] = {
    "true": True,
    "false": False,
    "null": None,
    "none": None,
}
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _string(token: str) -> str:
    """A quoted token's text; escapes are unescaped, never interpreted as code."""
    if "\\" not in token:
        # nothing to unescape: what both readings below return
        return token[1:-1]
    if token.startswith('"'):
        try:
            value = json.loads(token)
        except ValueError:
            value = None
        if isinstance(value, str):
            return value
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), token[1:-1])


def _scalar(word: str) -> Any:
    low = word.lower()
    if low in _LITERALS:
        return _LITERALS[low]
    if _NUMBER.fullmatch(word):
        return float(word) if any(c in word for c in ".eE") else int(word)
    return word


def _flat_object(text: str) -> dict[str, Any]:
    """A flat ``{...}``: strict JSON when it is, else its ``key: value`` pairs."""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for match in _PAIR.finditer(text, 1, len(text) - 1):
        key, raw = match.group("key"), match.group("value").strip()
        name = _string(key) if key[0] in "\"'" else key.strip()
        out[name] = _string(raw) if raw[:1] in ("'", '"') and len(raw) > 1 and raw[-1] == raw[0] else _scalar(raw)
    return out


_SPACE = re.compile(r"\s*")


def _not_json(word: str) -> Any:
    raise ValueError(word)


def _strict_object(text: str) -> dict[str, Any] | None:
    """``text`` as a strict JSON object (no NaN or Infinity, which the tokens read as
    words), else None."""
    try:
        value = json.loads(text, parse_constant=_not_json)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


@dataclass
class _Frame:
    container: dict[str, Any] | list[Any]
    key: str | None = None
    after_colon: bool = False

    def add(self, value: Any, *, is_key_candidate: bool) -> None:
        box = self.container
        if isinstance(box, list):
            box.append(value)
            return
        if self.key is not None and (self.after_colon or not is_key_candidate):
            box[self.key] = value
            self.key, self.after_colon = None, False
        elif is_key_candidate:
            self.key, self.after_colon = str(value), False
        # a value with no key before it is dropped: nothing says what it is


@dataclass
class Scan:
    """What the scanner found: every closed container, innermost first, with its depth
    (0 = top level); ``truncated`` when containers were still open at the end;
    ``overlong`` when it stopped before the end of the text."""

    containers: list[tuple[dict[str, Any] | list[Any], int]] = field(default_factory=list)
    truncated: bool = False
    overlong: bool = False

    @property
    def dicts(self) -> list[dict[str, Any]]:
        return [c for c, _ in self.containers if isinstance(c, dict)]


def scan(text: str, max_containers: int = MAX_CONTAINERS) -> Scan:
    """Every JSON-like container in ``text`` (module grammar, rules 2 and 3)."""
    result = Scan()
    stack: list[_Frame] = []
    skipped = 0  # openers nested beyond MAX_DEPTH, still open
    pos, end = 0, len(text)

    def close(frame: _Frame) -> None:
        result.containers.append((frame.container, len(stack)))
        if stack:
            stack[-1].add(frame.container, is_key_candidate=False)

    tokens = 0
    while pos < end and len(result.containers) < max_containers and tokens < MAX_TOKENS:
        tokens += 1
        if not stack and not skipped:
            found = _NEXT_OPEN.search(text, pos)
            if found is None:
                break
            pos = found.start()
        if not skipped and text[pos] == "{":
            flat = _FLAT.match(text, pos)
            if flat is not None:
                stack.append(_Frame(_flat_object(flat.group())))
                frame = stack.pop()
                close(frame)
                pos = flat.end()
                continue
        elif stack and not skipped and len(stack) < MAX_DEPTH:
            # a flat object after white space (", {" in an array): decoded in one step
            # when it is strict JSON, which reads exactly as its tokens would
            space = _SPACE.match(text, pos)
            start = space.end() if space is not None else pos
            flat = _FLAT.match(text, start) if text.startswith("{", start) else None
            strict = _strict_object(flat.group()) if flat is not None else None
            if flat is not None and strict is not None:
                close(_Frame(strict))
                pos = flat.end()
                continue
        token = _TOKEN.match(text, pos)
        if token is None or token.end() == pos:  # only whitespace is left
            break
        pos = token.end()
        kind = token.lastgroup
        value = token.group(kind or "word")
        if kind == "open":
            room = 0 if skipped else max(0, MAX_DEPTH - len(stack))
            stack.extend(_Frame({} if char == "{" else []) for char in value[:room])
            skipped += len(value) - min(room, len(value))
        elif kind == "close":
            unskip = min(skipped, len(value))
            skipped -= unskip
            for char in value[unskip:]:
                want = dict if char == "}" else list
                depth = next((i for i in range(len(stack) - 1, -1, -1) if isinstance(stack[i].container, want)), None)
                if depth is None:
                    continue  # a closer with no opener: prose
                while len(stack) > depth:
                    close(stack.pop())
                    if len(result.containers) >= max_containers:
                        break
        elif skipped or not stack:
            continue
        elif kind == "punct":
            if value == ":" and isinstance(stack[-1].container, dict):
                stack[-1].after_colon = True
        elif kind in ("dq", "sq"):
            stack[-1].add(_string(value), is_key_candidate=True)
        elif value := value.strip():
            stack[-1].add(_scalar(value), is_key_candidate=True)
    if (len(result.containers) >= max_containers or tokens >= MAX_TOKENS) and _NEXT_OPEN.search(text, pos):
        result.overlong = True
    result.truncated = bool(stack or skipped)
    return result


# --- shared helpers ---------------------------------------------------------------


_SEPARATORS = re.compile(r"[\s\-]+")
NAME_CHARS = 64
"""Keys up to this long are normalised once and remembered: an answer repeats the same
few keys in every object."""


@lru_cache(maxsize=1024)
def _norm_name(key: str) -> str:
    return _SEPARATORS.sub("_", key.strip().lower())


def _norm_key(key: object) -> str:
    text = str(key)
    return _norm_name(text) if len(text) <= NAME_CHARS else _SEPARATORS.sub("_", text.strip().lower())


def _lowered(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` with its keys normalised (lower case, ``_`` for spaces and dashes)."""
    return {_norm_key(k): v for k, v in obj.items()}


_ID = re.compile(r"^\W*mem(?:ory)?[_\- ]?(?:id[_\- ]?)?0*(\d{1,6})\W*$", re.IGNORECASE)


class IdBook:
    """Memory ids as a model may write them: ``mem_044``, ``MEM_44``, ``[mem_044]``."""

    def __init__(self, ids: Iterable[str]) -> None:
        self.ids = list(ids)
        self.by_number: dict[int, str] = {}
        for mid in self.ids:
            match = _ID.match(mid)
            if match:
                self.by_number[int(match.group(1))] = mid

    def lookup(self, raw: object) -> str | None:
        """The canonical id ``raw`` names, or None."""
        if isinstance(raw, bool) or not isinstance(raw, str):
            return None
        match = _ID.match(raw)
        return self.by_number.get(int(match.group(1))) if match else None


def _clip(value: object, limit: int = ID_CHARS) -> str:
    return str(value).strip()[:limit]


_TRUE_WORDS = {
    "true", "yes", "y", "t", "1", "stale", "outdated", "out_of_date", "changed", "inconsistent",
    "invalid", "not_valid", "contradicted", "wrong", "incorrect", "obsolete", "remove",
}  # fmt: skip
_FALSE_WORDS = {
    "false", "no", "n", "f", "0", "valid", "not_stale", "fresh", "current", "consistent", "correct",
    "unchanged", "still_valid", "holds", "ok", "keep", "up_to_date", "accurate",
}  # fmt: skip


def stale_value(value: Any) -> bool | None:
    """A verdict value as stale (True), valid (False) or unreadable (None)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = _norm_key(value).strip("_.!*`")
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
    return None


# --- audit ------------------------------------------------------------------------

ID_KEYS = ("memory_id", "id", "entry_id", "mem_id", "memoryid", "entry", "memory", "memory_entry", "mem", "key")
STALE_KEYS = ("is_stale", "stale", "isstale", "is_outdated", "outdated", "changed", "is_changed")
VALID_KEYS = ("is_valid", "valid", "is_consistent", "consistent", "still_valid", "holds", "is_correct", "correct")
WORD_KEYS = ("verdict", "status", "label", "judgment", "judgement", "result", "assessment", "decision", "answer")
REASON_KEYS = ("reason", "reasoning", "explanation", "justification", "rationale", "why", "evidence")


def _object_verdict(low: dict[str, Any]) -> tuple[bool | None, bool]:
    """(stale?, conflicting) from an object's verdict keys (normalised by
    :func:`_lowered`); conflicting when they disagree."""
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
    return next((_clip(low[k], REASON_CHARS) for k in REASON_KEYS if isinstance(low.get(k), str)), "")


@dataclass(frozen=True)
class _Record:
    raw_id: str
    stale: bool | None
    reason: str = ""
    conflicting: bool = False


def _records(found: Scan, book: IdBook) -> list[_Record]:
    """Verdict records from scanned objects: ``{"memory_id": …, "is_stale": …}`` objects,
    and objects keyed by memory id (``{"mem_001": true}``, ``{"mem_001": {"is_stale": …}}``)."""
    records: list[_Record] = []
    for obj in found.dicts:
        low = _lowered(obj)
        raw_id = next(
            (low[k] for k in ID_KEYS if isinstance(low.get(k), str | int) and not isinstance(low[k], bool)), None
        )
        if raw_id is not None:
            stale, conflicting = _object_verdict(low)
            if stale is not None or conflicting or _ID.match(str(raw_id)):
                records.append(_Record(_clip(raw_id), stale, _reason(low), conflicting))
                continue
        for key, value in obj.items():
            if _ID.match(str(key)) is None:
                continue
            if isinstance(value, dict):
                inner = _lowered(value)
                stale, conflicting = _object_verdict(inner)
                records.append(_Record(_clip(key), stale, _reason(inner), conflicting))
            elif not isinstance(value, list):
                records.append(_Record(_clip(key), stale_value(value)))
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
    """

    verdicts: dict[str, tuple[bool, str]] = field(default_factory=dict)
    unanswered: list[str] = field(default_factory=list)
    conflicting: list[str] = field(default_factory=list)
    unknown_ids: list[str] = field(default_factory=list)
    error: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def flagged(self) -> set[str]:
        return {mid for mid, (stale, _) in self.verdicts.items() if stale}


def _scan_notes(found: Scan, answer: str, raw: str) -> list[str]:
    notes = []
    if found.truncated:
        notes.append("truncated")
    if found.overlong:
        notes.append("overlong: stopped reading before the end of the answer")
    if not answer.strip() and raw.strip():
        notes.append("reasoning only, no answer after it")
    return notes


def read_audit(text: str, batch_ids: Iterable[str]) -> AuditParse:
    """Read an audit answer for a batch of memory ids.

    A verdict is an object naming a memory id (``memory_id``, ``id``, ``entry`` …)
    and a verdict (``is_stale``/``stale``/``outdated`` as a boolean or a word such as
    "stale"/"valid"/"yes"; ``is_valid``/``consistent`` read inverted; ``verdict``/
    ``status``/``label`` words), or an object keyed by memory id
    (``{"mem_001": true}``, ``{"mem_001": {"is_stale": true}}``, ``{"mem_001":
    "stale"}``), found anywhere in the answer (module grammar). Only when there is
    none, ``mem_001: stale`` lines are read. An id given the same verdict twice
    counts once; an id given contradicting verdicts is ``conflicting``.
    """
    book = IdBook(batch_ids)
    result = AuditParse()
    answer = strip_reasoning(text)
    limit = 4 * len(book.ids) + 64
    found = scan(answer, limit)
    result.notes = _scan_notes(found, answer, text)
    records = _records(found, book) or _line_records(answer, limit)
    readings: dict[str, set[bool]] = {}
    reasons: dict[str, str] = {}
    conflicted: set[str] = set()
    for record in records:
        mid = book.lookup(record.raw_id)
        if mid is None:
            if record.raw_id not in result.unknown_ids:
                result.unknown_ids.append(record.raw_id)
            continue
        if record.conflicting:
            conflicted.add(mid)
        elif record.stale is not None:
            readings.setdefault(mid, set()).add(record.stale)
            reasons.setdefault(mid, record.reason)
    for mid in book.ids:
        seen = readings.get(mid, set())
        if mid in conflicted or len(seen) > 1:
            result.conflicting.append(mid)
        elif seen:
            result.verdicts[mid] = (next(iter(seen)), reasons[mid])
        else:
            result.unanswered.append(mid)
    if book.ids and not result.verdicts:
        if result.conflicting:
            result.error = "only conflicting verdicts for the batch"
        elif records:
            result.error = "no verdict for any entry of the batch"
        else:
            result.error = "no verdicts found"
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
                low = _lowered(item)
                item = next((low[k] for k in ID_KEYS if k in low), None)
            if isinstance(item, str):
                out.append(item)
            elif item is not None:
                out.append(_clip(item))
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
        elif (clipped := _clip(raw)) and clipped not in unknown:
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
    result.notes = _scan_notes(found, answer, text)
    flag_raw: list[Any] = []
    clear_raw: list[Any] = []
    readable = False
    for container, depth in found.containers:
        if isinstance(container, list):
            if depth == 0 and all(isinstance(x, str) for x in container):
                flag_raw += container
                readable = True
            continue
        low = _lowered(container)
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
    notes = tuple(_scan_notes(found, answer, text))
    json_moves = []
    for obj in found.dicts:
        low = _lowered(obj)
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


def parse_audit(text: str, batch_ids: Iterable[str]) -> AuditParse:
    """Alias of ``read_audit``."""
    return read_audit(text, batch_ids)


def parse_selfverify(text: str, store_ids: Iterable[str]) -> SelfVerifyParse:
    """Alias of ``read_selfverify``."""
    return read_selfverify(text, store_ids)


def parse_action(text: str) -> Action | None:
    """The action ``read_action`` reads, or None when it reads none."""
    return read_action(text).action


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


def cell_label(pos: tuple[int, int]) -> str:
    """A coordinate as the prompts and logs write it: ``(r,c)``."""
    return f"({pos[0]},{pos[1]})"


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
    whole = _norm_key(value).strip("_.!*`\"'")
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
        low = _lowered(container)
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
                cell, conflicting = _object_cell(_lowered(value))
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
    result.notes = _scan_notes(found, answer, text)
    records = [r for r in _cell_records(found) if r.cell is not None or r.conflicting]
    records = records or [r for r in _prose_cell_records(answer, limit) if r.cell is not None]
    readings: dict[tuple[int, int], list[str]] = {}
    conflicted: set[tuple[int, int]] = set()
    for record in records:
        if record.pos not in asked:
            if (label := cell_label(record.pos)) not in result.unknown_cells:
                result.unknown_cells.append(label)
            continue
        if record.conflicting:
            conflicted.add(record.pos)
        elif record.cell is not None:
            readings.setdefault(record.pos, []).append(record.cell)
    for pos in batch:
        seen = readings.get(pos, [])
        if pos in conflicted or len({cell == "H" for cell in seen}) > 1:
            result.conflicting.append(pos)
        elif seen:
            result.readings[pos] = seen[0]
        else:
            result.unanswered.append(pos)
    if batch and not result.readings:
        if result.conflicting:
            result.error = "only conflicting readings for the batch"
        elif records:
            result.error = "no reading for any cell of the batch"
        else:
            result.error = "no cell readings found"
    return result
