"""Fog: the Chebyshev square around the agent, its text listings and its rendering."""

from __future__ import annotations

import io
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from spatialstale.env import (
    CELL_PX,
    COLOURS,
    FOG_CELL,
    FOG_COLOUR,
    FOG_HOLES_NOTE,
    HOLES_NOTE,
    default_seeds,
    fog,
    fog_note,
    holes_observation,
    make_instance,
    probe_pixel,
    render_png,
    text_observation,
    visible_window,
)
from spatialstale.env._fog import validate_view_radius, view_radius_of

SEEDS = list(default_seeds(2024, 20))
_CELL = re.compile(r"\((\d+),(\d+)\)=([SFHG?])")
AGENT_RED = (0xFF, 0x00, 0x00)


def grids() -> st.SearchStrategy[tuple[tuple[str, ...], tuple[int, int], int]]:
    """A live grid of a real instance, an agent cell on it and a view radius."""

    @st.composite
    def draw(data: st.DrawFn) -> tuple[tuple[str, ...], tuple[int, int], int]:
        size = data(st.sampled_from([4, 8, 16]))
        grid = make_instance(data(st.sampled_from(SEEDS)), data(st.sampled_from(["L1", "L2"])), size).final_grid
        agent = (data(st.integers(0, size - 1)), data(st.integers(0, size - 1)))
        return grid, agent, data(st.integers(0, size + 1))

    return draw()


@settings(max_examples=60, deadline=None)
@given(grids())
def test_fog_keeps_exactly_the_chebyshev_square(case: tuple[tuple[str, ...], tuple[int, int], int]) -> None:
    grid, agent, k = case
    size = len(grid)
    seen = fog(grid, agent, k)
    assert len(seen) == size and all(len(row) == size for row in seen)
    for r in range(size):
        for c in range(size):
            inside = abs(r - agent[0]) <= k and abs(c - agent[1]) <= k
            assert seen[r][c] == (grid[r][c] if inside else FOG_CELL), (r, c)
    assert fog(grid, agent, k) == seen  # a pure function
    rows = (max(0, agent[0] - k), min(size - 1, agent[0] + k))
    cols = (max(0, agent[1] - k), min(size - 1, agent[1] + k))
    assert visible_window(seen) == (rows, cols)
    if any(FOG_CELL in row for row in seen):
        assert view_radius_of(seen, agent) == k
    else:
        assert view_radius_of(seen, agent) is None and fog_note(seen, agent) is None


def test_radius_zero_shows_only_the_agents_cell() -> None:
    grid = make_instance(SEEDS[0], "L2").final_grid
    seen = fog(grid, (3, 4), 0)
    assert [(r, c) for r in range(8) for c in range(8) if seen[r][c] != FOG_CELL] == [(3, 4)]
    assert seen[3][4] == grid[3][4]


def test_full_view_is_the_grid_itself_and_its_listings_are_unchanged() -> None:
    grid = make_instance(SEEDS[1], "L2").final_grid
    assert fog(grid, (2, 2), None) is grid
    assert fog(grid, (0, 0), 7) == grid  # the square covers the grid from the corner
    for agent in ((0, 0), (5, 3)):
        for text in (text_observation(grid, agent), holes_observation(grid, agent)):
            assert FOG_CELL not in text and "beyond your view" not in text
    assert HOLES_NOTE in holes_observation(grid, (0, 0))


@pytest.mark.parametrize("bad", [-1, True, 1.5, "1", [1]])
def test_a_bad_radius_is_refused_naming_the_valid_values(bad: object) -> None:
    with pytest.raises(ValueError, match=r"^view_radius must be an integer of at least 0 or full; got "):
        validate_view_radius(bad)  # type: ignore[arg-type]


def test_the_fogged_listing_marks_unseen_cells_and_states_the_rule() -> None:
    grid = make_instance(SEEDS[2], "L2").final_grid
    text = text_observation(fog(grid, (4, 4), 1), (4, 4))
    lines = text.splitlines()
    assert lines[-1] == "Agent at (4,4). Goal at (7,7)."
    assert lines[-2] == (
        "Cells marked ? are beyond your view (radius 1 around the agent): you see rows 3-5 and columns 3-5."
    )
    cells = {(int(r), int(c)): t for r, c, t in _CELL.findall(text)}
    assert len(cells) == 64
    for (r, c), cell in cells.items():
        assert cell == (grid[r][c] if max(abs(r - 4), abs(c - 4)) <= 1 else "?")


@settings(max_examples=40, deadline=None)
@given(grids())
def test_the_fogged_holes_listing_names_the_visible_non_ice_cells(
    case: tuple[tuple[str, ...], tuple[int, int], int],
) -> None:
    grid, agent, k = case
    seen = fog(grid, agent, k)
    if seen == grid:
        return
    text = holes_observation(seen, agent)
    assert FOG_HOLES_NOTE in text and HOLES_NOTE not in text
    listed = {(int(r), int(c)): t for r, c, t in _CELL.findall(text)}
    visible = {(r, c) for r in range(len(grid)) for c in range(len(grid)) if seen[r][c] != FOG_CELL}
    assert listed == {p: grid[p[0]][p[1]] for p in visible if grid[p[0]][p[1]] != "F"}
    (r0, r1), (c0, c1) = visible_window(seen) or ((0, 0), (0, 0))
    assert f"radius {k} around the agent): you see rows {r0}-{r1} and columns {c0}-{c1}." in text


def _pixel(image: Image.Image, xy: tuple[int, int]) -> tuple[int, int, int]:
    value = image.getpixel(xy)
    assert isinstance(value, tuple)
    return (int(value[0]), int(value[1]), int(value[2]))


@pytest.mark.parametrize(("agent", "k"), [((0, 0), 1), ((4, 5), 2), ((7, 7), 0)])
def test_the_fogged_image_greys_out_exactly_the_unseen_cells(agent: tuple[int, int], k: int) -> None:
    grid = make_instance(SEEDS[3], "L2").final_grid
    seen = fog(grid, agent, k)
    image = Image.open(io.BytesIO(render_png(seen, agent))).convert("RGB")
    assert image.size == (8 * CELL_PX, 8 * CELL_PX)
    for r in range(8):
        for c in range(8):
            expected = FOG_COLOUR if seen[r][c] == FOG_CELL else COLOURS[grid[r][c]]
            assert _pixel(image, probe_pixel((r, c))) == expected, (r, c)
    # the agent stays drawn on its (always visible) cell
    x0, y0 = agent[1] * CELL_PX, agent[0] * CELL_PX
    assert _pixel(image, (x0 + 24, y0 + 30)) == AGENT_RED
    assert render_png(seen, agent) == render_png(fog(grid, agent, k), agent)


def test_the_fog_colour_is_distinct_from_every_cell_and_the_agent() -> None:
    def distance(a: tuple[int, int, int], b: tuple[int, int, int]) -> int:
        return sum((x - y) ** 2 for x, y in zip(a, b, strict=True))

    others = [*COLOURS.values(), AGENT_RED, (0xFF, 0xFF, 0xFF)]
    assert min(distance(FOG_COLOUR, other) for other in others) > 40**2 * 3
    assert FOG_CELL not in COLOURS


def test_the_full_view_image_has_no_fog() -> None:
    grid = make_instance(SEEDS[4], "L2").final_grid
    image = Image.open(io.BytesIO(render_png(grid, (0, 0)))).convert("RGB")
    colours = {colour for _, colour in image.getcolors(maxcolors=1 << 16) or []}
    assert FOG_COLOUR not in colours
