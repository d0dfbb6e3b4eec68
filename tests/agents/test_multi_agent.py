"""The reference agents under regime MA, on the suite's real prompts: the told route and
habit make every cell the other agent left a hole to them."""

from __future__ import annotations

import json
import random

import pytest

from spatialstale.agents._perception import perceive, read_broken
from spatialstale.agents._policies import AGENTS
from spatialstale.env import default_seeds, make_instance, other_agent_note, route_of
from spatialstale.protocol import Sight, audit_messages, selfverify_messages

ROUTE = ((2, 3), (2, 4), (2, 5), (3, 5), (4, 5))


def test_read_broken_follows_the_told_moves() -> None:
    note = other_agent_note(ROUTE)
    assert read_broken(note) == ROUTE[:-1]
    assert read_broken(note.replace("it breaks the ice of every cell it leaves", "it is careful")) == ()
    assert read_broken(note.replace("now stands at (4,5)", "now stands at (0,0)")) == ()


@pytest.mark.parametrize("modality", ["text", "vision", "both"])
def test_selfverify_flags_exactly_the_broken_cells(modality: str) -> None:
    for seed in default_seeds()[:3]:
        instance = make_instance(seed, "MA")
        sight = Sight(modality).for_instance(instance)
        grid = instance.initial_grid
        messages = selfverify_messages(instance.memory, grid, instance.start, sight)
        seen = perceive(messages)
        assert seen.broken == route_of(instance)[:-1]
        truth = instance.stale_ids(grid)
        flagged = {
            name: set(json.loads(AGENTS[name].answer(seen, random.Random(0)))["inconsistent"])
            for name in ("observer", "colourblind", "credulous")
        }
        assert flagged["observer"] == truth and not flagged["credulous"]
        # the holes it is told of need no eyes; those it must see in an image it misses
        assert truth <= flagged["colourblind"]


def test_the_other_agents_cell_reads_as_ice() -> None:
    instance = make_instance(default_seeds()[0], "MA")
    sight = Sight("vision").for_instance(instance)
    seen = perceive(audit_messages(instance.memory[:10], instance.initial_grid, instance.start, sight))
    assert seen.grid is not None
    end = route_of(instance)[-1]
    assert seen.grid[end[0]][end[1]] == "F"
    assert all(seen.grid[r][c] == "H" for r, c in route_of(instance)[:-1])
