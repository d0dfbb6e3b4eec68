import json

from hypothesis import given
from hypothesis import strategies as st

from spatialstale.env import Action
from spatialstale.solvers import parse_action, parse_audit, parse_selfverify

BATCH = ["mem_001", "mem_002", "mem_003"]


def test_audit_json_array() -> None:
    text = json.dumps([{"memory_id": m, "is_stale": m == "mem_002", "reason": "r"} for m in BATCH])
    parsed = parse_audit(text, BATCH)
    assert parsed.flagged == {"mem_002"}
    assert parsed.unanswered == [] and parsed.unknown_ids == [] and parsed.error is None


def test_audit_fences_case_and_prose() -> None:
    text = 'Here is my audit:\n```JSON\n[{"Memory_ID": "MEM_001", "Is_Stale": "True", "reason": "now H"}]\n```\nDone.'
    parsed = parse_audit(text, BATCH)
    assert parsed.flagged == {"mem_001"}
    assert parsed.unanswered == ["mem_002", "mem_003"]


def test_audit_object_keyed_by_id_and_wrapped_list() -> None:
    assert parse_audit('{"mem_001": true, "mem_002": {"is_stale": false}}', BATCH).flagged == {"mem_001"}
    wrapped = '{"verdicts": [{"memory_id": "mem_003", "is_stale": "stale"}]}'
    assert parse_audit(wrapped, BATCH).flagged == {"mem_003"}


def test_audit_truncated_answer_keeps_complete_objects() -> None:
    text = '[{"memory_id": "mem_001", "is_stale": true, "reason": "x"}, {"memory_id": "mem_002", "is_st'
    parsed = parse_audit(text, BATCH)
    assert parsed.flagged == {"mem_001"}
    assert parsed.unanswered == ["mem_002", "mem_003"]


def test_audit_unknown_ids_and_duplicates() -> None:
    text = json.dumps(
        [
            {"memory_id": "mem_001", "is_stale": True},
            {"memory_id": "mem_001", "is_stale": False},
            {"memory_id": "mem_777", "is_stale": True},
        ]
    )
    parsed = parse_audit(text, BATCH)
    assert parsed.flagged == {"mem_001"}  # the first verdict counts
    assert parsed.unknown_ids == ["mem_777"]


def test_audit_unparseable() -> None:
    parsed = parse_audit("I cannot determine the colours in this image.", BATCH)
    assert parsed.error is not None
    assert parsed.flagged == set()
    assert parsed.unanswered == BATCH


@given(st.text(max_size=400))
def test_audit_never_crashes_and_never_flags_outside_the_batch(text: str) -> None:
    parsed = parse_audit(text, BATCH)
    assert parsed.flagged <= set(BATCH)
    assert set(parsed.unanswered) | set(parsed.verdicts) == set(BATCH)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
        lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=12), children, max_size=5),
        max_leaves=30,
    )
)
def test_audit_survives_hostile_json(value: object) -> None:
    text = json.dumps(value)
    parsed = parse_audit(text, BATCH)
    assert parsed.flagged <= set(BATCH)
    assert len(parsed.unknown_ids) <= len(text)


def test_selfverify_shapes() -> None:
    store = [f"mem_{i:03d}" for i in range(64)]
    assert parse_selfverify('{"inconsistent": ["mem_004", "MEM_010"]}', store).flagged == {"mem_004", "mem_010"}
    assert parse_selfverify('```\n["mem_004"]\n```', store).flagged == {"mem_004"}
    bad = parse_selfverify('{"inconsistent": ["__import__(\'os\')", "mem_100"]}', store)
    assert bad.flagged == set() and len(bad.unknown_ids) == 2
    assert parse_selfverify("no idea", store).error is not None


@given(st.text(max_size=300))
def test_selfverify_never_crashes(text: str) -> None:
    store = ["mem_000", "mem_001"]
    assert parse_selfverify(text, store).flagged <= set(store)


def test_action_shapes() -> None:
    assert parse_action('{"action": "up"}') is Action.UP
    assert parse_action('```json\n{"Action": "LEFT"}\n```') is Action.LEFT
    assert parse_action("Action: down") is Action.DOWN
    assert parse_action("I will move right.") is Action.RIGHT
    assert parse_action("Going down is fatal, so RIGHT") is None  # two directions, no label
    assert parse_action('{"action": "JUMP"}') is None
    assert parse_action("") is None


@given(st.text(max_size=300))
def test_action_never_crashes(text: str) -> None:
    assert parse_action(text) in (None, *Action)


def test_audit_json_without_a_usable_verdict_is_unparseable() -> None:
    assert parse_audit('{"action": "RIGHT"}', BATCH).error is not None
    assert parse_audit('[{"memory_id": "mem_001", "reason": "S"}]', BATCH).error is not None
    assert parse_audit('[{"memory_id": "mem_009", "is_stale": true}]', BATCH).error is not None
