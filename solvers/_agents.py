"""Agent navigators (``-T agent`` other than ``prompt``): an Inspect ``Agent`` plays the episode.

The paper's navigator (``_navigation.run_episode``) makes one fresh call per step with
the memory view in the prompt. Every other navigator is an Inspect agent run once an
episode: the built-in ``tools`` and ``memory`` agents are ``react()`` agents, and
``-T agent=module:function`` names a user's function that takes the episode's tools
and returns any agent. They all share this one path:

- the agent's input is the episode's opening (observation, position, goal, step
  budget), after the built-in agents' system prompt;
- the world changes only through the ``move`` tool, which steps the environment and
  records the step; memory is read through ``recall(row, col)`` (the strategy's current
  view) or, for an agent that keeps its memory, Inspect's ``memory()`` tool, seeded
  with the view as files under ``/memories`` and judged at the start, after every
  change of the world and at the end;
- the strategy's view is refreshed right after every step (an OMCD re-audit runs there).

The built-in agents keep SPEC §7's rules through ``react()``'s own ``on_continue`` hook
(:class:`Rules`), so they take the code path a user's agent takes: a turn with no tool
call falls back to one greedy step; calls other than moves beyond ``call_budget(size)``
between two moves are refused (a turn that then ends without a move falls back too);
calls after the end get ``the episode is over``. A user's agent that returns early ends
the episode as a timeout; once the episode is over its next model call is refused (a
token limit of the suite's, lowered to the tokens used). A sample limit ends the
episode as for every navigator (outcome ``limit``).
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Callable, Sequence
from copy import copy
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from inspect_ai.agent import Agent, AgentState, is_agent, react
from inspect_ai.event import ModelEvent
from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    GenerateConfig,
    get_model,
)
from inspect_ai.solver import TaskState
from inspect_ai.tool import Tool, ToolError, ToolResult, memory, tool
from inspect_ai.tool._tools._memory import (  # inspect-evals-lint: ignore[private_api_imports] -- see _read_files
    MemoryStore,
)
from inspect_ai.util import LimitExceededError, span, store_as, token_limit

from spatialstale.env import Action, Cell, DynamicFrozenLakeEnv, Instance, MemoryEntry, Pos, cell_at, greedy_action
from spatialstale.protocol import (
    EPISODE_OVER,
    MEMORY_TOOL_INSTANCE,
    MOVE_NAME,
    NO_MEMORY_ANSWER,
    RECALL_NAME,
    CallCost,
    Episode,
    MemorySnapshot,
    Navigator,
    Sight,
    StepRecord,
    judge,
    memory_files,
    no_entry_answer,
    position_line,
    system_message,
    user_message,
)

from ._episode import ConversationPlan, step_table, take_step
from ._strategies import MemoryStrategy

DIRECTIONS = {"up": Action.UP, "down": Action.DOWN, "left": Action.LEFT, "right": Action.RIGHT}

TOOL_CALL_ANSWER = '{"name": "move", "arguments": {"direction": "right"}}'
"""A ``move`` call as the dry run counts a turn's answer (and, later, its history)."""

OVER_BUDGET = "no more calls before a move (at most {budget}): call " + MOVE_NAME
"""The tool error of a call beyond the budget between two moves."""


def call_budget(size: int) -> int:
    """Calls other than moves allowed between two moves: one per memory entry."""
    return size * size


def _shown(value: object, limit: int = 40) -> str:
    # a refusal quotes what the model sent, but never echoes a huge argument back
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


COUNTED = (
    "turns",
    "moves",
    "recalls",
    "memory_calls",
    "no_call_turns",
    "stalled",
    "unknown_tool",
    "bad_arguments",
    "over_budget",
    "after_end",
    "returned_early",
)
"""What an agent-played episode counts (:class:`ToolCounts`), in the order its record lists them."""


class ToolCounts(Counter[str]):
    """What the agent called, and what it did that was not a move, by :data:`COUNTED` name:

    ``turns`` (the agent's answers), ``moves`` (``move`` calls that moved the agent or
    bumped into the edge), ``recalls`` (``recall`` calls answered), ``memory_calls``
    (calls of the memory tool), ``no_call_turns`` (answers that called no tool: a
    greedy fallback step each, for the built-in agents), ``stalled`` (steps that fell
    back because the call budget was spent without a move), ``unknown_tool``,
    ``bad_arguments`` (refused by Inspect or the tool), ``over_budget`` (refused: the
    budget between two moves spent), ``after_end`` (calls after the episode ended in
    the same turn), ``returned_early`` (1: the agent returned before the end, a timeout).
    """

    def to_dict(self, channel: str) -> dict[str, int]:
        # the keys a channel never counts are left out, so a log says only what it measured
        left_out = {
            "recalls" if channel == "files" else "memory_calls",
            *([] if self["returned_early"] else ["returned_early"]),
        }
        return {name: self[name] for name in COUNTED if name not in left_out}

    def count_conversation(self, messages: Sequence[ChatMessage]) -> None:
        """Add the counts read off the conversation, once it is over: its turns, the calls
        Inspect refused before a tool ran (``parsing`` errors; the tools count the
        arguments they refuse themselves) and the memory tool's calls."""
        self["turns"] = sum(isinstance(m, ChatMessageAssistant) for m in messages)
        for m in messages:
            if not isinstance(m, ChatMessageTool):
                continue
            if m.error is not None and m.error.type == "parsing":
                self["bad_arguments" if m.function in (MOVE_NAME, RECALL_NAME, "memory") else "unknown_tool"] += 1
            elif m.function == "memory":
                self["memory_calls"] += 1


def _text_or_parts(parts: list[Content]) -> ToolResult:
    # a tool result reads best as one string; images need the content list
    if all(isinstance(p, ContentText) for p in parts):
        return "\n".join(p.text for p in parts if isinstance(p, ContentText))
    return [p for p in parts if isinstance(p, ContentText | ContentImage)]


def situation(sight: Sight, grid: Any, agent: Pos, goal: Pos, steps_left: int) -> list[Content]:
    """What the navigator is told of where it stands: the observation (what ``sight``
    shows of ``grid``), its position, the goal and the steps left."""
    return [*sight.content(sight.seen(grid, agent), agent), ContentText(text=position_line(agent, goal, steps_left))]


def opening(prompt: str | None, size: int, kind: str, told: list[Content]) -> list[ChatMessage]:
    """The conversation's first messages: the system prompt (none for a user's agent,
    which brings its own), then the situation."""
    head: list[ChatMessage] = [system_message(prompt, size, kind)] if prompt else []
    return [*head, user_message(told)]


def moved(action: Action, at: Pos) -> str:
    """What a move that got the agent to ``at`` says first."""
    return f"Moved {action.name.lower()} to ({at[0]},{at[1]})."


@dataclass
class AgentMemory:
    """The memory an agent keeps: the seeded entries and every snapshot judged."""

    seeded: tuple[MemoryEntry, ...]
    snapshots: list[MemorySnapshot] = field(default_factory=list)

    def record(self) -> dict[str, object]:
        last = self.snapshots[-1] if self.snapshots else None
        return {
            "seeded": [e.id for e in self.seeded],
            "judged": dict(last.judgment.counts) if last else {},
            "snapshots": [s.to_dict() for s in self.snapshots],
        }


def _read_files() -> dict[str, str]:
    # The memory tool keeps its files in the sample store (a StoreModel, Inspect's
    # MemoryStore); its own ``view`` lists a directory two levels deep only and answers
    # through a model-facing format, so the suite reads the store, which is the files.
    return dict(store_as(MemoryStore, instance=MEMORY_TOOL_INSTANCE).files)


def _seed_files(files: dict[str, str]) -> None:
    # seeded now, not on the tool's first call, so an agent that never opens its memory
    # is judged on the memory it was given
    store = store_as(MemoryStore, instance=MEMORY_TOOL_INSTANCE)
    store.files = dict(files)
    store.dirs = []
    store.seeding_complete = True


class _Stop(Protocol):
    """The limit the agent runs under that stops it once the episode is over (Inspect's
    token limit: its usage, and its limit, which can be lowered)."""

    @property
    def usage(self) -> float: ...

    limit: int | None


class AgentRun:
    """The state of one agent-played episode: the world, the memory view, the counts and
    the memory the agent keeps. The episode's tools call into it."""

    def __init__(
        self,
        env: DynamicFrozenLakeEnv,
        strategy: MemoryStrategy,
        *,
        sight: Sight,
        records: list[StepRecord],
        channel: str,
        counts: ToolCounts | None = None,
    ) -> None:
        self.env = env
        self.strategy = strategy
        self.sight = sight
        self.records = records
        self.channel = channel
        self.counts = ToolCounts() if counts is None else counts
        self.view: tuple[MemoryEntry, ...] | None = None
        self.view_step = -1
        self.calls_since_move = 0
        self.recalled: list[str] = []
        """Cells recalled since the last move, for the step's info table."""
        self.reward = 0.0
        self.terminated = False
        self.truncated = False
        self.limit: LimitExceededError | None = None
        """A sample limit an audit hit inside a tool, raised again once the agent returns."""
        self.memory: AgentMemory | None = None
        self.stop: _Stop | None = None
        """The limit the agent runs under that ends it once the episode is over."""

    @property
    def over(self) -> bool:
        return self.terminated or self.truncated

    @property
    def budget(self) -> int:
        return call_budget(self.env.instance.size)

    async def refresh(self) -> None:
        """Ask the strategy for the view of this decision point, once per point (an agent
        that keeps its memory is asked once, at the start: its memory is its own)."""
        if self.over or self.view_step == self.env.steps:
            return
        if self.channel == "files" and self.view_step >= 0:
            return
        self.view = await self.strategy.view(self.env.steps, self.env.grid, self.env.agent)
        self.view_step = self.env.steps

    def seed_memory(self) -> None:
        """Seed the memory tool's files with the view, and judge them as seeded."""
        _seed_files(memory_files(self.view))
        self.memory = AgentMemory(tuple(self.view or ()))
        self.snapshot("start")

    def snapshot(self, when: str) -> None:
        """Judge the memory files now against the live grid, and keep them in the record."""
        if self.memory is None:
            return
        env = self.env
        files = _read_files()
        judged = judge(self.memory.seeded, files, env.grid, env.instance.stale_ids(env.grid))
        self.memory.snapshots.append(MemorySnapshot(env.steps, when, files, env.grid, judged))

    def situation(self) -> list[Content]:
        """The observation (what the sight shows of the grid), position, goal and remaining budget."""
        env = self.env
        return situation(self.sight, env.grid, env.agent, env.instance.goal, env.max_steps - env.steps)

    async def step(self, action: Action, *, parsed: bool, reading: str, answer: str) -> list[Content]:
        """Take ``action`` in the world, record it, refresh the view, and describe what followed."""
        position = self.env.agent
        taken = take_step(self.env, self.view, action, parsed=parsed, reading=reading, answer=answer)
        self.reward, self.terminated, self.truncated = taken.reward, taken.terminated, taken.truncated
        self.records.append(taken.record)
        if self.over and self.stop is not None:
            # the episode is over: the agent's next model call is refused (a user's agent
            # may not know to stop; the built-in agents' rules stop them first)
            self.stop.limit = int(self.stop.usage)
        how = "move call" if parsed else "**fallback** (greedy; no move called)"
        recalled = self.recalled if self.channel == "recall" else None
        transcript().info(step_table(taken.record, self.sight.view, how=how, recalled=recalled), source="navigation")
        self.calls_since_move = 0
        self.recalled = []
        if parsed:
            self.counts["moves"] += 1
        if taken.record.applied:
            self.snapshot("change")
        try:
            await self.refresh()
        except LimitExceededError as ex:
            self.limit = ex  # raised again when the agent returns (a tool would turn it into a tool error)
            raise
        return self.outcome_parts(action, position)

    def outcome_parts(self, action: Action, before: Pos) -> list[Content]:
        env = self.env
        at = f"({env.agent[0]},{env.agent[1]})"
        told = moved(action, env.agent)
        if env.agent == before:
            told = f"Moved {action.name.lower()} into the edge of the grid: still at {at}."
        if self.terminated and cell_at(env.grid, env.agent) is Cell.HOLE:
            return [ContentText(text=f"{told} It is a hole: the episode is over (death).")]
        if self.terminated:
            return [ContentText(text=f"{told} It is the goal: the episode is over (success).")]
        if self.truncated:
            return [ContentText(text=f"{told} The step budget is used up: the episode is over (timeout).")]
        return [ContentText(text=told), *self.situation()]

    # the tools' bodies: every refusal is a ToolError, which Inspect returns to the agent
    async def move(self, direction: object) -> ToolResult:
        if self.over:
            self.counts["after_end"] += 1
            raise ToolError(EPISODE_OVER)
        action = DIRECTIONS.get(direction.strip().lower()) if isinstance(direction, str) else None
        if action is None:
            self.counts["bad_arguments"] += 1
            self.calls_since_move += 1
            raise ToolError(f"direction must be one of {', '.join(DIRECTIONS)}; got {_shown(direction)}")
        parts = await self.step(
            action, parsed=True, reading="read", answer=f"{MOVE_NAME}(direction={_shown(direction)})"
        )
        return _text_or_parts(parts)

    def recall(self, row: object, col: object) -> str:
        if self.over:
            self.counts["after_end"] += 1
            raise ToolError(EPISODE_OVER)
        if self.calls_since_move >= self.budget:
            self.counts["over_budget"] += 1
            raise ToolError(OVER_BUDGET.format(budget=self.budget))
        self.calls_since_move += 1
        size = self.env.instance.size
        if (
            not isinstance(row, int)
            or not isinstance(col, int)
            or isinstance(row, bool)
            or isinstance(col, bool)
            or not (0 <= row < size and 0 <= col < size)
        ):
            self.counts["bad_arguments"] += 1
            raise ToolError(f"row and col must be integers from 0 to {size - 1}; got ({_shown(row)}, {_shown(col)})")
        self.counts["recalls"] += 1
        self.recalled.append(f"({row},{col})")
        if self.view is None:
            return NO_MEMORY_ANSWER
        entry = next((e for e in self.view if e.is_cell and e.pos == (row, col)), None)
        return no_entry_answer(row, col) if entry is None else entry.line

    async def fallback(self, answer: str, why: str) -> ChatMessageUser | None:
        """One greedy step in place of a move the agent did not make; what it is told."""
        env = self.env
        action = greedy_action(env.agent, env.instance.goal)
        parts = await self.step(action, parsed=False, reading="unreadable", answer=answer)
        if self.over:
            return None
        note = ContentText(text=f"{why}, so the agent took one default step: {action.name.lower()}.")
        return user_message([note, *parts])

    def navigated(self, name: str) -> dict[str, object]:
        """What the episode's record adds: the navigator, its counts and its memory."""
        out: dict[str, object] = {"agent": name, "tools": self.counts.to_dict(self.channel)}
        if self.memory is not None:
            out["memory"] = self.memory.record()
        return out

    def episode(self, name: str) -> Episode:
        """The finished episode, as the prompt navigator's plus the agent's record."""
        return Episode.finished(
            self.env,
            self.strategy.audits,
            self.records,
            self.view,
            self.reward,
            self.sight.view.record(),
            navigated=self.navigated(name),
        )


@tool(name=MOVE_NAME, parallel=False)
def move_tool(run: AgentRun) -> Tool:
    """The ``move`` tool of one episode."""

    async def execute(direction: str) -> ToolResult:
        """Take one step on the grid; returns what you see afterwards, or how the episode ended.

        Args:
            direction: up, down, left or right.
        """
        return await run.move(direction)

    return execute


@tool(name=RECALL_NAME, parallel=False)
def recall_tool(run: AgentRun) -> Tool:
    """The ``recall`` tool of one episode."""

    async def execute(row: int, col: int) -> ToolResult:
        """Read what your memory holds about one cell.

        Args:
            row: the cell's row, 0 at the top.
            col: the cell's column, 0 at the left.
        """
        return run.recall(row, col)

    return execute


def memory_tool() -> Tool:
    """Inspect's own memory tool, on the episode's files (seeded by :meth:`AgentRun.seed_memory`)."""
    return memory(instance=MEMORY_TOOL_INSTANCE)


def episode_tools(run: AgentRun) -> list[Tool]:
    """The tools an agent is given (a memory-keeping agent's memory tool apart)."""
    return [move_tool(run)] if run.channel == "files" else [move_tool(run), recall_tool(run)]


class Rules:
    """SPEC §7's rules for what is not a move, as the built-in agents keep them: react()'s
    ``on_continue``, called after every turn."""

    def __init__(self, run: AgentRun) -> None:
        self.run = run

    async def __call__(self, state: AgentState) -> bool | AgentState:
        run = self.run
        if run.over:
            return False
        message = state.output.message
        if not message.tool_calls:
            run.counts["no_call_turns"] += 1
            return await self._fall_back(state, message.text or "(no tool call)", "Your answer called no tool")
        turn = max(i for i, m in enumerate(state.messages) if isinstance(m, ChatMessageAssistant))
        results = [m for m in state.messages[turn + 1 :] if isinstance(m, ChatMessageTool)]
        moves = [i for i, m in enumerate(results) if m.function == MOVE_NAME and m.error is None]
        after = results[moves[-1] + 1 :] if moves else results
        # the calls no tool of ours counted: those Inspect refused before a tool ran, the memory tool's
        run.calls_since_move += sum(
            (m.error is not None and m.error.type == "parsing") or m.function not in (MOVE_NAME, RECALL_NAME)
            for m in after
        )
        if not moves and run.calls_since_move >= run.budget:
            run.counts["stalled"] += 1
            calls = run.calls_since_move
            return await self._fall_back(
                state, f"({calls} calls without a move)", f"You made {calls} calls without a move"
            )
        return True

    async def _fall_back(self, state: AgentState, answer: str, why: str) -> bool | AgentState:
        note = await self.run.fallback(answer, why)
        if note is None:
            return False
        state.messages.append(note)
        return state


AgentFactory = Callable[..., object]
"""A navigator function: ``(tools) -> Agent``, or ``(tools, memory) -> Agent``."""


def builtin_agent(tools: list[Tool], memory: Tool | None, rules: Rules) -> Agent:
    """A built-in agent: ``react()`` with the episode's tools, no submit tool (the episode
    ends it) and SPEC §7's rules (:class:`Rules`). Its system prompt is the conversation's
    first message, so it adds no words of react()'s own."""
    model = get_model()  # inspect-evals-lint: ignore[get_model_location] -- called by the solver, per episode
    chosen = model.config.cache_prompt
    # prompt caching on, as for every call of the suite (``answer_config``), unless the
    # model was configured otherwise; a copy, as Inspect gives a role model its config
    cached = copy(model)
    cached.config = GenerateConfig(cache_prompt=True if chosen is None else chosen).merge(model.config)
    given = [*tools, *([memory] if memory is not None else [])]
    return react(prompt=None, tools=given, model=cached, submit=False, on_continue=rules)


def build_agent(chosen: Navigator, tools: list[Tool], memory_given: Tool | None, rules: Rules | None) -> Agent:
    """The agent of ``chosen`` for one episode, built with the episode's tools.

    Raises:
        ValueError: a user's function raised, or returned something that is not an agent (one line).
    """
    factory = getattr(chosen, "factory", None)
    if factory is None:
        if rules is None:
            raise ValueError("a built-in agent is built with its rules")
        return builtin_agent(tools, memory_given, rules)
    kwargs = {"memory": memory_given} if memory_given is not None else {}
    try:
        built = factory(tools, **kwargs)
    except Exception as error:  # the user's code: its error, in one line
        raise ValueError(
            f"agent: {chosen.name} raised {type(error).__name__}: {' '.join(str(error).split())}"
        ) from None
    if not is_agent(built) and not (callable(built) and inspect.iscoroutinefunction(built)):
        raise ValueError(
            f"agent: {chosen.name} must return an Inspect Agent (react(), or an @agent function); "
            f"got {type(built).__name__}"
        )
    return cast(Agent, built)


def stand_in_tools(chosen: Navigator, instance: Instance, sight: Sight) -> tuple[list[Tool], Tool | None]:
    """``chosen``'s tools for an episode of ``instance`` that is never played (a run with
    no strategy: the tools are listed or handed to a function, never called), and its
    memory tool when it keeps its memory."""
    run = AgentRun(
        DynamicFrozenLakeEnv(instance=instance),
        cast(MemoryStrategy, None),
        sight=sight,
        records=[],
        channel=chosen.channel,
    )
    return episode_tools(run), memory_tool() if chosen.channel == "files" else None


def check_agent(chosen: Navigator, instance: Instance, sight: Sight) -> None:
    """Build ``chosen``'s agent once with stand-in tools, so a function that raises or
    returns no agent fails when the task is made, before any model call."""
    if getattr(chosen, "factory", None) is None:
        return
    build_agent(chosen, *stand_in_tools(chosen, instance, sight), None)


def _navigation_cost(cost: CallCost, since: int) -> None:
    # The agent's calls are counted off the transcript: its model events since the
    # episode began, less the audits the strategy made meanwhile (counted at the call,
    # _cost). A user's agent calls the model as it likes; every call is an event.
    events = [e for e in transcript().events[since:] if isinstance(e, ModelEvent) and not e.pending]
    tokens = sum(e.output.usage.input_tokens + e.output.usage.output_tokens for e in events if e.output.usage)
    cost.navigation_calls = len(events) - cost.audit_calls
    cost.navigation_tokens = tokens - cost.audit_tokens


async def play_agent(
    state: TaskState,
    env: DynamicFrozenLakeEnv,
    strategy: MemoryStrategy,
    chosen: Navigator,
    *,
    sight: Sight,
    prompt: str,
    records: list[StepRecord],
    run_holder: list[AgentRun],
    cost: CallCost,
) -> Episode:
    """Play one episode with ``chosen``'s agent; the conversation is the sample's messages
    (the viewer's Messages tab shows it, Inspect's message limit applies to it)."""
    env.reset()
    run = AgentRun(env, strategy, sight=sight, records=records, channel=chosen.channel)
    run_holder.append(run)
    since = len(transcript().events)
    await run.refresh()
    memory_given = None
    if run.channel == "files":
        run.seed_memory()
        memory_given = memory_tool()
    rules = Rules(run) if getattr(chosen, "factory", None) is None else None
    agent = build_agent(chosen, episode_tools(run), memory_given, rules)
    own_prompt = prompt if rules is not None else None
    state.messages = opening(own_prompt, env.instance.size, chosen.call_kind, run.situation())
    agent_state = AgentState(messages=state.messages)
    try:
        with token_limit(None) as stop:
            run.stop = stop
            try:
                async with span(name=chosen.name, type="agent"):
                    agent_state = await agent(agent_state)
            except LimitExceededError as ex:
                if ex.source is not stop:
                    raise
    finally:
        state.messages = agent_state.messages
        run.counts.count_conversation(state.messages)
        _navigation_cost(cost, since)
    if run.limit is not None:
        raise run.limit
    if not run.over:
        run.counts["returned_early"] = 1
        transcript().info(
            f"The agent returned with the episode still on ({env.steps} of {env.max_steps} steps): a timeout.",
            source="navigation",
        )
    run.snapshot("end")
    return run.episode(chosen.name)


def conversation_plan(
    chosen: Navigator, instance: Instance, *, sight: Sight, prompt: str, max_steps: int
) -> ConversationPlan:
    """The calls an agent navigator makes in an episode of ``instance``, as the dry run
    measures them: a move a turn (the agent kept at S), up to ``turns`` turns. For the
    built-in ``tools`` agent the turns are the steps (an estimate: recalls come on top);
    for an agent that keeps its memory or a user's agent, the steps times the calls
    allowed between two moves (an upper bound)."""
    start, goal = instance.start, instance.goal
    told = situation(sight, instance.grid_after(1), start, goal, max_steps - 1)
    tools, memory_given = stand_in_tools(chosen, instance, sight)
    tools += [memory_given] if memory_given is not None else []
    own_prompt = prompt if getattr(chosen, "factory", None) is None else None
    upper = chosen.channel == "files" or getattr(chosen, "factory", None) is not None
    return ConversationPlan(
        tools=tools,
        opening=opening(
            own_prompt,
            instance.size,
            chosen.call_kind,
            situation(sight, instance.grid_after(0), start, goal, max_steps),
        ),
        answer=TOOL_CALL_ANSWER,
        result=ChatMessageTool(content=[ContentText(text=moved(Action.RIGHT, start)), *told], function=MOVE_NAME),
        turns=max_steps * (1 + call_budget(instance.size)) if upper else max_steps,
    )
