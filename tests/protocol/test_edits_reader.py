"""Reading proposed memory edits (``-T edits=true``) in the forms real models write, and
judging them against the cell's current type; hostile edits are counted, never raise."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialstale.protocol import audit_schema, read_audit
from spatialstale.protocol._edits import EDIT, edit_claim, judge_edit, read_edits

CELLS = {"mem_028": (3, 4), "mem_029": (3, 5), "mem_030": (3, 6)}
IDS = list(CELLS)
HOLE = "DANGER at (3,4): Hole - dangerous, do not step"


def edits(text: str) -> dict[str, str]:
    return read_edits(text, IDS, CELLS)


@pytest.mark.parametrize(
    "key", ["edit", "corrected", "correction", "replacement", "new_entry", "proposed_edit", "fix", "Edit", "New Entry"]
)
def test_an_edit_is_read_from_the_keys_models_use(key: str) -> None:
    answer = json.dumps([{"memory_id": "mem_028", "is_stale": True, key: HOLE}, {"id": "mem_029", "stale": False}])
    assert edits(answer) == {"mem_028": HOLE}


def test_an_edit_in_a_wrapper_or_keyed_by_id_is_read() -> None:
    wrapped = {"verdicts": [{"memory_id": "mem_028", "is_stale": True, "reason": "now H", "edit": HOLE}]}
    assert edits(json.dumps(wrapped)) == {"mem_028": HOLE}
    keyed = {"mem_028": {"is_stale": True, "correction": HOLE}, "mem_029": {"is_stale": False}}
    assert edits(f"```json\n{json.dumps(keyed)}\n```") == {"mem_028": HOLE}
    python = "[{'memory_id': 'mem_028', 'is_stale': True, 'edit': 'DANGER at (3,4): hole'}]"
    assert edits(python) == {"mem_028": "DANGER at (3,4): hole"}


def test_an_edit_given_as_an_object_is_read_as_its_text() -> None:
    answer = json.dumps([{"memory_id": "mem_028", "is_stale": True, "edit": {"claim": "DANGER", "cell": "(3,4)"}}])
    assert edits(answer) == {"mem_028": "DANGER (3,4)"}
    assert judge_edit(edits(answer)["mem_028"], (3, 4), True) == "correct"


@pytest.mark.parametrize(
    ("answer", "edit"),
    [
        ("mem_028: stale → DANGER at (3,4): hole\nmem_029: valid", "DANGER at (3,4): hole"),
        ("mem_028: stale -> DANGER at (3,4): Hole - dangerous", "DANGER at (3,4): Hole - dangerous"),
        (
            "mem_028: stale\nReplace 'SAFE at (3,4): Frozen ice - safe to walk' with 'DANGER at (3,4): Hole'.",
            "DANGER at (3,4): Hole",
        ),
        ("mem_028: stale\nSAFE at (3,4) -> DANGER at (3,4)", "DANGER at (3,4)"),
        ("mem_028: stale (edit: DANGER at (3,4): hole)", "DANGER at (3,4): hole"),
        ("mem_028: stale [edit: DANGER at (3,4)]", "DANGER at (3,4)"),
        (
            "| id | verdict | reason | edit |\n|---|---|---|---|\n"
            "| mem_028 | stale | (3,4) is H now | DANGER at (3,4): Hole |\n| mem_029 | valid | holds | |",
            "DANGER at (3,4): Hole",
        ),
        (
            "- **mem_028**: stale. Corrected entry: `DANGER at (3,4): Hole - dangerous`",
            "DANGER at (3,4): Hole - dangerous",
        ),
    ],
)
def test_an_edit_is_read_from_the_prose_forms_models_write(answer: str, edit: str) -> None:
    parsed = read_audit(answer, IDS, CELLS, (EDIT,))
    assert parsed.flagged == {"mem_028"}
    assert parsed.fields["edit"] == {"mem_028": edit}
    assert judge_edit(parsed.fields["edit"]["mem_028"], (3, 4), True) == "correct"


def test_a_prose_edit_beside_json_verdicts_is_read_and_the_key_wins() -> None:
    verdicts = json.dumps([{"memory_id": "mem_028", "is_stale": True}, {"memory_id": "mem_029", "is_stale": True}])
    answer = f"{verdicts}\nEdits:\n- mem_028: replace with 'DANGER at (3,4)'\n- (3,5): SAFE at (3,5) -> DANGER at (3,5)"
    assert edits(answer) == {"mem_028": "DANGER at (3,4)", "mem_029": "DANGER at (3,5)"}
    keyed = json.dumps([{"memory_id": "mem_028", "is_stale": True, "edit": "SAFE at (3,4)"}])
    assert edits(f"{keyed}\nmem_028 -> DANGER at (3,4)") == {"mem_028": "SAFE at (3,4)"}


def test_only_entries_judged_stale_keep_an_edit_and_none_without_cells() -> None:
    answer = json.dumps(
        [
            {"memory_id": "mem_028", "is_stale": False, "edit": HOLE},
            {"memory_id": "mem_029", "is_stale": True, "edit": None},
            {"memory_id": "mem_030", "is_stale": True, "edit": ""},
        ]
    )
    assert edits(answer) == {}
    assert read_edits("mem_028: stale → DANGER at (3,4)", IDS) == {}  # prose needs the batch's cells
    assert read_audit("mem_028: stale → DANGER at (3,4)", IDS).flagged == {"mem_028"}


def test_a_reason_with_an_arrow_inside_json_is_no_edit() -> None:
    answer = json.dumps([{"memory_id": "mem_028", "is_stale": True, "reason": "F -> H at (3,4)"}])
    assert edits(answer) == {}


@pytest.mark.parametrize(
    ("edit", "hole"),
    [
        (HOLE, True),
        ("SAFE at (3,4): Frozen ice - safe to walk", False),
        ("DANGER at (3,4): was safe ice, now a hole", True),
        ("DANGER at (3,4): hole, not safe", True),
        ("SAFE at (3,4): no longer a hole", False),
        ("(3,4) = H", True),
        ("F", False),
        ("hole", True),
        ("UNSAFE (3,4)", True),
        ("START at (3,4)", False),
        ("GOAL", False),
        ("SAFE or DANGER", None),
        ("no idea", None),
        ("", None),
        ("12", None),
    ],
)
def test_an_edit_states_a_hole_no_hazard_or_nothing_readable(edit: str, hole: bool | None) -> None:
    assert edit_claim(edit).hole is hole


@pytest.mark.parametrize(
    ("edit", "now_hole", "judged"),
    [
        (HOLE, True, "correct"),
        (HOLE, False, "wrong"),
        ("SAFE at (3,4)", False, "correct"),
        ("SAFE at (3,4)", True, "wrong"),
        ("DANGER at (4,3)", True, "wrong"),  # names another cell
        ("DANGER at (3,4) or (3,5)", True, "wrong"),
        ("hole", True, "correct"),  # names no cell: its own
        ("DANGER and SAFE at (3,4)", True, "unreadable"),
        ("?", True, "unreadable"),
        (None, True, "missing"),
        ("   ", True, "missing"),
    ],
)
def test_an_edit_is_judged_against_the_cells_current_type(edit: str | None, now_hole: bool, judged: str) -> None:
    assert judge_edit(edit, (3, 4), now_hole) == judged


def test_the_schema_asks_for_a_nullable_edit_only_with_edits() -> None:
    plain = audit_schema(IDS).json_schema.properties["verdicts"].items  # type: ignore[index,union-attr]
    assert plain is not None and plain.properties is not None and "edit" not in plain.properties
    asked = audit_schema(IDS, (EDIT.name,)).json_schema.properties["verdicts"].items  # type: ignore[index,union-attr]
    assert asked is not None and asked.properties is not None and asked.required is not None
    assert asked.properties["edit"].type == ["string", "null"] and "edit" in asked.required


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400), st.text(max_size=80))
def test_hostile_edits_never_raise_and_are_judged(text: str, edit: str) -> None:
    answer = json.dumps([{"memory_id": "mem_028", "is_stale": True, "edit": edit}]) + "\n" + text
    parsed = read_audit(answer, IDS, CELLS, (EDIT,))
    for mid, found in parsed.fields["edit"].items():
        assert judge_edit(found, CELLS[mid], True) in ("correct", "wrong", "missing", "unreadable")
    read_audit(text, IDS, CELLS)
