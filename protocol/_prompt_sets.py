"""Named, versioned sets of the system prompts, for prompt-sensitivity runs.

The paper never published its prompts, so a published comparison has to say how much
of a result is the wording. A prompt set groups the system prompts of every call kind
(audit, SelfVerify, navigation and, optionally, perception) under a name and a
version; ``-T prompt_set=NAME`` picks one on the detection, navigation and perception
tasks, and the log records the set's name, version and a hash of the texts used.

- ``default``: the prompts of ``_prompts`` unchanged (the paper-protocol reproduction).
- ``no_rule``: the audit and SelfVerify prompts without the explicit staleness rule;
  the model must infer that a claim the grid contradicts is stale.
- ``warned``: the navigation prompt says the memory was written earlier, may be out of
  date, and that the current grid is authoritative.
- ``minimal``: the shortest prompts that still state the cells and the answer format.

A prompt is exactly what the model reads (the call kind travels in the system
message's metadata, ``system_message``, never in its text), with ``{size}`` as its only
placeholder (see ``fill_prompt``). A set is its overrides of the default prompts, kind
by kind (:data:`PROMPT_SETS`); bump its version whenever one of its texts changes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from ._prompts import (
    DEFAULT_AUDIT_PROMPT,
    DEFAULT_NAVIGATE_PROMPT,
    DEFAULT_PERCEPTION_PROMPT,
    DEFAULT_SELFVERIFY_PROMPT,
)

DEFAULT_PROMPTS: dict[str, str] = {
    "audit": DEFAULT_AUDIT_PROMPT,
    "selfverify": DEFAULT_SELFVERIFY_PROMPT,
    "navigate": DEFAULT_NAVIGATE_PROMPT,
    "perception": DEFAULT_PERCEPTION_PROMPT,
}
"""The default system prompt of each call kind a set holds a prompt for."""

PROMPT_KINDS = tuple(DEFAULT_PROMPTS)
"""The call kinds a set holds a system prompt for, as named in ``PromptSet.prompt``."""

DEFAULT_PROMPT_SET = "default"
HASH_LENGTH = 12
"""Hex digits of the sha256 kept in the log: enough to tell wordings apart."""


@dataclass(frozen=True)
class PromptSet:
    """One named, versioned group of system prompts: the default prompts with some
    kinds overridden.

    Attributes:
        name: the ``-T prompt_set`` value.
        version: bumped whenever a text of the set changes.
        summary: one line saying what the set changes against ``default``.
        overrides: the set's own prompt of each kind it changes.
    """

    name: str
    version: int
    summary: str
    overrides: Mapping[str, str] = field(default_factory=dict)

    def prompt(self, kind: str) -> str:
        """The set's prompt for ``kind`` (one of ``PROMPT_KINDS``)."""
        if kind not in DEFAULT_PROMPTS:
            raise ValueError(f"kind must be one of {', '.join(PROMPT_KINDS)}; got {kind!r}")
        return self.overrides.get(kind, DEFAULT_PROMPTS[kind])

    @property
    def audit(self) -> str:
        return self.prompt("audit")

    @property
    def selfverify(self) -> str:
        return self.prompt("selfverify")

    @property
    def navigate(self) -> str:
        return self.prompt("navigate")


def _edited(prompt: str, *replacements: tuple[str, str]) -> str:
    """``prompt`` with each (old, new) text replaced; an ``old`` it does not hold
    raises, so a change to the default prompts cannot leave a derived set silently
    unchanged."""
    for old, new in replacements:
        if old not in prompt:
            raise ValueError(f"the prompt no longer holds {old!r}")
        prompt = prompt.replace(old, new)
    return prompt


_CHANGED = (
    "The grid may have changed since the memory was written: ice can thaw into holes and holes can freeze into ice.\n"
)
_RULE = (
    "A memory entry is stale when its claim no longer matches the current grid: a SAFE claim about a cell that is "
    "now a hole,\nor a DANGER claim about a cell that is now safe.\n"
)
_GRID = "Grid {size}x{size}: S start, F ice, H hole, G goal; (row,col)."


def _minimal(task: str, example: str) -> str:
    """The shortest prompt of a kind: the cells, the coordinates, the task and the answer format."""
    return f"{task}\nJSON only: {example}"


PROMPT_SETS: dict[str, PromptSet] = {
    prompt_set.name: prompt_set
    for prompt_set in (
        PromptSet("default", 2, "the suite's prompts (the paper-protocol reproduction)"),
        PromptSet(
            "no_rule",
            2,
            "audit and SelfVerify prompts without the explicit staleness rule",
            {
                # neither that the grid may have changed nor what makes an entry stale (nor a
                # hint of it in the example's reason): the model must infer the rule
                "audit": _edited(
                    DEFAULT_AUDIT_PROMPT,
                    (_CHANGED + _RULE, ""),
                    ('"reason": "(0,0) is S in the current grid; the claim holds"', '"reason": "..."'),
                ),
                "selfverify": _edited(DEFAULT_SELFVERIFY_PROMPT, (_CHANGED, "")),
            },
        ),
        PromptSet(
            "warned",
            2,
            "navigation prompt warns that memory may be out of date and the grid is authoritative",
            {
                "navigate": _edited(
                    DEFAULT_NAVIGATE_PROMPT,
                    (
                        "The memory holds notes from earlier exploration of this grid.",
                        "The memory holds notes from earlier exploration of this grid. They were written earlier "
                        "and may be out of date: ice can have thawed into holes and holes can have frozen into "
                        "ice since.\nThe current grid is authoritative: where a memory note and the current grid "
                        "disagree, trust the current grid.",
                    ),
                )
            },
        ),
        PromptSet(
            "minimal",
            2,
            "the shortest prompts that still state the cells and the answer format",
            {
                "audit": _minimal(
                    f"{_GRID} Is each memory entry stale against the current grid?",
                    '[{"memory_id": "mem_000", "is_stale": false, "reason": "..."}]',
                ),
                "selfverify": _minimal(
                    f"{_GRID} Which memory entries contradict the current grid?",
                    '{"inconsistent": ["mem_012"]}',
                ),
                "navigate": _minimal(
                    "Grid {size}x{size}: S start, F ice, H hole (lethal), G goal; (row,col). Reach G without "
                    "entering a hole.\nUP row-1, DOWN row+1, LEFT col-1, RIGHT col+1.",
                    '{"action": "RIGHT"}',
                ),
                "perception": _minimal(
                    f"{_GRID} Give the type of each cell asked.",
                    '[{"cell": "(0,0)", "type": "S"}]',
                ),
            },
        ),
    )
}
"""Every shipped prompt set by name, ``default`` first: each is its overrides of
:data:`DEFAULT_PROMPTS`."""


def prompt_hash(prompts: Mapping[str, str]) -> str:
    """The first ``HASH_LENGTH`` hex digits of the sha256 of ``prompts`` (kind -> text).

    The texts are hashed as given (``{size}`` unfilled, the size is in the log
    beside it) and keyed by kind, so a prompt moved to another call kind changes the
    hash.
    """
    payload = json.dumps(dict(sorted(prompts.items())), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:HASH_LENGTH]


def prompt_set_metadata(prompt_set: PromptSet, prompts: Mapping[str, str]) -> dict[str, str | int]:
    """What a log records of the prompts a task used: the set's name and version and
    the hash of the texts actually sent (explicit per-prompt overrides included)."""
    return {
        "prompt_set": prompt_set.name,
        "prompt_set_version": prompt_set.version,
        "prompt_hash": prompt_hash(prompts),
    }
