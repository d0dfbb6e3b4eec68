"""The batched audit (SPEC §6): the memory store in batches, one model call a batch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from inspect_ai.log import transcript
from inspect_ai.model import Model
from inspect_ai.util import span

from spatialstale.env import Grid, MemoryEntry, Pos

from ._answers import parse_audit, parse_selfverify
from ._prompts import (
    AUDIT_SCHEMA,
    SELFVERIFY_SCHEMA,
    answer_config,
    audit_messages,
    selfverify_messages,
)


@dataclass(frozen=True)
class AuditResult:
    """The judgments of one audit of the store against one grid.

    ``unparseable`` counts calls whose answer held no readable verdicts;
    ``unanswered`` lists entries left without a verdict (so left unflagged);
    ``unknown_ids`` lists ids the answers named that were not in their batch.
    """

    step: int
    flagged: frozenset[str]
    calls: int
    unparseable: int = 0
    unanswered: tuple[str, ...] = ()
    unknown_ids: tuple[str, ...] = ()
    reasons: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            "step": self.step,
            "flagged": sorted(self.flagged),
            "calls": self.calls,
            "unparseable": self.unparseable,
            "unanswered": list(self.unanswered),
            "unknown_ids": list(self.unknown_ids),
            "reasons": dict(self.reasons),
        }


def n_batches(n_entries: int, batch_size: int) -> int:
    """⌈n / B⌉: the model calls one audit makes."""
    return -(-n_entries // batch_size)


async def batched_audit(
    model: Model,
    entries: Sequence[MemoryEntry],
    grid: Grid,
    agent: Pos,
    *,
    modality: str,
    batch_size: int,
    prompt: str,
    step: int,
    structured: bool = False,
) -> AuditResult:
    """Audit ``entries`` against ``grid`` in batches of ``batch_size``, one call each."""
    size = len(grid)
    flagged: set[str] = set()
    unanswered: list[str] = []
    unknown: list[str] = []
    reasons: dict[str, str] = {}
    unparseable = 0
    batches = [entries[i : i + batch_size] for i in range(0, len(entries), batch_size)]
    for number, batch in enumerate(batches, start=1):
        async with span(f"audit batch {number}/{len(batches)}", type="audit"):
            output = await model.generate(
                audit_messages(batch, grid, agent, modality, prompt, size),
                config=answer_config(AUDIT_SCHEMA, structured),
            )
            parsed = parse_audit(output.completion, [e.id for e in batch])
            flagged |= parsed.flagged
            unanswered += parsed.unanswered
            unknown += parsed.unknown_ids
            reasons.update({mid: reason for mid, (stale, reason) in parsed.verdicts.items() if stale})
            unparseable += parsed.error is not None
            transcript().info(
                _batch_table(batch, parsed.flagged, parsed.unanswered, parsed.unknown_ids, parsed.error),
                source="audit",
            )
    return AuditResult(
        step=step,
        flagged=frozenset(flagged),
        calls=len(batches),
        unparseable=unparseable,
        unanswered=tuple(unanswered),
        unknown_ids=tuple(unknown),
        reasons=reasons,
    )


async def selfverify_audit(
    model: Model,
    entries: Sequence[MemoryEntry],
    grid: Grid,
    agent: Pos,
    *,
    modality: str,
    prompt: str,
    structured: bool = False,
) -> AuditResult:
    """SelfVerify's single call with the whole store; it flags what it calls inconsistent."""
    async with span("selfverify", type="audit"):
        output = await model.generate(
            selfverify_messages(entries, grid, agent, modality, prompt, len(grid)),
            config=answer_config(SELFVERIFY_SCHEMA, structured),
        )
        parsed = parse_selfverify(output.completion, [e.id for e in entries])
        transcript().info(
            f"**SelfVerify** removed {len(parsed.flagged)} entries: {', '.join(sorted(parsed.flagged)) or '-'}"
            + (f"; unknown ids: {', '.join(parsed.unknown_ids)}" if parsed.unknown_ids else "")
            + (f"; unparseable answer ({parsed.error})" if parsed.error else ""),
            source="selfverify",
        )
    return AuditResult(
        step=0,
        flagged=frozenset(parsed.flagged),
        calls=1,
        unparseable=int(parsed.error is not None),
        unknown_ids=tuple(parsed.unknown_ids),
    )


def _batch_table(
    batch: Sequence[MemoryEntry], flagged: set[str], unanswered: list[str], unknown: list[str], error: str | None
) -> str:
    rows = ["| entry | claim | verdict |", "|---|---|---|"]
    for entry in batch:
        verdict = "unanswered" if entry.id in unanswered else "stale" if entry.id in flagged else "valid"
        rows.append(f"| {entry.id} | {entry.text} | {verdict} |")
    notes = []
    if unknown:
        notes.append(f"unknown ids in the answer: {', '.join(unknown)}")
    if error:
        notes.append(f"unparseable answer: {error}")
    return "\n".join(rows + (["", *notes] if notes else []))
