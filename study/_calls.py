"""What a study's samples ask, call by call, measured before anything is sent.

The calls are the solvers' own plans (``detection_plan``, ``episode_plan``) on the
study's real instances with the task's own prompts; only the answers are assumed (in
exactly the format the prompt asks for), and images are named, not drawn. Tokens are
``ceil(chars / 4)`` a message part unless a :data:`TokenCount` is given; cached input
is the prefix a prompt shares with the previous one of its kind, as far as the
provider caches it (:class:`CacheRule`); rounds are round trips one after another (an
audit's batches go out together). Detection calls are exact; navigation's an upper
bound (every episode runs ``max_steps`` steps, each strategy's audits its ``plan``; a
plug-in strategy's audits are not counted). A long chain of calls is measured on
``CHAIN_PAIRS`` pairs of consecutive calls and scaled.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import astuple, dataclass, replace
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageSystem, ContentImage, ContentText
from inspect_ai.tool import Tool, ToolDef

from spatialstale.env import CELL_PX, Grid, Instance, MemoryEntry, Pos
from spatialstale.protocol import DetectionSettings, NavigationSettings, StandIn, VerdictField, extension_stand_ins
from spatialstale.solvers import (
    AuditPlan,
    ConversationPlan,
    EpisodePlan,
    SelfVerifyPlan,
    StepsPlan,
    detection_args,
    detection_plan,
    episode_plan,
    navigation_args,
)

CHARS_PER_TOKEN = 4
IMAGE_BASE_TOKENS = 85
IMAGE_TILE_TOKENS = 170
IMAGE_TILE_PX = 512
NAVIGATE_ANSWER = '{"action": "RIGHT"}'
CHAIN_PAIRS = 4
"""Pairs of consecutive calls measured in a chain longer than ``2 * CHAIN_PAIRS``."""
WINDOWS_MEASURED = 2
"""Detection windows measured a seed (the first and the last); the rest are scaled."""

TokenCount = Callable[[str], int]
"""Tokens of a text."""


def chars_over_four(text: str) -> int:
    """The default token count: ``ceil(len(text) / 4)``."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def picture_tokens(width: int, height: int) -> int:
    """Tokens of one image of ``width`` x ``height`` pixels: OpenAI's high-detail figure,
    85 + 170 per 512-px tile."""
    tiles = math.ceil(width / IMAGE_TILE_PX) * math.ceil(height / IMAGE_TILE_PX)
    return IMAGE_BASE_TOKENS + IMAGE_TILE_TOKENS * tiles


def image_tokens(size: int) -> int:
    """Tokens of one rendered grid image (``size * CELL_PX`` pixels a side): 255 for the
    default 384x384 image (:func:`picture_tokens`)."""
    return picture_tokens(size * CELL_PX, size * CELL_PX)


IMAGE_TOKENS = image_tokens(8)
"""255: the per-image figure at the default 8x8 grid (384x384 px)."""

STAND_INS: tuple[StandIn, ...] = extension_stand_ins()
"""The images the extensions' memory forms send, as the dry run's stand-ins name them."""


def stand_in_tokens(image: str) -> int | None:
    """Tokens of an extension's stand-in image (by its size, at any grid size); None
    for any other image."""
    for stand_in in STAND_INS:
        if image.startswith(stand_in.prefix):
            return picture_tokens(stand_in.width, stand_in.height)
    return None


def image_named(grid: Grid, agent: Pos | None) -> str:
    """A stand-in for an image: what it shows (two images of the same grid and agent
    are the same prefix), without drawing it (a 64x64 grid takes half a second)."""
    return f"image of grid {hash(grid)} agent {agent}"


Part = tuple[str, str]
"""A piece of a prompt as sent: ("role", name), ("text", text) or ("image", what it shows)."""


def prompt_parts(messages: Sequence[ChatMessage]) -> list[Part]:
    """The prompt flattened in the order a provider receives it."""
    parts: list[Part] = []
    for message in messages:
        parts.append(("role", message.role))
        if isinstance(message.content, str):
            parts.append(("text", message.content))
            continue
        for content in message.content:
            if isinstance(content, ContentText):
                parts.append(("text", content.text))
            elif isinstance(content, ContentImage):
                parts.append(("image", content.image))
    return parts


@dataclass(frozen=True)
class CacheRule:
    """What a provider caches of a prefix a prompt shares with an earlier one: nothing
    below ``minimum`` tokens, else ``minimum`` plus whole ``increment`` steps of the rest."""

    minimum: int
    increment: int = 1

    def cached(self, shared: int) -> int:
        """Tokens of a ``shared``-token prefix read from the cache."""
        if shared < self.minimum or shared <= 0:
            return 0
        return self.minimum + (shared - self.minimum) // self.increment * self.increment


ANY_PREFIX = CacheRule(1)
"""Every shared prefix cached, however short (a self-hosted server's prefix cache)."""


@dataclass(frozen=True)
class Calls:
    """Model calls and estimated tokens of one model role. ``cached_tokens`` (part of
    ``prompt_tokens``) would be read from the provider's prefix cache, by
    ``cached_calls`` of the calls; ``cache_write_tokens`` are written to it for the
    next call. ``rounds``: round trips one after another (an audit's batches are one)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    cached_calls: int = 0
    rounds: int = 0

    def __add__(self, other: Calls) -> Calls:
        return Calls(*(a + b for a, b in zip(self.figures, other.figures, strict=True)))

    def __mul__(self, k: int) -> Calls:
        return Calls(*(a * k for a in self.figures))

    @property
    def figures(self) -> tuple[int, ...]:
        return astuple(self)

    def concurrent(self) -> Calls:
        """These calls sent together: one round trip."""
        return replace(self, rounds=min(self.calls, 1))

    def scaled(self, factor: float) -> Calls:
        """Everything times ``factor`` (a sample of seeds scaled to all of them)."""
        return Calls(*(round(a * factor) for a in self.figures))


@dataclass(frozen=True)
class Meter:
    """How prompts are measured: a token count for text, the grid size for images, and
    what the provider caches (``cache``; None: nothing)."""

    count: TokenCount = chars_over_four
    size: int = 8
    cache: CacheRule | None = ANY_PREFIX

    def cached(self, shared: int) -> int:
        return 0 if self.cache is None else self.cache.cached(shared)

    def part(self, part: Part) -> int:
        kind, value = part
        if kind == "text":
            return self.count(value)
        if kind == "image":
            tokens = stand_in_tokens(value)
            return image_tokens(self.size) if tokens is None else tokens
        return 0

    def prompt(self, messages: Sequence[ChatMessage]) -> int:
        return sum(self.part(p) for p in prompt_parts(messages))

    def shared(self, a: Sequence[Part], b: Sequence[Part]) -> int:
        """Tokens at the start of prompt ``b`` identical to the start of prompt ``a``."""
        total = 0
        for x, y in zip(a, b, strict=False):
            if x == y:
                total += self.part(x)
                continue
            if x[0] == y[0] == "text":
                total += self.count(x[1][: _common_prefix(x[1], y[1])])
            break
        return total


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix of two strings (binary search on slices, C speed)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


CallAt = Callable[[int], tuple[list[ChatMessage], str]]
"""The prompt and the expected answer of the i-th call of a chain."""


def chain(call_at: CallAt, length: int, meter: Meter) -> Calls:
    """``length`` consecutive calls of one kind (an audit's batches, an episode's steps).

    Short chains are built in full; a longer one on ``CHAIN_PAIRS`` evenly spaced
    pairs of consecutive calls, its tokens scaled to ``length`` calls.
    """
    if length < 1:
        return Calls()
    if length <= 2 * CHAIN_PAIRS:
        built = [call_at(i) for i in range(length)]
        parts = [prompt_parts(messages) for messages, _ in built]
        reads = [meter.cached(meter.shared(parts[i - 1], parts[i])) for i in range(1, length)]
        prompt = sum(meter.part(p) for prompt in parts for p in prompt)
        return _in_turn(length, prompt, sum(meter.count(answer) for _, answer in built), reads)
    starts = sorted({round(k * (length - 2) / (CHAIN_PAIRS - 1)) for k in range(CHAIN_PAIRS)})
    prompt = completion = read = hits = 0
    for start in starts:
        (first, first_answer), (second, second_answer) = call_at(start), call_at(start + 1)
        a, b = prompt_parts(first), prompt_parts(second)
        prompt += sum(meter.part(p) for p in a) + sum(meter.part(p) for p in b)
        completion += meter.count(first_answer) + meter.count(second_answer)
        pair = meter.cached(meter.shared(a, b))
        read += pair
        hits += pair > 0
    pairs = len(starts)
    mean_read = read / pairs
    return Calls(
        length,
        round(prompt / (2 * pairs) * length),
        round(completion / (2 * pairs) * length),
        round(mean_read * (length - 1)),
        round(mean_read),  # written once, then read by each next call
        round(hits / pairs * (length - 1)),
        length,
    )


def audit_answer(batch: Sequence[MemoryEntry], stale: frozenset[str], fields: Sequence[VerdictField] = ()) -> str:
    """A correct audit answer in the requested format, reasons like the prompt's example;
    each stale verdict also holds each of ``fields`` (the extensions' verdict fields the
    task asks for), as an auditor that knows the cell's current type writes it."""
    return json.dumps(
        [
            {
                "memory_id": e.id,
                "is_stale": e.id in stale,
                "reason": f"({e.row},{e.col}) is {'H' if (e.claim == 'SAFE') == (e.id in stale) else 'F'} "
                f"in the current grid; the claim {'fails' if e.id in stale else 'holds'}",
                **(
                    {f.name: f.believed(e.pos, "H" if e.claim == "SAFE" else "F") for f in fields}
                    if e.id in stale
                    else {}
                ),
            }
            for e in batch
        ]
    )


def tool_definitions(tools: Sequence[Tool]) -> str:
    """``tools`` as a provider receives them with every call (name, description and
    JSON schema of each), for their tokens."""
    defs = [ToolDef(t) for t in tools]
    return json.dumps(
        [
            {"name": d.name, "description": d.description, "parameters": d.parameters.model_dump(exclude_none=True)}
            for d in defs
        ]
    )


@functools.cache
def _solver_args(settings: DetectionSettings | NavigationSettings) -> dict[str, Any]:
    # once a task, not once a sample: the solver's arguments read every axis
    return detection_args(settings) if isinstance(settings, DetectionSettings) else navigation_args(settings)


def detection_plan_of(settings: DetectionSettings, instance: Instance) -> list[AuditPlan]:
    """The calls of one detection sample, as the task's solver makes them (images named,
    not drawn: the grid's by :func:`image_named`, an extension's by its stand-in)."""
    return detection_plan(instance, **_solver_args(settings), image=image_named, drawn=False)


def episode_plan_of(settings: NavigationSettings, instance: Instance, strategy: str) -> EpisodePlan:
    """The calls of one episode at most, as the task's solver makes them (images named, not drawn)."""
    return episode_plan(instance, strategy, **_solver_args(settings), image=image_named)


def audit_calls(plan: AuditPlan | SelfVerifyPlan, meter: Meter) -> Calls:
    """One audit's calls, sent together, each answered correctly (:func:`audit_answer`)."""
    stale = frozenset() if plan.truth is None else plan.truth.stale
    if isinstance(plan, SelfVerifyPlan):
        answer = json.dumps({"inconsistent": sorted(stale)})
        return chain(lambda i: (plan.messages(), answer), 1, meter).concurrent()
    batches = plan.batches

    def call_at(i: int) -> tuple[list[ChatMessage], str]:
        return plan.messages(batches[i]), audit_answer(batches[i], stale, plan.fields)

    return chain(call_at, len(batches), meter).concurrent()


def audits_calls(plans: Sequence[AuditPlan | SelfVerifyPlan], meter: Meter) -> Calls:
    """A sample's audits: the first and last measured, the ones between scaled from
    them (they differ only by the grid's changes)."""
    if len(plans) <= WINDOWS_MEASURED:
        total = Calls()
        for plan in plans:
            total += audit_calls(plan, meter)
        return total
    measured = audit_calls(plans[0], meter) + audit_calls(plans[-1], meter)
    return Calls(measured.calls // 2 * len(plans), *(round(a * len(plans) / 2) for a in measured.figures[1:]))


def steps_calls(plan: StepsPlan, meter: Meter) -> Calls:
    """The per-step navigator's calls of one episode, each answered with a move."""
    return chain(lambda step: (plan.messages(step), NAVIGATE_ANSWER), plan.turns, meter)


def conversation_calls(plan: ConversationPlan, meter: Meter) -> Calls:
    """The calls of one episode of a navigator that converses: a turn a step.

    Turn i sends the whole conversation so far: the tool definitions, the plan's
    opening (for the tool navigator: the system prompt and the opening observation)
    and i exchanges (for it: a ``move`` call and its result, the step's outcome,
    observation, position and budget), so the prompt grows by one exchange a turn and
    all but the newest exchange is the previous turn's prompt (cached). Every exchange
    is measured as the plan's one (the agent at S, as for the per-step navigator).
    """
    opening: list[ChatMessage] = [ChatMessageSystem(content=tool_definitions(plan.tools)), *plan.opening]
    base, grow, turns = meter.prompt(opening), meter.prompt(plan.exchange), plan.turns
    # turn i reads the previous turn's whole prompt, base + grow * (i - 1) tokens
    reads = [meter.cached(base + grow * (i - 1)) for i in range(1, turns)]
    return _in_turn(turns, turns * base + grow * turns * (turns - 1) // 2, turns * meter.count(plan.answer), reads)


def _in_turn(calls: int, prompt: int, completion: int, reads: Sequence[int]) -> Calls:
    """``calls`` one after another, call i + 1 reading ``reads[i]`` tokens from the cache;
    what a call reads and the one before it did not, that one wrote."""
    cached = [0, *reads, 0]
    written = sum(max(0, cached[i + 1] - cached[i]) for i in range(calls))
    return Calls(calls, prompt, completion, sum(cached), written, sum(1 for c in cached if c > 0), calls)


def sample_calls(
    settings: DetectionSettings | NavigationSettings,
    instance: Instance,
    strategy: str = "",
    count: TokenCount = chars_over_four,
    cache: CacheRule | None = ANY_PREFIX,
) -> tuple[Calls, Calls]:
    """(navigator, auditor) calls and tokens of one sample's plan: a detection
    sample's (exact) or one episode of ``strategy`` (an upper bound)."""
    meter = Meter(count, settings.size, cache)
    if isinstance(settings, DetectionSettings):
        return Calls(), audits_calls(detection_plan_of(settings, instance), meter)
    plan = episode_plan_of(settings, instance, strategy)
    navigator = plan.navigator
    if isinstance(navigator, ConversationPlan):
        return conversation_calls(navigator, meter), audits_calls(plan.audits, meter)
    return steps_calls(navigator, meter), audits_calls(plan.audits, meter)
