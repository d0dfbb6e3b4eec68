"""The batched audit (SPEC §6): the memory store in batches, one model call a batch.

The calls of one audit are independent, so they are issued together and Inspect's
connection limit (``--max-connections``) bounds how many are in flight; the results,
the counts and the order of the batches in the transcript are those of asking them
one after another (:func:`in_batch_order`, which the perception probe shares).

The transcript holds a span per batch around Inspect's own model event, and one
table per audit: each transcript event costs Inspect a realtime-buffer write, so a
table per call would add a third event to every call for what one table says.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import anyio
from inspect_ai.log import transcript
from inspect_ai.model import Model
from inspect_ai.util import LimitExceededError, span

from spatialstale.env import Grid, MemoryEntry, Pos

from ._answers import AuditParse, parse_audit, parse_selfverify
from ._prompts import (
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


def n_batches(n_entries: int, batch_size: int) -> int:
    """⌈n / B⌉: the model calls one audit makes."""
    return -(-n_entries // batch_size)


Item = TypeVar("Item")
Answer = TypeVar("Answer")


def batches_of(items: Sequence[Item], batch_size: int) -> list[Sequence[Item]]:
    """``items`` in consecutive batches of ``batch_size`` (the last may be shorter)."""
    return [items[i : i + batch_size] for i in range(0, len(items), batch_size)]


async def in_batch_order(
    batches: Sequence[Sequence[Item]],
    ask: Callable[[Sequence[Item]], Awaitable[Answer]],
    keep: Callable[[Sequence[Item], Answer], None],
    *,
    name: str,
    kind: str,
) -> None:
    """Ask every batch at once and keep the answers in batch order.

    Each call runs in its own span (``"{name} k of n"``, span type ``kind``), and
    Inspect's connection limit bounds how many are in flight. ``keep`` sees batch k
    only after batch k-1, and each span closes after its batch is kept, so the log,
    the tallies and a sample limit that ends the calls midway (the answered batches up
    to the first one still missing are kept) read as if the batches were asked one
    after another.
    """
    done = [anyio.Event() for _ in batches]

    async def one(index: int, batch: Sequence[Item]) -> None:
        async with span(f"{name} {index + 1} of {len(batches)}", type=kind):
            answer = await ask(batch)
            if index:
                await done[index - 1].wait()
            keep(batch, answer)
        done[index].set()

    try:
        async with anyio.create_task_group() as group:
            for index, batch in enumerate(batches):
                group.start_soon(one, index, batch)
    except BaseExceptionGroup as errors:
        raise _first_error(errors) from None


def _first_error(errors: BaseExceptionGroup) -> BaseException:
    """The error asking the batches in turn would have raised: a sample limit first
    (the solvers score the sample then), else the first error of the group."""
    limits = errors.subgroup(LimitExceededError)
    found: BaseException = limits if limits is not None else errors
    while isinstance(found, BaseExceptionGroup):
        found = found.exceptions[0]
    return found


@dataclass
class BatchTable:
    """One markdown table for all the batches of an audit (or an observation), in
    batch order: a single transcript event where a table per call would add one event
    per call."""

    header: str
    rows: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    batches: int = 0

    def add(self, rows: Sequence[str], notes: Sequence[str]) -> None:
        """The next batch's rows, and its notes (numbered by batch)."""
        self.batches += 1
        self.rows += rows
        self.notes += [f"batch {self.batches}: {note}" for note in notes]

    def log(self, source: str) -> None:
        """Put the table of the batches kept so far in the transcript (nothing when
        none was)."""
        if self.rows:
            columns = self.header.count("|") - 1
            lines = [self.header, "|" + "---|" * columns, *self.rows]
            transcript().info("\n".join(lines + (["", *self.notes] if self.notes else [])), source=source)


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
    tally: AuditTally | None = None,
    observation: str = "full",
) -> AuditResult:
    """Audit ``entries`` against ``grid`` in batches of ``batch_size``, one call each.

    The calls run concurrently and are kept in batch order (:func:`in_batch_order`):
    a span per batch, then one table of every verdict of the audit. Pass a ``tally``
    to keep the answered batches when a sample limit interrupts the audit.
    """
    size = len(grid)
    tally = tally if tally is not None else AuditTally(step, entries)
    batches = batches_of(entries, batch_size)
    table = BatchTable("| entry | claim | verdict |")

    async def ask(batch: Sequence[MemoryEntry]) -> AuditParse:
        ids = [e.id for e in batch]
        output = await model.generate(
            audit_messages(batch, grid, agent, modality, prompt, size, observation),
            config=answer_config(audit_schema(ids), structured, model),
        )
        return parse_audit(output.completion, ids)

    def keep(batch: Sequence[MemoryEntry], parsed: AuditParse) -> None:
        tally.add(batch, parsed)
        table.add(*_batch_rows(batch, parsed))

    try:
        await in_batch_order(batches, ask, keep, name="audit batch", kind="audit")
    finally:
        table.log("audit")
    return tally.result()


async def selfverify_audit(
    model: Model,
    entries: Sequence[MemoryEntry],
    grid: Grid,
    agent: Pos,
    *,
    modality: str,
    prompt: str,
    structured: bool = False,
    observation: str = "full",
) -> AuditResult:
    """SelfVerify's single call with the whole store; it flags what it calls inconsistent."""
    async with span("selfverify", type="audit"):
        output = await model.generate(
            selfverify_messages(entries, grid, agent, modality, prompt, len(grid), observation),
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


def _batch_rows(batch: Sequence[MemoryEntry], parsed: AuditParse) -> tuple[list[str], list[str]]:
    """A batch's rows of the audit table, and its notes."""
    rows = []
    for entry in batch:
        verdict = (
            "unanswered"
            if entry.id in parsed.unanswered
            else "conflicting"
            if entry.id in parsed.conflicting
            else "stale"
            if entry.id in parsed.flagged
            else "valid"
        )
        rows.append(f"| {entry.id} | {entry.text} | {verdict} |")
    notes = []
    if parsed.unknown_ids:
        notes.append(f"unknown ids in the answer: {', '.join(parsed.unknown_ids)}")
    if parsed.error:
        notes.append(f"unparseable answer: {parsed.error}")
    return rows, notes + parsed.notes
