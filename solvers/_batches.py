"""Batched calls: a store or a grid asked about in batches, one model call a batch.

The audit (memory entries) and the perception probe (cells) split what they ask about
into batches of ``batch_size`` and make one call a batch. The calls of one audit or
observation are independent, so :func:`ask_in_batches` issues them together and
Inspect's connection limit (``--max-connections``) bounds how many are in flight;
the results, the counts and the order of the batches in the transcript are those of
asking them one after another.

The transcript holds a span per batch around Inspect's own model event, and one
:class:`BatchTable` per audit or observation: each transcript event costs Inspect a
realtime-buffer write, so a table per call would add a third event to every call for
what one table says.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import anyio
from inspect_ai.log import transcript
from inspect_ai.model import ChatMessage, GenerateConfig, Model
from inspect_ai.util import LimitExceededError, span

from ._cost import record_call

Item = TypeVar("Item")
Answer = TypeVar("Answer")


def n_batches(n_items: int, batch_size: int) -> int:
    """⌈n / B⌉: the model calls one audit (or observation) makes."""
    return -(-n_items // batch_size)


def batches_of(items: Sequence[Item], batch_size: int) -> list[Sequence[Item]]:
    """``items`` in consecutive batches of ``batch_size`` (the last may be shorter)."""
    return [items[i : i + batch_size] for i in range(0, len(items), batch_size)]


async def in_batch_order(
    batches: Sequence[Sequence[Item]],
    ask: Callable[[Sequence[Item]], Awaitable[Answer]],
    keep: Callable[[Sequence[Item], Answer], None],
    *,
    kind: str,
) -> None:
    """Ask every batch at once and keep the answers in batch order.

    Each call runs in its own span (``"{kind} batch k of n"``, span type ``kind``),
    and Inspect's connection limit bounds how many are in flight. ``keep`` sees batch
    k only after batch k-1, and each span closes after its batch is kept, so the log,
    the tallies and a sample limit that ends the calls midway (the answered batches up
    to the first one still missing are kept) read as if the batches were asked one
    after another.

    Not Inspect's ``collect``, which gathers the same calls but does other work around
    them: it keeps every result until all are in (a sample limit midway loses the
    answered batches; here each is kept as soon as the ones before it are), wraps each
    call in a span of its own (``task-k``, around the batch's span: two more transcript
    events a call), and raises a group of several errors as the group (here a sample
    limit comes first, so the solver scores what was answered).
    """
    done = [anyio.Event() for _ in batches]

    async def one(index: int, batch: Sequence[Item]) -> None:
        async with span(f"{kind} batch {index + 1} of {len(batches)}", type=kind):
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

    columns: tuple[str, ...]
    rows: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    batches: int = 0
    summary: Callable[[], Sequence[str]] | None = None
    """Lines above the table that sum up its rows (the audit's hits and misses): the
    viewer shows a long table folded, so what matters comes first."""

    def add(self, rows: Sequence[Sequence[str]], notes: Sequence[str]) -> None:
        """The next batch's rows (one cell per column), and its notes (numbered by batch)."""
        self.batches += 1
        self.rows += ["| " + " | ".join(row) + " |" for row in rows]
        self.notes += [f"batch {self.batches}: {note}" for note in notes]

    def log(self, source: str) -> None:
        """Put the table of the batches kept so far in the transcript (nothing when
        none was)."""
        if self.rows:
            lines = ["| " + " | ".join(self.columns) + " |", "|" + "---|" * len(self.columns), *self.rows]
            before = list(self.summary()) if self.summary else []
            lines = [*before, *([""] if before else []), *lines, *(["", *self.notes] if self.notes else [])]
            transcript().info("\n".join(lines), source=source)


def reading(item: Item, unanswered: Collection[Item], conflicting: Collection[Item], read: str) -> str:
    """How a table shows what an answer said of ``item``: ``unanswered``,
    ``conflicting``, or what was read."""
    if item in unanswered:
        return "unanswered"
    if item in conflicting:
        return "conflicting"
    return read


def answer_notes(unknown: Sequence[str], what: str, error: str | None, notes: Sequence[str]) -> list[str]:
    """A batch's notes: the ``what`` an answer named outside its batch, why it could
    not be read, and what else its reader noted (truncated, reasoning only)."""
    out = [f"{what} in the answer: {', '.join(unknown)}"] if unknown else []
    if error:
        out.append(f"unparseable answer: {error}")
    return out + list(notes)


async def ask_in_batches(
    model: Model,
    batches: Sequence[Sequence[Item]],
    *,
    kind: str,
    messages: Callable[[Sequence[Item]], list[ChatMessage]],
    config: Callable[[Sequence[Item]], GenerateConfig],
    read: Callable[[str, Sequence[Item]], Answer],
    keep: Callable[[Sequence[Item], Answer], Sequence[Sequence[str]]],
    notes: Callable[[Answer], Sequence[str]],
    table: BatchTable,
) -> None:
    """One call per batch, concurrently, kept in batch order (:func:`in_batch_order`).

    ``keep`` records a batch's reading and returns its rows of ``table``; ``notes``
    says what its answer left unread. The table of the batches kept so far goes to the
    transcript (source ``kind``) even when a sample limit ends the calls midway.
    """

    async def ask(batch: Sequence[Item]) -> Answer:
        output = await model.generate(messages(batch), config=config(batch))
        if kind == "audit":
            # an episode's audit cost counts every batch here, whichever strategy asked
            record_call("audit", output)
        return read(output.completion, batch)

    def kept(batch: Sequence[Item], answer: Answer) -> None:
        table.add(keep(batch, answer), notes(answer))

    try:
        await in_batch_order(batches, ask, kept, kind=kind)
    finally:
        table.log(kind)
