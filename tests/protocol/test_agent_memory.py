"""How the memory an agent keeps is read back and judged (``_agent_memory``): the forms
agents write their notes in, and hostile text that must never raise."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialstale.env import make_instance
from spatialstale.protocol import LABELS, judge, label, memory_files, read_claims

SAFE, DANGER = frozenset({"SAFE"}), frozenset({"DANGER"})


@pytest.mark.parametrize(
    ("line", "claims"),
    [
        ("[mem_044] SAFE at (5,4): Frozen ice - safe to walk", {(5, 4): SAFE}),
        ("[mem_044] DANGER at (5,4): Hole - dangerous, do not step", {(5, 4): DANGER}),
        ("[mem_044] UNKNOWN at (5,4): flagged stale", {(5, 4): frozenset()}),
        ("     3\t[mem_044] DANGER at (5,4): Hole", {(5, 4): DANGER}),
        ("- [mem_044] DANGER at (5, 4): thawed into a hole", {(5, 4): DANGER}),
        ("(5,4) is a hole now", {(5, 4): DANGER}),
        ("(5,4): H", {(5, 4): DANGER}),
        ("(5,4)=F", {(5, 4): SAFE}),
        ("Cell [5,4] is frozen ice, safe", {(5, 4): SAFE}),
        ("(5,4) is no longer safe", {(5, 4): DANGER}),
        ("(5,4) is not a hole anymore", {(5, 4): SAFE}),
        ("(5,4) was safe, now it is a hole", {(5, 4): DANGER}),
        ("(5,4) previously safe; (5,5) is a hole", {(5, 5): DANGER}),
        ("(5,4) and (5,5) are holes", {(5, 4): DANGER, (5, 5): DANGER}),
        ("(5,4) is a hole. (5,5) is safe ice.", {(5, 4): DANGER, (5, 5): SAFE}),
    ],
)
def test_a_line_in_the_forms_agents_write(line: str, claims: dict[tuple[int, int], frozenset[str]]) -> None:
    read = read_claims({"/memories/grid.md": line}, 8)
    assert dict(read.cells) == claims


def test_what_cannot_be_read_is_counted() -> None:
    text = "# My notes\nthe rules say avoid holes\n(5,4) looks odd\n(2,2) is safe but also a hole\n(9,9) is a hole"
    read = read_claims({"/memories/grid.md": text}, 8)
    # a heading, a rule and a cell off the grid name no cell; two clauses name one without one claim
    assert (read.unplaced, read.unreadable, read.clauses) == (3, 2, 5)
    assert dict(read.cells) == {}


def test_each_label_by_the_rule() -> None:
    assert label("SAFE", True, SAFE) == "lie_kept"
    assert label("SAFE", True, DANGER) == "repaired"
    assert label("SAFE", True, frozenset()) == "removed"
    assert label("SAFE", False, DANGER) == "corrupted"
    assert label("SAFE", False, SAFE) == "kept_valid"
    assert label("SAFE", True, SAFE | DANGER) == "conflicted"


def test_a_memory_judged_against_its_grid() -> None:
    instance = make_instance(4810, "L2")
    grid = instance.initial_grid
    stale = instance.stale_ids(grid)
    assert stale
    files = memory_files(instance.memory)
    seeded = judge(instance.memory, files, grid, stale)
    assert seeded.counts["lie_kept"] == len(stale) and seeded.counts["kept_valid"] == 64 - len(stale)
    # rewrite every stale line to the truth, delete one valid line, add a false claim
    first_stale = next(e for e in instance.memory if e.id in stale)
    lines = []
    for entry in instance.memory:
        if entry.id in stale:
            lines.append(f"[{entry.id}] {'DANGER' if entry.claim == 'SAFE' else 'SAFE'} at {entry.pos}")
        elif entry.id != "mem_000":
            lines.append(entry.line)
    lines.append("(0,0) is a hole")
    judged = judge(instance.memory, {"/memories/grid.md": "\n".join(lines)}, grid, stale)
    assert judged.labels[first_stale.id] == "repaired"
    assert judged.counts["repaired"] == len(stale) and judged.counts["lie_kept"] == 0
    # (0,0) was removed, then claimed a hole: not seeded any more, but still the start's cell
    assert judged.labels["mem_000"] == "corrupted"
    assert sum(judged.counts[name] for name in LABELS) == judged.counts["seeded"] == 64


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.text(max_size=20), st.text(max_size=400), max_size=3))
def test_hostile_memory_never_raises_and_its_counts_add_up(files: dict[str, str]) -> None:
    instance = make_instance(4810, "L2")
    grid = instance.initial_grid
    judged = judge(instance.memory, files, grid, instance.stale_ids(grid))
    counts = judged.counts
    assert sum(counts[name] for name in LABELS) == counts["seeded"] == 64
    assert counts["unplaced"] + counts["unreadable"] <= counts["clauses"]
    assert counts["added"] == counts["added_true"] + counts["added_false"]
