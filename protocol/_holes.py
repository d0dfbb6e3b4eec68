"""The holes listing, an observation at the seams: ``-T observation=holes``.

The text observation lists only S, G and the holes, and states that every other cell is
F (``spatialstale.env.holes_observation``): the same grid in O(holes) text, for large
grids; under fog, only the visible cells are listed or implied. The image is unchanged.
It plugs into the settings (its axis, recorded in every sample of detection, navigation
and the perception probe) and the observation (:class:`HolesListing`, the text listing
of every call's grid).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from spatialstale.env import Grid, Pos, holes_observation

from ._axes import axis
from ._seams import Extension, View, WholeGrid

NAME = "observation"
VALUE = "holes"
OBSERVATIONS = ("full", VALUE)
"""How the text observation lists the grid: ``full`` (every cell, the paper's listing) or
``holes`` (only S, G and the holes; every other cell is F). Same information; ``holes``
is the cheaper listing for large grids."""


@dataclass(frozen=True)
class HolesAxes:
    """The listing's axis, read by the detection, navigation and perception settings."""

    observation: str = axis(
        "full",
        "text listing of the grid: full (every cell, the paper) or holes (only S, G and the holes)",
        values=OBSERVATIONS,
        recorded=True,
    )


@dataclass(frozen=True)
class HolesListing(WholeGrid):
    """The whole grid, listed as S, G and the holes (every other cell stated to be F)."""

    def listing(self, grid: Grid, agent: Pos) -> str | None:
        return holes_observation(grid, agent)


HOLES_LISTING = HolesListing()


@dataclass(frozen=True)
class HolesExtension(Extension):
    name: str = VALUE
    kinds: tuple[str, ...] = ("detection", "navigation", "perception")
    axes: type = HolesAxes

    def view(self, values: Mapping[str, Any]) -> View | None:
        return HOLES_LISTING if values.get(NAME) == VALUE else None


HOLES = HolesExtension()
