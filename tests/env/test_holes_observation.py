"""The holes-only listing carries the same grid as the full one."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from spatialstale.env import HOLES_NOTE, default_seeds, holes_observation, make_instance, text_observation

_CELL = re.compile(r"\((\d+),(\d+)\)=([SFHG])")


def _grid_from_holes(text: str, size: int) -> tuple[str, ...]:
    assert HOLES_NOTE in text
    rows = [["F"] * size for _ in range(size)]
    for r, c, cell in _CELL.findall(text):
        rows[int(r)][int(c)] = cell
    return tuple("".join(row) for row in rows)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(list(default_seeds(2024, 20))), st.sampled_from(["L1", "L2", "L3"]), st.sampled_from([8, 16]))
def test_the_holes_listing_names_every_cell_that_is_not_ice(seed: int, regime: str, size: int) -> None:
    grid = make_instance(seed, regime, size).final_grid
    text = holes_observation(grid, (0, 0))
    assert _grid_from_holes(text, size) == grid
    assert text.splitlines()[-1] == text_observation(grid, (0, 0)).splitlines()[-1]
    assert len(text) < len(text_observation(grid, (0, 0)))


def test_a_grid_without_holes_says_so() -> None:
    grid = ("SF", "FG")
    assert holes_observation(grid, (0, 0)).startswith("Cells other than F: (0,0)=S (1,1)=G\n")
