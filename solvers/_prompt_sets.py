"""Named, versioned sets of the system prompts, for prompt-sensitivity runs.

The paper never published its prompts, so a published comparison has to say how much
of a result is the wording. A prompt set groups the system prompts of every call kind
(audit, SelfVerify, navigation and, optionally, perception) under a name and a
version; ``-T prompt_set=NAME`` picks one on the detection, navigation and perception
tasks, and the log records the set's name, version and a hash of the texts used.

- ``default``: the prompts of ``_prompts`` and ``_probe`` unchanged (the paper-protocol
  reproduction).
- ``no_rule``: the audit and SelfVerify prompts without the explicit staleness rule;
  the model must infer that a claim the grid contradicts is stale.
- ``warned``: the navigation prompt says the memory was written earlier, may be out of
  date, and that the current grid is authoritative.
- ``minimal``: the shortest prompts that still state the cells and the answer format.

Every prompt keeps its call-kind marker as the first line (the reference agents and
the transcript read the call kind from it) and ``{size}`` as its only placeholder
(see ``fill_prompt``). Bump a set's version whenever one of its texts changes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace

from ._prompts import (
    AUDIT_MARKER,
    DEFAULT_AUDIT_PROMPT,
    DEFAULT_NAVIGATE_PROMPT,
    DEFAULT_PERCEPTION_PROMPT,
    DEFAULT_SELFVERIFY_PROMPT,
    NAVIGATE_MARKER,
    PERCEPTION_MARKER,
    SELFVERIFY_MARKER,
)

PROMPT_KINDS = ("audit", "selfverify", "navigate", "perception")
"""The call kinds a set holds a system prompt for, as named in ``PromptSet.prompt``."""

MARKERS = {
    "audit": AUDIT_MARKER,
    "selfverify": SELFVERIFY_MARKER,
    "navigate": NAVIGATE_MARKER,
    "perception": PERCEPTION_MARKER,
}
"""The first line every prompt of each kind starts with."""

DEFAULT_PROMPT_SET = "default"
HASH_LENGTH = 12
"""Hex digits of the sha256 kept in the log: enough to tell wordings apart."""


@dataclass(frozen=True)
class PromptSet:
    """One named, versioned group of system prompts.

    Attributes:
        name: the ``-T prompt_set`` value.
        version: bumped whenever a text of the set changes.
        summary: one line saying what the set changes against ``default``.
        audit: system prompt of each audit call.
        selfverify: system prompt of SelfVerify's check.
        navigate: system prompt of each navigation step.
        perception: system prompt of each perception-probe call; ``None`` uses the
            default perception prompt.
    """

    name: str
    version: int
    summary: str
    audit: str
    selfverify: str
    navigate: str
    perception: str | None = None

    def prompt(self, kind: str) -> str:
        """The set's prompt for ``kind`` (one of ``PROMPT_KINDS``)."""
        if kind not in PROMPT_KINDS:
            raise ValueError(f"kind must be one of {', '.join(PROMPT_KINDS)}; got {kind!r}")
        text: str | None = getattr(self, kind)
        return DEFAULT_PERCEPTION_PROMPT if text is None else text


def _edited(prompt: str, *edits: tuple[str, str]) -> str:
    """``prompt`` with each (old, new) text replaced; an ``old`` it does not hold
    raises, so a change to the default prompts cannot leave a derived set silently
    unchanged."""
    for old, new in edits:
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

NO_RULE_AUDIT_PROMPT = _edited(
    DEFAULT_AUDIT_PROMPT,
    (_CHANGED + _RULE, ""),
    ('"reason": "(0,0) is S in the current grid; the claim holds"', '"reason": "..."'),
)
"""The default audit prompt without the staleness rule: it neither says the grid may
have changed nor what makes an entry stale (and its example reason gives no hint)."""

NO_RULE_SELFVERIFY_PROMPT = _edited(DEFAULT_SELFVERIFY_PROMPT, (_CHANGED, ""))
"""The default SelfVerify prompt without the sentence saying the grid may have changed."""

WARNED_NAVIGATE_PROMPT = _edited(
    DEFAULT_NAVIGATE_PROMPT,
    (
        "The memory holds notes from earlier exploration of this grid.",
        "The memory holds notes from earlier exploration of this grid. They were written earlier and may be out "
        "of date: ice can have thawed into holes and holes can have frozen into ice since.\n"
        "The current grid is authoritative: where a memory note and the current grid disagree, trust the current grid.",
    ),
)

MINIMAL_AUDIT_PROMPT = (
    AUDIT_MARKER
    + """
Grid {size}x{size}: S start, F ice, H hole, G goal; (row,col). Is each memory entry stale against the current grid?
JSON only: [{"memory_id": "mem_000", "is_stale": false, "reason": "..."}]"""
)
MINIMAL_SELFVERIFY_PROMPT = (
    SELFVERIFY_MARKER
    + """
Grid {size}x{size}: S start, F ice, H hole, G goal; (row,col). Which memory entries contradict the current grid?
JSON only: {"inconsistent": ["mem_012"]}"""
)
MINIMAL_NAVIGATE_PROMPT = (
    NAVIGATE_MARKER
    + """
Grid {size}x{size}: S start, F ice, H hole (lethal), G goal; (row,col). Reach G without entering a hole.
UP row-1, DOWN row+1, LEFT col-1, RIGHT col+1.
JSON only: {"action": "RIGHT"}"""
)
MINIMAL_PERCEPTION_PROMPT = (
    PERCEPTION_MARKER
    + """
Grid {size}x{size}: S start, F ice, H hole, G goal; (row,col). Give the type of each cell asked.
JSON only: [{"cell": "(0,0)", "type": "S"}]"""
)

_DEFAULT_SET = PromptSet(
    name="default",
    version=1,
    summary="the suite's prompts (the paper-protocol reproduction)",
    audit=DEFAULT_AUDIT_PROMPT,
    selfverify=DEFAULT_SELFVERIFY_PROMPT,
    navigate=DEFAULT_NAVIGATE_PROMPT,
)

PROMPT_SETS: dict[str, PromptSet] = {
    prompt_set.name: prompt_set
    for prompt_set in (
        _DEFAULT_SET,
        replace(
            _DEFAULT_SET,
            name="no_rule",
            summary="audit and SelfVerify prompts without the explicit staleness rule",
            audit=NO_RULE_AUDIT_PROMPT,
            selfverify=NO_RULE_SELFVERIFY_PROMPT,
        ),
        replace(
            _DEFAULT_SET,
            name="warned",
            summary="navigation prompt warns that memory may be out of date and the grid is authoritative",
            navigate=WARNED_NAVIGATE_PROMPT,
        ),
        PromptSet(
            name="minimal",
            version=1,
            summary="the shortest prompts that still state the cells and the answer format",
            audit=MINIMAL_AUDIT_PROMPT,
            selfverify=MINIMAL_SELFVERIFY_PROMPT,
            navigate=MINIMAL_NAVIGATE_PROMPT,
            perception=MINIMAL_PERCEPTION_PROMPT,
        ),
    )
}
"""Every shipped prompt set by name; ``default`` first."""


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
