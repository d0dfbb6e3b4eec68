"""The records a solver hands its scorer: their form in the log, and their form in the
sample store, read back as the records they were (as ``inspect score`` reads them)."""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.util import Store
from pydantic_core import to_jsonable_python

from spatialstale.protocol import (
    AuditResult,
    CallCost,
    DetectionRecord,
    DetectionWindow,
    Episode,
    NavigationRecord,
    PerceptionRecord,
    PerceptionWindow,
    StepRecord,
)

GRID = ("SFFF", "FHFF", "FFFH", "HFFG")
FLAGGED = frozenset(f"mem_{i:03d}" for i in (13, 2, 9, 11, 5))


def audit(step: int = 0) -> AuditResult:
    return AuditResult(
        step=step,
        flagged=FLAGGED,
        calls=2,
        unparseable=1,
        unanswered=("mem_014",),
        conflicting=("mem_001",),
        unknown_ids=("mem_099",),
        reasons={"mem_005": "(1,1) is H"},
        complete=False,
    )


def step(number: int, position: tuple[int, int], new: tuple[int, int], cell: str) -> StepRecord:
    return StepRecord(
        step=number,
        position=position,
        action="DOWN",
        parsed=number != 2,
        answer='{"action": "DOWN"}',
        reading="read" if number != 2 else "ambiguous",
        view_size=None if number == 1 else 16,
        stale_in_view=("mem_005",),
        new_position=new,
        cell=cell,
        applied=((2, 3),) if number == 2 else (),
        unknown_in_view=1,
    )


EPISODE = Episode(
    outcome="death",
    steps=2,
    reward=0.0,
    records=(step(1, (0, 0), (0, 1), "F"), step(2, (0, 1), (1, 1), "H")),
    audits=(audit(0), audit(1)),
    died_at=(1, 1),
    stale_in_view_at_death=("mem_005",),
    died_on_stale=True,
    final_grid=GRID,
    observed={"view_radius": 1},
    navigated={"agent": "tools", "tools": {"turns": 3, "moves": 2}},
)


def as_logged(store: Store) -> dict[str, Any]:
    """The store as the log holds it (Inspect's ``store_jsonable``), through JSON."""
    jsonable = to_jsonable_python(dict(store.items()), exclude_none=True, fallback=lambda _: None)
    loaded: dict[str, Any] = json.loads(json.dumps(jsonable))
    return loaded


def test_an_audit_lists_its_flags_sorted_in_the_store_and_in_the_log() -> None:
    # a frozenset would be written in hash order, which changes from run to run
    assert to_jsonable_python(audit())["flagged"] == sorted(FLAGGED)
    assert audit().to_dict()["flagged"] == sorted(FLAGGED)


def test_the_log_form_of_an_episode() -> None:
    logged = EPISODE.to_dict()
    assert list(logged)[:7] == ["outcome", "steps", "reward", "fallbacks", "ambiguous", "unreadable", "limit"]
    # what the view keeps (the observation seam's record) sits after the limit
    assert (
        list(logged)[7] == "view_radius"
        and logged["view_radius"] == 1
        and logged["trajectory"] == [[0, 0], [0, 1], [1, 1]]
    )
    assert (logged["fallbacks"], logged["ambiguous"], logged["audit_calls"], logged["audit_unanswered"]) == (1, 1, 4, 2)
    # what a navigator other than the paper's adds (the tool navigator: itself and its counts), last
    assert list(logged)[-2:] == ["agent", "tools"] and logged["tools"] == {"turns": 3, "moves": 2}
    plain = Episode(outcome="timeout", steps=0, reward=0.0, records=(), audits=())
    assert "view_radius" not in plain.to_dict() and "tools" not in plain.to_dict()


def test_a_navigation_record_reads_back_from_the_logged_store() -> None:
    store = Store()
    record = NavigationRecord(store=store)
    record.episode = EPISODE
    record.cost = CallCost(audit_calls=4, audit_tokens=900, navigation_calls=2, navigation_tokens=100)
    again = NavigationRecord(store=Store(as_logged(store)))
    assert again.episode == EPISODE and again.episode.to_dict() == EPISODE.to_dict()
    assert again.cost == record.cost


def test_window_records_read_back_from_the_logged_store() -> None:
    detection = [
        DetectionWindow(audit(0), GRID, ("mem_005", "mem_011")),
        DetectionWindow(audit(3), GRID, ("mem_005",), answers={"edits": {"mem_005": "DANGER at (1,1)"}}),
    ]
    perception = [
        PerceptionWindow(0, GRID, {"(0,0)": "S", "(1,1)": "F"}, ("(3,3)",), ("(0,1)",), ("(9,9)",), 2, 1, False)
    ]
    store = Store()
    detected, perceived = DetectionRecord(store=store), PerceptionRecord(store=store)
    detected.windows, detected.limit = detection, "message limit"
    perceived.windows, perceived.limit = perception, None
    logged = Store(as_logged(store))
    again, seen = DetectionRecord(store=logged), PerceptionRecord(store=logged)
    assert again.windows == detection and again.limit == "message limit"
    assert seen.windows == perception and seen.limit is None
    assert [w.to_dict() for w in again.windows] == [w.to_dict() for w in detection]
    assert "edits" not in detection[0].to_dict() and detection[1].to_dict()["edits"] == {"mem_005": "DANGER at (1,1)"}


def test_a_record_never_written_reads_as_none() -> None:
    # so a scorer tells a missing record (the sample errors) from an empty one
    store = Store()
    assert DetectionRecord(store=store).windows is None
    assert PerceptionRecord(store=store).windows is None
    assert NavigationRecord(store=store).episode is None
