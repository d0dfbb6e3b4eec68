"""The tool-using navigator's loop (``-T agent=tools``): one conversation per episode.

The prompt navigator (``_navigation.run_episode``) makes one fresh call per step with
the whole memory view in the prompt. The tool-using navigator plays the same episode
as agents in practice do: one conversation, opened by the observation, the position,
the goal and the step budget, in which the model calls two tools defined with
Inspect's ``@tool``:

- ``move(direction)``: one step of the world (``up``, ``down``, ``left``, ``right``);
  it returns the new observation, position and remaining budget, or the outcome when
  the episode ends.
- ``recall(row, col)``: what the strategy's *current* memory view holds about a cell:
  its entry line (a withheld entry's line under a filter mode that keeps them), that memory holds no
  entry there (a filter removed it), or, under NoMemory, that there is no memory.

The loop is ours: ``model.generate(input=messages, tools=tools)`` then Inspect's
``execute_tools``, one call at a time, so each call is a ``ToolEvent`` in the
transcript and the memory view is refreshed between a move and a later call of the
same turn. The strategy is asked for its view before each move exactly as the prompt
navigator asks it (``strategy.view(env.steps, env.grid, env.agent)``), so OMCD
re-audits when the world has changed; audits run outside the tools, so a sample
limit they hit ends the episode as it does for the prompt navigator.

Rules for what is not a move (SPEC §7: a missing action falls back and is counted):

- An answer with no tool call falls back to one greedy step (DOWN until the goal
  row, then RIGHT), recorded as a fallback with reading ``unreadable``.
- Between two moves at most ``call_budget(size)`` = n² other calls are executed (as
  many as memory has entries); calls to any tool but ``move`` beyond it get a tool
  error. A turn that ends without a move once the budget is spent falls back to a
  greedy step too (counted as ``stalled``), so no model can loop forever.
- Several moves in one turn run in order until the episode ends; every later call
  gets the tool error ``the episode is over``.
- Unknown tools and bad arguments get Inspect's tool error (or ours, naming the valid
  choices) back; nothing a model calls can crash the sample. Every such call is counted.

The episode is recorded as the prompt navigator records it (``Episode``/``StepRecord``),
so the ``episode_outcome`` scorer and the report read it unchanged; it also holds
``agent`` and the tool counts (``tools``, in ``Episode.navigated``). The prompt, the tools'
names and ``recall``'s answers are the protocol's (``spatialstale.protocol``); the loop,
its rules and its plan of calls, which the dry run measures, are here (:class:`ToolLoop`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import cast

from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    Model,
    execute_tools,
)
from inspect_ai.solver import TaskState
from inspect_ai.tool import Tool, ToolCall, ToolCallError, ToolError, ToolResult, tool
from inspect_ai.util import span

from spatialstale.env import (
    Action,
    Cell,
    DynamicFrozenLakeEnv,
    Grid,
    Instance,
    MemoryEntry,
    Pos,
    cell_at,
    greedy_action,
)
from spatialstale.protocol import (
    EPISODE_OVER,
    MOVE_NAME,
    NAVIGATE_SCHEMA,
    NAVIGATE_TOOLS,
    NO_MEMORY_ANSWER,
    RECALL_NAME,
    TOOL_NAVIGATOR,
    Episode,
    Sight,
    StepRecord,
    answer_config,
    no_entry_answer,
    position_line,
    system_message,
    user_message,
)

from ._cost import record_call
from ._episode import ConversationPlan, step_table, take_step
from ._strategies import MemoryStrategy

DIRECTIONS = {"up": Action.UP, "down": Action.DOWN, "left": Action.LEFT, "right": Action.RIGHT}

TOOL_CALL_ANSWER = '{"name": "move", "arguments": {"direction": "right"}}'
"""A ``move`` call as the dry run counts a turn's answer (and, later, its history)."""


def call_budget(size: int) -> int:
    """Calls other than moves allowed between two moves: one per memory entry."""
    return size * size


def _shown(value: object, limit: int = 40) -> str:
    # a refusal quotes what the model sent, but never echoes a huge argument back
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass
class ToolCounts:
    """What the model called, and what it did that was not a move.

    Attributes:
        turns: model calls of the episode.
        moves: ``move`` calls that moved the agent (or bumped into the edge).
        recalls: ``recall`` calls answered.
        no_call_turns: answers that called no tool (each one a greedy fallback step).
        stalled: steps that fell back because the call budget was spent without a move.
        unknown_tool: calls of a tool that does not exist.
        bad_arguments: calls whose arguments Inspect or the tool refused.
        over_budget: calls refused because the budget between two moves was spent.
        after_end: calls made after the episode had ended in the same turn.
    """

    turns: int = 0
    moves: int = 0
    recalls: int = 0
    no_call_turns: int = 0
    stalled: int = 0
    unknown_tool: int = 0
    bad_arguments: int = 0
    over_budget: int = 0
    after_end: int = 0

    def to_dict(self) -> dict[str, int]:
        return asdict(self)

    def record(self) -> dict[str, object]:
        """What the episode's record adds: the navigator and these counts."""
        return {"agent": TOOL_NAVIGATOR.name, "tools": self.to_dict()}


def _text_or_parts(parts: list[Content]) -> ToolResult:
    # a tool result reads best as one string; images need the content list
    if all(isinstance(p, ContentText) for p in parts):
        return "\n".join(p.text for p in parts if isinstance(p, ContentText))
    return [p for p in parts if isinstance(p, ContentText | ContentImage)]


def situation(sight: Sight, grid: Grid, agent: Pos, goal: Pos, steps_left: int) -> list[Content]:
    """What the navigator is told of where it stands: the observation (what ``sight``
    shows of ``grid``), its position, the goal and the steps left."""
    return [*sight.content(sight.seen(grid, agent), agent), ContentText(text=position_line(agent, goal, steps_left))]


def opening(prompt: str, size: int, told: list[Content]) -> list[ChatMessage]:
    """The conversation's first messages: the system prompt, then the situation."""
    return [system_message(prompt, size, NAVIGATE_TOOLS), user_message(told)]


def moved(action: Action, at: Pos) -> str:
    """What a move that got the agent to ``at`` says first."""
    return f"Moved {action.name.lower()} to ({at[0]},{at[1]})."


class ToolRun:
    """The state of one tool-played episode: the world, the memory view and the counts.

    The ``move`` and ``recall`` tools of the episode call into it; the loop
    (:func:`run_tool_episode`) refreshes the view before each decision point.
    """

    def __init__(
        self,
        env: DynamicFrozenLakeEnv,
        strategy: MemoryStrategy,
        *,
        sight: Sight,
        records: list[StepRecord],
        counts: ToolCounts | None = None,
    ) -> None:
        self.env = env
        self.strategy = strategy
        self.sight = sight
        self.records = records
        self.counts = ToolCounts() if counts is None else counts
        self.view: tuple[MemoryEntry, ...] | None = None
        self.view_step = -1
        self.calls_since_move = 0
        self.recalled: list[str] = []
        """Cells recalled since the last move, for the step's info table."""
        self.reward = 0.0
        self.terminated = False
        self.truncated = False

    @property
    def over(self) -> bool:
        return self.terminated or self.truncated

    @property
    def budget(self) -> int:
        return call_budget(self.env.instance.size)

    async def refresh(self) -> None:
        """Ask the strategy for the view of this decision point, once per point."""
        if not self.over and self.view_step != self.env.steps:
            self.view = await self.strategy.view(self.env.steps, self.env.grid, self.env.agent)
            self.view_step = self.env.steps

    def situation(self) -> list[Content]:
        """The observation (what the sight shows of the grid), position, goal and remaining budget."""
        env = self.env
        return situation(self.sight, env.grid, env.agent, env.instance.goal, env.max_steps - env.steps)

    def step(self, action: Action, *, parsed: bool, reading: str, answer: str) -> list[Content]:
        """Take ``action`` in the world, record it, and describe what followed."""
        position = self.env.agent
        taken = take_step(self.env, self.view, action, parsed=parsed, reading=reading, answer=answer)
        self.reward, self.terminated, self.truncated = taken.reward, taken.terminated, taken.truncated
        self.records.append(taken.record)
        how = "move call" if parsed else "**fallback** (greedy; no move called)"
        table = step_table(taken.record, self.sight.view, how=how, recalled=self.recalled)
        transcript().info(table, source="navigation")
        self.calls_since_move = 0
        self.recalled = []
        if parsed:
            self.counts.moves += 1
        return self.outcome_parts(action, position)

    def outcome_parts(self, action: Action, before: tuple[int, int]) -> list[Content]:
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

    # the tools' bodies: every refusal is a ToolError, which Inspect returns to the model
    def move(self, direction: object) -> ToolResult:
        if self.over:
            self.counts.after_end += 1
            raise ToolError(EPISODE_OVER)
        action = DIRECTIONS.get(direction.strip().lower()) if isinstance(direction, str) else None
        if action is None:
            self.counts.bad_arguments += 1
            self.calls_since_move += 1
            raise ToolError(f"direction must be one of {', '.join(DIRECTIONS)}; got {_shown(direction)}")
        return _text_or_parts(
            self.step(action, parsed=True, reading="read", answer=f"{MOVE_NAME}(direction={_shown(direction)})")
        )

    def recall(self, row: object, col: object) -> str:
        if self.over:
            self.counts.after_end += 1
            raise ToolError(EPISODE_OVER)
        self.calls_since_move += 1
        size = self.env.instance.size
        if (
            not isinstance(row, int)
            or not isinstance(col, int)
            or isinstance(row, bool)
            or isinstance(col, bool)
            or not (0 <= row < size and 0 <= col < size)
        ):
            self.counts.bad_arguments += 1
            raise ToolError(f"row and col must be integers from 0 to {size - 1}; got ({_shown(row)}, {_shown(col)})")
        self.counts.recalls += 1
        self.recalled.append(f"({row},{col})")
        if self.view is None:
            return NO_MEMORY_ANSWER
        entry = next((e for e in self.view if e.is_cell and e.pos == (row, col)), None)
        return no_entry_answer(row, col) if entry is None else entry.line

    def episode(self) -> Episode:
        """The finished episode, as the prompt navigator's plus the counts."""
        return Episode.finished(
            self.env,
            self.strategy.audits,
            self.records,
            self.view,
            self.reward,
            self.sight.view.record(),
            navigated=self.counts.record(),
        )


@tool(name=MOVE_NAME)
def move_tool(run: ToolRun) -> Tool:
    """The ``move`` tool of one episode."""

    async def execute(direction: str) -> ToolResult:
        """Take one step on the grid; returns what you see afterwards, or how the episode ended.

        Args:
            direction: up, down, left or right.
        """
        return run.move(direction)

    return execute


@tool(name=RECALL_NAME)
def recall_tool(run: ToolRun) -> Tool:
    """The ``recall`` tool of one episode."""

    async def execute(row: int, col: int) -> ToolResult:
        """Read what your memory holds about one cell.

        Args:
            row: the cell's row, 0 at the top.
            col: the cell's column, 0 at the left.
        """
        return run.recall(row, col)

    return execute


def episode_tools(run: ToolRun) -> list[Tool]:
    """The tools of an episode, as the model is given them."""
    return [move_tool(run), recall_tool(run)]


def _refusal(call: ToolCall, message: str) -> ChatMessageTool:
    return ChatMessageTool(
        content="", tool_call_id=call.id, function=call.function, error=ToolCallError("limit", message)
    )


async def _run_call(
    run: ToolRun, history: list[ChatMessage], message: ChatMessageAssistant, call: ToolCall, tools: list[Tool]
) -> list[ChatMessage]:
    """Execute one of the turn's calls through Inspect (a ToolEvent in the transcript)
    and count what it was; the view is refreshed first if a move came before it."""
    names = (MOVE_NAME, RECALL_NAME)
    if run.over:
        run.counts.after_end += 1
        transcript().info(f"Call `{call.function}` after the end of the episode: refused.", source="navigation")
        return [_refusal(call, EPISODE_OVER)]
    if call.function != MOVE_NAME and run.calls_since_move >= run.budget:
        run.counts.over_budget += 1
        transcript().info(f"Call `{call.function}` over the budget of {run.budget}: refused.", source="navigation")
        return [_refusal(call, f"no more calls before a move (at most {run.budget}): call {MOVE_NAME}")]
    await run.refresh()
    single = message.model_copy(update={"tool_calls": [call]})
    result = await execute_tools([*history, single], tools)
    for reply in result.messages:
        if isinstance(reply, ChatMessageTool) and reply.error is not None and reply.error.type == "parsing":
            # Inspect refused the call before the tool ran: unknown name or arguments off the schema
            if call.function in names:
                run.counts.bad_arguments += 1
            else:
                run.counts.unknown_tool += 1
            run.calls_since_move += 1
    return list(result.messages)


async def _fallback(run: ToolRun, answer: str, why: str) -> ChatMessageUser | None:
    """One greedy step in place of a move the model did not make; what the model is told."""
    env = run.env
    await run.refresh()
    before = env.agent
    action = greedy_action(before, env.instance.goal)
    parts = run.step(action, parsed=False, reading="unreadable", answer=answer)
    if run.over:
        return None
    note = ContentText(text=f"{why}, so the agent took one default step: {action.name.lower()}.")
    return user_message([note, *parts])


async def run_tool_episode(
    env: DynamicFrozenLakeEnv,
    strategy: MemoryStrategy,
    navigator: Model,
    *,
    sight: Sight,
    prompt: str,
    records: list[StepRecord] | None = None,
    messages: list[ChatMessage] | None = None,
    counts: ToolCounts | None = None,
) -> Episode:
    """Play one episode as a conversation with ``move`` and ``recall`` tools.

    Args:
        env: the world; it is reset here.
        strategy: the memory strategy whose view ``recall`` answers from.
        navigator: the model that calls the tools.
        sight: how observations are shown (modality, listing and view: what of the
            grid each shows). The strategy's audits see what its context says, as
            for the prompt navigator.
        prompt: the system prompt (``{size}`` is filled in).
        records: each step is appended as it is taken (a new list when None), so a
            caller keeps the steps of an episode a sample limit interrupts.
        messages: the conversation is appended here as it grows (a new list when
            None), so a caller keeps it, as far as it went, when a limit ends the episode.
        counts: the tool counts, kept as they grow (new ones when None), likewise.
    """
    env.reset()
    run = ToolRun(
        env,
        strategy,
        sight=sight,
        records=[] if records is None else records,
        counts=counts,
    )
    tools = episode_tools(run)
    config = answer_config(NAVIGATE_SCHEMA, False, navigator)
    await run.refresh()
    messages = [] if messages is None else messages
    messages[:] = opening(prompt, env.instance.size, run.situation())
    while not run.over:
        async with span(f"step {env.steps + 1}", type="step"):
            steps = env.steps
            while env.steps == steps and not run.over:
                await run.refresh()
                output = await navigator.generate(input=messages, tools=tools, config=config)
                record_call("navigation", output)
                run.counts.turns += 1
                message = output.message
                history = list(messages)
                messages.append(message)
                if not message.tool_calls:
                    run.counts.no_call_turns += 1
                    note = await _fallback(run, message.text or "(no tool call)", "Your answer called no tool")
                    messages.extend([note] if note else [])
                    continue
                for call in message.tool_calls:
                    messages.extend(await _run_call(run, history, message, call, tools))
                if env.steps == steps and not run.over and run.calls_since_move >= run.budget:
                    run.counts.stalled += 1
                    note = await _fallback(
                        run,
                        f"({run.calls_since_move} calls without a move)",
                        f"You made {run.calls_since_move} calls without a move",
                    )
                    messages.extend([note] if note else [])
    return run.episode()


class ToolLoop:
    """The tool navigator's loop as the solver plays it (``_navigators.NavigatorLoop``)."""

    def __init__(self) -> None:
        self.counts = ToolCounts()

    async def play(
        self,
        state: TaskState,
        env: DynamicFrozenLakeEnv,
        strategy: MemoryStrategy,
        navigator: Model,
        *,
        sight: Sight,
        prompt: str,
        structured: bool,
        records: list[StepRecord],
    ) -> Episode:
        # the conversation is the sample's messages: the viewer's Messages tab shows it,
        # and Inspect's message limit applies to it as to any agent's (the per-step
        # navigator has no conversation); no schema is sent with tool calls
        state.messages = []
        return await run_tool_episode(
            env,
            strategy,
            navigator,
            sight=sight,
            prompt=prompt,
            records=records,
            messages=state.messages,
            counts=self.counts,
        )

    def record(self) -> dict[str, object]:
        return self.counts.record()

    def plan(self, instance: Instance, *, sight: Sight, prompt: str, max_steps: int) -> ConversationPlan:
        # as run_tool_episode opens it, then a move right a turn (the agent kept at S)
        start, goal = instance.start, instance.goal
        told = situation(sight, instance.grid_after(1), start, goal, max_steps - 1)
        return ConversationPlan(
            tools=episode_tools(cast(ToolRun, None)),  # listed, never called
            opening=opening(prompt, instance.size, situation(sight, instance.grid_after(0), start, goal, max_steps)),
            answer=TOOL_CALL_ANSWER,
            result=ChatMessageTool(content=[ContentText(text=moved(Action.RIGHT, start)), *told], function=MOVE_NAME),
            turns=max_steps,
        )
