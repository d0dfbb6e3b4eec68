"""The dry run: samples, model calls, tokens and money before anything is spent.

Prompts are the real ones: every message is built by the solvers' own builders
(``audit_messages``, ``selfverify_messages``, ``navigate_messages``) for the real
instances of the study. Tokens are estimated, not tokenized:

- text: ``ceil(len(text) / 4)`` per message part (about four characters a token for
  English and JSON with common BPE tokenizers);
- images: ``image_tokens(size)`` per image, OpenAI's high-detail figure (85 base +
  170 per 512 px tile: 255 for the default 384x384 rendering);
- completions: the answer in exactly the format the prompt asks for (an audit entry
  per id with a one-line reason like the prompt's example; SelfVerify listing the
  truly stale ids; ``{"action": "RIGHT"}`` a step). Verbose models write more;
- cached input: the prefix a prompt shares with the previous prompt of the same
  kind (the batches of one audit, the steps of one episode), measured part by part
  on the built prompts, so it follows whatever order the prompt builders use. This
  is what a provider's prefix cache could serve; providers cache only prefixes of
  about 1,024 tokens or more, so on small grids the cost without caching is the
  better guide. The part of a prompt that the next prompt will share counts as a
  cache write when it is not already a cache read.

Calls are counted, never sampled: detection makes windows x ceil(n^2 / B) calls a
seed (L3 has one window per scheduled event). Navigation depends on when episodes
end, so its counts are an upper bound: every episode runs ``max_steps`` steps, OMCD
re-audits after every scheduled L3 event before the step budget ends, SelfVerify
makes one call, Oracle none, and every memory view holds the whole store.

Speed: building every prompt of a large study takes long (a 64x64 grid's audit
prompt is ~40 kB and its image takes half a second to render), so images are not
rendered (:func:`images_unrendered`), a long chain of calls is measured on
``CHAIN_PAIRS`` evenly spaced pairs of consecutive calls and scaled to its length,
an L3 audit schedule on its first and last windows, and a task whose seeds x cells
exceed ``EXACT_CELLS`` on an evenly spaced sample of its seeds, scaled to all of them
(then its call counts are estimates too). The printout says which.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ContentImage,
    ContentText,
    ModelCost,
    get_model_info,
)
from inspect_ai.tool import ToolDef

from spatialstale.env import CELL_PX, Grid, Instance, MemoryEntry, Pos, fog, make_instance
from spatialstale.solvers import DEFAULT_TOOLS_PROMPT, PROMPT_SETS, PromptSet, _prompts, detection_windows
from spatialstale.solvers._prompts import (
    audit_messages,
    navigate_messages,
    observation_content,
    position_line,
    selfverify_messages,
    user_message,
)
from spatialstale.solvers._tools import move_tool, recall_tool

from ._options import read_config_file
from ._study import Study, TaskSpec

CHARS_PER_TOKEN = 4
IMAGE_BASE_TOKENS = 85
IMAGE_TILE_TOKENS = 170
IMAGE_TILE_PX = 512
NAVIGATE_ANSWER = '{"action": "RIGHT"}'
TOOL_CALL_ANSWER = '{"name": "move", "arguments": {"direction": "right"}}'
"""A ``move`` call as the tool-using navigator's answer (and, later, its history)."""
CHAIN_PAIRS = 4
"""Pairs of consecutive calls measured in a chain longer than ``2 * CHAIN_PAIRS``."""
WINDOWS_MEASURED = 2
"""Detection windows measured a seed (the first and the last); the rest are scaled."""
EXACT_CELLS = 8_192
"""Seeds x grid cells up to which a task is measured on every seed (128 seeds at 8x8)."""
MIN_SAMPLED_SEEDS = 4


def image_tokens(size: int) -> int:
    """Tokens of one rendered grid image (``size * CELL_PX`` pixels a side)."""
    tiles = math.ceil(size * CELL_PX / IMAGE_TILE_PX) ** 2
    return IMAGE_BASE_TOKENS + IMAGE_TILE_TOKENS * tiles


IMAGE_TOKENS = image_tokens(8)
"""255: the per-image figure at the default 8x8 grid (384x384 px)."""


def text_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


Part = tuple[str, str]
"""A piece of a prompt as sent: ("role", name), ("text", text) or ("image", data)."""


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


def _part_tokens(part: Part, size: int) -> int:
    kind, value = part
    if kind == "text":
        return text_tokens(value)
    return image_tokens(size) if kind == "image" else 0


def parts_tokens(parts: Sequence[Part], size: int = 8) -> int:
    return sum(_part_tokens(part, size) for part in parts)


def prompt_tokens(messages: Sequence[ChatMessage], size: int = 8) -> int:
    """The chars/4 estimate of a prompt, plus ``image_tokens(size)`` per image."""
    return parts_tokens(prompt_parts(messages), size)


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


def shared_prefix_tokens(a: Sequence[Part], b: Sequence[Part], size: int = 8) -> int:
    """Tokens at the start of prompt ``b`` identical to the start of prompt ``a``."""
    total = 0
    for x, y in zip(a, b, strict=False):
        if x == y:
            total += _part_tokens(x, size)
            continue
        if x[0] == y[0] == "text":
            total += _common_prefix(x[1], y[1]) // CHARS_PER_TOKEN
        break
    return total


def audit_answer(batch: Sequence[MemoryEntry], stale: frozenset[str]) -> str:
    """A correct audit answer in the requested format, reasons like the prompt's example."""
    return json.dumps(
        [
            {
                "memory_id": e.id,
                "is_stale": e.id in stale,
                "reason": f"({e.row},{e.col}) is {'H' if (e.claim == 'SAFE') == (e.id in stale) else 'F'} "
                f"in the current grid; the claim {'fails' if e.id in stale else 'holds'}",
            }
            for e in batch
        ]
    )


@dataclass(frozen=True)
class Calls:
    """Model calls and estimated tokens of one model role. ``cached_tokens`` (part of
    ``prompt_tokens``) could be read from a prefix cache; ``cache_write_tokens`` are
    written to it for the next call."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Calls) -> Calls:
        return Calls(
            self.calls + other.calls,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_tokens + other.cached_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    def __mul__(self, k: int) -> Calls:
        return Calls(
            self.calls * k,
            self.prompt_tokens * k,
            self.completion_tokens * k,
            self.cached_tokens * k,
            self.cache_write_tokens * k,
        )

    def tokens_scaled(self, factor: float) -> Calls:
        """Tokens times ``factor`` (measured on a part, scaled to the whole); calls kept."""
        return Calls(
            self.calls,
            round(self.prompt_tokens * factor),
            round(self.completion_tokens * factor),
            round(self.cached_tokens * factor),
            round(self.cache_write_tokens * factor),
        )

    def scaled(self, factor: float) -> Calls:
        """Everything times ``factor`` (a sample of seeds scaled to all of them)."""
        return Calls(round(self.calls * factor)) + self.tokens_scaled(factor).without_calls()

    def without_calls(self) -> Calls:
        return Calls(0, self.prompt_tokens, self.completion_tokens, self.cached_tokens, self.cache_write_tokens)


CallAt = Callable[[int], tuple[list[ChatMessage], str]]
"""The prompt and the expected answer of the i-th call of a chain."""


def chain(call_at: CallAt, length: int, size: int) -> Calls:
    """``length`` consecutive calls of one kind (an audit's batches, an episode's steps).

    Short chains are built in full; a longer one on ``CHAIN_PAIRS`` evenly spaced
    pairs of consecutive calls, its tokens scaled to ``length`` calls.
    """
    if length < 1:
        return Calls()
    if length <= 2 * CHAIN_PAIRS:
        built = [call_at(i) for i in range(length)]
        parts = [prompt_parts(messages) for messages, _ in built]
        shared = [0] + [shared_prefix_tokens(parts[i - 1], parts[i], size) for i in range(1, length)] + [0]
        return Calls(
            length,
            sum(parts_tokens(p, size) for p in parts),
            sum(text_tokens(answer) for _, answer in built),
            sum(shared),
            sum(max(0, shared[i + 1] - shared[i]) for i in range(length)),
        )
    starts = sorted({round(k * (length - 2) / (CHAIN_PAIRS - 1)) for k in range(CHAIN_PAIRS)})
    prompt = completion = cached = 0
    for start in starts:
        (first, first_answer), (second, second_answer) = call_at(start), call_at(start + 1)
        a, b = prompt_parts(first), prompt_parts(second)
        prompt += parts_tokens(a, size) + parts_tokens(b, size)
        completion += text_tokens(first_answer) + text_tokens(second_answer)
        cached += shared_prefix_tokens(a, b, size)
    pairs = len(starts)
    mean_shared = cached / pairs
    return Calls(
        length,
        round(prompt / (2 * pairs) * length),
        round(completion / (2 * pairs) * length),
        round(mean_shared * (length - 1)),
        round(mean_shared),  # written once, then read by each next call
    )


DEFAULT_PROMPTS = PROMPT_SETS["default"]


def _audit(
    instance: Instance,
    grid: Grid,
    modality: str,
    batch_size: int,
    prompts: PromptSet = DEFAULT_PROMPTS,
    view_radius: int | None = None,
) -> Calls:
    """One batched audit of the whole store against ``grid``, with the set's audit
    prompt; under fog the observation is what the agent at S sees of ``grid``."""
    stale = instance.stale_ids(grid)
    memory = instance.memory
    seen = fog(grid, instance.start, view_radius)

    def call_at(i: int) -> tuple[list[ChatMessage], str]:
        batch = memory[i * batch_size : (i + 1) * batch_size]
        messages = audit_messages(batch, seen, instance.start, modality, prompt=prompts.audit, size=instance.size)
        return messages, audit_answer(batch, stale)

    return chain(call_at, math.ceil(len(memory) / batch_size), instance.size)


def _audits(
    instance: Instance,
    grids: Sequence[Grid],
    modality: str,
    batch_size: int,
    prompts: PromptSet = DEFAULT_PROMPTS,
    view_radius: int | None = None,
) -> Calls:
    """Audits of the whole store against each grid: the first and last measured,
    the ones between scaled from them (they differ only by the grid's changes)."""
    if len(grids) <= WINDOWS_MEASURED:
        total = Calls()
        for grid in grids:
            total += _audit(instance, grid, modality, batch_size, prompts, view_radius)
        return total
    measured = _audit(instance, grids[0], modality, batch_size, prompts, view_radius)
    measured += _audit(instance, grids[-1], modality, batch_size, prompts, view_radius)
    scaled = measured.tokens_scaled(len(grids) / 2).without_calls()
    return Calls(measured.calls // 2 * len(grids)) + scaled


def detection_sample(instance: Instance, modality: str, batch_size: int, prompts: PromptSet = DEFAULT_PROMPTS) -> Calls:
    """Calls (exact) and tokens of one detection sample: every window audits the store."""
    grids = [grid for _, grid in detection_windows(instance)]
    return _audits(instance, grids, modality, batch_size, prompts)


def tool_definitions() -> str:
    """The ``move`` and ``recall`` tools as a provider receives them with every call
    (name, description and JSON schema of each), for their tokens."""
    defs = [ToolDef(make(None)) for make in (move_tool, recall_tool)]  # type: ignore[arg-type]
    return json.dumps(
        [
            {"name": d.name, "description": d.description, "parameters": d.parameters.model_dump(exclude_none=True)}
            for d in defs
        ]
    )


def tool_conversation(instance: Instance, modality: str, max_steps: int, view_radius: int | None) -> Calls:
    """The tool-using navigator's calls of one episode: a turn a step, each a ``move``.

    Turn i sends the whole conversation so far: the tool definitions, the system
    prompt, the opening observation and i exchanges (a ``move`` call and its result:
    the step's outcome, observation, position and budget), so the prompt grows by one
    exchange a turn and all but the newest exchange is the previous turn's prompt
    (cached). An exchange is measured on the first step and taken as the same length
    on every later one (the agent at S, as for the prompt navigator).
    """
    start = instance.start

    def situation(step: int) -> list[ContentText | ContentImage]:
        seen = fog(instance.grid_after(step), start, view_radius)
        return [
            *observation_content(seen, start, modality),  # type: ignore[list-item]
            ContentText(text=position_line(start, instance.goal, max_steps - step)),
        ]

    opening: list[ChatMessage] = [
        ChatMessageSystem(content=tool_definitions()),
        ChatMessageSystem(content=_prompts.fill_prompt(DEFAULT_TOOLS_PROMPT, instance.size)),
        user_message(situation(0)),  # type: ignore[arg-type]
    ]
    exchange: list[ChatMessage] = [
        ChatMessageAssistant(content=TOOL_CALL_ANSWER),
        ChatMessageTool(
            content=[ContentText(text=f"Moved right to ({start[0]},{start[1]})."), *situation(1)],
            function="move",
        ),
    ]
    size = instance.size
    base = prompt_tokens(opening, size)
    grow = prompt_tokens(exchange, size)
    turns = max_steps
    return Calls(
        turns,
        turns * base + grow * turns * (turns - 1) // 2,
        turns * text_tokens(TOOL_CALL_ANSWER),
        (turns - 1) * base + grow * (turns - 1) * (turns - 2) // 2,
        base + grow * (turns - 1) if turns > 1 else 0,
    )


def navigation_episode(
    instance: Instance,
    strategy: str,
    modality: str,
    batch_size: int,
    max_steps: int,
    prompts: PromptSet = DEFAULT_PROMPTS,
    *,
    view_radius: int | None = None,
    agent: str = "prompt",
) -> tuple[Calls, Calls]:
    """(navigator, auditor) upper bounds of one episode of ``strategy``, with the
    prompt set's navigation, audit and SelfVerify prompts.

    Every step is taken (``max_steps`` navigator calls, the agent at S); OMCD audits
    before the first step and again after each scheduled event that precedes the
    last decision; the memory view is the whole store for every memory strategy.
    Under fog (``view_radius``) every observation of the episode, the audits' too, is
    the square the agent at S sees. The tool-using navigator (``agent="tools"``) is
    priced by :func:`tool_conversation` (its memory is read through ``recall`` calls,
    which are not counted: a turn a step).
    """
    view = None if strategy == "nomemory" else instance.memory

    def seen(grid: Grid) -> Grid:
        return fog(grid, instance.start, view_radius)

    def step_at(step: int) -> tuple[list[ChatMessage], str]:
        grid = seen(instance.grid_after(step))
        messages = navigate_messages(
            view,
            grid,
            instance.start,
            instance.goal,
            max_steps - step,
            modality,
            prompt=prompts.navigate,
            size=instance.size,
        )
        return messages, NAVIGATE_ANSWER

    if agent == "tools":
        navigator = tool_conversation(instance, modality, max_steps, view_radius)
    else:
        navigator = chain(step_at, max_steps, instance.size)
    auditor = Calls()
    if strategy == "selfverify":
        grid = instance.initial_grid
        messages = selfverify_messages(
            instance.memory, seen(grid), instance.start, modality, prompt=prompts.selfverify, size=instance.size
        )
        answer = json.dumps({"inconsistent": sorted(instance.stale_ids(grid))})
        auditor = Calls(1, prompt_tokens(messages, instance.size), text_tokens(answer))
    elif strategy == "omcd":
        grids = [instance.initial_grid]
        grids += [instance.grid_after(event.step) for event in instance.schedule if event.step < max_steps]
        auditor = _audits(instance, grids, modality, batch_size, prompts, view_radius)
    return navigator, auditor


def seed_sample(seeds: Sequence[int], size: int) -> tuple[int, ...]:
    """Every seed when seeds x cells <= ``EXACT_CELLS``, else evenly spaced ones."""
    if len(seeds) * size * size <= EXACT_CELLS:
        return tuple(seeds)
    k = min(len(seeds), max(MIN_SAMPLED_SEEDS, EXACT_CELLS // (size * size)))
    return tuple(seeds[round(i * (len(seeds) - 1) / (k - 1))] for i in range(k)) if k > 1 else (seeds[0],)


@dataclass(frozen=True)
class TaskEstimate:
    """One task's dry-run figures. ``exact``: the call counts are exact (detection,
    every seed measured); navigation's are an upper bound. ``measured_seeds`` of the
    task's seeds were built; with fewer than all, counts and tokens are scaled."""

    spec: TaskSpec
    samples: int
    navigator: Calls
    auditor: Calls
    exact: bool
    measured_seeds: int = 0

    @property
    def total(self) -> Calls:
        return self.navigator + self.auditor

    @property
    def sampled(self) -> bool:
        return self.measured_seeds < len(self.spec.seeds)


def estimate_task(spec: TaskSpec) -> TaskEstimate:
    """The dry-run figures of one task (the same for every model), its prompts those of
    the task's prompt set."""
    measured = seed_sample(spec.seeds, spec.size)
    prompts = PROMPT_SETS[spec.prompt_set]
    navigator = auditor = Calls()
    for seed in measured:
        instance = make_instance(seed, spec.regime, spec.size)
        if spec.kind == "detection":
            auditor += detection_sample(instance, spec.modality, spec.batch_size, prompts)
            continue
        for strategy in spec.strategies:
            nav, aud = navigation_episode(
                instance,
                strategy,
                spec.modality,
                spec.batch_size,
                spec.max_steps,
                prompts,
                view_radius=spec.view_radius,
                agent=spec.agent,
            )
            navigator += nav * spec.episodes
            auditor += aud * spec.episodes
    sampled = len(measured) < len(spec.seeds)
    if sampled:
        factor = len(spec.seeds) / len(measured)
        navigator, auditor = navigator.scaled(factor), auditor.scaled(factor)
    exact = spec.kind == "detection" and not sampled
    return TaskEstimate(spec, spec.samples, navigator, auditor, exact, len(measured))


@dataclass(frozen=True)
class PlanRow:
    """A line of the dry-run table: one task run by one model."""

    model: str
    auditor: str
    estimate: TaskEstimate


def _image_key(grid: Grid, agent: Pos | None) -> str:
    return f"grid {hash(grid)} agent {agent}"


@contextmanager
def images_unrendered() -> Iterator[None]:
    """The prompt builders with each image replaced by a key of what it shows.

    The estimate counts an image's tokens from the grid size and compares two images
    by what they show, never by their pixels, while rendering and encoding a 64x64
    grid takes half a second: most of a large dry run without this.
    """
    original = getattr(_prompts, "png_data_uri", None)
    if original is None:  # the builders render some other way: leave them as they are
        yield
        return
    _prompts.png_data_uri = _image_key  # type: ignore[assignment]
    try:
        yield
    finally:
        _prompts.png_data_uri = original


def plan(study: Study) -> list[PlanRow]:
    """Every (model, task) of the study with its estimate; audits go to the auditor."""
    with images_unrendered():
        estimates = [estimate_task(spec) for spec in study.tasks]
    return [PlanRow(model, study.auditor or model, e) for model in study.models for e in estimates]


def per_model(rows: Sequence[PlanRow]) -> dict[str, tuple[Calls, bool]]:
    """Calls and tokens each model would serve (navigation and audits), and whether exact."""
    totals: dict[str, tuple[Calls, bool]] = {}
    for row in rows:
        for model, calls in ((row.model, row.estimate.navigator), (row.auditor, row.estimate.auditor)):
            before, exact = totals.get(model, (Calls(), True))
            totals[model] = (before + calls, exact and (row.estimate.exact or calls.calls == 0))
    return totals


Prices = Mapping[str, ModelCost]


def read_prices(path: str) -> dict[str, ModelCost]:
    """A price table in Inspect's ``--model-cost-config`` format: a YAML or JSON
    mapping of model name to ``input``, ``output``, ``input_cache_write`` and
    ``input_cache_read``, each in dollars per million tokens.

    Raises:
        ValueError: for a missing or malformed file (one line, naming the fields).
    """
    data = read_config_file(path, "--model-cost-config")
    prices = {}
    for model, cost in data.items():
        try:
            prices[str(model)] = ModelCost(**cost)
        except Exception:  # pydantic's message spans many lines
            fields = "input, output, input_cache_write, input_cache_read"
            raise ValueError(
                f"--model-cost-config: {model!r} needs {fields} ($ per million tokens); got {cost!r}"
            ) from None
    return prices


def price_of(model: str, prices: Prices) -> tuple[ModelCost, str] | None:
    """The model's price and where it came from: the table, else Inspect's model data."""
    if model in prices:
        return prices[model], "price table"
    try:
        info = get_model_info(model)
    except Exception:  # an unknown provider or name: no price, not an error
        return None
    if info is None or info.cost is None:
        return None
    return info.cost, "Inspect's model data"


def cost(calls: Calls, price: ModelCost, *, cache: bool = True) -> float:
    """Dollars for ``calls``; with ``cache`` the shared prefixes are cache reads and
    writes at their prices, else every prompt token is plain input."""
    if not cache:
        return (calls.prompt_tokens * price.input + calls.completion_tokens * price.output) / 1e6
    plain = calls.prompt_tokens - calls.cached_tokens - calls.cache_write_tokens
    return (
        max(plain, 0) * price.input
        + calls.cache_write_tokens * price.input_cache_write
        + calls.cached_tokens * price.input_cache_read
        + calls.completion_tokens * price.output
    ) / 1e6


def _row_cost(row: PlanRow, prices: Prices) -> float | None:
    total = 0.0
    for model, calls in ((row.model, row.estimate.navigator), (row.auditor, row.estimate.auditor)):
        if calls.calls == 0:
            continue
        found = price_of(model, prices)
        if found is None:
            return None
        total += cost(calls, found[0])
    return total


def _counts(estimate: TaskEstimate) -> str:
    if estimate.sampled:
        return f"estimate ({estimate.measured_seeds} of {len(estimate.spec.seeds)} seeds)"
    if estimate.spec.kind == "navigation" and estimate.spec.agent == "tools":
        return "estimate (a turn a step)"  # recall turns come on top; early ends come off
    return "exact" if estimate.exact else "upper bound"


def _table(lines: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    out = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths).rstrip())
    return out


AXIS_DEFAULTS = {"prompt set": "default", "filter": "delete", "view radius": "full", "agent": "prompt"}
"""The dry-run columns of the study axes (``TaskSpec.axes``) and each one's paper value."""


def format_plan(study: Study, rows: Sequence[PlanRow], prices: Prices | None = None) -> str:
    """The dry-run printout: a table per (model, task), totals and cost per model, the method."""
    prices = prices or {}
    # a study beyond the paper's protocol names each cell's axes in columns of their own
    varied = [axis for axis in AXIS_DEFAULTS if any(axis in row.estimate.spec.axes() for row in rows)]
    header = (
        "model",
        "task",
        *varied,
        "samples",
        "epochs",
        "nav calls",
        "audit calls",
        "prompt tok",
        "cached tok",
        "completion tok",
        "cost $",
        "counts",
    )
    lines: list[tuple[str, ...]] = [header]
    for row in rows:
        e = row.estimate
        row_cost = _row_cost(row, prices)
        axes = e.spec.axes()
        lines.append(
            (
                row.model,
                e.spec.base_name if varied else e.spec.name,
                *(axes.get(axis, AXIS_DEFAULTS[axis]) for axis in varied),
                f"{e.samples:,}",
                str(e.spec.episodes if e.spec.kind == "navigation" else 1),
                f"{e.navigator.calls:,}",
                f"{e.auditor.calls:,}" + ("" if row.auditor == row.model else f" ({row.auditor})"),
                f"{e.total.prompt_tokens:,}",
                f"{e.total.cached_tokens:,}",
                f"{e.total.completion_tokens:,}",
                "n/a" if row_cost is None else f"{row_cost:,.2f}",
                _counts(e),
            )
        )
    out = _table(lines)
    out.append("")
    out.append("Per model (every call it would serve):")
    for model, (calls, exact) in per_model(rows).items():
        bound = "" if exact else " (upper bound: navigation included)"
        out.append(
            f"  {model}: {calls.calls:,} calls, ~{calls.prompt_tokens:,} prompt tokens (~{calls.cached_tokens:,} "
            f"a cacheable shared prefix) + ~{calls.completion_tokens:,} completion tokens{bound}"
        )
        found = price_of(model, prices)
        if found is None:
            out.append("    cost: no price (give one with --model-cost-config FILE)")
            continue
        price, source = found
        out.append(
            f"    cost: ~${cost(calls, price):,.2f} with prefix caching, ~${cost(calls, price, cache=False):,.2f} "
            f"without (per million tokens: ${price.input:g} in, ${price.output:g} out, "
            f"${price.input_cache_read:g} cached read, ${price.input_cache_write:g} cache write; {source})"
        )
    samples = sum(r.estimate.samples for r in rows)
    records = sum(r.estimate.spec.records for r in rows)
    out.append(
        f"  all: {len(rows)} task logs, {samples:,} samples ({records:,} sample records with the navigation "
        f"epochs), into {study.log_dir}"
    )
    out.append("")
    measured = [r.estimate for r in rows]
    sampled = [e for e in measured if e.sampled]
    how = (
        f"tokens measured on {min(e.measured_seeds for e in sampled)}+ evenly spaced seeds of large tasks and "
        "scaled (their calls too)"
        if sampled
        else "every seed built"
    )
    out.append(
        "Samples: detection one per seed, navigation one per (seed, strategy), each run for every epoch "
        "(--episodes). Detection calls are exact (windows x ceil(n^2/B) a seed). Navigation figures are an "
        "upper bound: every episode runs max_steps steps, OMCD re-audits after every scheduled L3 event, "
        "SelfVerify makes 1 call, Oracle none, and every memory view holds the whole store. Tokens: "
        f"ceil(chars/4) a message part, {IMAGE_TOKENS} a {8 * CELL_PX}x{8 * CELL_PX} image; completions as "
        "the requested answer format; cached = the prefix shared with the previous prompt of the same kind "
        f"(providers cache only prefixes of ~1,024+ tokens). Method: {how}; chains of more than "
        f"{2 * CHAIN_PAIRS} calls measured on {CHAIN_PAIRS} pairs of consecutive calls and scaled; L3 audit "
        f"schedules on their first and last windows. Cost with caching counts cached tokens at the cached-read "
        "price and each newly shared prefix once at the cache-write price."
    )
    specs = [r.estimate.spec for r in rows if r.estimate.spec.kind == "navigation"]
    if any(spec.view_radius is not None for spec in specs):
        out.append(
            "View radius k (fog): every observation of the episode, its audits' too, is the square of radius k "
            "around S that the agent sees there."
        )
    if any(spec.agent == "tools" for spec in specs):
        out.append(
            "Agent tools: one conversation an episode, a turn a step (each a move call); every turn resends the "
            "conversation so far (tool definitions, system prompt, opening observation, one exchange per earlier "
            "move), so its prompt grows a step at a time and all but the newest exchange is cacheable. Recall "
            "calls add turns on top, episodes that end early take turns off: an estimate, not a bound."
        )
    return "\n".join(out)
