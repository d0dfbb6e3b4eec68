"""What an audit and a perception probe leave in the transcript: a span per batch
around Inspect's own model event, and one table per audit or observation."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.event import Event, InfoEvent, ModelEvent, SpanBeginEvent
from inspect_ai.log import EvalLog, EvalSample, resolve_sample_attachments

from spatialstale.env import make_instance
from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.evals.perception import perception
from spatialstale.protocol import read_audit


def _run(task: Any, tmp_path: Path) -> EvalLog:
    [log] = eval(task, model="spatialstale/observer", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    return log


def table_rows(text: str) -> list[str]:
    """The rows of the markdown table in ``text`` (an audit's starts under its summary line)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|---")) + 1
    return [line for line in lines[start:] if line.startswith("|")]


def _span_names(events: list[Event]) -> dict[str, str]:
    return {e.id: e.name for e in events if isinstance(e, SpanBeginEvent)}


def _tables(sample: EvalSample, source: str) -> list[tuple[str, list[str]]]:
    """Each table of ``source``: the span it stands in and its rows' first cells."""
    events = resolve_sample_attachments(sample).events
    names = _span_names(events)
    return [
        (names[str(e.span_id)], [line.split(" | ")[0].lstrip("| ") for line in table_rows(str(e.data))])
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


def _audit_table(sample: EvalSample) -> tuple[str, dict[str, list[str]]]:
    """A sample's first audit table: its text, and its rows' cells by entry."""
    text = next(
        str(e.data)
        for e in resolve_sample_attachments(sample).events
        if isinstance(e, InfoEvent) and e.source == "audit"
    )
    return text, {cells[0]: cells for cells in (row.strip("| ").split(" | ") for row in table_rows(text))}


STALE_4810 = make_instance(4810, "L2").stale_ids(make_instance(4810, "L2").initial_grid)


def test_the_verdict_table_marks_a_stale_entry_the_credulous_auditor_kept_as_a_miss(tmp_path: Path) -> None:
    # mem_016 thawed (safe ice, now a hole), mem_009 froze (a hole, now ice)
    assert {"mem_009", "mem_016"} <= STALE_4810 and "mem_000" not in STALE_4810
    [log] = eval(detection(seeds="4810"), model="spatialstale/credulous", log_dir=str(tmp_path), display="none")
    [sample] = log.samples or []
    text, rows = _audit_table(sample)
    assert text.splitlines()[2] == "| entry | claim | verdict | truth | result |"
    assert rows["mem_016"][2:] == ["valid", "stale: was safe ice, now a hole", "**miss**"]
    assert rows["mem_009"][2:] == ["valid", "stale: was a hole, now safe ice", "**miss**"]
    assert rows["mem_000"][2:] == ["valid", "valid", "correct keep"]
    assert {entry for entry, cells in rows.items() if cells[4] == "**miss**"} == STALE_4810
    n = len(STALE_4810)
    assert text.splitlines()[0] == (
        f"**Against the truth:** 0 hits, {n} misses ({', '.join(sorted(STALE_4810))}), 0 false alarms, "
        f"{64 - n} correct keeps."
    )


@pytest.mark.parametrize(
    "task",
    [
        pytest.param(lambda: detection(seeds="4810"), id="detection"),
        # OMCD's audit shares the table; under fog its truth is still the whole live grid's
        pytest.param(lambda: navigation(seeds="4810", strategies="omcd", episodes=1), id="omcd"),
        pytest.param(lambda: navigation(seeds="4810", strategies="omcd", episodes=1, view_radius=1), id="omcd-fog"),
    ],
)
def test_the_truth_beside_each_verdict_is_the_instance_s_whatever_the_model_answers(task: Any, tmp_path: Path) -> None:
    truths = {}
    for model in ("spatialstale/credulous", "spatialstale/observer", "spatialstale/random"):
        [log] = eval(task(), model=model, log_dir=str(tmp_path / model.split("/")[1]), display="none")
        [sample] = log.samples or []
        _, rows = _audit_table(sample)
        assert len(rows) == 64
        truths[model] = {entry: cells[3] for entry, cells in rows.items()}
        for entry, (_, _, verdict, truth, result) in rows.items():
            stale, flagged = entry in STALE_4810, verdict == "stale"
            assert truth.startswith("stale: ") == stale
            assert result.strip("*") == {(True, True): "hit", (True, False): "miss", (False, True): "false alarm"}.get(
                (stale, flagged), "correct keep"
            )
    assert truths["spatialstale/credulous"] == truths["spatialstale/observer"] == truths["spatialstale/random"]


SUMMARY_COUNT = re.compile(r"(\d+) (hit|miss|false alarm|correct keep)(?:e?s)?\b")
SUMMARY_DISTRACTORS = re.compile(r"of the (\d+) distractors, (\d+) flagged(?: \([^)]*\))?, (\d+) kept\.$")


def test_the_audit_summary_counts_what_the_score_counts_with_distractors(tmp_path: Path) -> None:
    # the cell entries' hits, misses, false alarms and correct keeps are the score's tp,
    # fn, fp and tn; the distractors are counted apart, as distractors_flagged
    k = 8
    [log] = eval(
        detection(seeds="4810", regime="L2,L3", distractors=k),
        model="spatialstale/random",
        log_dir=str(tmp_path),
        display="none",
    )
    for sample in log.samples or []:
        value = (sample.scores or {})["stale_f1"].value
        assert isinstance(value, dict)
        summed: Counter[str] = Counter()
        tables = [
            str(e.data)
            for e in resolve_sample_attachments(sample).events
            if isinstance(e, InfoEvent) and e.source == "audit"
        ]
        assert len(tables) == value["windows"]
        for text in tables:
            line = text.splitlines()[0]
            summed.update({result: int(n) for n, result in SUMMARY_COUNT.findall(line.split(";")[0])})
            distractors = SUMMARY_DISTRACTORS.search(line)
            assert distractors is not None, line
            total, flagged, kept = map(int, distractors.groups())
            assert total == flagged + kept == k
            summed.update({"distractor flagged": flagged, "distractor kept": kept})
            results = [row.strip("| ").split(" | ")[4].strip("*") for row in table_rows(text)]
            # Counter to Counter: a result none of the K entries got counts 0 (the random
            # agent, unseeded here, flags all K of an audit now and then)
            assert Counter(r for r in results if r.startswith("distractor")) == Counter(
                {"distractor flagged": flagged, "distractor kept": kept}
            )
        assert summed == Counter(
            {
                "hit": value["tp"],
                "miss": value["fn"],
                "false alarm": value["fp"],
                "correct keep": value["tn"],
                "distractor flagged": value["distractors_flagged"],
                "distractor kept": value["distractor_judgments"] - value["distractors_flagged"],
            }
        )
        assert value["tn"] + value["fp"] + value["tp"] + value["fn"] == 64 * value["windows"]
