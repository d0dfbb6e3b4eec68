"""Memory as pictures (``-T memory=crops``): the crop of a memory entry, from its instance."""

from __future__ import annotations

from ._instance import Instance
from ._render import CELL_PX, crop_png
from ._types import MemoryEntry


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
