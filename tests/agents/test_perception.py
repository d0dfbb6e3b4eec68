"""Reading prompts: the text listing, the PNG pixels, memory lines, the call kind."""

from __future__ import annotations

import pytest
from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser, ContentImage, ContentText

from spatialstale.agents._perception import (
    CallKind,
    call_kind,
    decode_image,
    perceive,
    read_image_grid,
    read_memory,
    read_text_grid,
    worded_kind,
)
from spatialstale.env import default_seeds, make_instance, render_image, text_observation
from spatialstale.protocol import (
    DEFAULT_AUDIT_PROMPT,
    PROMPT_KINDS,
    PROMPT_SETS,
    Sight,
    audit_messages,
    fill_prompt,
    navigate_messages,
    selfverify_messages,
    system_message,
)
from spatialstale.protocol._edits import EDITS_REQUEST
from spatialstale.protocol._prompts import memory_block, png_data_uri

TEXT = Sight("text")

SEEDS = default_seeds()[:6]


@pytest.mark.parametrize("size", [4, 8, 16])
def test_text_listing_reads_back_exactly(size: int) -> None:
    for seed in SEEDS:
        grid = make_instance(seed, "L2", size).initial_grid
        assert read_text_grid(text_observation(grid, (0, 0))) == grid


@pytest.mark.parametrize("size", [4, 8, 16])
def test_image_pixels_read_back_grid_and_agent(size: int) -> None:
    for seed in SEEDS[:3]:
        grid = make_instance(seed, "L1", size).initial_grid
        for agent in [(0, 0), (size - 1, size - 2), (size // 2, size - 1), (1, 0)]:
            read = read_image_grid(render_image(grid, agent))
            assert read == (grid, agent)
        assert read_image_grid(render_image(grid, None)) == (grid, None)


def test_image_of_another_cell_size_is_read_with_the_prompt_size() -> None:
    grid = make_instance(SEEDS[0], "L2").initial_grid
    image = render_image(grid, (2, 3), cell_px=40)
    assert read_image_grid(image) is None
    assert read_image_grid(image, size_hint=8) == (grid, (2, 3))


def test_memory_lines_are_read_in_order() -> None:
    memory = make_instance(SEEDS[0], "L2").memory
    claims = read_memory(memory_block(memory))
    assert [(c.id, c.claim, c.pos) for c in claims] == [(e.id, e.claim, e.pos) for e in memory]


@pytest.mark.parametrize("modality", ["text", "vision", "both"])
def test_perceive_real_prompts(modality: str) -> None:
    instance = make_instance(SEEDS[1], "L2")
    grid = instance.initial_grid
    seen = perceive(navigate_messages(instance.memory[:7], grid, (3, 2), instance.goal, 41, Sight(modality)))
    assert seen.kind is CallKind.NAVIGATE
    assert seen.grid == grid
    assert seen.agent == (3, 2) and seen.goal == (7, 7)
    assert [c.id for c in seen.memory] == [e.id for e in instance.memory[:7]]
    assert seen.source == ("image" if modality == "vision" else "text")
    assert perceive(audit_messages(instance.memory[:3], grid, (0, 0), Sight(modality))).kind is CallKind.AUDIT
    assert perceive(selfverify_messages(instance.memory, grid, (0, 0), Sight(modality))).kind is CallKind.SELFVERIFY


def test_no_memory_view_lists_nothing() -> None:
    instance = make_instance(SEEDS[1], "L1")
    seen = perceive(navigate_messages(None, instance.initial_grid, (0, 0), instance.goal, 50, TEXT))
    assert seen.memory == ()


def test_prompts_without_a_call_kind_or_a_grid() -> None:
    seen = perceive([ChatMessageUser(content="What is the capital of France?")])
    assert seen.kind is None and seen.grid is None and seen.problem
    # the kind is the system message's tag; untagged (a request off the wire), a shipped
    # prompt's wording, as a model reads it, and a custom prompt is no call
    custom = perceive([ChatMessageSystem(content="Audit each entry."), ChatMessageUser(content="x")])
    assert custom.kind is None
    tagged = perceive([system_message("Audit each entry.", 8, "selfverify"), ChatMessageUser(content="x")])
    assert tagged.kind is CallKind.SELFVERIFY
    broken: list[ChatMessage] = [
        system_message("Audit.", 8, "audit"),
        ChatMessageUser(content=[ContentText(text="x"), ContentImage(image="data:image/png;base64,!!notpng")]),
    ]
    seen = perceive(broken)
    assert seen.kind is CallKind.AUDIT and seen.grid is None and seen.problem == "the grid image could not be read"


def test_decode_image_rejects_garbage() -> None:
    assert decode_image("data:image/png;base64,AAAA") is None
    assert decode_image("not a path or a uri") is None
    grid = make_instance(SEEDS[0], "L1").initial_grid
    image = decode_image(png_data_uri(grid, (0, 0)))
    assert image is not None and image.size == (384, 384)


def test_absurd_coordinates_are_ignored() -> None:
    assert read_text_grid("(0,0)=S (0,1)=F (99999999,3)=H (1,0)=H (1,1)=G") == ("SF", "HG")


@pytest.mark.parametrize("size", [8, 16])
def test_an_untagged_shipped_prompt_is_told_by_its_wording_and_the_tag_wins(size: int) -> None:
    for prompt_set in PROMPT_SETS.values():
        for kind in PROMPT_KINDS:
            text = fill_prompt(prompt_set.prompt(kind), size)
            # with an option's request after it, as -T edits=true sends it
            for sent in (text, text + EDITS_REQUEST):
                assert worded_kind([ChatMessageSystem(content=sent), ChatMessageUser(content="x")]) is CallKind(kind)
    audit = DEFAULT_AUDIT_PROMPT
    assert call_kind([system_message(audit, 8, "selfverify")]) is CallKind.SELFVERIFY
    assert worded_kind([ChatMessageUser(content=fill_prompt(audit, 8))]) is None  # a user message instructs nothing
