"""The batched audit (SPEC §6): the memory store in batches, one model call a batch.

The calls of one audit are independent, so they are issued together and kept in
batch order (``_batches``, which the perception probe shares): a span per batch and
one table of every verdict per audit. Given the audit's :class:`Truth` (the instance's
labels, fixed before any call), the table also shows beside each verdict whether the
entry is stale and why, and marks it a hit, a miss, a false alarm or a correct keep
(an extension's entry about no cell as the extension marks it, counted apart as the
score counts it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from inspect_ai.log import transcript
from inspect_ai.model import ChatMessage, Model
from inspect_ai.util import span

from spatialstale.env import Cell, Grid, Instance, MemoryEntry, Pos, cell_at
from spatialstale.protocol import (
    AuditParse,
    AuditResult,
    MemoryForm,
    Sight,
    VerdictField,
    answer_config,
    audit_messages,
    audit_schema,
    extension_audit_notes,
    extension_audit_result,
    extension_wrong_results,
    read_audit,
    read_selfverify,
    selfverify_messages,
    selfverify_schema,
)

from ._batches import BatchTable, answer_notes, ask_in_batches, batches_of, reading
from ._cost import record_call

_CELL_WORDS = {Cell.FROZEN: "safe ice", Cell.HOLE: "a hole", Cell.START: "the start", Cell.GOAL: "the goal"}

RESULTS = ("hit", "miss", "false alarm", "correct keep")
"""How an audit table marks a cell entry's verdict against the truth: a stale entry
flagged (hit) or kept (miss), a valid entry flagged (false alarm) or kept (correct
keep); the score's ``tp``, ``fn``, ``fp`` and ``tn``. An entry left unanswered or given
conflicting verdicts is kept, as the scorer counts it."""

WRONG = ("miss", "false alarm", *extension_wrong_results())
"""The results an audit table names in its summary line and shows in bold."""


NAMED = 20
"""How many misses (and false alarms) an audit's summary line names; a large grid's can
be hundreds, which the table lists anyway."""


@dataclass(frozen=True)
class Truth:
    """What is true of the entries an audit judges: the instance's stale labels against
    the live grid (``Instance.stale_ids``, the paper's Eq. 1), fixed before any call, so
    nothing a model answers changes it. Under fog it is the whole live grid's truth, in
    view or not (an auditor that cannot see a stale entry and keeps it has missed it)."""

    stale: frozenset[str]
    grid: Grid

    @classmethod
    def of(cls, instance: Instance, grid: Grid) -> Truth:
        """The truth of ``instance``'s memory against the live ``grid``."""
        return cls(instance.stale_ids(grid), grid)

    def says(self, entry: MemoryEntry) -> str:
        """``stale: was safe ice, now a hole``, ``stale: was a hole, now safe ice`` or ``valid``."""
        if entry.id not in self.stale:
            return "valid"
        now = cell_at(self.grid, entry.pos)
        return f"stale: was {_CELL_WORDS[entry.cell]}, now {_CELL_WORDS[now]}"

    def judged(self, verdict_field: VerdictField, entry: MemoryEntry, flagged: bool, value: str | None) -> str:
        """A stale entry's value of an extension's verdict field judged against the live
        cell (:meth:`VerdictField.judge`); ``-`` for a valid entry, whose value is not scored."""
        if entry.id not in self.stale:
            return "-"
        return verdict_field.judge(value if flagged else None, entry.pos, cell_at(self.grid, entry.pos))

    def result(self, entry: MemoryEntry, flagged: bool) -> str:
        """One of :data:`RESULTS` for a cell entry; an extension's entry as the extension
        marks it (``Extension.audit_marks``)."""
        if (mark := extension_audit_result(entry, flagged)) is not None:
            return mark
        if entry.id in self.stale:
            return "hit" if flagged else "miss"
        return "false alarm" if flagged else "correct keep"


def marked(result: str) -> str:
    """A result as the table writes it: the errors in bold, so the misses stand out."""
    return f"**{result}**" if result in WRONG else result


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
    fields: dict[str, dict[str, str]] = field(default_factory=dict)
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
        for name, values in parsed.fields.items():
            self.fields.setdefault(name, {}).update(values)
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


@dataclass(frozen=True)
class AuditPlan:
    """One batched audit: a call a batch of ``batch_size`` of ``entries``, all sent
    together, each shown ``grid`` from ``agent``. The loops :meth:`ask` it; the dry run
    measures the same object's :attr:`batches` and :meth:`messages`.

    ``truth`` is what a correct answer follows (shown beside each verdict, never sent);
    ``form`` how the extension on shows the entries (None: each entry's text line), and
    ``fields`` the verdict fields the extensions on add to each verdict.
    """

    entries: Sequence[MemoryEntry]
    grid: Grid
    agent: Pos
    sight: Sight
    batch_size: int
    prompt: str
    truth: Truth | None = None
    form: MemoryForm | None = None
    fields: Sequence[VerdictField] = ()

    @property
    def batches(self) -> list[Sequence[MemoryEntry]]:
        """The batches, a call each (⌈len(entries) / B⌉)."""
        return batches_of(self.entries, self.batch_size)

    def messages(self, batch: Sequence[MemoryEntry]) -> list[ChatMessage]:
        """The prompt of ``batch``'s call."""
        return audit_messages(batch, self.grid, self.agent, self.sight, self.prompt, self.form)

    async def ask(
        self, model: Model, *, step: int, structured: bool = False, tally: AuditTally | None = None
    ) -> AuditResult:
        """Make the calls, concurrently, kept in batch order (:func:`ask_in_batches`): a
        span per batch, then one table of every verdict of the audit.

        Pass a ``tally`` to keep the answered batches when a sample limit interrupts the
        audit. With a ``truth`` the table shows it beside each verdict, under a line
        counting the cell entries' hits, misses, false alarms and correct keeps (the
        score's tp, fn, fp, tn), the extensions' entries apart (``AuditMarks.note``), and
        naming the entries judged wrong; it changes no judgment. Each of ``fields`` is a
        key of the schema's verdicts, read into the tally, and a column of the table.
        """
        truth, fields = self.truth, self.fields
        tally = tally if tally is not None else AuditTally(step, self.entries)
        names = [f.name for f in fields]
        results: Counter[str] = Counter()
        wrong: dict[str, list[str]] = {}

        def keep(batch: Sequence[MemoryEntry], parsed: AuditParse) -> list[tuple[str, ...]]:
            tally.add(batch, parsed)
            rows: list[tuple[str, ...]] = []
            for e in batch:
                flagged = e.id in parsed.flagged
                row: tuple[str, ...] = (
                    e.id,
                    e.text,
                    reading(e.id, parsed.unanswered, parsed.conflicting, "stale" if flagged else "valid"),
                )
                for f in fields:
                    row = (*row, _cell_text(parsed.fields.get(f.name, {}).get(e.id, "-")))
                if truth is not None:
                    result = truth.result(e, flagged)
                    results[result] += 1
                    if result in WRONG:
                        wrong.setdefault(result, []).append(e.id)
                    row = (*row, truth.says(e), marked(result))
                    for f in fields:
                        row = (*row, truth.judged(f, e, flagged, parsed.fields.get(f.name, {}).get(e.id)))
                rows.append(row)
            return rows

        def named(result: str) -> str:
            ids = wrong.get(result, [])
            shown = ", ".join(ids[:NAMED]) + (f" and {len(ids) - NAMED} more" if len(ids) > NAMED else "")
            return f" ({shown})" if ids else ""

        def summary() -> list[str]:
            # in the score's units: the cell entries' tp, fn, fp, tn, then an extension's entries apart
            if truth is None:
                return []
            counts = [f"{results[r]} {r}{_plural(r, results[r])}{named(r)}" for r in RESULTS]
            line = "**Against the truth:** " + ", ".join(counts)
            line += "".join(f"; {note}" for note in extension_audit_notes(results, named))
            return [line + "."]

        await ask_in_batches(
            model,
            self.batches,
            kind="audit",
            messages=self.messages,
            config=lambda batch: answer_config(audit_schema(_ids(batch), names), structured, model),
            read=lambda text, batch: read_audit(text, _ids(batch), _cells(batch) if fields else None, fields),
            keep=keep,
            notes=lambda parsed: answer_notes(parsed.unknown_ids, "unknown ids", parsed.error, parsed.notes),
            table=BatchTable(
                (
                    "entry",
                    "claim",
                    "verdict",
                    *names,
                    *(("truth", "result", *(f.judged for f in fields)) if truth is not None else ()),
                ),
                summary=summary,
            ),
        )
        return tally.result()


def _cell_text(text: str, limit: int = 80) -> str:
    """A model's text as one cell of a markdown table: one line, no column bar, short."""
    flat = " ".join(text.split()).replace("|", "/")
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _plural(result: str, count: int) -> str:
    return "" if count == 1 else ("es" if result == "miss" else "s")


def _ids(entries: Sequence[MemoryEntry]) -> list[str]:
    return [e.id for e in entries]


def _cells(entries: Sequence[MemoryEntry]) -> dict[str, Pos]:
    return {e.id: e.pos for e in entries}


@dataclass(frozen=True)
class SelfVerifyPlan:
    """SelfVerify's one call: the whole of ``entries`` against ``grid`` seen from
    ``agent``. ``truth``: what a correct answer flags (never sent)."""

    entries: Sequence[MemoryEntry]
    grid: Grid
    agent: Pos
    sight: Sight
    prompt: str
    truth: Truth | None = None

    def messages(self) -> list[ChatMessage]:
        """The call's prompt."""
        return selfverify_messages(self.entries, self.grid, self.agent, self.sight, self.prompt)

    async def ask(self, model: Model, *, structured: bool = False) -> AuditResult:
        """Make the call; it flags what the answer calls inconsistent."""
        ids = _ids(self.entries)
        async with span("selfverify", type="audit"):
            output = await model.generate(
                self.messages(), config=answer_config(selfverify_schema(ids), structured, model)
            )
            record_call("audit", output)
            parsed = read_selfverify(output.completion, ids)
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
