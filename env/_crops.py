"""Memory as pictures (``-T memory=crops``): the crop of a memory entry, drawn as the
grid's image draws its cells (``_render``), from its instance."""

from __future__ import annotations

import io
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ._instance import Instance
from ._render import CELL_PX, COLOURS, LABEL_ON_DARK, LABEL_ON_LIGHT, LINE_COLOUR, _colour, _font
from ._types import Grid, MemoryEntry, Pos

CROP_CELLS = 3
"""A memory crop shows the 3x3 neighbourhood centred on the entry's cell."""
CROP_STRIP_PX = 16
"""The strip above a crop that names the entry (its id), in pixels."""
PAD_COLOUR = (0xF0, 0xF0, 0xF0)
"""A neighbour beyond the grid's edge: near-white, unlabelled, far from every cell
colour, the fog's grey and the outline, so it reads as no cell at all."""
OUTLINE_COLOUR = (0xFF, 0x00, 0xFF)
"""The outline of a crop's centre cell (the entry's cell): magenta, a colour no cell,
label or agent marker is drawn in."""
OUTLINE_PX = 2


def crop_image(g0: Grid, pos: Pos, cell: str, label: str, cell_px: int = CELL_PX) -> Image.Image:
    """A memory entry as a picture: the 3x3 neighbourhood of ``pos`` on the grid the
    memory was written from (``g0``), the centre drawn as the remembered ``cell`` and
    outlined, under a strip that names the entry (``label``, its id).

    Each cell is drawn as :func:`render_image` draws it (colour, ``(r,c)`` label, white
    grid lines), so a crop matches the current image cell for cell where nothing
    changed; a neighbour beyond the grid's edge is :data:`PAD_COLOUR`, unlabelled. No
    agent is drawn. The image is ``3 * cell_px`` wide and ``CROP_STRIP_PX`` taller
    (144 x 160 at 48 px a cell). Pillow's built-in bitmap font draws every label, so
    the same arguments give the same pixels on every machine.
    """
    size = len(g0)
    side = CROP_CELLS * cell_px
    image = Image.new("RGB", (side, CROP_STRIP_PX + side), LINE_COLOUR)
    draw = ImageDraw.Draw(image)
    font = _font()
    draw.text((3, (CROP_STRIP_PX - 11) // 2), label, fill=LABEL_ON_LIGHT, font=font)
    for dr in range(CROP_CELLS):
        for dc in range(CROP_CELLS):
            r, c = pos[0] + dr - 1, pos[1] + dc - 1
            x0, y0 = dc * cell_px, CROP_STRIP_PX + dr * cell_px
            box = (x0, y0, x0 + cell_px - 1, y0 + cell_px - 1)
            if not (0 <= r < size and 0 <= c < size):
                draw.rectangle(box, fill=PAD_COLOUR)
                continue
            shown = cell if (r, c) == pos else g0[r][c]
            draw.rectangle(box, fill=_colour(shown))
            text = LABEL_ON_DARK if shown == "H" else LABEL_ON_LIGHT
            draw.text((x0 + 3, y0 + 2), f"({r},{c})", fill=text, font=font)
    for k in range(CROP_CELLS + 1):
        at = min(k * cell_px, side - 1)
        draw.line((at, CROP_STRIP_PX, at, CROP_STRIP_PX + side - 1), fill=LINE_COLOUR)
        draw.line((0, CROP_STRIP_PX + at, side - 1, CROP_STRIP_PX + at), fill=LINE_COLOUR)
    # the outline straddles the centre's border, clear of every label and probe pixel
    x0, y0, w = cell_px, CROP_STRIP_PX + cell_px, OUTLINE_PX
    draw.rectangle((x0 - w, y0 - w, x0 + cell_px - 1 + w, y0 + cell_px - 1 + w), outline=OUTLINE_COLOUR, width=2 * w)
    return image


def crop_png(g0: Grid, pos: Pos, cell: str, label: str, cell_px: int = CELL_PX) -> bytes:
    """:func:`crop_image` as PNG bytes, encoded as :func:`render_png` encodes."""
    buffer = io.BytesIO()
    crop_image(g0, pos, cell, label, cell_px).save(buffer, format="PNG", optimize=False, compress_level=6)
    return buffer.getvalue()


def crop_centre(cell_px: int = CELL_PX) -> tuple[int, int]:
    """The pixel (x, y) of a crop's centre cell :func:`probe_pixel` reads: its type's colour."""
    return (cell_px + cell_px - 6, CROP_STRIP_PX + cell_px + cell_px - 6)


def crop_label_box(cell_px: int = CELL_PX) -> tuple[int, int]:
    """The top-left pixel (x, y) of the ``(r,c)`` label of a crop's centre cell."""
    return (cell_px + 3, CROP_STRIP_PX + cell_px + 2)


_LABEL_HEIGHT = 11
"""Rows of a ``(r,c)`` label in Pillow's built-in bitmap font."""


@lru_cache(maxsize=8)
def _label_cells(size: int) -> tuple[int, dict[bytes, Pos]]:
    """The width of the widest ``(r,c)`` label of a grid of ``size``, and each label's
    glyph mask (as bytes) at that width, to the cell it names."""
    font = ImageFont.load_default_imagefont()
    width = 6 * len(f"({size - 1},{size - 1})")
    out: dict[bytes, Pos] = {}
    for r in range(size):
        for c in range(size):
            mask = Image.new("L", (width, _LABEL_HEIGHT), 0)
            ImageDraw.Draw(mask).text((0, 0), f"({r},{c})", fill=255, font=font)
            out[(np.asarray(mask) > 0).tobytes()] = (r, c)
    return width, out


_LABEL_COLOURS = np.array([LABEL_ON_LIGHT, LABEL_ON_DARK], dtype=np.int16)


def read_crop(image: Image.Image, size: int) -> tuple[str, Pos] | None:
    """A crop read back from its pixels alone, as a model must read it: its centre
    cell's remembered type (the cell colour nearest the pixel at :func:`crop_centre`)
    and its cell (the ``(r,c)`` label drawn in it, matched against the labels Pillow's
    built-in bitmap font draws for a grid of ``size``); None when either cannot be read."""
    x, y = crop_centre()
    lx, ly = crop_label_box()
    width, labels = _label_cells(size)
    if image.width < lx + width or image.height < max(y, ly + _LABEL_HEIGHT) + 1:
        return None
    pixel = image.getpixel((x, y))
    if not isinstance(pixel, tuple):
        return None
    cell = min(COLOURS, key=lambda name: sum((a - int(b)) ** 2 for a, b in zip(COLOURS[name], pixel, strict=True)))
    region = np.asarray(image, dtype=np.int16)[ly : ly + _LABEL_HEIGHT, lx : lx + width, :3]
    ink = (region[:, :, None, :] == _LABEL_COLOURS[None, None, :, :]).all(axis=3).any(axis=2)
    pos = labels.get(ink.tobytes())
    return None if pos is None else (cell, pos)


def entry_crop(instance: Instance, entry: MemoryEntry | str, cell_px: int = CELL_PX) -> bytes:
    """The PNG of a memory entry as the agent saw its cell when the memory was written.

    The memory is written on ``g0`` (the snapshot), so the crop is the 3x3
    neighbourhood of the entry's cell on ``g0``, the centre drawn as the entry's
    remembered type and outlined, labelled with the entry's id (:func:`crop_png`).
    A pure function of the instance (so of its seed, size and the entries of its store): a
    log's crops are recomputed from its metadata.

    Raises:
        ValueError: for an entry about no cell (it has no picture) or an id
            the store does not hold.
    """
    if isinstance(entry, str):
        found = next((e for e in instance.memory if e.id == entry), None)
        if found is None:
            raise ValueError(f"the memory holds no entry {entry!r}")
        entry = found
    if not entry.is_cell:
        raise ValueError(f"{entry.id} is about no cell, so it has no crop")
    return crop_png(instance.g0, entry.pos, entry.cell.value, entry.id, cell_px)
