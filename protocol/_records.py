"""What a solver hands its scorer: the records of an audit, a window, a step and an
episode, and the sample-store models that carry them.

The records are frozen dataclasses. Each solver keeps its records in the sample store
through an Inspect :class:`~inspect_ai.util.StoreModel` (:class:`DetectionRecord`,
:class:`PerceptionRecord`, :class:`NavigationRecord`), and its scorer reads them back
from there, typed. A record's ``to_dict`` is its form in the log: the score's metadata
holds it, and the report reads it there.

The store is written into the log too (as Inspect writes a store: each record's fields
as JSON, a field that is None left out), and read back from it when a log is scored
again (``inspect score``), so every record rebuilds from its JSON: a field that can be
None has None as its default.

They are pydantic dataclasses, not plain ones: a store model validates its fields on
every read, which for a plain dataclass means building its schema each time (18 ms an
episode; built once here), and a frozenset (an audit's flags) is written sorted, not in
hash order, which changes from one run to the next.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, field
from typing import Any, Self, cast

from inspect_ai.model import ModelOutput
from inspect_ai.util import StoreModel
from pydantic import field_serializer
from pydantic.dataclasses import dataclass
from pydantic_core import to_jsonable_python

from spatialstale.env import Cell, DynamicFrozenLakeEnv, Grid, MemoryEntry, Pos, cell_at


def _plain(record: object) -> dict[str, object]:
    """A record as the log holds it: its fields in order, as JSON (tuples as lists)."""
    return cast(dict[str, object], to_jsonable_python(record))


OUTCOMES = ("success", "death", "timeout", "limit")
"""How an episode ends: on the goal, in a hole, out of steps, or cut short by a sample
limit (Inspect's token, message, time ... limits)."""


@dataclass(frozen=True)
class AuditResult:
    """The judgments of one audit of the store against one grid.

    ``unparseable`` counts calls whose answer held no readable verdict;
    ``unanswered`` lists entries left without a verdict (so left unflagged),
    including entries whose call never ran because a sample limit ended the audit
    (``complete`` is then False); ``conflicting`` lists entries given contradicting
    verdicts (left unflagged); ``unknown_ids`` lists ids the answers named that were
    not in their batch.
    """

    step: int
    flagged: frozenset[str]
    calls: int
    unparseable: int = 0
    unanswered: tuple[str, ...] = ()
    conflicting: tuple[str, ...] = ()
    unknown_ids: tuple[str, ...] = ()
    reasons: Mapping[str, str] = field(default_factory=dict)
    complete: bool = True

    @field_serializer("flagged")
    def _sorted(self, flagged: frozenset[str]) -> list[str]:
        return sorted(flagged)

    def to_dict(self) -> dict[str, object]:
        return _plain(self)


@dataclass(frozen=True)
class DetectionWindow:
    """One detection window as audited: the audit, the window's grid and the entries
    stale against it (``Instance.stale_ids``, sorted); ``answers``, under each active
    verdict field's record key (``_seams.VerdictField.record``), its value for each
    entry flagged stale that was given one (None when no verdict field is asked for)."""

    audit: AuditResult
    grid: Grid
    truth: tuple[str, ...]
    answers: Mapping[str, Mapping[str, str]] | None = None

    def to_dict(self) -> dict[str, object]:
        window: dict[str, object] = {**self.audit.to_dict(), "grid": list(self.grid), "truth": list(self.truth)}
        return window | {key: dict(values) for key, values in (self.answers or {}).items()}


@dataclass(frozen=True)
class PerceptionWindow:
    """One observation as the perception probe read it: the type read of each cell
    (``"(r,c)"`` -> ``S``, ``F``, ``H`` or ``G``), the cells left unanswered (those of
    batches never asked included), given conflicting types, or named outside their
    batch, and the calls made."""

    step: int
    grid: Grid
    readings: Mapping[str, str]
    unanswered: tuple[str, ...]
    conflicting: tuple[str, ...]
    unknown_cells: tuple[str, ...]
    calls: int
    unparseable: int
    complete: bool

    def to_dict(self) -> dict[str, object]:
        return _plain(self)


@dataclass(frozen=True, kw_only=True)
class StepRecord:
    """One action: where the agent stood, what it saw of memory and what it did."""

    step: int
    position: Pos
    action: str
    parsed: bool
    reading: str
    answer: str
    view_size: int | None = None
    """The entries of the memory view; None when the prompt held no memory (NoMemory)."""
    stale_in_view: tuple[str, ...]
    new_position: Pos
    cell: str
    applied: tuple[Pos, ...] = ()
    skipped: tuple[Pos, ...] = ()
    unknown_in_view: int = 0
    """Entries a filter mode kept in the view without their claim (``WithheldEntry``);
    not counted as stale."""

    def to_dict(self) -> dict[str, object]:
        return _plain(self)


@dataclass(frozen=True)
class Episode:
    """A finished episode: the outcome, the trajectory and what memory was shown.

    Every navigator (``-T agent``) ends an episode with :meth:`finished` or
    :meth:`interrupted`, so the scorer reads any unchanged; what a navigator other than
    the paper's adds to the record is in ``navigated``.
    """

    outcome: str
    steps: int
    reward: float
    records: tuple[StepRecord, ...]
    audits: tuple[AuditResult, ...]
    died_at: Pos | None = None
    stale_in_view_at_death: tuple[str, ...] = ()
    died_on_stale: bool = False
    final_grid: Grid = field(default=())
    limit: str | None = None
    observed: Mapping[str, object] = field(default_factory=dict)
    """What the record keeps of the view the episode was played under (``View.record``,
    the observation seam); empty for the whole grid (the paper)."""
    navigated: Mapping[str, object] | None = None
    """What the navigator's loop adds to the record (last in it); None for the paper's
    per-step navigator (so its sample store reads as before navigators had a seam)."""

    @property
    def fallbacks(self) -> int:
        return sum(not r.parsed for r in self.records)

    def readings(self, status: str) -> int:
        """Steps whose answer was read with ``status`` (read, ambiguous, unreadable)."""
        return sum(r.reading == status for r in self.records)

    @property
    def trajectory(self) -> list[Pos]:
        return [self.records[0].position, *(r.new_position for r in self.records)] if self.records else []

    @property
    def audit_calls(self) -> int:
        """The model calls of the audits the strategy kept."""
        return sum(a.calls for a in self.audits)

    @property
    def audit_unparseable(self) -> int:
        return sum(a.unparseable for a in self.audits)

    @property
    def audit_unanswered(self) -> int:
        return sum(len(a.unanswered) for a in self.audits)

    @property
    def audit_conflicting(self) -> int:
        return sum(len(a.conflicting) for a in self.audits)

    def to_dict(self) -> dict[str, object]:
        return {
            "outcome": self.outcome,
            "steps": self.steps,
            "reward": self.reward,
            "fallbacks": self.fallbacks,
            "ambiguous": self.readings("ambiguous"),
            "unreadable": self.readings("unreadable"),
            "limit": self.limit,
            **self.observed,
            "trajectory": [list(p) for p in self.trajectory],
            "died_at": list(self.died_at) if self.died_at else None,
            "stale_in_view_at_death": list(self.stale_in_view_at_death),
            "died_on_stale": self.died_on_stale,
            "audits": [a.to_dict() for a in self.audits],
            "audit_calls": self.audit_calls,
            "audit_unparseable": self.audit_unparseable,
            "audit_unanswered": self.audit_unanswered,
            "audit_conflicting": self.audit_conflicting,
            "final_grid": list(self.final_grid),
            "records": [r.to_dict() for r in self.records],
            **(self.navigated or {}),
        }

    @classmethod
    def finished(
        cls,
        env: DynamicFrozenLakeEnv,
        audits: Sequence[AuditResult],
        records: Sequence[StepRecord],
        view: Sequence[MemoryEntry] | None,
        reward: float,
        observed: Mapping[str, object],
        navigated: Mapping[str, object] | None = None,
    ) -> Self:
        """The episode ``env`` ended: death on a hole, success on the goal, or a
        timeout; ``view`` is the memory view of its last step."""
        died = cell_at(env.grid, env.agent) is Cell.HOLE
        outcome = "death" if died else "success" if env.agent == env.instance.goal else "timeout"
        death_entry = env.instance.entry_at(env.agent) if died else None
        return cls._of(
            env, audits, records, observed, navigated, outcome=outcome, reward=reward,
            died_at=env.agent if died else None,
            stale_in_view_at_death=records[-1].stale_in_view if died else (),
            died_on_stale=bool(
                died and death_entry is not None and death_entry.claim == "SAFE" and death_entry in (view or ())
            ),
        )  # fmt: skip

    @classmethod
    def interrupted(
        cls,
        env: DynamicFrozenLakeEnv,
        audits: Sequence[AuditResult],
        records: Sequence[StepRecord],
        limit: str,
        observed: Mapping[str, object],
        navigated: Mapping[str, object] | None = None,
    ) -> Self:
        """The episode a sample limit ended after the steps in ``records``: outcome ``limit``."""
        return cls._of(env, audits, records, observed, navigated, outcome="limit", reward=0.0, limit=limit)

    @classmethod
    def _of(
        cls,
        env: DynamicFrozenLakeEnv,
        audits: Sequence[AuditResult],
        records: Sequence[StepRecord],
        observed: Mapping[str, object],
        navigated: Mapping[str, object] | None,
        **ending: Any,
    ) -> Self:
        return cls(
            steps=env.steps,
            records=tuple(records),
            audits=tuple(audits),
            final_grid=env.grid,
            observed=observed,
            navigated=navigated,
            **ending,
        )


@dataclass
class CallCost:
    """The model calls of one episode and their tokens (input + output, as each
    output's usage reports them; a call without usage adds no tokens)."""

    audit_calls: int = 0
    audit_tokens: int = 0
    navigation_calls: int = 0
    navigation_tokens: int = 0

    def add(self, role: str, output: ModelOutput) -> None:
        """Count one call of ``role`` (``audit`` or ``navigation``) and its tokens."""
        usage = output.usage
        tokens = usage.input_tokens + usage.output_tokens if usage is not None else 0
        if role == "audit":
            self.audit_calls += 1
            self.audit_tokens += tokens
        elif role == "navigation":
            self.navigation_calls += 1
            self.navigation_tokens += tokens
        else:
            raise ValueError(f"role must be audit or navigation; got {role!r}")

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


# --- the sample store ----------------------------------------------------------------
# Each field is None until its solver has run, so a scorer can tell a record that was
# never written (an infrastructure failure: the sample errors) from an empty one.


class DetectionRecord(StoreModel):
    """What the detection solver leaves its scorer: every window, in order, and the
    sample limit that ended the audits early, if one did."""

    windows: list[DetectionWindow] | None = None
    limit: str | None = None


class PerceptionRecord(StoreModel):
    """What the perception probe leaves its scorer: every observation, in order, and
    the sample limit that ended the probe early, if one did."""

    windows: list[PerceptionWindow] | None = None
    limit: str | None = None


class NavigationRecord(StoreModel):
    """What the navigation solver leaves its scorer: the episode, and what its model
    calls cost (counted at the calls, not by the strategy)."""

    episode: Episode | None = None
    cost: CallCost | None = None
