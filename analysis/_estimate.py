"""The dry run: samples, model calls and token estimates before anything is spent.

Prompts are the real ones: every message is built by the solvers' own builders
(``audit_messages``, ``selfverify_messages``, ``navigate_messages``) for the real
instances of the study. Tokens are estimated, not tokenized:

- text: ``ceil(len(message.text) / 4)`` per message (about four characters a
  token for English and JSON with common BPE tokenizers);
- images: ``IMAGE_TOKENS`` per image, OpenAI's high-detail figure for an image
  that fits one 512 px tile (85 base + 170 per tile = 255 at 384x384), or more
  tiles for larger grids (``85 + 170 * ceil(w/512) * ceil(h/512)``);
- completions: the answer in exactly the format the prompt asks for (an audit
  entry per id with a one-line reason like the prompt's example; SelfVerify
  listing the truly stale ids; ``{"action": "RIGHT"}`` a step). Verbose models
  write more.

Detection counts are exact: windows x ceil(n^2 / B) calls a seed (L3 has one window
per scheduled event). Navigation depends on when episodes end, so its figures are
an upper bound: every episode runs ``max_steps`` steps, OMCD re-audits after every
scheduled L3 event before the step budget ends, SelfVerify makes one call, Oracle
none; the token bound also shows the whole store in every memory view.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

from inspect_ai.model import ChatMessage, ContentImage

from spatialstale.env import CELL_PX, Grid, Instance, MemoryEntry, make_instance
from spatialstale.solvers import detection_windows
from spatialstale.solvers._prompts import audit_messages, navigate_messages, selfverify_messages

from ._study import Study, TaskSpec

CHARS_PER_TOKEN = 4
IMAGE_BASE_TOKENS = 85
IMAGE_TILE_TOKENS = 170
IMAGE_TILE_PX = 512
NAVIGATE_ANSWER = '{"action": "RIGHT"}'


def image_tokens(size: int) -> int:
    """Tokens of one rendered grid image (``size * CELL_PX`` pixels a side)."""
    tiles = math.ceil(size * CELL_PX / IMAGE_TILE_PX) ** 2
    return IMAGE_BASE_TOKENS + IMAGE_TILE_TOKENS * tiles


IMAGE_TOKENS = image_tokens(8)
"""255: the per-image figure at the default 8x8 grid (384x384 px)."""


def text_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def prompt_tokens(messages: Sequence[ChatMessage], size: int = 8) -> int:
    """The chars/4 estimate of a prompt, plus ``image_tokens(size)`` per image."""
    total = 0
    for message in messages:
        total += text_tokens(message.text)
        if not isinstance(message.content, str):
            total += image_tokens(size) * sum(isinstance(part, ContentImage) for part in message.content)
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
    """Model calls and estimated tokens of one model role."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Calls) -> Calls:
        return Calls(
            self.calls + other.calls,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )

    def __mul__(self, k: int) -> Calls:
        return Calls(self.calls * k, self.prompt_tokens * k, self.completion_tokens * k)


@dataclass(frozen=True)
class TaskEstimate:
    """One task's dry-run figures; ``exact`` is False for navigation's upper bound."""

    spec: TaskSpec
    samples: int
    navigator: Calls
    auditor: Calls
    exact: bool

    @property
    def total(self) -> Calls:
        return self.navigator + self.auditor


def _audit(instance: Instance, grid: Grid, modality: str, batch_size: int) -> Calls:
    """One batched audit of the whole store against ``grid``."""
    stale = instance.stale_ids(grid)
    memory = instance.memory
    total = Calls()
    for start in range(0, len(memory), batch_size):
        batch = memory[start : start + batch_size]
        messages = audit_messages(batch, grid, instance.start, modality, size=instance.size)
        total += Calls(1, prompt_tokens(messages, instance.size), text_tokens(audit_answer(batch, stale)))
    return total


def detection_sample(instance: Instance, modality: str, batch_size: int) -> Calls:
    """Exact calls of one detection sample: every window audits the whole store."""
    total = Calls()
    for _, grid in detection_windows(instance):
        total += _audit(instance, grid, modality, batch_size)
    return total


def navigation_episode(
    instance: Instance, strategy: str, modality: str, batch_size: int, max_steps: int
) -> tuple[Calls, Calls]:
    """(navigator, auditor) upper bounds of one episode of ``strategy``.

    Every step is taken (``max_steps`` navigator calls, the agent at S); OMCD audits
    before the first step and again after each scheduled event that precedes the
    last decision; the memory view is the whole store for every memory strategy.
    """
    view = None if strategy == "nomemory" else instance.memory
    navigator = Calls()
    for step in range(max_steps):
        grid = instance.grid_after(step)
        messages = navigate_messages(
            view, grid, instance.start, instance.goal, max_steps - step, modality, size=instance.size
        )
        navigator += Calls(1, prompt_tokens(messages, instance.size), text_tokens(NAVIGATE_ANSWER))
    auditor = Calls()
    if strategy == "selfverify":
        grid = instance.initial_grid
        messages = selfverify_messages(instance.memory, grid, instance.start, modality, size=instance.size)
        answer = json.dumps({"inconsistent": sorted(instance.stale_ids(grid))})
        auditor = Calls(1, prompt_tokens(messages, instance.size), text_tokens(answer))
    elif strategy == "omcd":
        auditor = _audit(instance, instance.initial_grid, modality, batch_size)
        for event in instance.schedule:
            if event.step < max_steps:
                auditor += _audit(instance, instance.grid_after(event.step), modality, batch_size)
    return navigator, auditor


def estimate_task(spec: TaskSpec) -> TaskEstimate:
    """The dry-run figures of one task (the same for every model)."""
    navigator = auditor = Calls()
    for seed in spec.seeds:
        instance = make_instance(seed, spec.regime, spec.size)
        if spec.kind == "detection":
            auditor += detection_sample(instance, spec.modality, spec.batch_size)
            continue
        for strategy in spec.strategies:
            nav, aud = navigation_episode(instance, strategy, spec.modality, spec.batch_size, spec.max_steps)
            navigator += nav * spec.episodes
            auditor += aud * spec.episodes
    return TaskEstimate(spec, spec.samples, navigator, auditor, exact=spec.kind == "detection")


@dataclass(frozen=True)
class PlanRow:
    """A line of the dry-run table: one task run by one model."""

    model: str
    auditor: str
    estimate: TaskEstimate


def plan(study: Study) -> list[PlanRow]:
    """Every (model, task) of the study with its estimate; audits go to the auditor."""
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


def format_plan(study: Study, rows: Sequence[PlanRow]) -> str:
    """The dry-run printout: a table per (model, task), totals per model, the method."""
    header = ("model", "task", "samples", "nav calls", "audit calls", "prompt tok", "completion tok", "")
    lines: list[tuple[str, ...]] = [header]
    for row in rows:
        e = row.estimate
        lines.append(
            (
                row.model,
                e.spec.name,
                f"{e.samples:,}",
                f"{e.navigator.calls:,}",
                f"{e.auditor.calls:,}" + ("" if row.auditor == row.model else f" ({row.auditor})"),
                f"{e.total.prompt_tokens:,}",
                f"{e.total.completion_tokens:,}",
                "exact" if e.exact else "upper bound",
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths).rstrip())
    out.append("")
    out.append("Per model (every call it would serve):")
    for model, (calls, exact) in per_model(rows).items():
        bound = "" if exact else " (upper bound: navigation included)"
        out.append(
            f"  {model}: {calls.calls:,} calls, ~{calls.prompt_tokens:,} prompt + "
            f"~{calls.completion_tokens:,} completion tokens{bound}"
        )
    samples = sum(r.estimate.samples for r in rows)
    out.append(f"  all: {len(rows)} task logs, {samples:,} sample records, into {study.log_dir}")
    out.append("")
    out.append(
        "Detection calls are exact (windows x ceil(n^2/B) a seed). Navigation figures are an upper bound: "
        "every episode runs max_steps steps, OMCD re-audits after every scheduled L3 event, SelfVerify makes "
        "1 call, Oracle none, and every memory view holds the whole store. Tokens: ceil(chars/4) a message, "
        f"{IMAGE_TOKENS} a {8 * CELL_PX}x{8 * CELL_PX} image; completions as the requested answer format."
    )
    return "\n".join(out)
