"""Prompts and answer parsers shared by the audit, SelfVerify and navigation calls.

Every prompt puts its stable part first (instructions, then the memory view) and its
changing part last (the observation, position and budget), so that a server can
reuse the prompt prefix from one call to the next.

The parsers never execute anything a model writes. They accept JSON inside code
fences or prose, any letter case, and salvage what they can from broken JSON; what
they cannot read is reported so the caller can count it.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    GenerateConfig,
    ResponseSchema,
)
from inspect_ai.util import JSONSchema

from spatialstale.env import Action, Grid, MemoryEntry, Pos, render_png, text_observation

AUDIT_MARKER = "[SpatialSTALE:audit]"
SELFVERIFY_MARKER = "[SpatialSTALE:selfverify]"
NAVIGATE_MARKER = "[SpatialSTALE:navigate]"
"""First line of each system prompt: names the call kind in the transcript."""

DEFAULT_AUDIT_PROMPT = (
    AUDIT_MARKER
    + """
You audit an agent's memory of a FrozenLake grid of {size}x{size} cells against the current grid.
Cells: S = start, F = frozen ice (safe), H = hole (lethal), G = goal. Coordinates are (row,col), row 0 at the top.
The grid may have changed since the memory was written: ice can thaw into holes and holes can freeze into ice.
A memory entry is stale when its claim no longer matches the current grid: a SAFE claim about a cell that is now a hole,
or a DANGER claim about a cell that is now safe.
For every memory entry you are given, answer whether it is stale, with a short reason.
Answer with JSON only, one object per entry, in the order given:
[{"memory_id": "mem_000", "is_stale": false, "reason": "(0,0) is S in the current grid; the claim holds"}]"""
)

DEFAULT_SELFVERIFY_PROMPT = (
    SELFVERIFY_MARKER
    + """
You check an agent's memory of a FrozenLake grid of {size}x{size} cells against the current grid before it navigates.
Cells: S = start, F = frozen ice (safe), H = hole (lethal), G = goal. Coordinates are (row,col), row 0 at the top.
The grid may have changed since the memory was written: ice can thaw into holes and holes can freeze into ice.
List every memory entry that is inconsistent with the current grid; those entries will be removed.
Answer with JSON only: {"inconsistent": ["mem_012", "mem_044"]} (an empty list when all entries hold)."""
)

DEFAULT_NAVIGATE_PROMPT = (
    NAVIGATE_MARKER
    + """
You control an agent on a FrozenLake grid of {size}x{size} cells. Reach the goal G without stepping into a hole.
Cells: S = start, F = frozen ice (safe), H = hole (lethal: stepping in ends the episode), G = goal.
Coordinates are (row,col), row 0 at the top. Actions: UP (row-1), DOWN (row+1), LEFT (col-1), RIGHT (col+1);
a move off the grid leaves the agent in place. The episode also ends when the step budget runs out.
The memory holds notes from earlier exploration of this grid.
Choose exactly one action and answer with JSON only: {"action": "RIGHT"}"""
)


def _object(properties: dict[str, JSONSchema]) -> JSONSchema:
    return JSONSchema(type="object", properties=properties, required=list(properties), additionalProperties=False)


_STRING = JSONSchema(type="string")
AUDIT_SCHEMA = ResponseSchema(
    name="spatialstale_audit",
    description="One verdict per memory entry of the batch, in the order given.",
    json_schema=_object(
        {
            "verdicts": JSONSchema(
                type="array",
                items=_object({"memory_id": _STRING, "is_stale": JSONSchema(type="boolean"), "reason": _STRING}),
            )
        }
    ),
    strict=True,
)
SELFVERIFY_SCHEMA = ResponseSchema(
    name="spatialstale_selfverify",
    description="The ids of the memory entries inconsistent with the current grid.",
    json_schema=_object({"inconsistent": JSONSchema(type="array", items=_STRING)}),
    strict=True,
)
NAVIGATE_SCHEMA = ResponseSchema(
    name="spatialstale_action",
    description="The one action to take now.",
    json_schema=_object({"action": JSONSchema(type="string", enum=["UP", "DOWN", "LEFT", "RIGHT"])}),
    strict=True,
)
"""Response schemas sent with ``-T structured=true``: OpenAI's strict json_schema needs
an object at the root, so the audit's verdicts sit under ``verdicts`` (the readers
accept that wrapper, the bare array the prompt shows, and every other form alike)."""


def answer_config(schema: ResponseSchema, structured: bool) -> GenerateConfig:
    """The per-call generation config: the response schema when structured output is on."""
    return GenerateConfig(response_schema=schema) if structured else GenerateConfig()


TEXT_OBSERVATION_HEADER = "Current grid:"
IMAGE_OBSERVATION_HEADER = (
    "Current grid (image): light blue = F, near-black = H, green = S, gold = G, red triangle = agent; "
    "each cell is labelled with its (row,col)."
)
MEMORY_HEADER = "Memory entries:"
NO_MEMORY = "Memory: (none)"

ACTION_WORDS = {"UP": Action.UP, "DOWN": Action.DOWN, "LEFT": Action.LEFT, "RIGHT": Action.RIGHT}

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_OBJECT = re.compile(r"\{[^{}]*\}", re.DOTALL)
_WORD = re.compile(r"\b(UP|DOWN|LEFT|RIGHT)\b", re.IGNORECASE)
_TRUE = {"true", "yes", "stale", "1", "y", "t"}
_FALSE = {"false", "no", "valid", "not stale", "fresh", "0", "n", "f"}


SIZE_PLACEHOLDER = "{size}"


def fill_prompt(prompt: str, size: int) -> str:
    """A system prompt with ``{size}`` filled in; every other brace is literal text,
    so a custom prompt can show a JSON example as it is."""
    return prompt.replace(SIZE_PLACEHOLDER, str(size))


def memory_block(entries: Sequence[MemoryEntry]) -> str:
    """The memory view as listed in a prompt, one ``[mem_xxx] ...`` line per entry."""
    if not entries:
        return NO_MEMORY
    return "\n".join([MEMORY_HEADER, *(entry.line for entry in entries)])


def position_line(position: Pos, goal: Pos, steps_left: int) -> str:
    return f"Position: ({position[0]},{position[1]}). Goal: ({goal[0]},{goal[1]}). Steps remaining: {steps_left}."


MODALITIES = ("text", "vision", "both")


def png_data_uri(grid: Grid, agent: Pos | None) -> str:
    return "data:image/png;base64," + base64.b64encode(render_png(grid, agent)).decode("ascii")


def observation_content(grid: Grid, agent: Pos, modality: str) -> list[Content]:
    """The live grid as prompt content: the text listing, the PNG, or both."""
    parts: list[Content] = []
    if modality in ("text", "both"):
        parts.append(ContentText(text=f"{TEXT_OBSERVATION_HEADER}\n{text_observation(grid, agent)}"))
    if modality in ("vision", "both"):
        parts.append(ContentText(text=IMAGE_OBSERVATION_HEADER))
        parts.append(ContentImage(image=png_data_uri(grid, agent), detail="high"))
    return parts


def audit_messages(
    entries: Sequence[MemoryEntry], grid: Grid, agent: Pos, modality: str, prompt: str = "", size: int = 8
) -> list[ChatMessage]:
    """One audit call: instructions, the batch of entries, then the observation."""
    return [
        ChatMessageSystem(content=fill_prompt(prompt or DEFAULT_AUDIT_PROMPT, size)),
        ChatMessageUser(content=[ContentText(text=memory_block(entries)), *observation_content(grid, agent, modality)]),
    ]


def selfverify_messages(
    entries: Sequence[MemoryEntry], grid: Grid, agent: Pos, modality: str, prompt: str = "", size: int = 8
) -> list[ChatMessage]:
    """The SelfVerify call: instructions, the whole store, then the observation."""
    return [
        ChatMessageSystem(content=fill_prompt(prompt or DEFAULT_SELFVERIFY_PROMPT, size)),
        ChatMessageUser(content=[ContentText(text=memory_block(entries)), *observation_content(grid, agent, modality)]),
    ]


def navigate_messages(
    view: Sequence[MemoryEntry] | None,
    grid: Grid,
    agent: Pos,
    goal: Pos,
    steps_left: int,
    modality: str,
    prompt: str = "",
    size: int = 8,
) -> list[ChatMessage]:
    """One navigation step: instructions, memory view, observation, position and budget.

    ``view=None`` (NoMemory) lists no memory at all.
    """
    return [
        ChatMessageSystem(content=fill_prompt(prompt or DEFAULT_NAVIGATE_PROMPT, size)),
        ChatMessageUser(
            content=[
                ContentText(text=memory_block(view or ())),
                *observation_content(grid, agent, modality),
                ContentText(text=position_line(agent, goal, steps_left)),
            ]
        ),
    ]


# --- parsing -----------------------------------------------------------------------


def _candidates(text: str) -> list[str]:
    """Texts that may hold the JSON answer: fenced blocks first, then the whole text."""
    return [*(m.strip() for m in _FENCE.findall(text)), text.strip()]


def _loads_embedded(text: str) -> Any:
    """The first JSON value (array or object) found in ``text``, or None."""
    decoder = json.JSONDecoder()
    for candidate in _candidates(text):
        for start, char in enumerate(candidate):
            if char in "[{":
                try:
                    value, _ = decoder.raw_decode(candidate, start)
                except json.JSONDecodeError:
                    continue
                return value
    return None


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    return None


def _lower_keys(obj: dict[str, Any]) -> dict[str, Any]:
    return {str(k).strip().lower().replace(" ", "_").replace("-", "_"): v for k, v in obj.items()}


@dataclass
class AuditParse:
    """What one audit answer says about its batch.

    ``verdicts`` maps each answered id of the batch to (is_stale, reason).
    ``unanswered`` are batch ids with no readable verdict (left unflagged);
    ``unknown_ids`` are ids the answer names that are not in the batch (ignored).
    ``error`` is set when no JSON answer could be read at all.
    """

    verdicts: dict[str, tuple[bool, str]] = field(default_factory=dict)
    unanswered: list[str] = field(default_factory=list)
    unknown_ids: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def flagged(self) -> set[str]:
        return {mid for mid, (stale, _) in self.verdicts.items() if stale}


def _verdict_records(value: Any) -> list[tuple[str, Any, str]]:
    """(memory_id, raw is_stale, reason) triples from the accepted JSON shapes."""
    records: list[tuple[str, Any, str]] = []
    if isinstance(value, dict):
        low = _lower_keys(value)
        for key in ("verdicts", "results", "entries", "answers", "judgments", "audit"):
            if isinstance(low.get(key), list | dict):
                return _verdict_records(low[key])
        if "memory_id" in low or "id" in low:
            value = [value]
        else:
            for key, item in value.items():
                if isinstance(item, dict):
                    item_low = _lower_keys(item)
                    records.append(
                        (str(key), item_low.get("is_stale", item_low.get("stale")), str(item_low.get("reason", "")))
                    )
                else:
                    records.append((str(key), item, ""))
            return records
    if isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                low = _lower_keys(item)
                mid = low.get("memory_id", low.get("id", low.get("entry")))
                if mid is not None:
                    records.append((str(mid), low.get("is_stale", low.get("stale")), str(low.get("reason", ""))))
    return records


def parse_audit(text: str, batch_ids: Iterable[str]) -> AuditParse:
    """Read an audit answer for a batch of memory ids.

    Accepted: a JSON array of ``{"memory_id", "is_stale", "reason"}`` objects, an
    object keyed by memory id (``{"mem_001": {"is_stale": true}`` or
    ``{"mem_001": true}``), or such an array wrapped in ``{"verdicts": [...]}``. When
    the whole answer is not valid JSON, every well-formed ``{...}`` object in it is
    read on its own, so a truncated array still yields its complete entries.
    ``is_stale`` may be a boolean or a word such as "true"/"stale"/"yes". When the
    answer names an id twice, the first verdict counts.
    """
    batch = list(batch_ids)
    wanted = {mid.lower(): mid for mid in batch}
    result = AuditParse()
    value = _loads_embedded(text)
    records = _verdict_records(value) if value is not None else []
    if not records:
        salvaged = []
        for chunk in _OBJECT.findall(text):
            try:
                salvaged.append(json.loads(chunk))
            except json.JSONDecodeError:
                continue
        records = _verdict_records(salvaged)
    if not records:
        result.error = "no JSON verdicts found" if value is None else "JSON without memory_id/is_stale verdicts"
    for raw_id, raw_stale, reason in records:
        key = raw_id.strip().lower()
        if key not in wanted:
            if key not in (u.lower() for u in result.unknown_ids):
                result.unknown_ids.append(raw_id.strip()[:40])
            continue
        mid = wanted[key]
        stale = _as_bool(raw_stale)
        if stale is None or mid in result.verdicts:
            continue
        result.verdicts[mid] = (stale, reason[:500])
    result.unanswered = [mid for mid in batch if mid not in result.verdicts]
    if batch and not result.verdicts and result.error is None:
        # JSON, but not one usable verdict for this batch: as unusable as prose.
        result.error = "no verdict for any entry of the batch"
    return result


@dataclass
class SelfVerifyParse:
    flagged: set[str] = field(default_factory=set)
    unknown_ids: list[str] = field(default_factory=list)
    error: str | None = None


def parse_selfverify(text: str, store_ids: Iterable[str]) -> SelfVerifyParse:
    """Read a SelfVerify answer: the ids it calls inconsistent.

    Accepted: ``{"inconsistent": [...]}`` (or ``stale``/``remove``), a bare JSON array
    of ids, or the per-entry audit format. Unreadable answers flag nothing.
    """
    known = {mid.lower(): mid for mid in store_ids}
    result = SelfVerifyParse()
    value = _loads_embedded(text)
    ids: list[str] | None = None
    if isinstance(value, dict):
        low = _lower_keys(value)
        for key in ("inconsistent", "stale", "remove", "inconsistent_ids", "stale_ids", "flagged"):
            if isinstance(low.get(key), list):
                ids = [str(x) for x in low[key]]
                break
    if ids is None and isinstance(value, list) and all(isinstance(x, str) for x in value):
        ids = [str(x) for x in value]
    if ids is None and value is not None:
        records = _verdict_records(value)
        if records:
            ids = [mid for mid, stale, _ in records if _as_bool(stale)]
    if ids is None:
        result.error = "no JSON list of inconsistent ids found"
        return result
    for raw in ids:
        key = raw.strip().lower()
        if key in known:
            result.flagged.add(known[key])
        elif raw.strip()[:40] not in result.unknown_ids:
            result.unknown_ids.append(raw.strip()[:40])
    return result


def parse_action(text: str) -> Action | None:
    """The action an answer names, or None when it names no single legal action.

    Order: a JSON ``{"action": ...}`` value; then a line such as ``Action: UP``; then
    the answer's only direction word when it names exactly one distinct direction.
    """
    value = _loads_embedded(text)
    if isinstance(value, dict):
        raw = _lower_keys(value).get("action")
        if isinstance(raw, str) and raw.strip().upper() in ACTION_WORDS:
            return ACTION_WORDS[raw.strip().upper()]
    labelled = re.search(r"\baction\b\W{0,5}(UP|DOWN|LEFT|RIGHT)\b", text, re.IGNORECASE)
    if labelled:
        return ACTION_WORDS[labelled.group(1).upper()]
    words = {w.upper() for w in _WORD.findall(text)}
    if len(words) == 1:
        return ACTION_WORDS[words.pop()]
    return None
