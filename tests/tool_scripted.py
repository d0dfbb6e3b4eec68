"""A scripted tool-calling model for tests: a real Inspect ``mockllm`` provider that
misbehaves in every way the tool-using navigator must survive.

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
