"""Memory crops (``-T memory=crops``): the picture of a memory entry, pure and deterministic."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest
from PIL import Image

from spatialstale.env import (
    CELL_PX,
    COLOURS,
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
    assert image.size == (3 * CELL_PX, CROP_STRIP_PX + 3 * CELL_PX)


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


def test_cells_match_the_renderer_and_the_centre_is_outlined() -> None:
    g0 = make_instance(SEED, "L2").g0
    crop = crop_image(g0, (5, 4), g0[5][4], "mem_044")
    full = render_image(g0, None)
    # the label and the probe of each neighbour's cell are drawn as in the grid's image
    for dr, dc in ((-1, -1), (1, 1), (0, -1)):
        r, c = 5 + dr, 4 + dc
        ours = crop.crop(
            (
                CELL_PX * (dc + 1) + 2,
                CROP_STRIP_PX + CELL_PX * (dr + 1) + 2,
                CELL_PX * (dc + 2) - 3,
                CROP_STRIP_PX + CELL_PX * (dr + 2) - 3,
            )
        )
        theirs = full.crop((CELL_PX * c + 2, CELL_PX * r + 2, CELL_PX * (c + 1) - 3, CELL_PX * (r + 1) - 3))
        assert ours.tobytes() == theirs.tobytes()
    # the outline straddles the centre's border on all four sides
    x0, y0 = CELL_PX, CROP_STRIP_PX + CELL_PX
    for x, y in ((x0, y0 + 20), (x0 + CELL_PX - 1, y0 + 20), (x0 + 20, y0), (x0 + 20, y0 + CELL_PX - 1)):
        assert crop.getpixel((x, y)) == OUTLINE_COLOUR


def test_the_corner_is_padded_beyond_the_edge() -> None:
    instance = make_instance(SEED, "L2")
    image = _png(entry_crop(instance, "mem_000"))
    pads = [probe_pixel((0, 0)), probe_pixel((0, 2)), probe_pixel((2, 0))]
    assert all(image.getpixel((x, y + CROP_STRIP_PX)) == PAD_COLOUR for x, y in pads)
    assert PAD_COLOUR not in (*COLOURS.values(), FOG_COLOUR, OUTLINE_COLOUR)


def test_the_strip_names_the_entry() -> None:
    instance = make_instance(SEED, "L2")
    strips = {e.id: _png(entry_crop(instance, e)).crop((0, 0, 3 * CELL_PX, CROP_STRIP_PX)) for e in instance.memory}
    # the strip holds ink, and only the id tells two strips apart
    assert len({s.tobytes() for s in strips.values()}) == len(strips)
    assert strips["mem_044"].getcolors() is not None and (0, 0, 0) in {c for _, c in strips["mem_044"].getcolors()}
    g0 = instance.g0
    same_cell = [crop_image(g0, (5, 4), "H", label) for label in ("mem_044", "mem_099")]
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
