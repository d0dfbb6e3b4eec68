"""The batched audit (SPEC §6): the memory store in batches, one model call a batch.

The calls of one audit are independent, so they are issued together and kept in
batch order (``_batches``, which the perception probe shares): a span per batch and
one table of every verdict per audit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from inspect_ai.log import transcript
from inspect_ai.model import Model
from inspect_ai.util import span

from spatialstale.env import Grid, MemoryEntry, Pos

from ._answers import AuditParse, parse_audit, parse_selfverify
from ._batches import BatchTable, answer_notes, ask_in_batches, batches_of, reading
from ._prompts import (
    Sight,
    answer_config,
    audit_messages,
    audit_schema,
    selfverify_messages,
    selfverify_schema,
)


@dataclass(frozen=True)
class AuditResult:
    """The judgments of one audit of the store against one grid.

    ``unparseable`` counts calls whose answer held no readable verdict;
    ``unanswered`` lists entries left without a verdict (so left unflagged),
    including entries whose call never ran because a sample limit ended the audit
    (``complete`` is then False); ``conflicting`` lists entries given contradicting
    verdicts (left unflagged); ``unknown_ids`` lists ids the answers named that were
    not in their batch.
    """

    step: int
    flagged: frozenset[str]
    calls: int
    unparseable: int = 0
    unanswered: tuple[str, ...] = ()
    conflicting: tuple[str, ...] = ()
    unknown_ids: tuple[str, ...] = ()
    reasons: Mapping[str, str] = field(default_factory=dict)
    complete: bool = True

    def to_dict(self) -> dict[str, object]:
        return {
            "step": self.step,
            "flagged": sorted(self.flagged),
            "calls": self.calls,
            "unparseable": self.unparseable,
            "unanswered": list(self.unanswered),
            "conflicting": list(self.conflicting),
            "unknown_ids": list(self.unknown_ids),
            "reasons": dict(self.reasons),
            "complete": self.complete,
        }


@dataclass
class AuditTally:
    """An audit's judgments so far, batch by batch; a sample limit that ends the audit
    midway leaves the tally of the batches that were answered."""

    step: int
    entries: Sequence[MemoryEntry]
    flagged: set[str] = field(default_factory=set)
    judged: set[str] = field(default_factory=set)
    unanswered: list[str] = field(default_factory=list)
    conflicting: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)
    calls: int = 0
    unparseable: int = 0

    def add(self, batch: Sequence[MemoryEntry], parsed: AuditParse) -> None:
        self.calls += 1
        self.judged.update(e.id for e in batch)
        self.flagged |= parsed.flagged
        self.unanswered += parsed.unanswered
        self.conflicting += parsed.conflicting
        self.unknown += parsed.unknown_ids
        self.reasons.update({mid: reason for mid, (stale, reason) in parsed.verdicts.items() if stale})
        self.unparseable += parsed.error is not None

    def result(self, *, complete: bool = True) -> AuditResult:
        """The audit's result; entries of batches not yet asked count as unanswered."""
        pending = [e.id for e in self.entries if e.id not in self.judged]
        return AuditResult(
            step=self.step,
            flagged=frozenset(self.flagged),
            calls=self.calls,
            unparseable=self.unparseable,
            unanswered=tuple(self.unanswered + pending),
            conflicting=tuple(self.conflicting),
            unknown_ids=tuple(self.unknown),
            reasons=dict(self.reasons),
            complete=complete and not pending,
        )


async def batched_audit(
    model: Model,
    entries: Sequence[MemoryEntry],
    grid: Grid,
    agent: Pos,
    *,
    sight: Sight,
    batch_size: int,
    prompt: str,
    step: int,
    structured: bool = False,
    tally: AuditTally | None = None,
) -> AuditResult:
    """Audit ``entries`` against ``grid`` in batches of ``batch_size``, one call each.

    The calls run concurrently and are kept in batch order (:func:`ask_in_batches`):
    a span per batch, then one table of every verdict of the audit. Pass a ``tally``
    to keep the answered batches when a sample limit interrupts the audit.
    """
    tally = tally if tally is not None else AuditTally(step, entries)

    def keep(batch: Sequence[MemoryEntry], parsed: AuditParse) -> list[tuple[str, str, str]]:
        tally.add(batch, parsed)
        verdict = {e.id: "stale" if e.id in parsed.flagged else "valid" for e in batch}
        return [(e.id, e.text, reading(e.id, parsed.unanswered, parsed.conflicting, verdict[e.id])) for e in batch]

    await ask_in_batches(
        model,
        batches_of(entries, batch_size),
        kind="audit",
        messages=lambda batch: audit_messages(batch, grid, agent, sight, prompt),
        config=lambda batch: answer_config(audit_schema(_ids(batch)), structured, model),
        read=lambda text, batch: parse_audit(text, _ids(batch)),
        keep=keep,
        notes=lambda parsed: answer_notes(parsed.unknown_ids, "unknown ids", parsed.error, parsed.notes),
        table=BatchTable(("entry", "claim", "verdict")),
    )
    return tally.result()


def _ids(entries: Sequence[MemoryEntry]) -> list[str]:
    return [e.id for e in entries]


async def selfverify_audit(
    model: Model,
    entries: Sequence[MemoryEntry],
    grid: Grid,
    agent: Pos,
    *,
    sight: Sight,
    prompt: str,
    structured: bool = False,
) -> AuditResult:
    """SelfVerify's single call with the whole store; it flags what it calls inconsistent."""
    async with span("selfverify", type="audit"):
        output = await model.generate(
            selfverify_messages(entries, grid, agent, sight, prompt),
            config=answer_config(selfverify_schema([e.id for e in entries]), structured, model),
        )
        parsed = parse_selfverify(output.completion, [e.id for e in entries])
        transcript().info(
            f"**SelfVerify** removed {len(parsed.flagged)} entries: {', '.join(sorted(parsed.flagged)) or '-'}"
            + (f"; conflicting (kept): {', '.join(parsed.conflicting)}" if parsed.conflicting else "")
            + (f"; unknown ids: {', '.join(parsed.unknown_ids)}" if parsed.unknown_ids else "")
            + (f"; unparseable answer ({parsed.error})" if parsed.error else "")
            + (f"; {'; '.join(parsed.notes)}" if parsed.notes else ""),
            source="selfverify",
        )
    return AuditResult(
        step=0,
        flagged=frozenset(parsed.flagged),
        calls=1,
        unparseable=int(parsed.error is not None),
        conflicting=tuple(parsed.conflicting),
        unknown_ids=tuple(parsed.unknown_ids),
    )
