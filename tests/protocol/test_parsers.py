"""The answer readers against the forms real models write, and against hostile text."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialstale.env import Action
from spatialstale.protocol import read_action, read_audit, read_selfverify
from spatialstale.protocol._scan import MAX_CONTAINERS, scan, strip_reasoning

from ._hostile import answer_text, json_values

BATCH = ["mem_001", "mem_002", "mem_003"]
TRUTH = {"mem_001": False, "mem_002": True, "mem_003": False}
STORE = [f"mem_{i:03d}" for i in range(64)]


def _objects(quote: str = '"', true: str = "true", false: str = "false") -> list[str]:
    q = quote
    return [
        f"{{{q}memory_id{q}: {q}{mid}{q}, {q}is_stale{q}: {true if stale else false}, {q}reason{q}: {q}r{q}}}"
        for mid, stale in TRUTH.items()
    ]


PERFECT_AUDITS = {
    "json array": json.dumps([{"memory_id": m, "is_stale": s, "reason": "r"} for m, s in TRUTH.items()]),
    "json lines": "\n".join(_objects()),
    "python literal": "[" + ", ".join(_objects("'", "True", "False")) + "]",
    "trailing commas": "[\n" + ",\n".join(o[:-1] + ",}" for o in _objects()) + ",\n]",
    "fenced with prose": "Sure! Here is the audit.\n```json\n[" + ",".join(_objects()) + "]\n```\nLet me know.",
    "objects in prose": "First: " + _objects()[0] + ". Then " + _objects()[1] + ", and " + _objects()[2] + ".",
    "wrapper": json.dumps({"verdicts": [{"memory_id": m, "is_stale": s} for m, s in TRUTH.items()]}),
    "deep wrapper": json.dumps({"data": {"audit": {"results": [{"id": m, "stale": s} for m, s in TRUTH.items()]}}}),
    "keyed by id": json.dumps({m: s for m, s in TRUTH.items()}),
    "keyed objects": json.dumps({m: {"is_stale": s, "reason": "x"} for m, s in TRUTH.items()}),
    "keyed words": json.dumps({m: ("stale" if s else "valid") for m, s in TRUTH.items()}),
    "string booleans": json.dumps([{"memory_id": m, "is_stale": str(s).lower()} for m, s in TRUTH.items()]),
    "python booleans as strings": json.dumps([{"memory_id": m, "is_stale": str(s)} for m, s in TRUTH.items()]),
    "confidence and reasoning keys": json.dumps(
        [{"reasoning": "checked", "memory_id": m, "confidence": 0.9, "is_stale": s} for m, s in TRUTH.items()]
    ),
    "verdict words": json.dumps([{"memory_id": m, "verdict": "STALE" if s else "VALID"} for m, s in TRUTH.items()]),
    "inverted key": json.dumps([{"memory_id": m, "is_valid": not s} for m, s in TRUTH.items()]),
    "think block": '<think>mem_001 might be stale... [{"memory_id": "mem_001", "is_stale": true}]</think>\n'
    + json.dumps([{"memory_id": m, "is_stale": s} for m, s in TRUTH.items()]),
    "lone closing think tag": "the grid shows... mem_003 is stale?</think>"
    + json.dumps([{"memory_id": m, "is_stale": s} for m, s in TRUTH.items()]),
    "ids as written": json.dumps(
        [{"memory_id": m.upper().replace("_00", "_"), "is_stale": s} for m, s in TRUTH.items()]
    ),
    "bracketed ids": json.dumps([{"memory_id": f"[{m}]", "is_stale": s} for m, s in TRUTH.items()]),
    "unquoted keys": "["
    + ", ".join(f"{{memory_id: '{m}', is_stale: {str(s).lower()}}}" for m, s in TRUTH.items())
    + "]",
    "labelled lines": "\n".join(f"- {m}: {'STALE' if s else 'valid'}" for m, s in TRUTH.items()),
    "nested reason braces": json.dumps(
        [{"memory_id": m, "is_stale": s, "reason": "cell {5,4} [H]"} for m, s in TRUTH.items()]
    ),
}


@pytest.mark.parametrize("form", sorted(PERFECT_AUDITS))
def test_a_perfect_audit_in_any_form_reads_perfectly(form: str) -> None:
    parsed = read_audit(PERFECT_AUDITS[form], BATCH)
    assert parsed.error is None, parsed
    assert {m: v for m, (v, _) in parsed.verdicts.items()} == TRUTH
    assert parsed.unanswered == [] and parsed.conflicting == [] and parsed.unknown_ids == []


def test_truncated_answer_keeps_every_complete_object() -> None:
    full = json.dumps([{"memory_id": m, "is_stale": s, "reason": "because"} for m, s in TRUTH.items()])
    cut = full[: full.index("mem_003") + 12]
    parsed = read_audit(cut, BATCH)
    assert set(parsed.verdicts) == {"mem_001", "mem_002"}
    assert parsed.unanswered == ["mem_003"]
    assert "truncated" in parsed.notes
    wrapped = json.dumps({"verdicts": [{"memory_id": m, "is_stale": s} for m, s in TRUTH.items()]})
    parsed = read_audit(wrapped[: wrapped.index("mem_003")], BATCH)
    assert set(parsed.verdicts) == {"mem_001", "mem_002"}


def test_conflicting_duplicates_are_counted_and_agreeing_ones_are_not() -> None:
    text = json.dumps(
        [
            {"memory_id": "mem_001", "is_stale": True},
            {"memory_id": "mem_001", "is_stale": False},
            {"memory_id": "mem_002", "is_stale": True},
            {"memory_id": "mem_002", "is_stale": "stale"},
            {"memory_id": "mem_003", "is_stale": True, "is_valid": True},
            {"memory_id": "mem_777", "is_stale": True},
        ]
    )
    parsed = read_audit(text, BATCH)
    assert parsed.flagged == {"mem_002"}
    assert parsed.conflicting == ["mem_001", "mem_003"]
    assert parsed.unanswered == []
    assert parsed.unknown_ids == ["mem_777"]


def test_unreadable_audits() -> None:
    for text in (
        "I cannot determine the colours in this image.",
        "",
        '{"action": "RIGHT"}',
        '[{"memory_id": "mem_001", "reason": "S"}]',
        '[{"memory_id": "mem_009", "is_stale": true}]',
        "<think>mem_001: stale, mem_002: valid",
    ):
        parsed = read_audit(text, BATCH)
        assert parsed.error is not None, text
        assert parsed.flagged == set()
        assert set(parsed.unanswered) | set(parsed.conflicting) == set(BATCH)
    assert "reasoning only, no answer after it" in read_audit("<think>all fine", BATCH).notes


def test_reasoning_is_not_the_answer() -> None:
    assert strip_reasoning("<think>a</think>b<thinking>c</thinking>d") == " b d"
    assert strip_reasoning("a</think>b") == "b"
    assert strip_reasoning("a<think>b") == "a"


def test_nothing_is_evaluated() -> None:
    hostile = "[{'memory_id': __import__('os').system('echo pwned'), 'is_stale': True}]"
    parsed = read_audit(hostile, BATCH)
    assert parsed.flagged == set()


ANSWER_TEXT = answer_text("[]{}\"':,\\ \nmem_0123truefalsTF<>/think")


@settings(max_examples=300, deadline=None)
@given(ANSWER_TEXT)
def test_audit_reading_is_a_partition_of_the_batch(text: str) -> None:
    parsed = read_audit(text, BATCH)
    assert parsed.flagged <= set(BATCH)
    groups = [set(parsed.verdicts), set(parsed.unanswered), set(parsed.conflicting)]
    assert set().union(*groups) == set(BATCH)
    assert sum(map(len, groups)) == len(BATCH)
    assert (parsed.error is None) == bool(parsed.verdicts)


@settings(max_examples=200, deadline=None)
@given(json_values())
def test_audit_survives_hostile_json(value: object) -> None:
    text = json.dumps(value)
    parsed = read_audit(text, BATCH)
    assert parsed.flagged <= set(BATCH)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(list(TRUTH)), min_size=1, max_size=6), st.booleans())
def test_audit_verdicts_survive_any_split_into_lines(order: list[str], python: bool) -> None:
    lines = []
    for mid in order:
        value = ("True" if TRUTH[mid] else "False") if python else json.dumps(TRUTH[mid])
        lines.append(f'{{"memory_id": "{mid}", "is_stale": {value}}}')
    parsed = read_audit("\n".join(lines), BATCH)
    assert {m: v for m, (v, _) in parsed.verdicts.items()} == {m: TRUTH[m] for m in order}


def test_deep_nesting_and_huge_answers_are_bounded() -> None:
    for text in ("[" * 200_000, "{" * 200_000 + "}" * 200_000, '[{"a":' * 50_000, "]" * 100_000):
        assert read_audit(text, BATCH).error is not None
        assert read_selfverify(text, STORE).flagged == set()
        assert read_action(text).action is None
    many = "\n".join(['{"memory_id": "mem_001", "is_stale": true}'] * (MAX_CONTAINERS + 5))
    parsed = read_audit(many, BATCH)
    assert parsed.flagged == {"mem_001"}
    assert any(note.startswith("overlong") for note in parsed.notes)
    deep = "[" * 100 + json.dumps([{"memory_id": "mem_001", "is_stale": True}]) + "]" * 100
    assert read_audit(deep, BATCH).error is not None  # beyond MAX_DEPTH: skipped, not recursed
    assert scan("[" * 40 + "1" + "]" * 40).truncated is False


# --- SelfVerify ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        ('{"inconsistent": ["mem_004", "MEM_010"]}', {"mem_004", "mem_010"}),
        ('```\n["mem_004"]\n```', {"mem_004"}),
        ('{"inconsistent": "mem_001"}', {"mem_001"}),
        ('{"inconsistent": "mem_001, mem_002"}', {"mem_001", "mem_002"}),
        ('{"data": {"inconsistent": ["mem_005"]}}', {"mem_005"}),
        ('{"result": {"stale_ids": ["mem_005", "mem_006"]}}', {"mem_005", "mem_006"}),
        ("{'inconsistent': ['mem_007',]}", {"mem_007"}),
        ('{"inconsistent": [{"memory_id": "mem_008", "reason": "now H"}]}', {"mem_008"}),
        ('[{"memory_id": "mem_009", "is_stale": true}, {"memory_id": "mem_010", "is_stale": false}]', {"mem_009"}),
        ('<think>maybe mem_001</think>{"inconsistent": []}', set()),
        ("Inconsistent: mem_012, mem_044", {"mem_012", "mem_044"}),
        ('{"inconsistent": ["mem_001", "mem_002"], "consistent": ["mem_002"]}', {"mem_001"}),
    ],
)
def test_selfverify_forms(text: str, flagged: set[str]) -> None:
    parsed = read_selfverify(text, STORE)
    assert parsed.error is None
    assert parsed.flagged == flagged


def test_selfverify_counts_what_it_cannot_use() -> None:
    both = read_selfverify('{"inconsistent": ["mem_001", "mem_002"], "consistent": ["mem_002"]}', STORE)
    assert both.conflicting == ["mem_002"]
    bad = read_selfverify('{"inconsistent": ["__import__(\'os\')", "mem_100"]}', STORE)
    assert bad.flagged == set() and len(bad.unknown_ids) == 2
    for text in ("no idea", "", '{"answer": 42}', "<think>"):
        assert read_selfverify(text, STORE).error is not None, text


@settings(max_examples=300, deadline=None)
@given(ANSWER_TEXT)
def test_selfverify_never_flags_outside_the_store(text: str) -> None:
    parsed = read_selfverify(text, ["mem_000", "mem_001"])
    assert parsed.flagged <= {"mem_000", "mem_001"}
    assert not (parsed.flagged & set(parsed.conflicting))


# --- navigation ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ('{"action": "up"}', Action.UP),
        ('```json\n{"Action": "LEFT"}\n```', Action.LEFT),
        ("{'action': 'DOWN'}", Action.DOWN),
        ('{"action": "R"}', Action.RIGHT),
        ('{"reasoning": "LEFT is a hole", "action": "RIGHT"}', Action.RIGHT),
        ("Action: down", Action.DOWN),
        ("I will move right.", Action.RIGHT),
        ("i'll go left", Action.LEFT),
        ("RIGHT", Action.RIGHT),
        ("**Down**", Action.DOWN),
        ("right.", Action.RIGHT),
        ("Moving LEFT would be a mistake here, so my move is RIGHT.", Action.RIGHT),
        ("Going down is fatal, so RIGHT", Action.RIGHT),
        ("Not LEFT, RIGHT.", Action.RIGHT),
        ("DOWN leads into the hole at (1,0), while RIGHT reaches (0,1) safely. So RIGHT.", Action.RIGHT),
        ("I should avoid UP. The best move is DOWN.", Action.DOWN),
        ("<think>UP? no, LEFT? no.</think>Final answer: RIGHT", Action.RIGHT),
        ("The cell below (1, 0) is F, so I'll move DOWN.", Action.DOWN),
        ('{"action": "DOWN"}\n{"action": "DOWN"}', Action.DOWN),
        ("My next move is: `UP`", Action.UP),
    ],
)
def test_navigation_answers_read_as_a_person_would(text: str, action: Action) -> None:
    parsed = read_action(text)
    assert (parsed.action, parsed.status) == (action, "read"), parsed


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("I must not go DOWN because (1,0) is a hole.", "ambiguous"),
        ('{"action":"UP"} {"action":"DOWN"}', "ambiguous"),
        ("Action: UP. Action: LEFT.", "ambiguous"),
        ("Avoid LEFT.", "ambiguous"),
        ("I am not sure where to go.", "unreadable"),
        ("", "unreadable"),
        ('{"action": "JUMP"}', "unreadable"),
        ("<think>RIGHT looks good", "unreadable"),
    ],
)
def test_navigation_answers_without_one_commitment_are_counted(text: str, status: str) -> None:
    parsed = read_action(text)
    assert parsed.action is None and parsed.status == status, parsed


@settings(max_examples=300, deadline=None)
@given(ANSWER_TEXT)
def test_action_reading_is_consistent(text: str) -> None:
    parsed = read_action(text)
    assert (parsed.action is None) == (parsed.status != "read")
