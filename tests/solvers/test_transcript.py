"""What an audit and a perception probe leave in the transcript: a span per batch
around Inspect's own model event, and one table per audit or observation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.event import Event, InfoEvent, ModelEvent, SpanBeginEvent
from inspect_ai.log import EvalLog, EvalSample, resolve_sample_attachments

from spatialstale.evals.detection import detection
from spatialstale.evals.perception import perception
from spatialstale.solvers._answers import read_audit


def _run(task: Any, tmp_path: Path) -> EvalLog:
    [log] = eval(task, model="spatialstale/observer", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    return log


def _span_names(events: list[Event]) -> dict[str, str]:
    return {e.id: e.name for e in events if isinstance(e, SpanBeginEvent)}


def _tables(sample: EvalSample, source: str) -> list[tuple[str, list[str]]]:
    """Each table of ``source``: the span it stands in and its rows' first cells."""
    events = resolve_sample_attachments(sample).events
    names = _span_names(events)
    return [
        (names[str(e.span_id)], [line.split(" | ")[0].lstrip("| ") for line in str(e.data).splitlines()[2:]])
        for e in events
        if isinstance(e, InfoEvent) and e.source == source
    ]


@pytest.mark.parametrize(
    ("task", "source", "window", "batch", "first_cells"),
    [
        (detection, "audit", "detection window", "audit batch", [f"mem_{i:03d}" for i in range(64)]),
        (
            perception,
            "perception",
            "observation",
            "perception batch",
            [f"({r},{c})" for r in range(8) for c in range(8)],
        ),
    ],
)
def test_one_table_per_window_and_a_span_per_call(
    task: Any, source: str, window: str, batch: str, first_cells: list[str], tmp_path: Path
) -> None:
    log = _run(task(regime="L1,L3", seeds="4810"), tmp_path)
    fixed = set()
    for sample in log.samples or []:
        events = sample.events
        names = _span_names(events)
        calls = [e for e in events if isinstance(e, ModelEvent)]
        windows = [name for name in names.values() if name.startswith(window)]
        # every call stands alone in its batch's span, and nothing else is logged there
        assert all(names[str(e.span_id)].startswith(batch) for e in calls)
        assert len([n for n in names.values() if n.startswith(batch)]) == len(calls) == 7 * len(windows)
        assert not [e for e in events if isinstance(e, InfoEvent) and names.get(str(e.span_id), "").startswith(batch)]
        # one table per window, in the window's span, every cell or entry once in order
        tables = _tables(sample, source)
        assert [where for where, _ in tables] == windows
        assert all(rows[:64] == first_cells for _, rows in tables)
        # a call costs its model event and its span's two; a window its span's two and its
        # table; what is left is the same for a sample of one window (L1) and of several (L3)
        fixed.add(len(events) - 3 * len(calls) - 3 * len(windows))
    assert len(log.samples or []) == 2 and len(fixed) == 1


@pytest.mark.parametrize("indent", [None, 2])
def test_spaced_and_compact_verdict_arrays_read_alike(indent: int | None) -> None:
    verdicts = [
        {"memory_id": f"mem_{i:03d}", "is_stale": i % 3 == 0, "reason": f"cell {i} [row {i // 8}]: {{note}}"}
        for i in range(10)
    ]
    ids = [v["memory_id"] for v in verdicts]
    compact = read_audit(json.dumps(verdicts, separators=(",", ":")), ids)
    spaced = read_audit(json.dumps(verdicts, indent=indent), ids)
    assert spaced == compact
    assert spaced.flagged == {"mem_000", "mem_003", "mem_006", "mem_009"} and not spaced.unanswered


def test_a_loose_object_after_white_space_is_still_read_by_its_tokens() -> None:
    # Python literals and bare keys are not strict JSON: the tokens read them
    answer = "[{'memory_id': 'mem_000', 'is_stale': True}, {memory_id: mem_001, is_stale: NaN}]"
    parsed = read_audit(answer, ["mem_000", "mem_001"])
    assert parsed.flagged == {"mem_000"} and parsed.unanswered == ["mem_001"]
