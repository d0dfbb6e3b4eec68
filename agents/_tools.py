"""The reference agents as tool callers: their answers to the tool-using navigator.

A request that offers tools (``-T agent=tools``) is one turn of an episode's
conversation. Each agent reads the conversation as a model must, from its text and
pixels: the latest observation (the first user message, a ``move`` result or a
fallback note, whichever came last) and the answers ``recall`` gave.

- ``observer`` (and ``colourblind``) moves along its shortest hole-free path on the
  latest observation: exactly the move it answers the prompt navigator, so its
  episodes equal the prompt navigator's. Under fog it takes
  memory's word for the cells it cannot see, as in the prompt navigator, but learns it
  by recalling the unseen cells of its plan the way the credulous agent does below;
  where shortest paths tie, it may then pick another one than the prompt navigator.
- ``credulous`` trusts memory. It plans a shortest path on the map it believes:
  a recalled SAFE claim is ice, a recalled DANGER claim a hole, a cell memory says
  nothing about (or marks UNKNOWN) is what the observation shows, and a cell it has
  not recalled yet might be either, so it is planned on as walkable. It recalls the
  cells of that path it knows nothing about, replans when memory contradicts the
  plan, and moves once the whole path is known; the cell it steps into is recalled
  again after every move (a re-audit may have changed the view). It never recalls a
  cell twice between two moves, so it stays within the call budget (n²).
- ``random`` moves at random.

Everything is a function of the conversation (and, for ``random``, of its seed), so
the agents stay deterministic.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    ModelOutput,
)
from inspect_ai.tool import ToolCall, ToolInfo

from spatialstale.env import Action, Cell, Grid, Pos, entry_text, shortest_path
from spatialstale.protocol import MOVE_NAME, NO_MEMORY_ANSWER, RECALL_NAME

from ._perception import UNKNOWN_CELL, MemoryClaim, Perception, perceive, read_memory, with_holes
from ._policies import ACTION_ORDER, BeliefAgent, ColourBlindAgent, Policy, RandomAgent, not_understood, plan_action

_OBSERVATION_MARK = "Position: ("
"""Every message that shows the agent's situation ends with the position line."""

OVER_BUDGET_MARK = "no more calls before a move"
"""How a tool error says the calls between two moves are spent."""

MEMORY_TOOL = "memory"
_LISTED = re.compile(r"^(/memories/\S+)$", re.M)
_NUMBERED = re.compile(r"^\s*\d+\t(.*)$")


def latest_observation(messages: Sequence[ChatMessage]) -> Perception | None:
    """The grid, position and goal of the last message showing them (text or image).

    A provider that takes no image in a tool result (this one, OpenAI's chat API) gets the
    result's images in a user message right after the turn's results (Inspect moves them
    there), so the images of the user messages that follow a tool result are read with it.
    """
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if isinstance(message, ChatMessageTool | ChatMessageUser) and _OBSERVATION_MARK in message.text:
            parts: list[Content] = (
                list(message.content) if not isinstance(message.content, str) else [ContentText(text=message.text)]
            )
            if isinstance(message, ChatMessageTool):
                for later in messages[i + 1 :]:
                    if isinstance(later, ChatMessageAssistant):
                        break
                    if isinstance(later, ChatMessageUser) and not isinstance(later.content, str):
                        parts += [p for p in later.content if isinstance(p, ContentImage)]
            return perceive([ChatMessageUser(content=parts)])
    return None


def _calls_by_id(messages: Sequence[ChatMessage]) -> dict[str, ToolCall]:
    return {
        call.id: call
        for message in messages
        if isinstance(message, ChatMessageAssistant)
        for call in message.tool_calls or ()
    }


@dataclass(frozen=True)
class Recalled:
    """What the conversation's ``recall`` answers said.

    Attributes:
        claims: the latest answer per recalled cell: ``SAFE``, ``DANGER`` or None
            (memory holds no claim there).
        fresh: cells recalled since the latest observation (from the current view).
        refused: a call since the latest observation was refused for the budget.
        empty: recall answered that there is no memory at all (NoMemory).
    """

    claims: dict[Pos, str | None]
    fresh: frozenset[Pos]
    refused: bool
    empty: bool


def recalled(messages: Sequence[ChatMessage]) -> Recalled:
    """Read every ``recall`` answer of the conversation, in order."""
    calls = _calls_by_id(messages)
    claims: dict[Pos, str | None] = {}
    fresh: set[Pos] = set()
    refused = empty = False
    for message in messages:
        if isinstance(message, ChatMessageTool | ChatMessageUser) and _OBSERVATION_MARK in message.text:
            fresh, refused = set(), False
        if not isinstance(message, ChatMessageTool) or message.function != RECALL_NAME:
            continue
        if message.error is not None:
            refused = refused or OVER_BUDGET_MARK in message.error.message
            continue
        call = calls.get(message.tool_call_id or "")
        if call is None:
            continue
        try:
            pos = (int(call.arguments["row"]), int(call.arguments["col"]))
        except (KeyError, TypeError, ValueError):
            continue
        empty = empty or NO_MEMORY_ANSWER in message.text
        said = [m.claim for m in read_memory(message.text) if m.pos == pos]
        claims[pos] = said[0] if said else None
        fresh.add(pos)
    return Recalled(claims, frozenset(fresh), refused, empty)


def believed_map(seen: Perception, memory: Recalled, *, trust_memory: bool, optimistic: bool) -> Grid:
    """The observed grid with memory's word where the agent takes it.

    The credulous agent (``trust_memory``) takes a recalled claim everywhere; the
    observer only for a cell it cannot see (under fog). With ``optimistic``, a cell
    whose memory could still count and that is not recalled yet is walkable (memory
    might call it safe); otherwise it is what the observation shows (``?`` walkable).
    """
    rows = []
    for r, row in enumerate(seen.grid or ()):
        cells = []
        for c, cell in enumerate(row):
            counts = trust_memory or cell == UNKNOWN_CELL
            claim = memory.claims.get((r, c))
            if counts and claim is not None:
                cells.append("H" if claim == "DANGER" else "F")
            elif counts and optimistic and (r, c) not in memory.claims and not memory.empty:
                cells.append("F")
            else:
                cells.append("F" if cell == UNKNOWN_CELL else cell)
        rows.append("".join(cells))
    return tuple(rows)


def _action_to(agent: Pos, nxt: Pos) -> Action:
    step = (nxt[0] - agent[0], nxt[1] - agent[1])
    return next(a for a in ACTION_ORDER if a.delta == step)


def planned_turn(
    seen: Perception, agent: Pos, goal: Pos, messages: Sequence[ChatMessage], *, trust_memory: bool
) -> tuple[Action | None, list[Pos]]:
    """A belief agent's turn: the cells to recall, or else the move to make.

    It plans on the optimistic map, recalls the cells of the plan whose memory would
    count and that it has not recalled, replans, and moves once the plan is known; the
    next cell is recalled again after every move, since a re-audit may have changed the
    view. The observer's memory counts only where it cannot see, so with a full view it
    recalls nothing and moves as the prompt navigator's observer does.
    """
    memory = recalled(messages)
    if not memory.refused and not memory.empty:
        path = shortest_path(believed_map(seen, memory, trust_memory=trust_memory, optimistic=True), agent, goal)
        if path is not None and len(path) >= 2:
            counts = [p for p in path[1:] if trust_memory or seen.cell(p) == UNKNOWN_CELL]
            unknown = [p for p in counts if p not in memory.claims]
            if unknown:
                return None, unknown
            if path[1] in counts and path[1] not in memory.fresh:
                return None, [path[1]]
            return _action_to(agent, path[1]), []
    return plan_action(believed_map(seen, memory, trust_memory=trust_memory, optimistic=False), agent, goal), []


def _call(function: str, turn: int, index: int, **arguments: object) -> ToolCall:
    # ids only need to be unique within the conversation
    return ToolCall(id=f"{function}_{turn}_{index}", function=function, arguments=dict(arguments))


def tool_turn(
    policy: Policy, messages: Sequence[ChatMessage], tools: Sequence[ToolInfo], rng: random.Random
) -> tuple[str, list[ToolCall]]:
    """One turn of ``policy`` in a tool conversation: its text and its tool calls."""
    names = {t.name for t in tools}
    if MOVE_NAME not in names:
        return not_understood(f"the tools offered ({', '.join(sorted(names)) or 'none'}) hold no {MOVE_NAME}"), []
    turn = sum(isinstance(m, ChatMessageAssistant) for m in messages)
    if isinstance(policy, RandomAgent):
        return "A random move.", [_call(MOVE_NAME, turn, 0, direction=rng.choice(ACTION_ORDER).name.lower())]
    seen = latest_observation(messages)
    if seen is None or seen.grid is None:
        return not_understood("the conversation shows no grid"), []
    grid, agent, goal = seen.grid, seen.agent, seen.goal
    if agent is None or goal is None:
        return not_understood("the conversation gives no agent position"), []
    if isinstance(policy, ColourBlindAgent) and seen.source == "image":
        grid = with_holes(tuple(row.replace("H", "F") for row in grid), seen.broken)
        seen = replace(seen, grid=grid)
    trust_memory = isinstance(policy, BeliefAgent) and policy.trust_memory
    if MEMORY_TOOL in names:
        return memory_turn(seen, agent, goal, messages, turn, trust_memory=trust_memory)
    if RECALL_NAME in names:
        action, cells = planned_turn(seen, agent, goal, messages, trust_memory=trust_memory)
        if action is None:
            calls = [_call(RECALL_NAME, turn, i, row=r, col=c) for i, (r, c) in enumerate(cells)]
            return f"Recalling {len(cells)} cell(s) on my path.", calls
    else:
        action = plan_action(grid, agent, goal)
    return f"Moving {action.name.lower()}.", [_call(MOVE_NAME, turn, 0, direction=action.name.lower())]


def tool_output(
    model: str, policy: Policy, messages: list[ChatMessage], tools: Sequence[ToolInfo], rng: random.Random
) -> ModelOutput:
    """The ``ModelOutput`` of one tool turn (``stop_reason`` ``tool_calls`` when it calls any)."""
    text, calls = tool_turn(policy, messages, tools, rng)
    return ModelOutput(
        model=model,
        choices=[
            ChatCompletionChoice(
                message=ChatMessageAssistant(content=text, model=model, source="generate", tool_calls=calls or None),
                stop_reason="tool_calls" if calls else "stop",
            )
        ],
    )


@dataclass(frozen=True)
class MemoryRead:
    """What the conversation's memory tool calls showed: the files listed, and each
    file's lines as last viewed, with whether that view came after the latest observation."""

    listed: tuple[str, ...] | None
    lines: dict[str, list[str]]
    fresh: frozenset[str]


def memory_read(messages: Sequence[ChatMessage]) -> MemoryRead:
    """Read every ``memory`` view of the conversation, in order."""
    calls = _calls_by_id(messages)
    listed: tuple[str, ...] | None = None
    lines: dict[str, list[str]] = {}
    fresh: set[str] = set()
    for message in messages:
        if isinstance(message, ChatMessageTool | ChatMessageUser) and _OBSERVATION_MARK in message.text:
            fresh = set()
        if not isinstance(message, ChatMessageTool) or message.function != MEMORY_TOOL or message.error is not None:
            continue
        call = calls.get(message.tool_call_id or "")
        if call is None or call.arguments.get("command") != "view":
            continue
        path = str(call.arguments.get("path", ""))
        if path.rstrip("/") == "/memories":
            listed = tuple(_LISTED.findall(message.text))
            continue
        body = message.text.split("\n")[1:]
        lines[path] = [m.group(1) for line in body if (m := _NUMBERED.match(line))]
        fresh.add(path)
    return MemoryRead(listed, lines, frozenset(fresh))


def _repair(line: str, claim: MemoryClaim, cell: str) -> str:
    """``line`` rewritten to the truth the observation shows (the protocol's words)."""
    text = entry_text(claim.pos, Cell(cell))
    return f"[{claim.id}] {text}" if line.lstrip().startswith("[") else text


def memory_turn(
    seen: Perception, agent: Pos, goal: Pos, messages: Sequence[ChatMessage], turn: int, *, trust_memory: bool
) -> tuple[str, list[ToolCall]]:
    """A belief agent's turn with its memory tool: it lists ``/memories`` once, views each
    file once after every observation, then moves. The credulous agent plans on what
    memory says and never changes it; the observer plans on what it sees (memory's word
    only where it cannot see) and rewrites every line it sees lie, in the same turn."""
    read = memory_read(messages)
    if read.listed is None:
        return "Looking at my memory.", [_call(MEMORY_TOOL, turn, 0, command="view", path="/memories")]
    stale_views = [p for p in read.listed if p not in read.fresh]
    if stale_views:
        calls = [_call(MEMORY_TOOL, turn, i, command="view", path=p) for i, p in enumerate(stale_views)]
        return f"Reading {len(calls)} memory file(s).", calls
    claims: dict[Pos, str | None] = {}
    repairs: list[ToolCall] = []
    for path in read.listed:
        for line in read.lines.get(path, []):
            for claim in read_memory(line):
                claims[claim.pos] = claim.claim
                cell = seen.cell(claim.pos)
                lies = (claim.claim == "SAFE" and cell == "H") or (claim.claim == "DANGER" and cell == "F")
                if lies and not trust_memory:
                    fixed = _repair(line, claim, cell)
                    claims[claim.pos] = "DANGER" if cell == "H" else "SAFE"
                    repairs.append(
                        _call(
                            MEMORY_TOOL,
                            turn,
                            len(repairs),
                            command="str_replace",
                            path=path,
                            old_str=line,
                            new_str=fixed,
                        )
                    )
    memory = Recalled(claims, frozenset(claims), refused=False, empty=not claims)
    action = plan_action(believed_map(seen, memory, trust_memory=trust_memory, optimistic=False), agent, goal)
    move = _call(MOVE_NAME, turn, len(repairs), direction=action.name.lower())
    said = f"Repairing {len(repairs)} memory line(s), then moving {action.name.lower()}." if repairs else None
    return said or f"Moving {action.name.lower()}.", [*repairs, move]
