"""Fog (partial observability), an extension at the seams: ``-T view_radius=k``.

Every navigation step and every audit of the episode (OMCD, SelfVerify, LocalVerify)
sees only the Chebyshev square of radius k around the agent (``spatialstale.env.fog``);
Oracle still knows the truth. It plugs into the settings (its axis), the observation
(:class:`Fog`), the transcript and the episode record, and the dry run's note
(``_seams``) and the report (its section, :data:`REPORT`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from spatialstale.env import FULL_VIEW, Grid, Pos, fog

from ._axes import axis
from ._errors import TaskParameterError
from ._seams import Extension, ReportSweep, View

NAME = "view_radius"


def read_view_radius(value: object, name: str) -> int | None:
    """``full`` (or None: the whole grid, the paper) or an integer of at least 0."""
    if value is None or (isinstance(value, str) and value.strip().lower() == FULL_VIEW):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TaskParameterError(f"{name} must be {FULL_VIEW} or an integer of at least 0; got {value!r}")
    return value


def show_radius(radius: int | None) -> str:
    return FULL_VIEW if radius is None else str(radius)


@dataclass(frozen=True)
class FogAxes:
    """The fog's axis, read by the navigation settings."""

    view_radius: int | None = axis(
        None,
        "fog: full shows the whole grid (the paper); k >= 0 only the cells within Chebyshev distance k of the agent",
        read=read_view_radius,
        title="view radius",
        flag="--view-radii",
        in_id=lambda radius: f"-r{radius}",
        show=show_radius,
        recorded=True,
    )


@dataclass(frozen=True)
class Fog:
    """The view of radius ``radius`` around the agent: every other cell is unknown."""

    radius: int

    def seen(self, grid: Grid, agent: Pos) -> Grid:
        return fog(grid, agent, self.radius)

    def listing(self, grid: Grid, agent: Pos) -> str | None:
        return None

    def step_note(self, position: Pos) -> str | None:
        return f"Fog: the navigator saw only the cells within {self.radius} of {position}."

    def record(self) -> dict[str, object]:
        # named only under fog, so a full-view record reads as before the parameter
        return {NAME: self.radius}

    def dry_run_note(self) -> str | None:
        return (
            "View radius k (fog): every observation of the episode, its audits' too, is the square of radius k "
            "around S that the agent sees there."
        )


@dataclass(frozen=True)
class FogExtension(Extension):
    name: str = "fog"
    kinds: tuple[str, ...] = ("navigation",)
    axes: type = FogAxes

    def view(self, values: Mapping[str, Any]) -> View | None:
        radius = values.get(NAME)
        return None if radius is None else Fog(radius)

    def report(self) -> ReportSweep:
        return REPORT


REPORT = ReportSweep(
    NAME,
    "Fog (partial observability)",
    "Navigation with `-T view_radius=k`: the observation shows only the cells within k rows and k columns of the "
    "agent (a square around it); the rest is unknown, so memory now carries information the observation lacks. "
    "Rows: the `delete` filter and the per-step navigator; *full view* is the paper's observation. Cells: "
    "success / death over all episodes (seeds x epochs); *missing*: not run.",
    caption="Success / death per view radius",
    value="radius {}",
    paper="full view",
    unit="radius",
    away="under fog",
    column="view",
    empty="missing: the fog runs hold no `delete`-filter run of the per-step navigator.",
    figure=(
        "fig11_fog.png",
        "Fig. 11 (ours): success and death rate against the view radius (full = the paper's view), per strategy",
        "Fig. 11: navigation under fog: success and death rate by view radius",
        "view radius (cells; full = the whole grid)",
    ),
)
"""The report's section: success and death against the view radius, NoMemory as an
upper bound under fog, and the strategies' paired tests at each radius."""

FOG = FogExtension()
