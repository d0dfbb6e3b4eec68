"""Observations of the live grid: the coordinate-labelled text listing and the PNG."""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ._fog import FOG_CELL, fog_note, is_fogged
from ._tracks import OTHER_AGENT_CELL, TRACK_CELLS, TRACKS_NOTE, has_tracks, is_track, listed
from ._types import Action, Grid, Pos

CELL_PX = 48
"""Pixels per cell: 384 x 384 at n=8; other sizes keep the cell and grow the image."""

COLOURS = {
    "F": (0xA8, 0xC8, 0xE8),
    "H": (0x20, 0x20, 0x20),
    "S": (0x2E, 0x8B, 0x57),
    "G": (0xDA, 0xA5, 0x20),
}
AGENT_COLOUR = (0xFF, 0x00, 0x00)
FOG_COLOUR = (0x80, 0x80, 0x80)
"""A cell beyond the view (fog): mid grey, far from every cell colour
and from the agent's red, so a reader of the pixels cannot mistake it for a cell type."""
TRACK_COLOUR = (0x8B, 0x5A, 0x2B)
"""A cell covered by the other agent's tracks (regime MA): brown, far from every cell
colour and from the fog's grey; a white arrow on it points the way the agent moved."""
TRACK_ARROW_COLOUR = (0xFF, 0xFF, 0xFF)
OTHER_AGENT_COLOUR = (0x1E, 0x50, 0xFF)
"""The other agent (regime MA): a blue circle on its cell's ice."""
LINE_COLOUR = (0xFF, 0xFF, 0xFF)
LABEL_ON_DARK = (0xFF, 0xFF, 0xFF)
LABEL_ON_LIGHT = (0x00, 0x00, 0x00)


def text_observation(grid: Grid, agent: Pos) -> str:
    """The full grid, one ``Row r:`` line per row, then the agent and the goal.

    The listing gives each cell's true type; the agent's position is stated on the
    last line rather than drawn over its cell. A fogged grid (see ``fog``) lists each
    cell beyond the view as ``(r,c)=?`` and adds a line stating the rule. A grid with
    the other agent's route covered (regime MA, ``cover_tracks``) lists each track as
    ``?`` and the other agent as ``A``, and adds :data:`TRACKS_NOTE`.
    """
    size = len(grid)
    lines = [f"Row {r}: " + " ".join(f"({r},{c})={listed(grid[r][c])}" for c in range(size)) for r in range(size)]
    note = fog_note(grid, agent)
    if note is not None:
        lines.append(note)
    if has_tracks(grid):
        lines.append(TRACKS_NOTE)
    lines.append(f"Agent at ({agent[0]},{agent[1]}). Goal at ({size - 1},{size - 1}).")
    return "\n".join(lines)


HOLES_NOTE = "Every cell not listed is F (frozen ice)."
"""The line that tells a reader of :func:`holes_observation` what the unlisted cells are."""

FOG_HOLES_NOTE = "Every visible cell not listed is F (frozen ice)."
""":data:`HOLES_NOTE` of a fogged grid: only the visible cells are listed or implied."""


def holes_observation(grid: Grid, agent: Pos) -> str:
    """The same grid listing only S, G and the holes, then the agent and the goal.

    Every other cell is F, so the listing carries the same information as
    :func:`text_observation` in O(holes) rather than O(n²) text; the cheaper
    observation for large grids. On a fogged grid it lists the visible cells other
    than F, says every other visible cell is F and states which rows and columns are
    visible (the rest is unknown).
    """
    size = len(grid)
    fogged = is_fogged(grid)
    cells = [
        f"({r},{c})={listed(grid[r][c])}" for r in range(size) for c in range(size) if grid[r][c] not in ("F", FOG_CELL)
    ]
    notes = [HOLES_NOTE] if not fogged else [FOG_HOLES_NOTE, str(fog_note(grid, agent))]
    if has_tracks(grid):
        notes.append(TRACKS_NOTE)
    return "\n".join(
        [
            f"Cells other than F: {' '.join(cells) or '(none)'}",
            *notes,
            f"Agent at ({agent[0]},{agent[1]}). Goal at ({size - 1},{size - 1}).",
        ]
    )


def _colour(cell: str) -> tuple[int, int, int]:
    if cell == FOG_CELL:
        return FOG_COLOUR
    if is_track(cell):
        return TRACK_COLOUR
    return COLOURS["F" if cell == OTHER_AGENT_CELL else cell]


_ARROW_RIGHT = ((12, 26), (27, 26), (27, 19), (37, 28), (27, 37), (27, 30), (12, 30))
"""The track arrow pointing right, in the 48-px cell's coordinates; it stays clear of the
label (top left) and of :func:`probe_pixel` (bottom right)."""
_ARROW_CENTRE = (24, 28)


def _arrow(action: Action, x0: int, y0: int, cell_px: int) -> list[tuple[int, int]]:
    """The arrow of a track, turned the way the other agent moved, placed in its cell."""
    u = cell_px / 48
    cx, cy = _ARROW_CENTRE
    points = []
    for x, y in _ARROW_RIGHT:
        dx, dy = x - cx, y - cy
        if action is Action.LEFT:
            dx, dy = -dx, dy
        elif action is Action.DOWN:
            dx, dy = -dy, dx
        elif action is Action.UP:
            dx, dy = dy, -dx
        points.append((round(x0 + (cx + dx) * u), round(y0 + (cy + dy) * u)))
    return points


_TRACK_ACTIONS = {letter: action for action, letter in TRACK_CELLS.items()}


@lru_cache(maxsize=1)
def _font() -> ImageFont.ImageFont:
    # Pillow's built-in bitmap font: no antialiasing and no FreeType, so the same
    # pixels on every machine.
    return ImageFont.load_default_imagefont()


BASE_CACHE_BYTES = 16 * 1024 * 1024
"""Bytes of agent-free renderings kept for reuse, at a byte a pixel (palette images):
113 grids at n=8, 7 at n=32."""
SEEN_KEYS = 4096
"""Grids remembered as drawn once: a grid is kept only when it is drawn again."""


class _BaseCache:
    """Agent-free renderings by (grid, cell size), least recently used first out.

    A grid drawn for the first time is not kept, only remembered: a detection window's
    grid is drawn once (its PNG is then reused, ``png_data_uri``), while a navigation
    episode draws its grid at every step until it changes. So only grids drawn twice
    take room, and a run without them leaves the cache empty.
    """

    def __init__(self, budget: int, seen: int = SEEN_KEYS) -> None:
        self.budget = budget
        self.images: OrderedDict[tuple[Grid, int], Image.Image] = OrderedDict()
        self.seen: OrderedDict[tuple[Grid, int], None] = OrderedDict()
        self.seen_limit = seen
        self.used = 0
        self.lock = threading.Lock()

    def copy_of(self, grid: Grid, cell_px: int) -> Image.Image:
        """An RGB copy of the grid's agent-free rendering, drawn on a miss."""
        key = (grid, cell_px)
        with self.lock:
            base = self.images.get(key)
            if base is not None:
                self.images.move_to_end(key)
                return base.convert("RGB")
            again = key in self.seen
            if not again:
                self.seen[key] = None
                if len(self.seen) > self.seen_limit:
                    self.seen.popitem(last=False)
        base = _draw_base(grid, cell_px)
        if again:
            with self.lock:
                if key not in self.images:
                    self.images[key] = base
                    self.used += _pixel_bytes(base)
                    self.seen.pop(key, None)
                while self.used > self.budget and len(self.images) > 1:
                    _, evicted = self.images.popitem(last=False)
                    self.used -= _pixel_bytes(evicted)
        return base.convert("RGB")


def _pixel_bytes(image: Image.Image) -> int:
    return len(image.getbands()) * image.width * image.height  # a palette image: one band


def _draw_base(grid: Grid, cell_px: int) -> Image.Image:
    """Cells, coordinate labels and grid lines: everything but the agent."""
    size = len(grid)
    side = size * cell_px
    # a palette image (a byte a pixel; a dozen colours, no antialiasing): a third of RGB
    image = Image.new("P", (side, side), LINE_COLOUR)
    draw = ImageDraw.Draw(image)
    font = _font()
    for r in range(size):
        for c in range(size):
            x0, y0 = c * cell_px, r * cell_px
            draw.rectangle((x0, y0, x0 + cell_px - 1, y0 + cell_px - 1), fill=_colour(grid[r][c]))
            if grid[r][c] in _TRACK_ACTIONS:
                draw.polygon(_arrow(_TRACK_ACTIONS[grid[r][c]], x0, y0, cell_px), fill=TRACK_ARROW_COLOUR)
            elif grid[r][c] == OTHER_AGENT_CELL:
                u = cell_px / 48
                box = (x0 + 14 * u, y0 + 16 * u, x0 + 34 * u, y0 + 36 * u)
                draw.ellipse(tuple(round(v) for v in box), fill=OTHER_AGENT_COLOUR)
            label = LABEL_ON_DARK if grid[r][c] == "H" or is_track(grid[r][c]) else LABEL_ON_LIGHT
            draw.text((x0 + 3, y0 + 2), f"({r},{c})", fill=label, font=font)
    for k in range(size + 1):
        at = min(k * cell_px, side - 1)
        draw.line((at, 0, at, side - 1), fill=LINE_COLOUR)
        draw.line((0, at, side - 1, at), fill=LINE_COLOUR)
    return image


_bases = _BaseCache(BASE_CACHE_BYTES)


def render_image(grid: Grid, agent: Pos | None, cell_px: int = CELL_PX) -> Image.Image:
    """The grid as an RGB image: coloured cells, coordinate labels, the agent triangle.

    A cell beyond the view (``?`` in a fogged grid) is drawn in :data:`FOG_COLOUR`,
    still labelled with its coordinates. In a grid with the other agent's route
    covered (regime MA) a track is a :data:`TRACK_COLOUR` tile with a white arrow the
    way the agent moved, and the other agent a :data:`OTHER_AGENT_COLOUR` circle on ice.
    The agent is drawn last, over a copy of the grid's cached agent-free rendering, so
    the pixels are those of drawing it all anew.
    """
    image = _bases.copy_of(grid, cell_px)
    if agent is not None:
        draw = ImageDraw.Draw(image)
        x0, y0 = agent[1] * cell_px, agent[0] * cell_px
        u = cell_px / 48
        triangle = [(x0 + 24 * u, y0 + 14 * u), (x0 + 11 * u, y0 + 38 * u), (x0 + 37 * u, y0 + 38 * u)]
        draw.polygon([(round(x), round(y)) for x, y in triangle], fill=AGENT_COLOUR)
    return image


def render_rgb(grid: Grid, agent: Pos | None, cell_px: int = CELL_PX) -> np.ndarray:
    """The rendering as a ``(side, side, 3)`` uint8 array (Gymnasium ``rgb_array``)."""
    return np.asarray(render_image(grid, agent, cell_px), dtype=np.uint8)


def render_png(grid: Grid, agent: Pos | None, cell_px: int = CELL_PX) -> bytes:
    """The rendering as PNG bytes."""
    buffer = io.BytesIO()
    render_image(grid, agent, cell_px).save(buffer, format="PNG", optimize=False, compress_level=6)
    return buffer.getvalue()


def probe_pixel(pos: Pos, cell_px: int = CELL_PX) -> tuple[int, int]:
    """A pixel (x, y) of a cell that no label, grid line or agent marker covers."""
    return (pos[1] * cell_px + cell_px - 6, pos[0] * cell_px + cell_px - 6)
