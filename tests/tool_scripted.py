"""Scripted tool-calling models for tests: real Inspect ``mockllm`` providers that
misbehave in every way the tool-using navigator must survive (``misbehaving``, and
``odd_arguments`` for arguments of every wrong shape).

Its turn depends only on the conversation: the steps remaining (read from the latest
``Position: ... Steps remaining: k.`` line) and how many turns it has taken since
that observation. With ``max_steps=5`` an episode that does not end in a hole goes:

- 5 left: unknown tool, recall with a non-integer row, recall off the grid, move
  north, move with a number (5 bad calls), then a turn with no tool call (fallback).
- 4 left: ``RECALLS_PER_TURN`` recalls of (0,0) a turn, forever: the budget of n²
  runs out, the rest are refused and the turn that ends without a move stalls
  (fallback).
- 3 left: one valid move right.
- 2 left: text only (fallback).
- 1 left: move down twice and recall once: the first move ends the episode, the
  other two calls are refused as after the end.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import ToolCall

_REMAINING = re.compile(r"Steps remaining: (\d+)\.")
RECALLS_PER_TURN = 10
MAX_STEPS = 5


def _situation(messages: Sequence[ChatMessage]) -> tuple[int, int]:
    """Steps remaining at the latest observation, and the turns taken since it."""
    turns = 0
    for message in reversed(messages):
        if isinstance(message, ChatMessageTool | ChatMessageUser):
            found = _REMAINING.findall(message.text)
            if found:
                return int(found[-1]), turns
        if isinstance(message, ChatMessageAssistant):
            turns += 1
    return 0, turns


def _calls(turn: int, *calls: tuple[str, dict[str, Any]]) -> list[ToolCall]:
    return [ToolCall(id=f"c{turn}_{i}", function=f, arguments=a) for i, (f, a) in enumerate(calls)]


def misbehaving(messages: list[ChatMessage], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
    """One turn of the script (see the module docstring)."""
    left, since = _situation(messages)
    turn = sum(isinstance(m, ChatMessageAssistant) for m in messages)
    calls: list[ToolCall] = []
    if left == MAX_STEPS and since == 0:
        calls = _calls(
            turn,
            ("teleport", {"row": 7, "col": 7}),
            ("recall", {"row": "x", "col": 1}),
            ("recall", {"row": 99, "col": 0}),
            ("move", {"direction": "north"}),
            ("move", {"direction": 3}),
        )
    elif left == MAX_STEPS - 1:
        calls = _calls(turn, *[("recall", {"row": 0, "col": 0})] * RECALLS_PER_TURN)
    elif left == MAX_STEPS - 2:
        calls = _calls(turn, ("move", {"direction": "right"}))
    elif left == 1:
        calls = _calls(
            turn, ("move", {"direction": "down"}), ("move", {"direction": "down"}), ("recall", {"row": 1, "col": 1})
        )
    message = ChatMessageAssistant(
        content="I would rather talk than act." if not calls else "Trying things.",
        model="misbehaving",
        source="generate",
        tool_calls=calls or None,
    )
    output = ModelOutput(
        model="misbehaving",
        choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls" if calls else "stop")],
    )
    # a usage of its own, so Inspect needs no tokenizer (which it would download)
    output.usage = ModelUsage(
        input_tokens=len(messages), output_tokens=len(calls) + 1, total_tokens=len(messages) + len(calls) + 1
    )
    return output


def misbehaving_model() -> Model:
    return get_model("mockllm/model", custom_outputs=misbehaving, memoize=False)


ODD_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("move", {"direction": "up", "speed": 2}),
    ("recall", {"row": True, "col": 1}),
    ("recall", {}),
    ("move", {}),
    ("recall", {"row": [1], "col": {}}),
    ("recall", {"row": 1e30, "col": 1}),
    ("move", {"direction": None}),
    ("recall", {"row": "3", "col": "4"}),
    ("recall", {"row": -1, "col": 2}),
    ("recall", {"row": 2**70, "col": 0}),
    ("move", {"direction": "x" * 100_000}),
    ("recall", {"row": 3, "col": 1}),
    ("move", {"direction": " DOWN "}),
]
"""Arguments off the schema, out of range, of the wrong type or huge, then a valid
recall and a move written loosely (upper case, spaces), in one turn."""


def odd_arguments(messages: list[ChatMessage], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
    """First turn: ``ODD_CALLS``; every later turn: move right."""
    turn = sum(isinstance(m, ChatMessageAssistant) for m in messages)
    calls = _calls(turn, *ODD_CALLS) if turn == 0 else _calls(turn, ("move", {"direction": "right"}))
    output = ModelOutput(
        model="odd",
        choices=[
            ChatCompletionChoice(
                message=ChatMessageAssistant(content="", model="odd", source="generate", tool_calls=calls),
                stop_reason="tool_calls",
            )
        ],
    )
    output.usage = ModelUsage(
        input_tokens=len(messages), output_tokens=len(calls), total_tokens=len(messages) + len(calls)
    )
    return output


def odd_arguments_model() -> Model:
    return get_model("mockllm/model", custom_outputs=odd_arguments, memoize=False)
