"""Reading a SpatialSTALE prompt the way a model must: from its text and its pixels.

Everything an agent knows comes from here: the call kind (the tag on the system
message's metadata, a channel Inspect keeps beside the messages and no provider sends,
``spatialstale.protocol.call_kind``; without it, as a model would, from the wording of a
shipped prompt), the memory entries listed in the prompt, the observed grid (the
``(r,c)=X`` listing, or the PNG when only an image is given), the agent's position and
the goal. Nothing reads the instance behind the prompt.

Under an extension that shows the memory as pictures, the audit's memory entries are
each an id line (``[mem_044]``) and then its picture; the extension that drew it reads
its claim back from its pixels alone (``spatialstale.protocol.read_memory_picture``).
Under regime MA the prompt tells another agent's route and habit ("it breaks the ice
of every cell it leaves") while its tracks cover those cells in the listing (``?``)
and the image (brown tiles): the cells it left are read as holes, since the prompt
says so, and the cell where it stands (``A``, a blue circle) as ice.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from pathlib import Path

import numpy as np
from inspect_ai.model import ChatMessage, ChatMessageSystem, ContentImage, ContentText
from PIL import Image, UnidentifiedImageError

from spatialstale.env import (
    CELL_PX,
    COLOURS,
    FOG_CELL,
    FOG_COLOUR,
    FOG_HOLES_NOTE,
    HOLES_NOTE,
    OTHER_AGENT_CELL,
    TRACK_COLOUR,
    Action,
    Grid,
    Pos,
    probe_pixel,
)
from spatialstale.protocol import PROMPT_KINDS, PROMPT_SETS, SIZE_PLACEHOLDER, every_verdict_field, read_memory_picture
from spatialstale.protocol import call_kind as tagged_kind

MAX_SIZE = 256
"""Largest grid side a prompt is read as; bigger coordinates are ignored."""

UNKNOWN_CELL = FOG_CELL
"""A cell the prompt gives no reading of (left out, or beyond the view under fog:
``(r,c)=?`` or grey in the image); planners treat it as walkable unless memory speaks."""

AGENT_RED = (0xFF, 0x00, 0x00)
_RED_TOLERANCE = 60

_MEMORY_LINE = re.compile(r"\[(mem_\d+)\]\s*(SAFE|DANGER)\s+at\s+\((\d+)\s*,\s*(\d+)\)", re.IGNORECASE)
_UNKNOWN_LINE = re.compile(r"\[(mem_\d+)\]\s*UNKNOWN\b[^\n]*?\bat\s+\((\d+)\s*,\s*(\d+)\)", re.IGNORECASE)
"""An entry a filter kept but marked unknown: ``[mem_xxx] UNKNOWN (flagged stale at step t) at (r,c)``."""
_ANY_ENTRY = re.compile(r"\[(mem_\d+)\]", re.IGNORECASE)
"""Any listed memory entry; one that is neither a claim about a cell nor UNKNOWN is a
note about no cell (``[mem_xxx] RULE: ...``, an extension's entry)."""
_CELL_TOKEN = re.compile(r"\((\d+)\s*,\s*(\d+)\)\s*=\s*([SFHGA]\b|\?)")
"""A listed cell; ``?`` is a cell beyond the view (fog) or under tracks (MA), ``A`` the
other agent standing on ice (MA)."""
_MOVE = r"(?:UP|DOWN|LEFT|RIGHT)"
_OTHER_AGENT = re.compile(
    rf"Another agent crossed the lake before you: it started at \((\d+),(\d+)\) and moved ({_MOVE}(?:, {_MOVE})*), "
    r"and now stands at \((\d+),(\d+)\)\."
)
"""Regime MA: the other agent's start, moves and end, as the prompt tells them."""
_BREAKS_ICE = "it breaks the ice of every cell it leaves"
_VISIBLE = re.compile(r"\byou see rows (\d+)-(\d+) and columns (\d+)-(\d+)")
"""The fog rule's statement of the visible rows and columns."""
_POSITION = re.compile(r"\bPosition:\s*\((\d+)\s*,\s*(\d+)\)")
_AGENT_AT = re.compile(r"\bAgent at\s*\((\d+)\s*,\s*(\d+)\)")
_GOAL = re.compile(r"\bGoal(?: at|:)\s*\((\d+)\s*,\s*(\d+)\)")
_SIZE = re.compile(r"\bgrid of (\d+)\s*x\s*(\d+) cells")
_ASKED_CELL = re.compile(r"^\s*\((\d+)\s*,\s*(\d+)\)\s*$", re.MULTILINE)
"""A perception prompt's question: a line holding only ``(r,c)``."""


class CallKind(StrEnum):
    """The kinds of call the reference agents answer from one prompt, as the system
    message's tag names them (a turn of the tool navigator is told by its tools): the
    kinds a prompt set holds a prompt for."""

    AUDIT = "audit"
    SELFVERIFY = "selfverify"
    NAVIGATE = "navigate"
    PERCEPTION = "perception"


# by the protocol's names: a kind added there and not here fails at import
_KINDS = {kind: CallKind(kind) for kind in PROMPT_KINDS}


@dataclass(frozen=True)
class MemoryClaim:
    """One ``[mem_xxx] SAFE|DANGER at (r,c): ...`` line as read from a prompt."""

    id: str
    claim: str
    """``"SAFE"`` or ``"DANGER"``."""
    pos: Pos
    pictured: bool = False
    """True when the claim was read from a picture's pixels (memory shown as pictures)."""

    @property
    def hazard(self) -> int:
        return 1 if self.claim == "DANGER" else 0


@dataclass(frozen=True)
class Perception:
    """What a prompt shows. ``grid`` holds ``?`` for cells it does not show, and ``H``
    for the cells it says another agent broke (regime MA, ``broken``)."""

    kind: CallKind | None
    memory: tuple[MemoryClaim, ...]
    grid: Grid | None
    agent: Pos | None
    goal: Pos | None
    source: str
    """Where the grid was read from: ``text``, ``image`` or ``none``."""
    problem: str | None = None
    """Why the observation could not be read, when it could not."""
    cells: tuple[Pos, ...] = ()
    """The cells a perception prompt asks about, in order."""
    unknown: tuple[Pos, ...] = ()
    """The cells of memory entries listed as UNKNOWN (``filter=unknown``): memory
    there holds no claim, only the news that the old one was flagged stale."""
    notes: tuple[str, ...] = ()
    """The ids of memory entries about no cell (rules, past episodes, the agent
    itself: an extension's entries), in order; nothing in the grid can contradict them."""
    asked: tuple[str, ...] = ()
    """The extensions' verdict fields the prompt asks for, by name
    (``VerdictField.asked``; none in the paper's protocol)."""
    broken: tuple[Pos, ...] = ()
    """Regime MA: the cells the prompt says another agent broke (every cell of its
    told route but the last, with its habit stated); ``grid`` holds them as holes."""

    @property
    def size(self) -> int:
        return len(self.grid) if self.grid else 0

    def cell(self, pos: Pos) -> str:
        if self.grid is None or not (0 <= pos[0] < self.size and 0 <= pos[1] < self.size):
            return UNKNOWN_CELL
        return self.grid[pos[0]][pos[1]]


_PICTURE_ID = re.compile(r"^\s*\[(mem_\d+)\]\s*$", re.IGNORECASE)
"""The text part before a memory entry's picture: its id alone."""


def _texts_and_images(messages: Sequence[ChatMessage]) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """The text parts, the images of the grid and the memory entries' pictures (id,
    image): an image right after a text part holding only an id is that entry's picture."""
    texts: list[str] = []
    images: list[str] = []
    pictures: list[tuple[str, str]] = []
    for message in messages:
        if isinstance(message.content, str):
            texts.append(message.content)
            continue
        before: str | None = None
        for part in message.content:
            if isinstance(part, ContentText):
                texts.append(part.text)
                before = part.text
                continue
            if isinstance(part, ContentImage):
                named = _PICTURE_ID.match(before or "")
                if named is not None:
                    pictures.append((named.group(1).lower(), part.image))
                else:
                    images.append(part.image)
            before = None
    return texts, images, pictures


def read_picture(memory_id: str, image: Image.Image, size: int) -> MemoryClaim | None:
    """The claim of a memory entry's picture (``spatialstale.protocol.read_memory_picture``:
    the remembered type of its cell, and the cell); None when it cannot be read."""
    read = read_memory_picture(image, size)
    if read is None:
        return None
    cell, pos = read
    return MemoryClaim(memory_id, "DANGER" if cell == "H" else "SAFE", pos, pictured=True)


@lru_cache(maxsize=1)
def _wordings() -> tuple[tuple[re.Pattern[str], CallKind], ...]:
    """Every shipped prompt as a pattern (``{size}`` any number), longest first, with its kind."""
    prompts = {(s.prompt(kind), kind) for s in PROMPT_SETS.values() for kind in PROMPT_KINDS}
    return tuple(
        (re.compile(re.escape(text).replace(re.escape(SIZE_PLACEHOLDER), r"\d+")), _KINDS[kind])
        for text, kind in sorted(prompts, key=lambda p: -len(p[0]))
    )


def worded_kind(messages: Sequence[ChatMessage]) -> CallKind | None:
    """The kind of the shipped prompt (of any prompt set) a system message starts with:
    how a model tells the calls apart, from their instructions. A custom prompt has none."""
    for message in messages:
        if isinstance(message, ChatMessageSystem):
            for pattern, kind in _wordings():
                if pattern.match(message.text):
                    return kind
    return None


def call_kind(messages: Sequence[ChatMessage]) -> CallKind | None:
    """The kind the system message's tag names (``spatialstale.protocol.call_kind``), if it
    is one answered from a single prompt; without a tag (a request read off the wire, where
    the tag does not travel), the kind its shipped wording names (:func:`worded_kind`)."""
    kind = tagged_kind(messages)
    if kind is not None:
        return _KINDS.get(kind)
    return worded_kind(messages)


def read_memory(text: str) -> tuple[MemoryClaim, ...]:
    """The memory entries listed in ``text``, in order, each id once."""
    seen: dict[str, MemoryClaim] = {}
    for match in _MEMORY_LINE.finditer(text):
        mid = match.group(1).lower()
        if mid not in seen:
            pos = (int(match.group(3)), int(match.group(4)))
            seen[mid] = MemoryClaim(mid, match.group(2).upper(), pos)
    return tuple(seen.values())


def read_notes(text: str) -> tuple[str, ...]:
    """The ids of the memory entries in ``text`` that claim nothing about a cell, in order."""
    cells = {m.group(1).lower() for pattern in (_MEMORY_LINE, _UNKNOWN_LINE) for m in pattern.finditer(text)}
    ids = (m.group(1).lower() for m in _ANY_ENTRY.finditer(text))
    return tuple(dict.fromkeys(mid for mid in ids if mid not in cells))


def read_unknown(text: str) -> tuple[Pos, ...]:
    """The cells of the memory entries listed as UNKNOWN in ``text``, in order, each once."""
    return tuple(dict.fromkeys((int(m.group(2)), int(m.group(3))) for m in _UNKNOWN_LINE.finditer(text)))


def read_text_grid(text: str) -> Grid | None:
    """The grid of a ``(r,c)=X`` listing; the last reading of a cell wins.

    The size is the largest coordinate seen plus one; cells the listing leaves out
    are ``?``. None when the text holds no cell token.
    """
    cells = {
        (r, c): m.group(3)
        for m in _CELL_TOKEN.finditer(text)
        if (r := int(m.group(1))) < MAX_SIZE and (c := int(m.group(2))) < MAX_SIZE
    }
    if not cells:
        return None
    cells = {pos: "F" if letter == OTHER_AGENT_CELL else letter for pos, letter in cells.items()}
    size = 1 + max(max(r, c) for r, c in cells)
    return tuple("".join(cells.get((r, c), UNKNOWN_CELL) for c in range(size)) for r in range(size))


def decode_image(image: str) -> Image.Image | None:
    """The RGB image of a base64 data URI (or of a local file path), or None."""
    try:
        if image.startswith("data:"):
            _, _, payload = image.partition(",")
            raw = base64.b64decode(payload, validate=False)
            return Image.open(io.BytesIO(raw)).convert("RGB")
        path = Path(image)
        if path.is_file():
            return Image.open(path).convert("RGB")
    except (binascii.Error, UnidentifiedImageError, OSError, ValueError):
        return None
    return None


_PALETTE = {**COLOURS, UNKNOWN_CELL: FOG_COLOUR, "T": TRACK_COLOUR}
"""Every colour a cell is drawn in: the four cell types, the fog of an unseen cell and
the tracks of regime MA's other agent (read as unseen: the tracks hide the ice)."""


def _nearest_cell(pixel: tuple[int, int, int]) -> str:
    name = min(_PALETTE, key=lambda name: sum((a - b) ** 2 for a, b in zip(_PALETTE[name], pixel, strict=True)))
    return UNKNOWN_CELL if name == "T" else name


def read_broken(text: str) -> tuple[Pos, ...]:
    """Regime MA: the cells another agent broke, by the route and habit ``text`` tells:
    every cell of the route but the one it stands on. Nothing when no habit is stated
    or the told moves do not lead to where it is said to stand."""
    match = _OTHER_AGENT.search(text)
    if match is None or _BREAKS_ICE not in text:
        return ()
    route = [(int(match.group(1)), int(match.group(2)))]
    for name in match.group(3).split(", "):
        delta = Action[name].delta
        route.append((route[-1][0] + delta[0], route[-1][1] + delta[1]))
    if route[-1] != (int(match.group(4)), int(match.group(5))):
        return ()
    return tuple(dict.fromkeys(route[:-1]))


def with_holes(grid: Grid, holes: Sequence[Pos]) -> Grid:
    """``grid`` with each of ``holes`` (on the grid) read as a hole."""
    rows = [list(row) for row in grid]
    for r, c in holes:
        if 0 <= r < len(rows) and 0 <= c < len(rows):
            rows[r][c] = "H"
    return tuple("".join(row) for row in rows)


@lru_cache(maxsize=16)
def read_image(image: str, size_hint: int | None = None) -> tuple[Grid, Pos | None] | None:
    """:func:`read_image_grid` of a data URI or path, kept for the calls that share it
    (the batches of an audit send one image)."""
    decoded = decode_image(image)
    return read_image_grid(decoded, size_hint) if decoded is not None else None


def read_image_grid(image: Image.Image, size_hint: int | None = None) -> tuple[Grid, Pos | None] | None:
    """The grid and the agent's cell read from a rendering's pixels, or None.

    The grid size is the image width over ``CELL_PX`` (the renderer keeps the cell
    size and grows the image); an image whose width is not a multiple of it is read
    with ``size_hint`` cells per side when that divides the width. Each cell's type
    is the colour nearest its probe pixel (the fog's grey reads as ``?``); the agent
    is the cell holding most of the red triangle.
    """
    width, height = image.size
    if width != height or width == 0 or width > MAX_SIZE * CELL_PX:
        return None
    if width % CELL_PX == 0:
        size, cell_px = width // CELL_PX, CELL_PX
    elif size_hint and width % size_hint == 0:
        size, cell_px = size_hint, width // size_hint
    else:
        return None
    rgb = image.load()
    if rgb is None:
        return None
    rows = []
    for r in range(size):
        row = []
        for c in range(size):
            value = rgb[probe_pixel((r, c), cell_px)]
            if not isinstance(value, tuple):
                return None
            row.append(_nearest_cell((int(value[0]), int(value[1]), int(value[2]))))
        rows.append("".join(row))
    return tuple(rows), _find_agent(image, size, cell_px)


def _find_agent(image: Image.Image, size: int, cell_px: int) -> Pos | None:
    pixels = np.asarray(image, dtype=np.int16)[: size * cell_px, : size * cell_px, :3]
    red = np.all(np.abs(pixels - np.array(AGENT_RED, dtype=np.int16)) <= _RED_TOLERANCE, axis=2)
    if not red.any():
        return None
    votes = red.reshape(size, cell_px, size, cell_px).sum(axis=(1, 3))
    r, c = np.unravel_index(int(np.argmax(votes)), votes.shape)
    return (int(r), int(c))


def _visible_ice(grid: Grid | None, text: str, size_hint: int | None) -> Grid | None:
    """The fogged holes-only listing: every unlisted cell inside the visible rows and
    columns the rule states is F; the rest stays unknown."""
    window = _VISIBLE.search(text)
    if window is None:
        return grid
    r0, r1, c0, c1 = (int(g) for g in window.groups())
    listed = grid or ()
    size = max(len(listed), size_hint or 0, r1 + 1, c1 + 1)
    if size > MAX_SIZE:
        return grid
    rows = [
        [listed[r][c] if r < len(listed) and c < len(listed) else UNKNOWN_CELL for c in range(size)]
        for r in range(size)
    ]
    for r in range(r0, r1 + 1):
        for c in range(c0, c1 + 1):
            if rows[r][c] == UNKNOWN_CELL:
                rows[r][c] = "F"
    return tuple("".join(row) for row in rows)


def _last_pos(pattern: re.Pattern[str], text: str) -> Pos | None:
    matches = list(pattern.finditer(text))
    if not matches:
        return None
    return (int(matches[-1].group(1)), int(matches[-1].group(2)))


def _read_pictures(pictures: Sequence[tuple[str, str]], size: int) -> tuple[tuple[MemoryClaim, ...], str | None]:
    """The claims of the memory entries' pictures, and the id of the first that could not be read."""
    claims: list[MemoryClaim] = []
    for memory_id, image in pictures:
        decoded = decode_image(image)
        claim = read_picture(memory_id, decoded, size) if decoded is not None and 0 < size <= MAX_SIZE else None
        if claim is None:
            return tuple(claims), memory_id
        claims.append(claim)
    return tuple(claims), None


def perceive(messages: Sequence[ChatMessage]) -> Perception:
    """Everything the prompt shows: call kind, memory (and the cells it marks
    UNKNOWN), grid, agent position, goal.

    The text listing is exact, so it wins over the image when both are given. The
    agent's position comes from the navigation prompt's ``Position:`` line, else the
    listing's ``Agent at`` line, else the red triangle.
    """
    texts, images, pictures = _texts_and_images(messages)
    text = "\n".join(texts)
    kind = call_kind(messages)
    memory = read_memory(text)
    size_match = _SIZE.search(text)
    size_hint = int(size_match.group(1)) if size_match else None

    grid = read_text_grid(text)
    if grid is not None and HOLES_NOTE in text:
        # the holes-only listing (-T observation=holes) names every cell it leaves out as F
        grid = tuple(row.replace(UNKNOWN_CELL, "F") for row in grid)
    elif FOG_HOLES_NOTE in text:
        # a fogged holes-only listing may list no cell at all (only ice in view)
        goal_seen = _last_pos(_GOAL, text)
        grid = _visible_ice(grid, text, max(size_hint or 0, 1 + max(goal_seen)) if goal_seen else size_hint)
    source = "text" if grid is not None else "none"
    seen_agent: Pos | None = None
    problem: str | None = None
    if grid is None and images:
        read = read_image(images[-1], size_hint)
        if read is None:
            problem = "the grid image could not be read"
        else:
            grid, seen_agent = read
            source = "image"
    elif grid is None:
        problem = "the prompt shows no grid"

    broken = read_broken(text)
    if grid is not None and broken:
        grid = with_holes(grid, broken)
    agent = _last_pos(_POSITION, text) or _last_pos(_AGENT_AT, text) or seen_agent
    goal = _last_pos(_GOAL, text)
    if goal is None and grid is not None:
        goal = (len(grid) - 1, len(grid) - 1)
    if pictures:
        pictured, unread = _read_pictures(pictures, size_hint or (len(grid) if grid else 0))
        memory += pictured
        problem = problem or (f"the picture of {unread} could not be read" if unread else None)
    cells = tuple(dict.fromkeys((int(m.group(1)), int(m.group(2))) for m in _ASKED_CELL.finditer(text)))
    return Perception(
        kind=kind,
        memory=memory,
        grid=grid,
        agent=agent,
        goal=goal,
        source=source,
        problem=problem,
        cells=cells,
        unknown=read_unknown(text),
        notes=tuple(mid for mid in read_notes(text) if mid not in dict(pictures)),
        asked=tuple(f.name for f in every_verdict_field() if f.asked(text)),
        broken=broken,
    )
