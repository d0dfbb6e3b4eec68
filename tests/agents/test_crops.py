"""The reference agents read memory crops (``-T memory=crops``) from their pixels."""

from __future__ import annotations

import json
import random

import pytest
from inspect_ai.model import ContentImage

from spatialstale.agents._perception import perceive
from spatialstale.agents._policies import AGENTS
from spatialstale.env import default_seeds, make_instance
from spatialstale.protocol import DEFAULT_AUDIT_PROMPT, Sight, audit_messages
from spatialstale.protocol._crops import Pictures, crops_prompt


@pytest.mark.parametrize("size", [4, 8, 16])
def test_every_crop_reads_back_as_its_entry(size: int) -> None:
    instance = make_instance(default_seeds()[0], "L2", size)
    messages = audit_messages(
        instance.memory, instance.initial_grid, (0, 0), Sight("vision"), crops_prompt(DEFAULT_AUDIT_PROMPT)
    )
    assert perceive(messages).memory and not any(m.pictured for m in perceive(messages).memory)
    pictured = audit_messages(
        instance.memory,
        instance.initial_grid,
        (0, 0),
        Sight("vision"),
        crops_prompt(DEFAULT_AUDIT_PROMPT),
        Pictures(instance.g0),
    )
    seen = perceive(pictured)
    assert seen.problem is None and seen.source == "image" and seen.grid == instance.initial_grid
    assert [(m.id, m.claim, m.pos) for m in seen.memory] == [(e.id, e.claim, e.pos) for e in instance.memory]
    assert all(m.pictured for m in seen.memory) and seen.notes == ()


def test_an_unreadable_crop_gets_the_plain_text_answer() -> None:
    instance = make_instance(default_seeds()[0], "L2")
    messages = audit_messages(
        instance.memory[:3], instance.initial_grid, (0, 0), Sight("vision"), "", Pictures(instance.g0)
    )
    parts = messages[-1].content
    assert not isinstance(parts, str)
    index = [i for i, p in enumerate(parts) if isinstance(p, ContentImage)][2]
    parts[index] = ContentImage(image="data:image/png;base64,AAAA")
    for name in ("observer", "credulous", "colourblind"):
        answer = AGENTS[name].answer(perceive(messages), random.Random(0))
        assert answer == "I cannot answer this prompt: the picture of mem_001 could not be read."


def test_the_colourblind_agent_reads_a_remembered_hole_as_ice() -> None:
    instance = make_instance(default_seeds()[0], "L2")
    holes = [e for e in instance.memory if e.claim == "DANGER"]
    grid = instance.g0  # nothing changed: every entry holds
    sight = Sight("both")
    messages = audit_messages(holes, grid, (0, 0), sight, "", Pictures(instance.g0))
    observer = json.loads(AGENTS["observer"].answer(perceive(messages), random.Random(0)))
    blind = json.loads(AGENTS["colourblind"].answer(perceive(messages), random.Random(0)))
    assert not any(v["is_stale"] for v in observer)
    # the listing shows a hole where the crop shows it ice: a false alarm on every hole
    assert all(v["is_stale"] for v in blind) and len(blind) == len(holes)
