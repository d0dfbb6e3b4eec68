"""Memory as pictures, an extension at the seams: ``-T memory=crops`` (detection).

Each memory entry is shown to the auditor as a picture of its cell as remembered (its
crop: the 3x3 neighbourhood on ``g0``, drawn by ``spatialstale.env.crop_png``), after
a line holding its id, with no claim in text; the auditor compares the pictures with
the current grid's image. The batches, the answer format, the readers and the scores
are the text audit's. It plugs into the settings (the axis ``memory`` and the
combination it refuses: the pictures need an image of the grid; an extension whose
entries are about no cell, which have no picture, refuses this memory itself), the
prompt (:data:`CROPS_NOTE` after the prompt set's audit prompt), the memory
(:class:`Pictures`), the reference agents' reading (each picture's centre colour and
label, ``spatialstale.env.read_crop``) and the dry run (each crop a 144x160 image); the
report's section reads the axis from the logs.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from inspect_ai.model import Content, ContentImage, ContentText

from spatialstale.env import CELL_PX, CROP_CELLS, CROP_STRIP_PX, Grid, Instance, MemoryEntry, Pos, crop_png, read_crop

from ._axes import axis
from ._errors import TaskParameterError
from ._seams import Extension, MemoryForm, MemoryPart, ReportColumn, ReportPart, ReportTable, StandIn

if TYPE_CHECKING:
    from PIL.Image import Image

NAME = "memory"
VALUE = "crops"
MEMORIES = ("text", VALUE)
"""How an audit shows the memory entries: their text claims (the paper) or crops,
each a picture of its cell as remembered."""

CROPS_HEADER = "Memory entries (pictures, each after its id):"
CROPS_NOTE = (
    "The memory entries are pictures, not text: each shows an entry's cell as it looked when the memory was "
    "written,\nwith its 3x3 neighbourhood (blank beyond the grid's edge), the entry's cell at the centre outlined "
    "in magenta,\nunder a strip naming the entry's id. The centre cell's type then is the entry's claim: a hole "
    "claims DANGER,\nice, the start or the goal claims SAFE. Compare each picture with the current grid's image."
)
"""What an audit prompt adds under ``-T memory=crops`` (:func:`crops_prompt`)."""


def crops_prompt(prompt: str) -> str:
    """An audit prompt for memory shown as pictures: ``prompt`` and :data:`CROPS_NOTE`,
    so every prompt set's wording (and its answer format) stays as it is."""
    return f"{prompt}\n{CROPS_NOTE}"


@lru_cache(maxsize=4096)
def crop_data_uri(g0: Grid, entry: MemoryEntry) -> str:
    """An entry's crop (``spatialstale.env.crop_png``) as a base64 PNG data URI."""
    png = crop_png(g0, entry.pos, entry.cell.value, entry.id)
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


CROP_NAME = "crop of "
"""How the dry run's stand-in for a crop starts (:func:`crop_named`)."""


def crop_named(g0: Grid, entry: MemoryEntry) -> str:
    """A stand-in for a memory crop in the dry run: what it shows, without drawing it."""
    return f"{CROP_NAME}{entry.id} of grid {hash(g0)}"


@dataclass(frozen=True)
class Pictures:
    """How an audit shows its entries under ``-T memory=crops``: each its id on a line
    of its own, then its crop, drawn from ``g0`` (the grid the memory was written on);
    no claim in text.

    Attributes:
        g0: the grid of the memory snapshot.
        image: an entry's crop as sent: its PNG data URI. The dry run passes a
            stand-in that names the crop without drawing it (:func:`crop_named`).
    """

    g0: Grid
    image: Callable[[Grid, MemoryEntry], str] = crop_data_uri

    def content(self, entries: Sequence[MemoryEntry]) -> list[Content]:
        parts: list[Content] = [ContentText(text=CROPS_HEADER)]
        for entry in entries:
            parts += [ContentText(text=f"[{entry.id}]"), ContentImage(image=self.image(self.g0, entry), detail="high")]
        return parts


class PicturesPart(MemoryPart):
    """The memory stage under ``-T memory=crops``: each entry shown as its crop."""

    stand_ins = (StandIn(CROP_NAME, CROP_CELLS * CELL_PX, CROP_STRIP_PX + CROP_CELLS * CELL_PX, "a memory crop"),)

    def form(self, values: Mapping[str, Any], instance: Instance, *, drawn: bool = True) -> MemoryForm | None:
        if values.get(NAME) != VALUE:
            return None
        return Pictures(instance.g0) if drawn else Pictures(instance.g0, image=crop_named)

    def read_picture(self, image: Image, size: int) -> tuple[str, Pos] | None:
        # the centre's colour and its (r,c) label (spatialstale.env.read_crop)
        return read_crop(image, size)


PICTURES = PicturesPart()


@dataclass(frozen=True)
class CropsAxes:
    """The memory's form, read by the detection settings."""

    memory: str = axis(
        "text",
        "how the memory entries are shown: text (their claims, the paper) or crops (each a picture of its "
        "cell's 3x3 neighbourhood as remembered; needs modality vision or both)",
        values=MEMORIES,
        title="memory",
        flag="--memory",
        in_id=lambda value: f"-{value}",
        recorded=True,
    )


@dataclass(frozen=True)
class CropsExtension(Extension):
    name: str = VALUE
    kinds: tuple[str, ...] = ("detection",)
    axes: type = CropsAxes

    def check(self, values: Mapping[str, Any]) -> None:
        if values.get(NAME) != VALUE:
            return
        if values.get("modality") == "text":
            raise TaskParameterError(
                "memory=crops compares pictures of the memory with the current grid's image: "
                "it needs modality vision or both; got modality=text"
            )

    def prompt(self, call: str, values: Mapping[str, Any], prompt: str) -> str:
        # the set's audit prompt says what the pictures show; the set's own texts are unchanged
        return crops_prompt(prompt) if call == "audit" and values.get(NAME) == VALUE else prompt

    def memory(self) -> MemoryPart:
        return PICTURES

    def report(self) -> ReportPart:
        return REPORT


REPORT = ReportPart(
    NAME,
    "Memory as pictures",
    "`-T memory=crops`: each memory entry is a picture of its cell's 3×3 neighbourhood as it looked when the "  # noqa: RUF001
    "memory was written, labelled with its id; the auditor compares pictures with the current image. *F1 text "
    "memory*: the same model, regime and modality with the paper's textual memory.",
    (
        ReportTable(
            "detection",
            "F1 with memory as crops",
            (
                ReportColumn("model", "model"),
                ReportColumn("regime", "regime"),
                ReportColumn("modality", "modality"),
                ReportColumn("seeds", "seeds"),
                ReportColumn("F1 crops", "runs"),
                ReportColumn("recall crops", "mean", ("recall",)),
                ReportColumn("F1 text memory", "base"),
                ReportColumn("Δ F1", "delta"),
                ReportColumn("p", "p"),
                ReportColumn("unparseable / calls", "pooled", ("unparseable",), ("calls",)),
            ),
        ),
    ),
)
"""The report's part: F1 with the memory as crops beside textual memory on the same seeds."""

CROPS = CropsExtension()
