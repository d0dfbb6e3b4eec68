"""The tool-using navigator (``-T agent=tools``), a navigator at the seams (``_seams.Navigator``).

One conversation an episode in which the model calls ``move(direction)`` and
``recall(row, col)`` (memory is read only through ``recall``, from the strategy's current
view), instead of one call a step with the memory in the prompt; same step budget and
scoring. What the protocol declares of it is here: its system prompt, its tools' names,
``recall``'s answers, its call kind and its dry-run notes. Its loop is
``spatialstale.solvers``' (``_tools``), the reference agents' answers ``spatialstale.agents``'
(``_tools``); its episode record adds ``agent`` and its tool counts (``tools``). The
report compares it with the paper's navigator as any other value of ``-T agent``.
"""

from __future__ import annotations

from dataclasses import dataclass

NAME = "tools"

NAVIGATE_TOOLS = "navigate-tools"
"""The kind of a turn of the tool navigator's conversation (``system_message``'s tag)."""

AGENT_PROMPT_HEAD = """\
You control an agent on a FrozenLake grid of {size}x{size} cells. Reach the goal G without stepping into a hole.
Cells: S = start, F = frozen ice (safe), H = hole (lethal: stepping in ends the episode), G = goal.
Coordinates are (row,col), row 0 at the top.
Call move(direction) with up (row-1), down (row+1), left (col-1) or right (col+1) to take one step;
a move off the grid leaves the agent in place. It returns what you see after the step.
The episode also ends when the step budget runs out.
"""
"""What the built-in agents' system prompts open with: the world and the ``move`` tool."""

AGENT_PROMPT_TAIL = "Every answer must call a tool. Between two moves you can make at most {size}x{size} other calls."
"""What they end with: SPEC §7's rules, as the agent is told them."""

DEFAULT_TOOLS_PROMPT = (
    AGENT_PROMPT_HEAD
    + """\
Call recall(row, col) to read what your memory holds about a cell. The memory holds notes from earlier
exploration of this grid.
"""
    + AGENT_PROMPT_TAIL
)
"""The tool navigator's system prompt (``-T agent=tools``; ``spatialstale.solvers``
runs its conversation); a prompt set's navigation prompt is for the per-step navigator,
``-T navigate_prompt`` overrides this one. The tools' names and ``recall``'s answers follow."""

MOVE_NAME = "move"
RECALL_NAME = "recall"
NO_MEMORY_ANSWER = "You have no memory of this grid."
"""``recall``'s answer under NoMemory, whatever the cell."""
EPISODE_OVER = "the episode is over: no more calls are taken"
"""The tool error of a call made after the episode ended."""


def no_entry_answer(row: int, col: int) -> str:
    """``recall``'s answer for a cell the memory view holds no entry for."""
    return f"Memory holds no entry for ({row},{col})."


@dataclass(frozen=True)
class ToolNavigator:
    """The tool-using navigator as the protocol sees it (``_seams.Navigator``)."""

    name: str = NAME
    help: str = f"{NAME} (move and recall tools)"
    call_kind: str = NAVIGATE_TOOLS
    channel: str = "recall"

    def system_prompt(self) -> str | None:
        return DEFAULT_TOOLS_PROMPT

    def dry_run_note(self) -> str | None:
        return (
            "Agent tools: one conversation an episode, a turn a step (each a move call); every turn resends the "
            "conversation so far (tool definitions, system prompt, opening observation, one exchange per earlier "
            "move), so its prompt grows a step at a time and all but the newest exchange is cacheable. Recall "
            "calls add turns on top, episodes that end early take turns off: an estimate, not a bound."
        )

    def dry_run_counts(self) -> str | None:
        return "estimate (a turn a step)"  # recall turns come on top; early ends come off


TOOL_NAVIGATOR = ToolNavigator()
