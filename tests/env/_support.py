"""Independent references for the env tests: a BFS, grid edits and a subprocess runner."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import deque
from itertools import pairwise

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

Grid = tuple[str, ...]
Pos = tuple[int, int]

REGIMES = ("none", "L1", "L2", "L3")
CHANGING = ("L1", "L2", "L3")
FLIP = {"F": "H", "H": "F"}


def reachable(grid: Grid, start: Pos = (0, 0)) -> set[Pos]:
    """Every cell reachable from ``start`` by 4-connected moves over non-hole cells."""
    n = len(grid)
    seen = {start}
    todo = deque([start])
    while todo:
        r, c = todo.popleft()
        for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= nr < n and 0 <= nc < n and (nr, nc) not in seen and grid[nr][nc] != "H":
                seen.add((nr, nc))
                todo.append((nr, nc))
    return seen


def has_path(grid: Grid) -> bool:
    n = len(grid)
    return (n - 1, n - 1) in reachable(grid)


def path_to(grid: Grid, target: Pos, start: Pos = (0, 0)) -> list[Pos] | None:
    """A shortest path over non-hole cells from ``start`` to ``target``, both included."""
    n = len(grid)
    parent: dict[Pos, Pos] = {start: start}
    todo = deque([start])
    while todo:
        pos = todo.popleft()
        if pos == target:
            path = [pos]
            while path[-1] != start:
                path.append(parent[path[-1]])
            return path[::-1]
        r, c = pos
        for nxt in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= nxt[0] < n and 0 <= nxt[1] < n and nxt not in parent and grid[nxt[0]][nxt[1]] != "H":
                parent[nxt] = pos
                todo.append(nxt)
    return None


def actions_along(path: list[Pos]) -> list[int]:
    """FrozenLake action numbers (0 LEFT, 1 DOWN, 2 RIGHT, 3 UP) that walk ``path``."""
    codes = {(0, -1): 0, (1, 0): 1, (0, 1): 2, (-1, 0): 3}
    return [codes[(b[0] - a[0], b[1] - a[1])] for a, b in pairwise(path)]


def set_cells(grid: Grid, cells: dict[Pos, str]) -> Grid:
    rows = [list(row) for row in grid]
    for (r, c), value in cells.items():
        rows[r][c] = value
    return tuple("".join(row) for row in rows)


def differing(a: Grid, b: Grid) -> set[Pos]:
    return {(r, c) for r in range(len(a)) for c in range(len(a)) if a[r][c] != b[r][c]}


def run_python(code: str, *args: str, hash_seed: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -c code`` (or ``python args``) in a fresh interpreter of this venv."""
    env = dict(os.environ)
    if hash_seed is not None:
        env["PYTHONHASHSEED"] = hash_seed
    command = [sys.executable, *(["-c", code] if code else []), *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, check=False)


SEEDS = st.integers(min_value=0, max_value=10**6)
SIZES = st.integers(min_value=4, max_value=16)
PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
"""Hypothesis settings for instance properties: no deadline, since the suite asserts no timings."""

BIG = [(seed, 32) for seed in (0, 7, 999_983)]
"""A few instances at n=32 (paper App. K), checked beside the hypothesis draws."""
