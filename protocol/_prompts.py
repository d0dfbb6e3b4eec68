"""Prompts and response schemas of the audit, SelfVerify and navigation calls.

Prompts are ordered for prefix caching. API prompt caches (OpenAI's automatic
caching, Anthropic's cache control, vLLM's automatic prefix caching, llama.cpp's slot
cache) bill or compute only the part of a prompt that differs from an earlier one, so
each call puts what it shares with the next call first and what changes last:

- **Audit and SelfVerify**: instructions, then the observation, then the entries to
  judge. The batches of one audit see the same grid and differ only in their slice of
  memory, so with the observation before the batch consecutive batches share the
  instructions and the whole observation (about three quarters of the prompt at n=8).
- **Navigation**: instructions, then the memory view, then the observation, position
  and budget. The view changes only when an audit rebuilds it, while the agent moves
  every step, so this order keeps nearly the whole prompt shared between steps.

The last stable text part carries Inspect's ``cache_breakpoint`` mark (honoured by
Anthropic, ignored elsewhere) and every call's config sets ``cache_prompt``. The
observation of an unchanged grid is rendered and encoded once, not once per call.

Each system prompt is the prompt set's text and nothing else: the call kind (audit,
SelfVerify, navigation, perception, another navigator's call) rides in the system
message's metadata (:func:`system_message`, :func:`call_kind`), which no provider sends.

The answers are read by ``_answers`` (``read_audit``, ``read_selfverify``,
``read_action``) and ``_cells`` (``read_perception``), which never execute anything a
model writes.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    GenerateConfig,
    Model,
    ResponseSchema,
)
from inspect_ai.util import JSONSchema

from spatialstale.env import (
    Grid,
    Instance,
    MemoryEntry,
    Overlay,
    Pos,
    fog_note,
    regime_of,
    render_png,
    text_observation,
)

from ._extensions import extension_values, extension_view
from ._navigators import NAVIGATORS
from ._seams import WHOLE_GRID, MemoryForm, View

CALL_KIND_KEY = "spatialstale_call"
"""The key of a system message's ``metadata`` that names its call kind (one of
:data:`CALL_KINDS`): how the reference agents, the test models and a reader of a log
tell the calls apart, without a word of it in the prompt.

Inspect keeps a message's metadata on the messages it hands to ``ModelAPI.generate``
and records it with every model event's input, but no provider sends it: the OpenAI
(chat completions and responses), Anthropic, Google and OpenAI-compatible providers
(``openai-api``, vLLM, llama.cpp, llama-cpp-python) build each request from a system
message's text or content parts alone (Inspect 0.3.285's ``_openai``, ``_openai_responses``,
``anthropic``, ``google`` conversions); the local ``hf`` provider hands its chat template
each message's fields, which templates render by role and content. Inspect's ``--cache``
key serialises whole messages, metadata included, so two calls of different kinds never
share an entry."""

AUDIT = "audit"
SELFVERIFY = "selfverify"
NAVIGATE = "navigate"
PERCEPTION = "perception"
CALL_KINDS = (AUDIT, SELFVERIFY, NAVIGATE, PERCEPTION, *(n.call_kind for n in NAVIGATORS if n.call_kind != NAVIGATE))
"""The kinds of model call the suite makes: the batched audit, SelfVerify's check, a
step of the per-step navigator, the perception probe, and each other navigator's calls
(``_navigators``)."""


DEFAULT_AUDIT_PROMPT = """\
You audit an agent's memory of a FrozenLake grid of {size}x{size} cells against the current grid.
Cells: S = start, F = frozen ice (safe), H = hole (lethal), G = goal. Coordinates are (row,col), row 0 at the top.
The grid may have changed since the memory was written: ice can thaw into holes and holes can freeze into ice.
A memory entry is stale when its claim no longer matches the current grid: a SAFE claim about a cell that is now a hole,
or a DANGER claim about a cell that is now safe.
For every memory entry you are given, answer whether it is stale, with a short reason.
Answer with JSON only, one object per entry, in the order given:
[{"memory_id": "mem_000", "is_stale": false, "reason": "(0,0) is S in the current grid; the claim holds"}]"""

DEFAULT_SELFVERIFY_PROMPT = """\
You check an agent's memory of a FrozenLake grid of {size}x{size} cells against the current grid before it navigates.
Cells: S = start, F = frozen ice (safe), H = hole (lethal), G = goal. Coordinates are (row,col), row 0 at the top.
The grid may have changed since the memory was written: ice can thaw into holes and holes can freeze into ice.
List every memory entry that is inconsistent with the current grid; those entries will be removed.
Answer with JSON only: {"inconsistent": ["mem_012", "mem_044"]} (an empty list when all entries hold)."""

DEFAULT_NAVIGATE_PROMPT = """\
You control an agent on a FrozenLake grid of {size}x{size} cells. Reach the goal G without stepping into a hole.
Cells: S = start, F = frozen ice (safe), H = hole (lethal: stepping in ends the episode), G = goal.
Coordinates are (row,col), row 0 at the top. Actions: UP (row-1), DOWN (row+1), LEFT (col-1), RIGHT (col+1);
a move off the grid leaves the agent in place. The episode also ends when the step budget runs out.
The memory holds notes from earlier exploration of this grid.
Choose exactly one action and answer with JSON only: {"action": "RIGHT"}"""

DEFAULT_PERCEPTION_PROMPT = """\
You read a FrozenLake grid of {size}x{size} cells.
Cells: S = start, F = frozen ice (safe), H = hole (lethal), G = goal. Coordinates are (row,col), row 0 at the top.
For every cell you are asked about, answer its type in the current grid: S, F, H or G.
Answer with JSON only, one object per cell, in the order given:
[{"cell": "(0,0)", "type": "S"}]"""


def _object(properties: dict[str, JSONSchema]) -> JSONSchema:
    return JSONSchema(type="object", properties=properties, required=list(properties), additionalProperties=False)


_STRING = JSONSchema(type="string")


def _ids(ids: Sequence[str] | None) -> JSONSchema:
    return JSONSchema(type="string", enum=list(ids)) if ids is not None else _STRING


def audit_schema(batch_ids: Sequence[str] | None = None, extra: Sequence[str] = ()) -> ResponseSchema:
    """The audit's response schema; ``memory_id`` is limited to ``batch_ids`` when given.
    Each verdict also holds each key of ``extra`` (the extensions' verdict fields,
    ``_seams.VerdictField``), a string or null (a strict schema requires every key, so
    "optional" is a nullable string)."""
    fields = {"memory_id": _ids(batch_ids), "is_stale": JSONSchema(type="boolean"), "reason": _STRING}
    for name in extra:
        fields[name] = JSONSchema(type=["string", "null"])
    verdict = _object(fields)
    return ResponseSchema(
        name="memory_audit",
        description="One verdict per memory entry of the batch, in the order given.",
        json_schema=_object({"verdicts": JSONSchema(type="array", items=verdict)}),
        strict=True,
    )


def selfverify_schema(store_ids: Sequence[str] | None = None) -> ResponseSchema:
    """SelfVerify's response schema; the listed ids are limited to ``store_ids`` when given."""
    return ResponseSchema(
        name="memory_check",
        description="The ids of the memory entries inconsistent with the current grid.",
        json_schema=_object({"inconsistent": JSONSchema(type="array", items=_ids(store_ids))}),
        strict=True,
    )


CELL_TYPES = ("S", "F", "H", "G")


def perception_schema(cells: Sequence[Pos] | None = None) -> ResponseSchema:
    """The probe's response schema; ``cell`` is limited to the batch's coordinates when given."""
    where = JSONSchema(type="string", enum=[cell_label(p) for p in cells]) if cells is not None else _STRING
    reading = _object({"cell": where, "type": JSONSchema(type="string", enum=list(CELL_TYPES))})
    return ResponseSchema(
        name="grid_cells",
        description="The type of every cell of the batch, in the order given.",
        json_schema=_object({"cells": JSONSchema(type="array", items=reading)}),
        strict=True,
    )


AUDIT_SCHEMA = audit_schema()
SELFVERIFY_SCHEMA = selfverify_schema()
NAVIGATE_SCHEMA = ResponseSchema(
    name="next_action",
    description="The one action to take now.",
    json_schema=_object({"action": JSONSchema(type="string", enum=["UP", "DOWN", "LEFT", "RIGHT"])}),
    strict=True,
)
"""Response schemas sent with ``-T structured=true``: OpenAI's strict json_schema needs
an object at the root, so the audit's verdicts sit under ``verdicts`` (the readers
accept that wrapper, the bare array the prompt shows, and every other form alike).
Each call's schema limits the ids to the entries it asks about."""


def answer_config(schema: ResponseSchema, structured: bool, model: Model | None = None) -> GenerateConfig:
    """The per-call generation config: prompt caching on (Anthropic needs it asked for;
    other providers cache automatically or ignore it) unless ``model`` was configured
    otherwise (``--cache-prompt false``), and the response schema when structured
    output is on."""
    chosen = model.config.cache_prompt if model is not None else None
    return GenerateConfig(
        cache_prompt=True if chosen is None else chosen, response_schema=schema if structured else None
    )


TEXT_OBSERVATION_HEADER = "Current grid:"
IMAGE_OBSERVATION_HEADER = (
    "Current grid (image): light blue = F, near-black = H, green = S, gold = G, red triangle = agent; "
    "each cell is labelled with its (row,col)."
)
FOG_IMAGE_OBSERVATION_HEADER = (
    "Current grid (image): light blue = F, near-black = H, green = S, gold = G, mid grey = beyond your view, "
    "red triangle = agent; each cell is labelled with its (row,col)."
)
"""The image header when part of the grid is beyond the view; the rule's
radius and visible rows and columns follow it (:func:`image_header`)."""
MEMORY_HEADER = "Memory entries:"
NO_MEMORY = "Memory: (none)"


SIZE_PLACEHOLDER = "{size}"


def fill_prompt(prompt: str, size: int) -> str:
    """A system prompt with ``{size}`` filled in; every other brace is literal text,
    so a custom prompt can show a JSON example as it is."""
    return prompt.replace(SIZE_PLACEHOLDER, str(size))


def system_message(prompt: str, size: int, kind: str) -> ChatMessageSystem:
    """The system message of a call of ``kind``: ``prompt`` with ``{size}`` filled in,
    its kind in the message's metadata (:data:`CALL_KIND_KEY`), never in its text."""
    if kind not in CALL_KINDS:
        raise ValueError(f"kind must be one of {', '.join(CALL_KINDS)}; got {kind!r}")
    return ChatMessageSystem(content=fill_prompt(prompt, size), metadata={CALL_KIND_KEY: kind})


def call_kind(messages: Sequence[ChatMessage]) -> str | None:
    """The kind of the call ``messages`` make (one of :data:`CALL_KINDS`): the tag of
    their first tagged system message, None when no system message is tagged."""
    for message in messages:
        if isinstance(message, ChatMessageSystem) and message.metadata:
            kind = message.metadata.get(CALL_KIND_KEY)
            if kind in CALL_KINDS:
                return str(kind)
    return None


def memory_block(entries: Sequence[MemoryEntry]) -> str:
    """The memory view as listed in a prompt, one ``[mem_xxx] ...`` line per entry."""
    if not entries:
        return NO_MEMORY
    return "\n".join([MEMORY_HEADER, *(entry.line for entry in entries)])


def position_line(position: Pos, goal: Pos, steps_left: int) -> str:
    return f"Position: ({position[0]},{position[1]}). Goal: ({goal[0]},{goal[1]}). Steps remaining: {steps_left}."


def cell_label(pos: Pos) -> str:
    """A coordinate as the prompts and logs write it: ``(r,c)``."""
    return f"({pos[0]},{pos[1]})"


CELLS_HEADER = "Cells to read:"


def all_cells(size: int) -> list[Pos]:
    """Every cell in row-major order: the order of the memory ids, so the probe's
    batches cover the same cells as the audit's."""
    return [(r, c) for r in range(size) for c in range(size)]


def cells_block(cells: Sequence[Pos]) -> str:
    """The batch as listed in a prompt, one ``(r,c)`` line per cell."""
    return "\n".join([CELLS_HEADER, *(cell_label(pos) for pos in cells)])


MODALITIES = ("text", "vision", "both")

OBSERVATION_CACHE = 64
"""Grids whose rendered observation is kept: an audit's batches and the steps between
two changes all show the same grid."""


@lru_cache(maxsize=OBSERVATION_CACHE)
def png_data_uri(grid: Grid, agent: Pos | None) -> str:
    """The rendering as a base64 PNG data URI, encoded once per (grid, agent)."""
    return "data:image/png;base64," + base64.b64encode(render_png(grid, agent)).decode("ascii")


@lru_cache(maxsize=OBSERVATION_CACHE)
def grid_listing(grid: Grid, agent: Pos, view: View) -> str:
    """The text observation under its header, built once per (grid, agent, view): the
    view's listing (``View.listing``), else the paper's listing of every cell."""
    listing = view.listing(grid, agent)
    return f"{TEXT_OBSERVATION_HEADER}\n{text_observation(grid, agent) if listing is None else listing}"


def image_header(grid: Grid, agent: Pos, legend: str | None = None) -> str:
    """The line above the image: its legend, and under fog the grey cells' rule.

    A grid with no fogged cell gets :data:`IMAGE_OBSERVATION_HEADER`, the paper's; a
    regime's overlay adds its ``legend`` for what it draws (MA: the other agent's tracks).
    """
    rule = fog_note(grid, agent, "Grey cells")
    header = IMAGE_OBSERVATION_HEADER if rule is None else f"{FOG_IMAGE_OBSERVATION_HEADER} {rule}"
    return f"{header} {legend}" if legend else header


@dataclass(frozen=True)
class Sight:
    """How a call shows the live grid: the text listing, the image, or both.

    Attributes:
        modality: ``text`` (the listing), ``vision`` (the PNG) or ``both``.
        image: the image of a grid as sent: its PNG data URI. The dry run passes a
            stand-in that names what an image shows without drawing it.
        overlay: what the instance's regime adds to every observation
            (:meth:`for_instance`; MA: the other agent's story before the grid and its
            tracks over the route), None for the grid as it is.
        view: what of the live grid a call shows and how its text lists it (the
            observation seam, ``_seams``: the extensions' views); the whole grid, every
            cell listed, in the paper.
    """

    modality: str
    image: Callable[[Grid, Pos | None], str] = png_data_uri
    overlay: Overlay | None = None
    view: View = WHOLE_GRID

    @classmethod
    def of(
        cls,
        kind: str,
        modality: str,
        extensions: Mapping[str, object],
        image: Callable[[Grid, Pos | None], str] | None = None,
    ) -> Sight:
        """How a ``kind`` solver shows the grid: in ``modality``, through the view its
        extensions' axes make (``extensions``, by name, as the solver takes them; a bad
        name or value raises ValueError); ``image`` draws the grid's pictures when given."""
        view = extension_view(kind, extension_values(kind, extensions))
        return cls(modality, view=view) if image is None else cls(modality, image=image, view=view)

    def seen(self, grid: Grid, agent: Pos) -> Grid:
        """``grid`` as a call made with the agent at ``agent`` may see it (:attr:`view`)."""
        return self.view.seen(grid, agent)

    def for_instance(self, instance: Instance) -> Sight:
        """This sight for ``instance``'s calls: with its regime's overlay, if any."""
        overlay = regime_of(instance.regime).overlay(instance.drawn)
        return replace(self, overlay=overlay) if overlay is not None else self

    def content(self, grid: Grid, agent: Pos) -> list[Content]:
        """The live grid as prompt content.

        ``grid`` is what the caller may see (:meth:`seen`): a grid with cells beyond
        the view lists them as ``?``, draws them grey and states the rule; the full
        grid gives the paper's observation. A regime's overlay comes first with its
        note and covers the grid as it says (MA: the route's cells in view hold the
        other agent's tracks).
        """
        parts: list[Content] = []
        legend = None
        if self.overlay is not None:
            grid = self.overlay.cover(grid)
            legend = self.overlay.legend(grid)
            parts.append(ContentText(text=self.overlay.note))
        if self.modality in ("text", "both"):
            parts.append(ContentText(text=grid_listing(grid, agent, self.view)))
        if self.modality in ("vision", "both"):
            parts.append(ContentText(text=image_header(grid, agent, legend)))
            parts.append(ContentImage(image=self.image(grid, agent), detail="high"))
        return parts


def cacheable(parts: list[Content]) -> list[Content]:
    """``parts`` with the last text part marked as the end of the cacheable prefix."""
    for index in range(len(parts) - 1, -1, -1):
        part = parts[index]
        if isinstance(part, ContentText):
            parts[index] = ContentText(text=part.text, cache_breakpoint=True)
            break
    return parts


def user_message(parts: list[Content]) -> ChatMessageUser:
    """The user message of ``parts``, each text part after the first starting on a new
    line: providers and chat templates that join parts add no separator of their own,
    and a block must not run on into the one before it."""
    spaced: list[Content] = []
    for part in parts:
        if spaced and isinstance(part, ContentText) and not part.text.startswith("\n"):
            part = part.model_copy(update={"text": "\n" + part.text})
        spaced.append(part)
    return ChatMessageUser(content=spaced)


def _observation_first(
    prompt: str, kind: str, grid: Grid, agent: Pos, sight: Sight, asked: str | list[Content]
) -> list[ChatMessage]:
    """Instructions, the observation, then what the call asks about.

    The observation comes before what is asked because every batch of an audit (or
    an observation of the probe) shows the same grid: consecutive calls then share
    all but their last block, a prefix that servers can cache.
    """
    parts = [ContentText(text=asked)] if isinstance(asked, str) else asked
    return [
        system_message(prompt, len(grid), kind),
        user_message([*cacheable(sight.content(grid, agent)), *parts]),
    ]


def audit_messages(
    entries: Sequence[MemoryEntry],
    grid: Grid,
    agent: Pos,
    sight: Sight,
    prompt: str = "",
    form: MemoryForm | None = None,
) -> list[ChatMessage]:
    """One audit call: instructions, the observation, then the batch of entries (their
    text, or as an extension's memory ``form`` shows them)."""
    asked = memory_block(entries) if form is None else form.content(entries)
    return _observation_first(prompt or DEFAULT_AUDIT_PROMPT, AUDIT, grid, agent, sight, asked)


def selfverify_messages(
    entries: Sequence[MemoryEntry], grid: Grid, agent: Pos, sight: Sight, prompt: str = ""
) -> list[ChatMessage]:
    """The SelfVerify call: instructions, the observation, then the whole store (the
    order of the audit, so the two kinds of call read alike)."""
    return _observation_first(
        prompt or DEFAULT_SELFVERIFY_PROMPT, SELFVERIFY, grid, agent, sight, memory_block(entries)
    )


def perception_messages(
    cells: Sequence[Pos], grid: Grid, agent: Pos, sight: Sight, prompt: str = ""
) -> list[ChatMessage]:
    """One perception-probe call: instructions, the observation, then the batch of cells."""
    return _observation_first(prompt or DEFAULT_PERCEPTION_PROMPT, PERCEPTION, grid, agent, sight, cells_block(cells))


def navigate_messages(
    view: Sequence[MemoryEntry] | None,
    grid: Grid,
    agent: Pos,
    goal: Pos,
    steps_left: int,
    sight: Sight,
    prompt: str = "",
) -> list[ChatMessage]:
    """One navigation step: instructions, memory view, observation, position and budget.

    The memory view comes first because it changes only when an audit rebuilds it,
    while the observation and position change every step. ``view=None`` (NoMemory)
    lists no memory at all.
    """
    return [
        system_message(prompt or DEFAULT_NAVIGATE_PROMPT, len(grid), NAVIGATE),
        user_message(
            [
                ContentText(text=memory_block(view or ()), cache_breakpoint=True),
                *sight.content(grid, agent),
                ContentText(text=position_line(agent, goal, steps_left)),
            ]
        ),
    ]
