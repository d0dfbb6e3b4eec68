"""Memory crops (``-T memory=crops``): the picture of a memory entry, pure and deterministic."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from spatialstale.env import (
    CELL_PX,
    COLOURS,
    CROP_CELLS,
    CROP_STRIP_PX,
    FOG_COLOUR,
    OUTLINE_COLOUR,
    PAD_COLOUR,
    crop_centre,
    crop_image,
    entry_crop,
    make_instance,
    probe_pixel,
    read_crop,
    render_image,
    with_distractor_entries,
)
from spatialstale.env._crops import OUTLINE_PX
from spatialstale.env._render import LINE_COLOUR

SEED = 4810
PINNED = "5c253a6a1e71a2c014a99b10b82d8c0d58a5bc7bb3026ad5790bc5945036a2d0"
"""SHA-256 of ``entry_crop(make_instance(4810, "L2"), "mem_044")``: the same bytes on
every machine (Pillow's built-in bitmap font, PNG at a fixed compression level)."""


def _png(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data)).convert("RGB")


def test_the_same_seed_gives_byte_identical_crops() -> None:
    a = make_instance(SEED, "L2")
    b = make_instance(SEED, "L3")  # another regime: the same memory, so the same crops
    assert [entry_crop(a, e) for e in a.memory] == [entry_crop(b, e) for e in b.memory]
    assert hashlib.sha256(entry_crop(a, "mem_044")).hexdigest() == PINNED


def test_a_crop_is_three_cells_under_a_label_strip() -> None:
    image = _png(entry_crop(make_instance(SEED, "L2"), "mem_044"))
    assert CROP_CELLS == 3 and image.size == (CROP_CELLS * CELL_PX, CROP_STRIP_PX + CROP_CELLS * CELL_PX)


@pytest.mark.parametrize("seed", [SEED, 625, 1247])
def test_the_centre_shows_the_remembered_type_and_the_neighbours_g0(seed: int) -> None:
    instance = make_instance(seed, "L2")
    for entry in instance.memory:
        image = _png(entry_crop(instance, entry))
        assert image.getpixel(crop_centre()) == COLOURS[entry.cell.value]
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                r, c = entry.row + dr, entry.col + dc
                x, y = probe_pixel((dr + 1, dc + 1))
                pixel = image.getpixel((x, y + CROP_STRIP_PX))
                inside = 0 <= r < instance.size and 0 <= c < instance.size
                assert pixel == (COLOURS[instance.g0[r][c]] if inside else PAD_COLOUR)


@pytest.mark.parametrize("memory_id", ["mem_044", "mem_000"])  # inside the grid; at its corner
def test_cells_match_the_renderer_and_the_centre_is_outlined(memory_id: str) -> None:
    # every pixel of each cell in the grid is the grid image's, but for the outline ring
    # around the centre and the grid line that closes the crop's last column and row
    instance = make_instance(SEED, "L2")
    entry = next(e for e in instance.memory if e.id == memory_id)
    crop = np.asarray(crop_image(instance.g0, entry.pos, entry.cell.value, entry.id))
    full = np.asarray(render_image(instance.g0, None))
    height, width = crop.shape[:2]
    ys, xs = np.mgrid[0:height, 0:width]
    x0, y0, w = CELL_PX, CROP_STRIP_PX + CELL_PX, OUTLINE_PX
    outer = (xs >= x0 - w) & (xs < x0 + CELL_PX + w) & (ys >= y0 - w) & (ys < y0 + CELL_PX + w)
    inner = (xs >= x0 + w) & (xs < x0 + CELL_PX - w) & (ys >= y0 + w) & (ys < y0 + CELL_PX - w)
    ring = outer & ~inner
    assert (crop[ring] == OUTLINE_COLOUR).all()
    closing = (xs == width - 1) | (ys == height - 1)
    assert (crop[closing & ~ring] == LINE_COLOUR).all()
    seen = 0
    for dr in range(CROP_CELLS):
        for dc in range(CROP_CELLS):
            r, c = entry.row + dr - 1, entry.col + dc - 1
            if not (0 <= r < instance.size and 0 <= c < instance.size):
                continue
            rows = slice(CROP_STRIP_PX + dr * CELL_PX, CROP_STRIP_PX + (dr + 1) * CELL_PX)
            cols = slice(dc * CELL_PX, (dc + 1) * CELL_PX)
            ours, theirs = crop[rows, cols], full[r * CELL_PX : (r + 1) * CELL_PX, c * CELL_PX : (c + 1) * CELL_PX]
            same = (ours == theirs).all(axis=2) | ring[rows, cols] | closing[rows, cols]
            assert same.all(), (r, c)
            seen += 1
    assert seen == (9 if memory_id == "mem_044" else 4)


def test_the_corner_is_padded_beyond_the_edge() -> None:
    instance = make_instance(SEED, "L2")
    image = _png(entry_crop(instance, "mem_000"))
    pads = [probe_pixel((0, 0)), probe_pixel((0, 2)), probe_pixel((2, 0))]
    assert all(image.getpixel((x, y + CROP_STRIP_PX)) == PAD_COLOUR for x, y in pads)
    assert PAD_COLOUR not in (*COLOURS.values(), FOG_COLOUR, OUTLINE_COLOUR)


def test_the_strip_names_the_entry() -> None:
    instance = make_instance(SEED, "L2")
    images = {e.id: _png(entry_crop(instance, e)) for e in instance.memory}
    strips = {mid: image.crop((0, 0, image.width, CROP_STRIP_PX)) for mid, image in images.items()}
    # the strip holds ink, and only the id tells two strips apart
    assert len({s.tobytes() for s in strips.values()}) == len(strips)
    assert strips["mem_044"].getcolors() is not None and (0, 0, 0) in {c for _, c in strips["mem_044"].getcolors()}
    g0 = instance.g0
    pos = next(e.pos for e in instance.memory if e.id == "mem_044")
    same_cell = [crop_image(g0, pos, "H", label) for label in ("mem_044", "mem_099")]
    assert (
        same_cell[0].crop((0, CROP_STRIP_PX, *same_cell[0].size)).tobytes()
        == same_cell[1].crop((0, CROP_STRIP_PX, *same_cell[1].size)).tobytes()
    )


def test_a_distractor_has_no_crop() -> None:
    instance = with_distractor_entries(make_instance(SEED, "L2"), 2)
    with pytest.raises(ValueError, match="about no cell"):
        entry_crop(instance, next(e for e in instance.memory if not e.is_cell))
    with pytest.raises(ValueError, match="no entry"):
        entry_crop(instance, "mem_999")


def test_the_pictures_in_the_manual_are_what_the_renderer_draws() -> None:
    docs = Path(__file__).resolve().parents[2] / "docs"
    instance = make_instance(SEED, "L2")
    for memory_id in ("mem_044", "mem_000"):
        assert (docs / f"memory-crops-{memory_id}.png").read_bytes() == entry_crop(instance, memory_id)


@pytest.mark.parametrize("size", [8, 12])
def test_a_crop_reads_back_as_what_it_draws(size: int) -> None:
    # the reference agents' reading (the extension's read_picture): the centre's type and its label
    instance = make_instance(SEED, "L2", size)
    for entry in instance.memory:
        assert read_crop(_png(entry_crop(instance, entry)), size) == (entry.cell.value, entry.pos)
    # a grid's image is not a crop: its centre label box holds no label
    assert read_crop(render_image(instance.g0, None), size) is None
