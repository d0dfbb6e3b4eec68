"""The Gymnasium environment: a FrozenLake whose ice thaws and freezes."""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ._grid import apply_changes, cell_at, move
from ._instance import DEFAULT_SIZE, Instance, make_instance
from ._regimes import L3_HORIZON
from ._render import render_rgb, text_observation
from ._types import Action, Cell, Change, Grid, Pos

MAX_STEPS = L3_HORIZON


class DynamicFrozenLakeEnv(gym.Env[np.int64, np.int64]):
    """FrozenLake on a deterministic (``is_slippery=False``) grid that changes.

    The world is one SpatialSTALE instance: the original grid g0 with the regime's
    pre-episode changes (L1, L2) or its online event schedule (L3). With regime
    ``none`` the grid never changes and the dynamics equal Gymnasium's
    ``FrozenLakeEnv(desc=g0, is_slippery=False)`` step for step.

    ## Action Space
    ``Discrete(4)``, numbered as in FrozenLake: 0 LEFT, 1 DOWN, 2 RIGHT, 3 UP. A move
    off the grid leaves the agent in place.

    ## Observation Space
    ``Discrete(n*n)``: the agent's cell as ``row * n + col``. The full grid, which
    may have changed, is in ``info["grid"]`` and in the ``ansi`` and ``rgb_array``
    renderings.

    ## Starting State
    The agent starts at S = (0, 0); the goal is G = (n-1, n-1).

    ## Rewards
    +1 for reaching G, -1 for stepping onto a hole (FrozenLake gives 0 there), 0
    otherwise.

    ## Episode End
    Terminated on a hole (death) or on G (success); truncated after ``max_steps``
    actions (50, the paper's timeout).

    ## Dynamics of L3
    Right after action ``t``, the scheduled event for step ``t`` (if any) flips its
    cells, unless the episode ended on that action. A flip of the agent's own cell is
    skipped and recorded in ``info["skipped"]`` and ``skipped_flips``.

    ## Arguments
    ``regime`` (none, L1, L2, L3, MA or a plug-in's; ``validate_regime``), ``size`` (n >= 4), ``instance_seed``
    (non-negative integer), or a ready ``instance``; ``max_steps``; ``render_mode``
    (``ansi`` or ``rgb_array``).
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}  # noqa: RUF012 (Gymnasium declares it so)

    def __init__(
        self,
        regime: str = "none",
        size: int = DEFAULT_SIZE,
        instance_seed: int = 0,
        *,
        instance: Instance | None = None,
        max_steps: int = MAX_STEPS,
        render_mode: str | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of ansi, rgb_array or None; got {render_mode!r}")
        if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
            raise ValueError(f"max_steps must be a positive integer; got {max_steps!r}")
        self.instance = instance if instance is not None else make_instance(instance_seed, regime, size)
        self.max_steps = max_steps
        self.render_mode = render_mode
        n = self.instance.size
        self.observation_space = spaces.Discrete(n * n)
        self.action_space = spaces.Discrete(4)
        self.grid: Grid = self.instance.initial_grid
        self.agent: Pos = self.instance.start
        self.steps = 0
        self.skipped_flips: list[tuple[int, Change]] = []
        self.applied_events: list[tuple[int, tuple[Change, ...]]] = []

    def _state(self) -> np.int64:
        return np.int64(self.agent[0] * self.instance.size + self.agent[1])

    def _info(self, applied: tuple[Change, ...] = (), skipped: tuple[Change, ...] = ()) -> dict[str, Any]:
        return {
            "prob": 1.0,
            "step": self.steps,
            "grid": self.grid,
            "applied": [c.to_dict() for c in applied],
            "skipped": [c.to_dict() for c in skipped],
        }

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.int64, dict[str, Any]]:
        # The world is fixed by the instance; ``seed`` only seeds ``np_random``, which
        # nothing here draws from.
        super().reset(seed=seed)
        self.grid = self.instance.initial_grid
        self.agent = self.instance.start
        self.steps = 0
        self.skipped_flips = []
        self.applied_events = []
        return self._state(), self._info()

    def step(self, action: Any) -> tuple[np.int64, SupportsFloat, bool, bool, dict[str, Any]]:
        if not self.action_space.contains(action):
            raise ValueError(f"action must be 0 (LEFT), 1 (DOWN), 2 (RIGHT) or 3 (UP); got {action!r}")
        self.agent = move(self.agent, Action(int(action)), self.instance.size)
        self.steps += 1
        cell = cell_at(self.grid, self.agent)
        terminated = cell in (Cell.HOLE, Cell.GOAL)
        reward = -1.0 if cell is Cell.HOLE else 1.0 if cell is Cell.GOAL else 0.0
        applied: tuple[Change, ...] = ()
        skipped: tuple[Change, ...] = ()
        if not terminated:
            applied, skipped = self._apply_events()
        truncated = not terminated and self.steps >= self.max_steps
        return self._state(), reward, terminated, truncated, self._info(applied, skipped)

    def _apply_events(self) -> tuple[tuple[Change, ...], tuple[Change, ...]]:
        applied: list[Change] = []
        skipped: list[Change] = []
        for event in self.instance.schedule:
            if event.step != self.steps:
                continue
            for change in event.changes:
                if change.pos == self.agent:
                    skipped.append(change)
                    self.skipped_flips.append((self.steps, change))
                elif cell_at(self.grid, change.pos) is not change.after:
                    # After a skipped thaw, the schedule may later "freeze" a cell that
                    # never thawed: nothing happens, so nothing is reported as applied.
                    applied.append(change)
        if applied:
            self.grid = apply_changes(self.grid, applied)
            self.applied_events.append((self.steps, tuple(applied)))
        return tuple(applied), tuple(skipped)

    def render(self) -> str | np.ndarray | None:
        if self.render_mode == "ansi":
            return text_observation(self.grid, self.agent)
        if self.render_mode == "rgb_array":
            return render_rgb(self.grid, self.agent)
        return None
