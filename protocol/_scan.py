"""The grammar every answer reader shares: reasoning blocks, a bounded scanner of JSON-like values.

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
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, TypeVar

MAX_DEPTH = 32
"""Containers nested deeper than this are skipped (no answer form needs more than 4)."""
MAX_TOKENS = 10_000
"""Tokens read from one answer; a run of prose between two brackets or quotes is one token."""
MAX_CONTAINERS = 4_096
"""The default bound on closed containers read from one answer; readers pass their own."""
REASON_CHARS = 500
ID_CHARS = 40

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
    if token.startswith('"') and isinstance(value := _json(token), str):
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
    if isinstance(value := _json(text), dict):
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


def _json(text: str, **options: Any) -> Any:
    """``text`` as strict JSON, else None."""
    try:
        return json.loads(text, **options)
    except ValueError:
        return None


def _strict_object(text: str) -> dict[str, Any] | None:
    """``text`` as a strict JSON object (no NaN or Infinity, which the tokens read as
    words), else None."""
    value = _json(text, parse_constant=_not_json)
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


def norm_key(key: object) -> str:
    text = str(key)
    return _norm_name(text) if len(text) <= NAME_CHARS else _SEPARATORS.sub("_", text.strip().lower())


def lowered(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` with its keys normalised (lower case, ``_`` for spaces and dashes)."""
    return {norm_key(k): v for k, v in obj.items()}


MEMORY_ID = re.compile(r"^\W*mem(?:ory)?[_\- ]?(?:id[_\- ]?)?0*(\d{1,6})\W*$", re.IGNORECASE)


class IdBook:
    """Memory ids as a model may write them: ``mem_044``, ``MEM_44``, ``[mem_044]``."""

    def __init__(self, ids: Iterable[str]) -> None:
        self.ids = list(ids)
        self.by_number: dict[int, str] = {}
        for mid in self.ids:
            match = MEMORY_ID.match(mid)
            if match:
                self.by_number[int(match.group(1))] = mid

    def lookup(self, raw: object) -> str | None:
        """The canonical id ``raw`` names, or None."""
        if isinstance(raw, bool) or not isinstance(raw, str):
            return None
        match = MEMORY_ID.match(raw)
        return self.by_number.get(int(match.group(1))) if match else None


def clip(value: object, limit: int = ID_CHARS) -> str:
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
        word = norm_key(value).strip("_.!*`")
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
    return None


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def partition(
    asked: Sequence[K], readings: Mapping[K, list[V]], conflicted: set[K], kind: Callable[[V], object]
) -> tuple[dict[K, V], list[K], list[K]]:
    """The asked keys read (each with its first reading), left unanswered, and
    conflicting: marked so, or given readings of different ``kind``."""
    read: dict[K, V] = {}
    unanswered: list[K] = []
    conflicting: list[K] = []
    for key in asked:
        seen = readings.get(key, [])
        if key in conflicted or len({kind(v) for v in seen}) > 1:
            conflicting.append(key)
        elif seen:
            read[key] = seen[0]
        else:
            unanswered.append(key)
    return read, unanswered, conflicting


def batch_error(
    asked: Sized, read: Sized, conflicting: Sized, records: Sized, words: tuple[str, str, str]
) -> str | None:
    """Why not one key of a batch was read, in ``words`` (a reading, what it is of, all
    of them): ``("verdict", "entry", "verdicts")``; None when one was, or none asked."""
    reading, item, all_of_them = words
    if not asked or read:
        return None
    if conflicting:
        return f"only conflicting {all_of_them.split()[-1]} for the batch"
    return f"no {reading} for any {item} of the batch" if records else f"no {all_of_them} found"


def scan_notes(found: Scan, answer: str, raw: str) -> list[str]:
    notes = []
    if found.truncated:
        notes.append("truncated")
    if found.overlong:
        notes.append("overlong: stopped reading before the end of the answer")
    if not answer.strip() and raw.strip():
        notes.append("reasoning only, no answer after it")
    return notes
