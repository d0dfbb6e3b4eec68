"""The filter mode ``unknown`` (``-T filter=unknown``), at the memory seam (``_seams.FilterMode``).

A filtering strategy (SelfVerify, OMCD, Oracle, LocalVerify) keeps each flagged entry in
place as an :class:`UnknownEntry`, which lists the cell as unknown instead of repeating
the flagged claim; the paper's ``delete`` drops it (``_seams.DELETE``). NoMemory and
NoFilter flag nothing, so the mode changes nothing for them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from spatialstale.env import MemoryEntry

from ._seams import WithheldEntry


@dataclass(frozen=True)
class UnknownEntry(WithheldEntry):
    """A flagged entry kept in the view under ``filter=unknown``.

    Its prompt line names the cell and the audit step that flagged it but not the
    flagged claim, so the navigator knows memory holds nothing it can trust there.
    """

    @property
    def line(self) -> str:
        if not self.is_cell:  # an entry about no cell (an extension's) names no cell
            return f"[{self.id}] UNKNOWN (flagged stale at step {self.flagged_at})"
        return f"[{self.id}] UNKNOWN (flagged stale at step {self.flagged_at}) at ({self.row},{self.col})"


@dataclass(frozen=True)
class Unknown:
    """Flagged entries stay in the view, each as an :class:`UnknownEntry`."""

    name: str = "unknown"
    help: str = "unknown keeps it marked UNKNOWN"

    def apply(self, memory: Sequence[MemoryEntry], flags: Mapping[str, int]) -> tuple[MemoryEntry, ...]:
        return tuple(UnknownEntry.of(e, flags[e.id]) if e.id in flags else e for e in memory)


UNKNOWN = Unknown()
