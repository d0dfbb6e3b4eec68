"""The loops of the navigators other than the paper's (``-T agent``), by name: the only
module of ``spatialstale.solvers`` that names them. The paper's per-step loop is the
navigation solver's own (``_navigation.run_episode``); each other navigator declares
itself in ``spatialstale.protocol`` (``NAVIGATORS``) and plays here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from inspect_ai.model import ChatMessage, Content, Model
from inspect_ai.solver import TaskState

from spatialstale.env import DynamicFrozenLakeEnv, Pos
from spatialstale.protocol import TOOL_NAVIGATOR, Episode, Sight, StepRecord

from ._strategies import MemoryStrategy
from ._tools import ToolLoop, tool_plan


class NavigatorLoop(Protocol):
    """One episode of a navigator: its loop, and what its record adds."""

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
        """Play the episode, appending each step to ``records`` as it is taken."""
        ...

    def record(self) -> dict[str, object]:
        """What the record of an episode a sample limit ended adds (``Episode.navigated``)."""
        ...


Planner = Callable[[int, Pos, Callable[[int], list[Content]]], tuple[list[ChatMessage], list[ChatMessage], str]]
"""A navigator's plan for the dry run of a conversation that grows by one exchange a
step: given (grid size, start, the situation shown at a step), its opening messages,
one exchange and the answer of a turn."""

LOOPS: dict[str, tuple[Callable[[], NavigatorLoop], Planner]] = {TOOL_NAVIGATOR.name: (ToolLoop, tool_plan)}
"""Each navigator's loop (a new one an episode) and dry-run plan, by ``-T agent`` name."""


def navigator_loop(name: str) -> NavigatorLoop | None:
    """A new loop of navigator ``name`` for one episode; None: the paper's per-step loop."""
    return LOOPS[name][0]() if name in LOOPS else None


def navigator_plan(name: str) -> Planner | None:
    """Navigator ``name``'s plan for the dry run; None: the paper's one call a step."""
    return LOOPS[name][1] if name in LOOPS else None
