"""Observations of SPEC §5: the text listing and the pixels of the rendering."""

from __future__ import annotations

import hashlib
import io

import numpy as np
import pytest
from PIL import Image, ImageDraw

from spatialstale.env import (
    CELL_PX,
    COLOURS,
    fog,
    make_instance,
    probe_pixel,
    render_image,
    render_png,
    render_rgb,
    text_observation,
)
from spatialstale.env._render import _BaseCache

from ._support import run_python

SPEC_COLOURS = {"F": "#A8C8E8", "H": "#202020", "S": "#2E8B57", "G": "#DAA520"}
RED = (255, 0, 0)
WHITE = (255, 255, 255)


def rgb(hex_colour: str) -> tuple[int, int, int]:
    return (int(hex_colour[1:3], 16), int(hex_colour[3:5], 16), int(hex_colour[5:7], 16))


def pixel(image: np.ndarray, xy: tuple[int, int]) -> tuple[int, int, int]:
    x, y = xy
    r, g, b = (int(v) for v in image[y, x])
    return (r, g, b)


def red_mask(image: np.ndarray) -> np.ndarray:
    mask: np.ndarray = np.all(image == np.array(RED, dtype=np.uint8), axis=-1)
    return mask


SCENES = [
    (make_instance(3, "L2").initial_grid, (2, 3)),
    (make_instance(11, "L1").initial_grid, (0, 0)),
    (make_instance(40, "L3").final_grid, (7, 6)),
    (make_instance(5, "L2", 16).initial_grid, (9, 15)),
    (make_instance(8, "none", 4).g0, (3, 3)),
]


# --- Text ----------------------------------------------------------------------------


def test_text_observation_exact() -> None:
    grid = ("SFHF", "FHFF", "FFFH", "HFFG")
    expected = (
        "Row 0: (0,0)=S (0,1)=F (0,2)=H (0,3)=F\n"
        "Row 1: (1,0)=F (1,1)=H (1,2)=F (1,3)=F\n"
        "Row 2: (2,0)=F (2,1)=F (2,2)=F (2,3)=H\n"
        "Row 3: (3,0)=H (3,1)=F (3,2)=F (3,3)=G\n"
        "Agent at (1,2). Goal at (3,3)."
    )
    assert text_observation(grid, (1, 2)) == expected


def test_text_observation_lists_every_cell() -> None:
    instance = make_instance(9, "L2")
    lines = text_observation(instance.initial_grid, (4, 5)).splitlines()
    assert len(lines) == 9
    for r, line in enumerate(lines[:8]):
        cells = line.removeprefix(f"Row {r}: ").split(" ")
        assert cells == [f"({r},{c})={instance.initial_grid[r][c]}" for c in range(8)]
    assert lines[8] == "Agent at (4,5). Goal at (7,7)."


def test_text_observation_two_digit_coordinates() -> None:
    grid = make_instance(1, "none", 12).g0
    text = text_observation(grid, (10, 11))
    assert text.splitlines()[11].startswith(f"Row 11: (11,0)={grid[11][0]} ")
    assert text.endswith("Agent at (10,11). Goal at (11,11).")


# --- Pixels --------------------------------------------------------------------------


def test_colours_are_the_spec_colours() -> None:
    assert {cell: rgb(hex_colour) for cell, hex_colour in SPEC_COLOURS.items()} == COLOURS


@pytest.mark.parametrize("size", [4, 8, 16, 32])
def test_image_size(size: int) -> None:
    image = render_rgb(make_instance(2, "none", size).g0, (0, 0))
    assert image.shape == (48 * size, 48 * size, 3) and image.dtype == np.uint8
    assert CELL_PX == 48
    if size == 8:
        assert image.shape == (384, 384, 3)
    if size == 16:
        assert image.shape == (768, 768, 3)


@pytest.mark.parametrize(("grid", "agent"), SCENES)
def test_every_cell_has_its_colour(grid: tuple[str, ...], agent: tuple[int, int]) -> None:
    image = render_rgb(grid, agent)
    n = len(grid)
    for r in range(n):
        for c in range(n):
            assert pixel(image, probe_pixel((r, c))) == rgb(SPEC_COLOURS[grid[r][c]]), (r, c)


@pytest.mark.parametrize(("grid", "agent"), SCENES)
def test_agent_is_red_and_inside_its_cell(grid: tuple[str, ...], agent: tuple[int, int]) -> None:
    image = render_rgb(grid, agent)
    ys, xs = np.nonzero(red_mask(image))
    assert len(xs) > 100
    r, c = agent
    assert (xs // CELL_PX == c).all() and (ys // CELL_PX == r).all()
    # Clear of the cell's border lines.
    assert (xs % CELL_PX > 0).all() and (ys % CELL_PX > 0).all()
    assert not red_mask(render_rgb(grid, None)).any()


def test_agent_can_be_drawn_in_every_cell() -> None:
    grid = make_instance(6, "none", 4).g0
    for r in range(4):
        for c in range(4):
            ys, xs = np.nonzero(red_mask(render_rgb(grid, (r, c))))
            assert len(xs) > 100
            assert set(xs // CELL_PX) == {c} and set(ys // CELL_PX) == {r}


@pytest.mark.parametrize(("grid", "agent"), SCENES)
def test_white_grid_lines_one_pixel_wide(grid: tuple[str, ...], agent: tuple[int, int]) -> None:
    image = render_rgb(grid, agent)
    n = len(grid)
    side = n * CELL_PX
    white = np.array(WHITE, dtype=np.uint8)
    for at in [k * CELL_PX for k in range(n)] + [side - 1]:
        assert (image[at, :] == white).all(), f"row {at}"
        assert (image[:, at] == white).all(), f"column {at}"
    for r in range(n):
        for c in range(n):
            colour = rgb(SPEC_COLOURS[grid[r][c]])
            x0, y0 = c * CELL_PX, r * CELL_PX
            px, py = probe_pixel((r, c))
            assert pixel(image, (x0 + 1, py)) == colour
            assert pixel(image, (px, y0 + 1)) == colour
            assert pixel(image, (x0 + CELL_PX - 2, py)) == colour
            assert pixel(image, (px, y0 + CELL_PX - 2)) == colour


@pytest.mark.parametrize(("grid", "agent"), SCENES[:2])
def test_coordinate_labels_in_the_top_left_corner(grid: tuple[str, ...], agent: tuple[int, int]) -> None:
    image = render_rgb(grid, agent)
    n = len(grid)
    corners = {}
    for r in range(n):
        for c in range(n):
            x0, y0 = c * CELL_PX, r * CELL_PX
            corner = image[y0 + 1 : y0 + 16, x0 + 1 : x0 + CELL_PX - 1]
            ink = (255, 255, 255) if grid[r][c] == "H" else (0, 0, 0)
            assert np.all(corner == np.array(ink, dtype=np.uint8), axis=-1).sum() > 10, (r, c)
            # Below the label only the cell colour and the agent remain.
            lower = image[y0 + 16 : y0 + CELL_PX - 1, x0 + 1 : x0 + CELL_PX - 1].reshape(-1, 3)
            assert {tuple(int(v) for v in p) for p in np.unique(lower, axis=0)} <= {rgb(SPEC_COLOURS[grid[r][c]]), RED}
            corners[(r, c)] = np.all(corner == np.array(ink, dtype=np.uint8), axis=-1)
    # Each label says its own coordinates, so no two cells carry the same ink.
    assert len({mask.tobytes() for mask in corners.values()}) == n * n


def test_png_decodes_to_the_rgb_array() -> None:
    grid, agent = SCENES[0]
    png = render_png(grid, agent)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    with Image.open(io.BytesIO(png)) as image:
        assert image.size == (384, 384) and image.mode == "RGB"
        assert np.array_equal(np.asarray(image), render_rgb(grid, agent))


def test_same_state_renders_identically() -> None:
    for grid, agent in SCENES:
        assert np.array_equal(render_rgb(grid, agent), render_rgb(grid, agent))
        assert render_png(grid, agent) == render_png(grid, agent)


RENDER_DIGESTS = """
import hashlib
from spatialstale.env import make_instance, render_png, render_rgb
for seed, regime, size, agent in [(3, "L2", 8, (2, 3)), (40, "L3", 8, (7, 6)), (5, "L2", 16, (9, 15))]:
    instance = make_instance(seed, regime, size)
    grid = instance.final_grid
    rgb_digest = hashlib.sha256(render_rgb(grid, agent).tobytes()).hexdigest()
    print(rgb_digest, hashlib.sha256(render_png(grid, agent)).hexdigest())
"""


def test_rendering_is_identical_in_another_process() -> None:
    expected = []
    for seed, regime, size, agent in [(3, "L2", 8, (2, 3)), (40, "L3", 8, (7, 6)), (5, "L2", 16, (9, 15))]:
        grid = make_instance(seed, regime, size).final_grid
        rgb_digest = hashlib.sha256(render_rgb(grid, agent).tobytes()).hexdigest()
        png_digest = hashlib.sha256(render_png(grid, agent)).hexdigest()
        expected.append(f"{rgb_digest} {png_digest}")
    result = run_python(RENDER_DIGESTS, hash_seed="4321")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == expected


def _digest_of_many_renderings() -> str:
    """One digest over the pixels of many renderings, each grid drawn several times."""
    digests = []
    for size in (4, 8, 16):
        for seed in (3, 11, 40):
            instance = make_instance(seed, "L2", size)
            for grid in (instance.initial_grid, instance.final_grid, fog(instance.final_grid, (1, 1), 1)):
                for agent in (None, (0, 0), (1, 2), (size - 1, size - 2), (0, 0)):
                    for cell_px in (48, 40):
                        digests.append(hashlib.sha256(render_rgb(grid, agent, cell_px).tobytes()).hexdigest())
    return hashlib.sha256("".join(digests).encode()).hexdigest()


def test_reused_grid_drawings_keep_the_pixels_of_drawing_anew() -> None:
    # Pinned from the renderer that drew every cell, label and line on every call,
    # before agent-free drawings were cached and reused.
    assert _digest_of_many_renderings() == "39e102c0a9048be44b8cd01aae004d60afc9fa226b166a85539b92b336bfd78b"


def test_changing_a_rendering_leaves_later_renderings_alone() -> None:
    grid, agent = SCENES[1]
    first = render_rgb(grid, agent)
    image = render_image(grid, None)
    ImageDraw.Draw(image).rectangle((0, 0, 100, 100), fill=RED)
    assert np.array_equal(render_rgb(grid, agent), first)


def test_reused_drawings_stay_within_their_budget() -> None:
    one = (8 * 20) ** 2  # a palette image: a byte a pixel
    cache = _BaseCache(budget=3 * one)
    grids = [make_instance(seed, "L2").initial_grid for seed in range(1, 8)]
    for grid in grids:
        cache.copy_of(grid, 20)
        cache.copy_of(grid, 20)  # kept when drawn again
        assert cache.used <= 3 * one and cache.used == sum(
            image.width * image.height for image in cache.images.values()
        )
    assert list(cache.images) == [(grid, 20) for grid in grids[-3:]]
    cache.copy_of(grids[-3], 20)
    cache.copy_of(grids[0], 20)
    cache.copy_of(grids[0], 20)
    assert list(cache.images) == [(grid, 20) for grid in (grids[-1], grids[-3], grids[0])]


def test_a_grid_drawn_once_takes_no_room() -> None:
    # a detection window's grid is drawn once (its PNG is reused): it is remembered, not kept
    cache = _BaseCache(budget=10 * (8 * 20) ** 2, seen=2)
    grids = [make_instance(seed, "L2").initial_grid for seed in range(1, 5)]
    for grid in grids:
        assert cache.copy_of(grid, 20).mode == "RGB"
    assert cache.used == 0 and not cache.images
    # only the last two are remembered: the first, drawn again, counts as new
    assert list(cache.seen) == [(grid, 20) for grid in grids[-2:]]
    cache.copy_of(grids[0], 20)
    cache.copy_of(grids[-1], 20)
    assert list(cache.images) == [(grids[-1], 20)]
