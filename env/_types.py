"""Cell types, actions and the frozen records that cross package boundaries."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum, StrEnum


class Cell(StrEnum):
    """A FrozenLake cell type, spelled as in Gymnasium's ``desc`` maps."""

    START = "S"
    FROZEN = "F"
    HOLE = "H"
    GOAL = "G"

    @property
    def hazard(self) -> int:
        """``h(c)`` of the paper's Eq. 1: 1 for a hole, 0 for every other cell."""
        return 1 if self is Cell.HOLE else 0


class Action(IntEnum):
    """The four moves, numbered as Gymnasium's ``FrozenLakeEnv`` numbers them."""

    LEFT = 0
    DOWN = 1
    RIGHT = 2
    UP = 3

    @property
    def delta(self) -> tuple[int, int]:
        """The (row, col) offset of this move."""
        return _DELTAS[self]


_DELTAS = {
    Action.LEFT: (0, -1),
    Action.DOWN: (1, 0),
    Action.RIGHT: (0, 1),
    Action.UP: (-1, 0),
}

Pos = tuple[int, int]
"""A cell position ``(row, col)``, row 0 at the top."""

Grid = tuple[str, ...]
"""A grid as Gymnasium's ``desc``: one string per row, one letter per cell."""


@dataclass(frozen=True)
class Change:
    """One cell flip: a *thaw* turns F into H, a *freeze* turns H into F."""

    row: int
    col: int
    before: Cell
    after: Cell

    @property
    def pos(self) -> Pos:
        return (self.row, self.col)

    @property
    def kind(self) -> str:
        """``"thaw"`` (F to H) or ``"freeze"`` (H to F)."""
        return "thaw" if self.after is Cell.HOLE else "freeze"

    def to_dict(self) -> dict[str, object]:
        return {"row": self.row, "col": self.col, "before": self.before.value, "after": self.after.value}

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Change:
        return cls(int(str(data["row"])), int(str(data["col"])), Cell(str(data["before"])), Cell(str(data["after"])))


@dataclass(frozen=True)
class Event:
    """An L3 online event: its changes take effect right after action number ``step``."""

    step: int
    changes: tuple[Change, ...]

    def to_dict(self) -> dict[str, object]:
        return {"step": self.step, "changes": [c.to_dict() for c in self.changes]}

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Event:
        changes = data["changes"]
        if not isinstance(changes, list):
            raise ValueError("event field 'changes' must be a list")
        return cls(int(str(data["step"])), tuple(Change.from_dict(c) for c in changes))


@dataclass(frozen=True)
class MemoryEntry:
    """One remembered claim about one cell; ``text`` is all a model ever sees of it."""

    id: str
    row: int
    col: int
    cell: Cell
    text: str
    explored: bool
    """True when a snapshot random walk visited the cell, False when it was completed."""
    topic: str | None = field(default=None, kw_only=True)
    """None for a cell's entry; ``RULE``, ``NOTE`` or ``SELF`` for a distractor, an entry
    about no cell (its row and col are -1) that no grid change can make stale."""

    @property
    def is_cell(self) -> bool:
        """True for an entry about a cell, False for a distractor."""
        return self.topic is None

    @property
    def pos(self) -> Pos:
        return (self.row, self.col)

    @property
    def claim(self) -> str:
        """``"DANGER"`` for a remembered hole, ``"SAFE"`` for every other cell, a
        distractor's topic (``RULE``) for a distractor."""
        if self.topic is not None:
            return self.topic
        return "DANGER" if self.cell is Cell.HOLE else "SAFE"

    @property
    def line(self) -> str:
        """The entry as listed in a prompt: ``[mem_044] SAFE at (5,4): ...``."""
        return f"[{self.id}] {self.text}"

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "id": self.id,
            "row": self.row,
            "col": self.col,
            "cell": self.cell.value,
            "text": self.text,
            "explored": self.explored,
        }
        # a cell's record keeps its v1 bytes
        return out if self.topic is None else {**out, "topic": self.topic}

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> MemoryEntry:
        return cls(
            id=str(data["id"]),
            row=int(str(data["row"])),
            col=int(str(data["col"])),
            cell=Cell(str(data["cell"])),
            text=str(data["text"]),
            explored=bool(data["explored"]),
            topic=None if data.get("topic") is None else str(data["topic"]),
        )
