"""The provider through ``get_model``: registration, audits, SelfVerify, randomness."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser, ContentImage, ContentText, get_model

from spatialstale.agents._provider import ReferenceAgentError
from spatialstale.env import default_seeds, make_instance
from spatialstale.protocol import (
    DEFAULT_AUDIT_PROMPT,
    DEFAULT_NAVIGATE_PROMPT,
    Sight,
    audit_messages,
    fill_prompt,
    navigate_messages,
    parse_action,
    read_audit,
)

from ._support import MODALITIES, agent, answer, audit, f1, run, selfverify

TEXT = Sight("text")

SEEDS = default_seeds()[:4]


def test_unknown_agent_name_lists_the_valid_ones(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="observer, credulous, random"):
        get_model("spatialstale/oracle", memoize=False)
    # printed once here: Inspect's CLI shows this error as nothing else (tests/evals/test_cli.py)
    assert capsys.readouterr().err.splitlines() == [
        "spatialstale model must be one of observer, credulous, random, colourblind; got 'oracle'"
    ]


def test_model_arguments_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ReferenceAgentError, match="no model arguments"):
        get_model("spatialstale/observer", memoize=False, temperature_scale=2)
    assert capsys.readouterr().err.splitlines() == [
        "spatialstale/observer takes no model arguments; got temperature_scale"
    ]


@pytest.mark.parametrize("modality", MODALITIES)
@pytest.mark.parametrize("regime", ["L1", "L2"])
def test_observer_detection_is_perfect(regime: str, modality: str) -> None:
    async def check() -> None:
        model = agent("observer")
        for seed in SEEDS:
            instance = make_instance(seed, regime)
            grid = instance.initial_grid
            truth = instance.stale_ids(grid)
            assert truth
            assert f1(await audit(model, instance, grid, modality), truth) == 1.0
            assert await selfverify(model, instance, grid, modality) == truth

    run(check())


def test_observer_detection_after_every_l3_event() -> None:
    async def check() -> None:
        model = agent("observer")
        instance = make_instance(SEEDS[0], "L3")
        for event in instance.schedule:
            grid = instance.grid_after(event.step)
            for modality in ("text", "vision"):
                assert await audit(model, instance, grid, modality) == instance.stale_ids(grid)

    run(check())


@pytest.mark.parametrize("batch_size", [1, 5, 20])
def test_observer_detection_at_other_batch_sizes(batch_size: int) -> None:
    instance = make_instance(SEEDS[1], "L2")
    grid = instance.initial_grid
    flagged = run(audit(agent("observer"), instance, grid, "text", batch_size))
    assert flagged == instance.stale_ids(grid)


@pytest.mark.parametrize("size", [4, 16])
def test_observer_detection_on_other_sizes(size: int) -> None:
    instance = make_instance(SEEDS[2], "L2", size)
    grid = instance.initial_grid
    for modality in ("text", "vision"):
        assert run(audit(agent("observer"), instance, grid, modality, 20)) == instance.stale_ids(grid)


@pytest.mark.parametrize("modality", MODALITIES)
def test_credulous_flags_nothing(modality: str) -> None:
    async def check() -> None:
        model = agent("credulous")
        instance = make_instance(SEEDS[0], "L2")
        grid = instance.initial_grid
        assert await audit(model, instance, grid, modality) == set()
        assert await selfverify(model, instance, grid, modality) == set()

    run(check())


def test_random_is_reproducible_with_a_seed_and_fresh_without() -> None:
    async def check() -> None:
        instance = make_instance(SEEDS[0], "L2")
        messages = audit_messages(instance.memory[:64], instance.initial_grid, (0, 0), TEXT)
        seeded = agent("random", seed=7)
        first = await answer(seeded, messages)
        assert await answer(seeded, messages) == first
        assert await answer(agent("random", seed=7), messages) == first
        assert await answer(agent("random", seed=8), messages) != first
        unseeded = agent("random")
        assert await answer(unseeded, messages) != await answer(unseeded, messages)  # p = 2**-64

    run(check())


def test_random_flags_half_and_moves_everywhere() -> None:
    async def check() -> None:
        model = agent("random", seed=1)
        instance = make_instance(SEEDS[1], "L2")
        grid = instance.initial_grid
        flags = [len(await audit(model, instance, grid, "text")), len(await selfverify(model, instance, grid, "text"))]
        assert all(16 <= n <= 48 for n in flags), flags  # 64 coin flips each
        actions = set()
        for steps_left in range(50, 10, -1):
            text = await answer(model, navigate_messages(None, grid, (0, 0), instance.goal, steps_left, TEXT))
            actions.add(parse_action(text))
        assert actions == set(parse_action(w) for w in ("UP", "DOWN", "LEFT", "RIGHT"))

    run(check())


def test_prompts_it_cannot_read_get_plain_text() -> None:
    async def check() -> None:
        instance = make_instance(SEEDS[0], "L2")
        for name in ("observer", "credulous", "random"):
            model = agent(name, seed=3)
            text = await answer(model, [ChatMessageUser(content="Which way to the goal?")])
            assert text.startswith("I cannot answer") and parse_action(text) is None
        no_grid: list[ChatMessage] = [
            ChatMessageSystem(content=fill_prompt(DEFAULT_AUDIT_PROMPT, 8)),
            ChatMessageUser(content="[]"),
        ]
        text = await answer(agent("observer"), no_grid)
        assert read_audit(text, [instance.memory[0].id]).error is not None
        no_position = navigate_messages(None, instance.initial_grid, (0, 0), instance.goal, 50, Sight("vision"))
        first = no_position[1]
        assert isinstance(first.content, list)
        no_position[1] = ChatMessageUser(content=first.content[:-1])  # drop the position line
        # the triangle still shows where the agent is
        assert parse_action(await answer(agent("observer"), no_position)) is not None

    run(check())


@settings(max_examples=40, deadline=None)
@given(text=st.text(max_size=300), image=st.text(max_size=60), kind=st.sampled_from(["audit", "navigate", "none"]))
def test_hostile_prompts_never_raise(text: str, image: str, kind: str) -> None:
    system = {"audit": DEFAULT_AUDIT_PROMPT, "navigate": DEFAULT_NAVIGATE_PROMPT, "none": "{size}"}[kind]
    messages: list[ChatMessage] = [
        ChatMessageSystem(content=fill_prompt(system, 8)),
        ChatMessageUser(content=[ContentText(text=text), ContentImage(image="data:image/png;base64," + image)]),
    ]

    async def check() -> None:
        for name in ("observer", "credulous", "random"):
            reply = await answer(agent(name, seed=0), messages)
            assert reply
            if reply.startswith(("[", "{")):
                json.loads(reply)

    run(check())
