"""docs/prompts.md lists every prompt the suite sends, verbatim: each block is the text
the code holds, so the page cannot drift from what a model reads."""

from __future__ import annotations

import re
from pathlib import Path

from spatialstale.env import make_instance
from spatialstale.protocol import (
    CALL_KINDS,
    DEFAULT_MEMORY_PROMPT,
    DEFAULT_PROMPTS,
    DEFAULT_TOOLS_PROMPT,
    PROMPT_SETS,
    Sight,
    audit_messages,
    fill_prompt,
)
from spatialstale.protocol._crops import CROPS_NOTE
from spatialstale.protocol._edits import EDITS_REQUEST
from spatialstale.solvers import batches_of

PAGE = Path(__file__).resolve().parents[1] / "docs" / "prompts.md"
BLOCK = re.compile(r"<!-- (prompt|example): ([^>]+?) -->\n```text\n(.*?)\n```\n", re.DOTALL)


def documented() -> dict[str, str]:
    """Each block of the page by its key (``default/audit``, ``tools``, ``example ...``)."""
    blocks: dict[str, str] = {}
    for label, key, text in BLOCK.findall(PAGE.read_text(encoding="utf-8")):
        name = key if label == "prompt" else f"example {key}"
        assert name not in blocks, f"{name} is documented twice"
        blocks[name] = text
    return blocks


def expected() -> dict[str, str]:
    """Every prompt the suite ships: the default set's in full, the other sets' overrides,
    the tool navigator's and the two option suffixes (as they follow a newline)."""
    texts = {f"default/{kind}": text for kind, text in DEFAULT_PROMPTS.items()}
    for name, prompt_set in PROMPT_SETS.items():
        texts.update({f"{name}/{kind}": text for kind, text in prompt_set.overrides.items()})
    texts["tools"] = DEFAULT_TOOLS_PROMPT
    texts["memory"] = DEFAULT_MEMORY_PROMPT
    texts["edits"] = EDITS_REQUEST.removeprefix("\n")
    texts["crops"] = CROPS_NOTE
    return texts


def test_every_prompt_is_documented_verbatim() -> None:
    blocks = documented()
    prompts = {key: text for key, text in blocks.items() if not key.startswith("example ")}
    assert prompts == expected()
    # the page shows each suffix without the newline that joins it to the prompt
    assert "\n" + blocks["edits"] == EDITS_REQUEST


def test_the_example_call_is_what_the_audit_sends() -> None:
    instance = make_instance(4810, "L2")
    [system, user] = audit_messages(
        batches_of(instance.memory, 10)[0], instance.initial_grid, instance.start, Sight("text")
    )
    assert system.text == fill_prompt(documented()["default/audit"], 8)
    assert not isinstance(user.content, str)
    assert "".join(part.text for part in user.content if part.type == "text") == documented()["example audit 4810 L2"]


def test_the_page_names_every_call_kind_and_no_marker_is_left_in_a_prompt() -> None:
    page = PAGE.read_text(encoding="utf-8")
    assert all(f"`{kind}`" in page for kind in CALL_KINDS)
    assert not any("[SpatialSTALE" in text for text in expected().values())
