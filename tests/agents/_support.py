"""Shared helpers for the agent tests: run the real prompts through a model."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from inspect_ai.model import ChatMessage, GenerateConfig, Model, get_model

from spatialstale.env import DynamicFrozenLakeEnv, Grid, Instance, MemoryEntry
from spatialstale.protocol import (
    Sight,
    audit_messages,
    navigate_messages,
    parse_action,
    read_audit,
    read_selfverify,
    selfverify_messages,
)

T = TypeVar("T")

MODALITIES = ("text", "vision", "both")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def agent(name: str, seed: int | None = None) -> Model:
    return get_model(f"spatialstale/{name}", config=GenerateConfig(seed=seed), memoize=False)


async def answer(model: Model, messages: list[ChatMessage]) -> str:
    output = await model.generate(messages)
    assert output.usage is not None and output.usage.input_tokens > 0 and output.usage.output_tokens > 0
    assert output.usage.total_tokens == output.usage.input_tokens + output.usage.output_tokens
    return output.completion


async def audit(model: Model, instance: Instance, grid: Grid, modality: str, batch_size: int = 10) -> set[str]:
    """The ids the model flags over a batched audit; every entry must be answered."""
    flagged: set[str] = set()
    memory = instance.memory
    for start in range(0, len(memory), batch_size):
        batch = memory[start : start + batch_size]
        messages = audit_messages(batch, grid, instance.start, Sight(modality))
        parsed = read_audit(await answer(model, messages), [e.id for e in batch])
        assert parsed.error is None and not parsed.unanswered and not parsed.unknown_ids, parsed
        flagged |= parsed.flagged
    return flagged


async def selfverify(model: Model, instance: Instance, grid: Grid, modality: str) -> set[str]:
    messages = selfverify_messages(instance.memory, grid, instance.start, Sight(modality))
    parsed = read_selfverify(await answer(model, messages), [e.id for e in instance.memory])
    assert parsed.error is None and not parsed.unknown_ids, parsed
    return parsed.flagged


async def episode(
    model: Model, instance: Instance, view: Sequence[MemoryEntry] | None, modality: str = "text"
) -> tuple[str, int]:
    """One navigation episode on the real prompts: (outcome, steps)."""
    env = DynamicFrozenLakeEnv(instance=instance)
    env.reset()
    while True:
        messages = navigate_messages(
            view, env.grid, env.agent, instance.goal, env.max_steps - env.steps, Sight(modality)
        )
        action = parse_action(await answer(model, messages))
        assert action is not None
        _, reward, terminated, truncated, _ = env.step(int(action))
        if terminated or truncated:
            outcome = "success" if float(reward) > 0 else "death" if float(reward) < 0 else "timeout"
            return outcome, env.steps


def f1(flagged: set[str], truth: frozenset[str]) -> float:
    if not flagged and not truth:
        return 1.0
    tp = len(flagged & truth)
    return 2 * tp / (len(flagged) + len(truth))
