"""The prompt-set registry: what each set holds, what it keeps, and its hash."""

from __future__ import annotations

import dataclasses
import re

import pytest

from spatialstale.agents._perception import CallKind, call_kind
from spatialstale.env import make_instance
from spatialstale.protocol import (
    DEFAULT_AUDIT_PROMPT,
    DEFAULT_NAVIGATE_PROMPT,
    DEFAULT_PERCEPTION_PROMPT,
    DEFAULT_PROMPT_SET,
    DEFAULT_SELFVERIFY_PROMPT,
    PROMPT_KINDS,
    PROMPT_SETS,
    PromptSet,
    Sight,
    audit_messages,
    fill_prompt,
    navigate_messages,
    perception_messages,
    prompt_hash,
    read_action,
    read_audit,
    read_perception,
    read_selfverify,
    selfverify_messages,
)
from spatialstale.protocol._prompt_sets import HASH_LENGTH, prompt_set_metadata

TEXT = Sight("text")

SETS = list(PROMPT_SETS.values())
KINDS = {
    "audit": CallKind.AUDIT,
    "selfverify": CallKind.SELFVERIFY,
    "navigate": CallKind.NAVIGATE,
    "perception": CallKind.PERCEPTION,
}


def test_the_registry_holds_the_four_sets_by_name_default_first() -> None:
    assert list(PROMPT_SETS) == ["default", "no_rule", "warned", "minimal"]
    assert DEFAULT_PROMPT_SET == "default"
    for name, prompt_set in PROMPT_SETS.items():
        assert prompt_set.name == name
        assert isinstance(prompt_set.version, int) and prompt_set.version >= 1
        assert prompt_set.summary and "\n" not in prompt_set.summary


def test_a_set_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        PROMPT_SETS["default"].audit = "x"  # type: ignore[misc]


def test_default_is_todays_prompts_exactly() -> None:
    default = PROMPT_SETS["default"]
    assert default.prompt("audit") == DEFAULT_AUDIT_PROMPT
    assert default.prompt("selfverify") == DEFAULT_SELFVERIFY_PROMPT
    assert default.prompt("navigate") == DEFAULT_NAVIGATE_PROMPT
    assert default.prompt("perception") == DEFAULT_PERCEPTION_PROMPT


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="kind must be one of audit, selfverify, navigate, perception; got 'plan'"):
        PROMPT_SETS["default"].prompt("plan")


@pytest.mark.parametrize("prompt_set", SETS, ids=lambda s: s.name)
@pytest.mark.parametrize("kind", PROMPT_KINDS)
def test_every_prompt_is_plain_instructions_with_only_the_size_placeholder(prompt_set: PromptSet, kind: str) -> None:
    text = prompt_set.prompt(kind)
    # what the model reads is the instructions: no harness line, no name of the suite
    assert text == text.strip() and "SpatialSTALE" not in text and not text.startswith("[")
    assert "{size}" in text
    filled = fill_prompt(text, 8)
    assert "{size}" not in filled and "8x8" in filled
    # any other brace pair is a literal JSON example, never a name to format
    assert not re.findall(r"\{[A-Za-z_]\w*\}", filled)


@pytest.mark.parametrize("prompt_set", SETS, ids=lambda s: s.name)
def test_the_reference_agents_recognise_every_call_of_every_set(prompt_set: PromptSet) -> None:
    instance = make_instance(4810, "L2")
    grid, start = instance.initial_grid, instance.start
    entries = instance.memory[:3]
    messages = {
        "audit": audit_messages(entries, grid, start, TEXT, prompt_set.audit),
        "selfverify": selfverify_messages(entries, grid, start, TEXT, prompt_set.selfverify),
        "navigate": navigate_messages(entries, grid, start, instance.goal, 50, TEXT, prompt_set.navigate),
        "perception": perception_messages([(0, 0)], grid, start, TEXT, prompt_set.prompt("perception")),
    }
    for kind, call in messages.items():
        assert call_kind(call) is KINDS[kind]


def _example(text: str) -> str:
    """The answer example a prompt shows: its last line from the first bracket on."""
    last = text.splitlines()[-1]
    return last[min(i for i in (last.find("["), last.find("{")) if i >= 0) :]


@pytest.mark.parametrize("prompt_set", SETS, ids=lambda s: s.name)
def test_every_prompt_shows_an_answer_the_readers_accept(prompt_set: PromptSet) -> None:
    audit = read_audit(_example(prompt_set.audit), ["mem_000"])
    assert audit.error is None and set(audit.verdicts) == {"mem_000"}
    selfverify = read_selfverify(_example(prompt_set.selfverify), ["mem_012", "mem_044"])
    assert selfverify.error is None and "mem_012" in selfverify.flagged
    assert read_action(_example(prompt_set.navigate)).action is not None
    perception = read_perception(_example(prompt_set.prompt("perception")), [(0, 0)])
    assert perception.error is None and perception.readings == {(0, 0): "S"}


def test_no_rule_drops_the_staleness_rule_and_nothing_else_of_the_format() -> None:
    no_rule = PROMPT_SETS["no_rule"]
    for text in (no_rule.audit, no_rule.selfverify):
        assert "may have changed" not in text and "thaw" not in text
        assert "is stale when" not in text
    assert "the claim holds" not in no_rule.audit  # the default example reason hints at the rule
    assert no_rule.navigate == DEFAULT_NAVIGATE_PROMPT


def test_warned_tells_the_navigator_memory_may_be_out_of_date_and_the_grid_wins() -> None:
    warned = PROMPT_SETS["warned"]
    assert "may be out of date" in warned.navigate and "authoritative" in warned.navigate
    assert "may be out of date" not in DEFAULT_NAVIGATE_PROMPT
    assert (warned.audit, warned.selfverify) == (DEFAULT_AUDIT_PROMPT, DEFAULT_SELFVERIFY_PROMPT)


@pytest.mark.parametrize("kind", PROMPT_KINDS)
def test_minimal_is_the_shortest_prompt_of_every_kind(kind: str) -> None:
    lengths = {s.name: len(s.prompt(kind)) for s in SETS}
    assert lengths["minimal"] == min(lengths.values())
    assert lengths["minimal"] < lengths["default"] / 2


def test_the_hash_is_twelve_hex_digits_of_the_texts_by_kind() -> None:
    texts = {"audit": DEFAULT_AUDIT_PROMPT, "navigate": DEFAULT_NAVIGATE_PROMPT}
    digest = prompt_hash(texts)
    assert re.fullmatch(rf"[0-9a-f]{{{HASH_LENGTH}}}", digest) and HASH_LENGTH == 12
    assert prompt_hash(dict(reversed(texts.items()))) == digest  # order of the mapping is not the text
    assert prompt_hash({**texts, "audit": DEFAULT_AUDIT_PROMPT + " "}) != digest
    assert prompt_hash({"audit": DEFAULT_NAVIGATE_PROMPT, "navigate": DEFAULT_AUDIT_PROMPT}) != digest
    assert prompt_hash({"audit": "x"}) == "d87acdf81a4f"  # pinned: a log's hash must stay comparable


def test_the_metadata_names_the_set_its_version_and_the_hash_of_the_texts_sent() -> None:
    warned = PROMPT_SETS["warned"]
    texts = {"navigate": "mine {size}"}
    assert prompt_set_metadata(warned, texts) == {
        "prompt_set": "warned",
        "prompt_set_version": warned.version,
        "prompt_hash": prompt_hash(texts),
    }
