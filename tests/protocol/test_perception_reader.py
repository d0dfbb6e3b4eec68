"""The perception reader against the forms real models write, and against hostile text."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialstale.protocol import read_perception
from spatialstale.protocol._cells import cell_value, coordinate
from spatialstale.protocol._scan import MAX_CONTAINERS

from ._hostile import answer_text, json_values

BATCH = [(0, 0), (0, 1), (1, 2), (7, 7)]
TRUTH = {(0, 0): "S", (0, 1): "H", (1, 2): "F", (7, 7): "G"}
WORDS = {"S": "start", "F": "frozen ice", "H": "hole", "G": "goal"}


def _label(pos: tuple[int, int]) -> str:
    return f"({pos[0]},{pos[1]})"


PERFECT = {
    "the prompt's form": json.dumps([{"cell": _label(p), "type": t} for p, t in TRUTH.items()]),
    "row col cell": json.dumps([{"row": r, "col": c, "cell": t} for (r, c), t in TRUTH.items()]),
    "row column type words": json.dumps([{"row": r, "column": c, "type": WORDS[t]} for (r, c), t in TRUTH.items()]),
    "upper-case words": json.dumps([{"cell": _label(p), "type": WORDS[t].upper()} for p, t in TRUTH.items()]),
    "json lines": "\n".join(json.dumps({"cell": _label(p), "type": t}) for p, t in TRUTH.items()),
    "structured wrapper": json.dumps({"cells": [{"cell": _label(p), "type": t} for p, t in TRUTH.items()]}),
    "keyed by coordinate": json.dumps({_label(p): WORDS[t] for p, t in TRUTH.items()}),
    "keyed objects": json.dumps({_label(p): {"type": t} for p, t in TRUTH.items()}),
    "keyed with spaces": json.dumps({f"({r}, {c})": t for (r, c), t in TRUTH.items()}),
    "python dict with tuple keys": "{" + ", ".join(f"({r}, {c}): '{WORDS[t]}'" for (r, c), t in TRUTH.items()) + "}",
    "python literals": "["
    + ", ".join(f"{{'row': {r}, 'col': {c}, 'cell': '{t}'}}" for (r, c), t in TRUTH.items())
    + "]",
    "python tuples": "[" + ", ".join(f"({r}, {c}, '{t}')" for (r, c), t in TRUTH.items()) + "]",
    "lists of three": json.dumps([[r, c, t] for (r, c), t in TRUTH.items()]),
    "coordinate lists": json.dumps([{"position": [r, c], "type": t} for (r, c), t in TRUTH.items()]),
    "r1c2 coordinates": json.dumps([{"cell": f"r{r}c{c}", "type": t} for (r, c), t in TRUTH.items()]),
    "row and col in words": json.dumps([{"cell": f"row {r}, col {c}", "type": t} for (r, c), t in TRUTH.items()]),
    "string indices": json.dumps([{"row": str(r), "col": str(c), "cell": t} for (r, c), t in TRUTH.items()]),
    "is_hole booleans for hole and ice": json.dumps(
        [{"cell": _label(p), "type": t, "is_hole": t == "H"} for p, t in TRUTH.items()]
    ),
    "prose colon": "\n".join(f"{_label(p)}: {WORDS[t]}" for p, t in TRUTH.items()),
    "prose is a": "Looking at the grid, " + "; ".join(f"({r},{c}) is a {WORDS[t]}" for (r, c), t in TRUTH.items()),
    "prose listing": " ".join(f"{_label(p)}={t}" for p, t in TRUTH.items()),
    "markdown bullets": "\n".join(f"- **{_label(p)}**: *{WORDS[t]}*" for p, t in TRUTH.items()),
    "fenced with prose": "Here you go:\n```json\n"
    + json.dumps([{"cell": _label(p), "type": t} for p, t in TRUTH.items()])
    + "\n```\nHope this helps.",
    "think block": "<think>(0,1) looks like ice... "
    + json.dumps([{"cell": "(0,1)", "type": "F"}])
    + "</think>\n"
    + json.dumps([{"cell": _label(p), "type": t} for p, t in TRUTH.items()]),
    "lone closing think tag": "so (0,1) is ice?</think>"
    + json.dumps([{"cell": _label(p), "type": t} for p, t in TRUTH.items()]),
    "trailing commas and bare keys": "["
    + ",".join(f"{{cell: '{_label(p)}', type: '{t}',}}" for p, t in TRUTH.items())
    + ",]",
    "extra keys": json.dumps(
        [{"reasoning": "dark square", "cell": _label(p), "confidence": 0.8, "type": t} for p, t in TRUTH.items()]
    ),
    "memory-style phrases": json.dumps(
        {
            _label(p): {"H": "Hole - dangerous, do not step", "F": "Frozen ice - safe to walk"}.get(t, WORDS[t])
            for p, t in TRUTH.items()
        }
    ),
}


@pytest.mark.parametrize("form", sorted(PERFECT))
def test_a_perfect_answer_in_any_form_reads_perfectly(form: str) -> None:
    parsed = read_perception(PERFECT[form], BATCH)
    assert parsed.error is None, parsed
    assert parsed.readings == TRUTH
    assert parsed.unanswered == [] and parsed.conflicting == [] and parsed.unknown_cells == []


def test_truncated_answer_keeps_every_complete_object() -> None:
    full = json.dumps([{"cell": _label(p), "type": t} for p, t in TRUTH.items()])
    parsed = read_perception(full[: full.index("(7,7)") + 3], BATCH)
    assert set(parsed.readings) == {(0, 0), (0, 1), (1, 2)}
    assert parsed.unanswered == [(7, 7)]
    assert "truncated" in parsed.notes


def test_conflicts_unknown_cells_and_agreeing_duplicates() -> None:
    text = json.dumps(
        [
            {"cell": "(0,0)", "type": "S"},
            {"cell": "(0,0)", "type": "F"},  # same class (not a hole): the first type is kept
            {"cell": "(0,1)", "type": "H"},
            {"cell": "(0,1)", "type": "ice"},  # hole and ice: conflicting
            {"cell": "(1,2)", "type": "H", "is_hole": False},  # conflicting inside one object
            {"cell": "(9,9)", "type": "H"},
        ]
    )
    parsed = read_perception(text, BATCH)
    assert parsed.readings == {(0, 0): "S"}
    assert parsed.conflicting == [(0, 1), (1, 2)]
    assert parsed.unanswered == [(7, 7)]
    assert parsed.unknown_cells == ["(9,9)"]


@pytest.mark.parametrize(
    "text",
    [
        "I cannot tell the colours apart in this image.",
        "",
        '{"action": "RIGHT"}',
        '[{"cell": "(0,1)"}]',
        '[{"cell": "(5,5)", "type": "H"}]',
        '[{"cell": "(0,1)", "type": "lava"}]',
        "(0,1) is not a hole",
        "<think>(0,1): hole",
        '[{"memory_id": "mem_001", "is_stale": true}]',
    ],
)
def test_answers_with_no_reading_for_the_batch_are_errors(text: str) -> None:
    parsed = read_perception(text, BATCH)
    assert parsed.error is not None
    assert parsed.readings == {}
    assert set(parsed.unanswered) | set(parsed.conflicting) == set(BATCH)


def test_only_conflicting_readings_say_so() -> None:
    parsed = read_perception('{"(0,1)": "H"}\n{"(0,1)": "F"}', [(0, 1)])
    assert parsed.conflicting == [(0, 1)] and parsed.error == "only conflicting readings for the batch"


def test_structured_readings_win_over_prose() -> None:
    text = '(0,1): ice, I think. Final: [{"cell": "(0,1)", "type": "H"}]'
    assert read_perception(text, BATCH).readings == {(0, 1): "H"}


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("H", "H"),
        ("hole", "H"),
        ("HOLE", "H"),
        ("a hole", "H"),
        ("Hole (H)", "H"),
        (True, "H"),
        (False, "F"),
        ("F", "F"),
        ("Frozen", "F"),
        ("frozen_ice", "F"),
        ("safe", "F"),
        ("start", "S"),
        ("G", "G"),
        ("goal", "G"),
        ("not a hole", None),
        ("hole or ice", None),
        ("lava", None),
        (3, None),
        (None, None),
    ],
)
def test_cell_words(value: object, cell: str | None) -> None:
    assert cell_value(value) == cell


@pytest.mark.parametrize(
    ("value", "pos"),
    [
        ("(1,2)", (1, 2)),
        ("( 1 , 2 )", (1, 2)),
        ("1,2", (1, 2)),
        ("[1, 2]", (1, 2)),
        ("r1c2", (1, 2)),
        ("row 1, col 2", (1, 2)),
        ("Row 1 Column 2", (1, 2)),
        ([1, 2], (1, 2)),
        (["1", "2"], (1, 2)),
        ("12", None),
        ("(1,2,3)", None),
        ([1, True], None),
        ("mem_012", None),
        (12, None),
    ],
)
def test_coordinates(value: object, pos: tuple[int, int] | None) -> None:
    assert coordinate(value) == pos


def test_nothing_is_evaluated() -> None:
    hostile = "[{'cell': __import__('os').system('echo pwned'), 'type': 'H'}]"
    assert read_perception(hostile, BATCH).readings == {}


def test_deep_nesting_and_huge_answers_are_bounded() -> None:
    for text in ("[" * 200_000, "{" * 200_000 + "}" * 200_000, '[{"a":' * 50_000, "(0,1): " * 100_000):
        parsed = read_perception(text, BATCH)
        assert set(parsed.readings) | set(parsed.unanswered) | set(parsed.conflicting) == set(BATCH)
    many = "\n".join(['{"cell": "(0,1)", "type": "H"}'] * (MAX_CONTAINERS + 5))
    parsed = read_perception(many, BATCH)
    assert parsed.readings == {(0, 1): "H"}
    assert any(note.startswith("overlong") for note in parsed.notes)


def _partition(text: str) -> None:
    parsed = read_perception(text, BATCH)
    groups = [set(parsed.readings), set(parsed.unanswered), set(parsed.conflicting)]
    assert set().union(*groups) == set(BATCH)
    assert sum(map(len, groups)) == len(BATCH)
    assert set(parsed.readings.values()) <= {"S", "F", "H", "G"}
    assert (parsed.error is None) == bool(parsed.readings)
    assert not set(parsed.unknown_cells) & {_label(p) for p in BATCH}


ANSWER_TEXT = answer_text("[]{}()\"':,=\\ \n0127rcowlHFSGholeicTrue<>/think")


@settings(max_examples=400, deadline=None)
@given(ANSWER_TEXT)
def test_readings_unanswered_and_conflicting_partition_the_batch(text: str) -> None:
    _partition(text)


@settings(max_examples=200, deadline=None)
@given(json_values(text_size=12, key_size=10))
def test_hostile_json_never_raises_and_stays_a_partition(value: object) -> None:
    _partition(json.dumps(value))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(BATCH), min_size=1, max_size=8),
    st.sampled_from(["json", "python", "keyed", "prose"]),
)
def test_any_subset_in_any_order_and_form_reads_exactly_what_was_said(order: list[tuple[int, int]], form: str) -> None:
    if form == "json":
        text = "\n".join(json.dumps({"row": r, "col": c, "type": TRUTH[r, c]}) for r, c in order)
    elif form == "python":
        text = "[" + ", ".join(f"{{'cell': '({r}, {c})', 'type': '{WORDS[TRUTH[r, c]]}'}}" for r, c in order) + "]"
    elif form == "keyed":
        text = "\n".join(json.dumps({_label(p): TRUTH[p]}) for p in order)
    else:
        text = "\n".join(f"{_label(p)}: {WORDS[TRUTH[p]]}" for p in order)
    parsed = read_perception(text, BATCH)
    assert parsed.readings == {p: TRUTH[p] for p in order}
    assert parsed.unanswered == [p for p in BATCH if p not in order]
