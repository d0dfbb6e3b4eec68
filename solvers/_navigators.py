"""The loops of the navigators other than the paper's (``-T agent``), by name: the only
module of ``spatialstale.solvers`` that names them. The paper's per-step loop is the
navigation solver's own (``_navigation.run_episode``); each other navigator declares
itself in ``spatialstale.protocol`` (``NAVIGATORS``) and plays here, its loop stating
beside its play the calls it makes (``plan``), which the dry run measures."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from inspect_ai.model import Model
from inspect_ai.solver import TaskState

from spatialstale.env import DynamicFrozenLakeEnv, Instance
from spatialstale.protocol import TOOL_NAVIGATOR, Episode, Sight, StepRecord

from ._episode import ConversationPlan
from ._strategies import MemoryStrategy
from ._tools import ToolLoop


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

    def plan(self, instance: Instance, *, sight: Sight, prompt: str, max_steps: int) -> ConversationPlan:
        """The calls :meth:`play` makes in an episode of ``instance`` at most (every step
        taken, the agent at S), shown as ``sight`` (for the instance) shows the grid:
        what the dry run measures."""
        ...


LOOPS: dict[str, Callable[[], NavigatorLoop]] = {TOOL_NAVIGATOR.name: ToolLoop}
"""Each navigator's loop (a new one an episode), by ``-T agent`` name."""


def navigator_loop(name: str) -> NavigatorLoop | None:
    """A new loop of navigator ``name`` for one episode (or its plan); None: the paper's
    per-step loop."""
    return LOOPS[name]() if name in LOOPS else None
