"""The seams: the stages of a run an extension plugs into, as typed interfaces.

An extension (an experiment beyond the paper's protocol) is one object that subclasses
:class:`Extension`, in a module of its own: the built-ins here, any other in a package of
its own that declares it in the entry-point group ``spatialstale.extensions``
(docs/extensions.md). The core iterates over the registry (``_extensions.extensions()``)
and never names an extension. An extension has three attributes (``name``, ``kinds``,
``axes``) and nine hooks, each a stage of a run, in the order a run meets them:

1. **settings**: :attr:`Extension.axes` declares its ``-T`` axes (a dataclass of
   ``axis`` fields); the settings of each kind in :attr:`Extension.kinds` read them at
   run time, so its parameters, metadata, tags, sample ids, study flags, dry run and
   report columns derive from them as from any axis. :meth:`Extension.check` refuses a
   combination of values;
2. **memory**: :meth:`Extension.memory`, a :class:`MemoryPart`: the entries it puts in
   an instance's store beside the cells' (recorded in each sample, marked apart in an
   audit's table), or how an audit shows the entries (:class:`MemoryForm`, its images
   as the dry run measures them and as the reference agents read them back);
3. **observation**: :meth:`Extension.view`, a :class:`View`: what of the live grid each
   call shows, how its text lists it, a line under each step, what the episode's record
   keeps and the dry run's note;
4. **prompt**: :meth:`Extension.prompt`, a call kind's system prompt under the values;
5. **answer**: :meth:`Extension.active` says whether it is on for a task's values or a
   sample's metadata; :meth:`Extension.verdict_field`, a :class:`VerdictField` each audit
   verdict gains when it is (the response schema, the reader, the audit's table, the
   window's record, the reference agents' and the dry run's answers);
6. **scores**: :meth:`Extension.scores` declares the counts, rates and metrics it adds
   (:class:`Scores`), :meth:`Extension.score` adds a sample's (:class:`ScorePart`);
7. **report**: :meth:`Extension.report`, its part of the report's section on
   experiments beyond the paper (:class:`ReportPart`, tables of its runs beside the
   paper's on the same seeds, declared column by column) or a section of its own
   setting a navigation axis's values side by side (:class:`ReportSweep`).

A hook an extension does not define keeps the default (the paper's protocol). Two axes
choose among alternatives rather than switch an extension on: the navigator (``-T
agent``, :class:`Navigator`) and the filter mode (``-T filter``, :class:`FilterMode`),
each with the paper's as its default.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from random import Random
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, Self, runtime_checkable

from inspect_ai.model import Content

from spatialstale.env import Cell, Grid, Instance, MemoryEntry, Pos

from ._measures import Count, Measure, TaskMetric

if TYPE_CHECKING:
    from PIL.Image import Image


@runtime_checkable
class View(Protocol):
    """The observation stage: what of the live grid a call shows, and how its text lists
    it. A view is hashable (a frozen dataclass): the listing of a grid is built once per
    view."""

    def __hash__(self) -> int: ...

    def seen(self, grid: Grid, agent: Pos) -> Grid:
        """``grid`` as a call made with the agent at ``agent`` shows it."""
        ...

    def listing(self, grid: Grid, agent: Pos) -> str | None:
        """The text observation of ``grid`` (as :meth:`seen` shows it) with the agent at
        ``agent``; None: the paper's listing of every cell."""
        ...

    def step_note(self, position: Pos) -> str | None:
        """A line under a navigation step's transcript table (None: nothing to say)."""
        ...

    def record(self) -> dict[str, object]:
        """What an episode's record keeps of this view (empty: as in the paper)."""
        ...

    def dry_run_note(self) -> str | None:
        """The dry run's method note for a task with this view (None: nothing to say)."""
        ...


@runtime_checkable
class MemoryForm(Protocol):
    """The memory stage: how an audit call shows its batch of memory entries."""

    def content(self, entries: Sequence[MemoryEntry]) -> list[Content]:
        """The part of the call's prompt that shows ``entries`` (after the observation)."""
        ...


@dataclass(frozen=True)
class StandIn:
    """An image an extension's prompts send, as the dry run measures it without drawing it.

    Attributes:
        prefix: how each of its stand-ins' names starts (what the dry run sends in its place).
        width: its width in pixels.
        height: its height in pixels.
        legend: how the dry run's legend names it (``a memory ...``).
    """

    prefix: str
    width: int
    height: int
    legend: str


class MemoryPart:
    """The memory stage of one extension: what it adds to the store, how an audit shows
    the entries. Each method's default is the paper's protocol; an extension overrides
    what it needs.

    Attributes:
        marks: how an audit table marks the verdicts on the entries :meth:`add` puts in
            the store (:class:`AuditMarks`); None: every entry is judged as a cell's.
        stand_ins: the images :meth:`form` sends, as the dry run measures them
            (:class:`StandIn`).
    """

    marks: AuditMarks | None = None
    stand_ins: tuple[StandIn, ...] = ()

    def add(self, instance: Instance, values: Mapping[str, Any]) -> Instance:
        """``instance`` with the extension's entries in its store beside the cells' (every
        audit judges them, a navigator's memory view shows them, the dry run counts them);
        ``values`` may be a sample's metadata. Default: the instance as drawn."""
        return instance

    def metadata(self, instance: Instance) -> dict[str, object]:
        """What a sample's metadata records of the entries :meth:`add` put in ``instance``."""
        return {}

    def entry_ids(self, metadata: Mapping[str, Any]) -> frozenset[str]:
        """The ids of those entries in a sample with this metadata (the scores judge the
        cells' entries apart)."""
        return frozenset()

    def form(self, values: Mapping[str, Any], instance: Instance, *, drawn: bool = True) -> MemoryForm | None:
        """How an audit call of ``instance`` shows its batch of entries under these values;
        with ``drawn`` False (the dry run) its images are stand-ins (:attr:`stand_ins`)
        that name what they show without drawing it. None: each entry's text line."""
        return None

    def read_picture(self, image: Image, size: int) -> tuple[str, Pos] | None:
        """The reference agents' reading (``spatialstale.agents``): the remembered cell
        type and the cell of one picture of a memory entry as :meth:`form` draws it, read
        from its pixels alone as a model must. None: not one of this part's pictures."""
        return None


class Extension:
    """An experiment beyond the paper's protocol, plugged into the stages it needs.

    Attributes:
        name: the extension's name (its docs page, its module).
        kinds: the task kinds (``navigation``, ``detection``, ``perception``) whose
            settings read its axes.
        axes: a frozen dataclass whose fields are the extension's axes (``axis``).
    """

    name: str
    kinds: tuple[str, ...]
    axes: type

    def check(self, values: Mapping[str, Any]) -> None:
        """Settings: refuse a combination of a task's axis values (all of its axes, by
        name) that the extension cannot run, with a TaskParameterError (one line, before
        any model call; the study skips the combination with it as its reason)."""
        return None

    def memory(self) -> MemoryPart | None:
        """Memory: the extension's part of the store and of how an audit shows it."""
        return None

    def view(self, values: Mapping[str, Any]) -> View | None:
        """Observation: the view these axis values (by name) make; None: the whole grid."""
        return None

    def prompt(self, call: str, values: Mapping[str, Any], prompt: str) -> str:
        """Prompt: the system prompt of call kind ``call`` (``audit``, ...) under these
        values, given the prompt set's; the dry run measures what it returns."""
        return prompt

    def active(self, values: Mapping[str, Any]) -> bool:
        """Whether the extension is on for these axis values (a task's settings, or a
        sample's metadata); the answer and score stages ask it. Default: never."""
        return False

    def verdict_field(self) -> VerdictField | None:
        """Answer: the field each audit verdict gains when :meth:`active`; None: none."""
        return None

    def scores(self, kind: str) -> Scores | None:
        """Scores: the counts, per-sample rates and metrics it adds to task kind ``kind``
        when :meth:`active` (the docs' table of metrics lists them); None: none."""
        return None

    def score(self, kind: str, metadata: Mapping[str, Any], windows: Sequence[Mapping[str, Any]]) -> ScorePart | None:
        """Scores: what a ``kind`` sample's score adds (counts, a clause of the
        explanation, score metadata), given its sample metadata and its windows' records;
        None (and whenever it is not :meth:`active` for ``metadata``): nothing."""
        return None

    def report(self) -> ReportPart | ReportSweep | None:
        """Report: its part of the section on experiments beyond the paper
        (:class:`ReportPart`), or a section of its own for a navigation axis whose values
        the report sets side by side (:class:`ReportSweep`); None: its axes are columns
        where the tables show them."""
        return None


@dataclass(frozen=True)
class WholeGrid:
    """The paper's observation: every call shows the whole grid."""

    def seen(self, grid: Grid, agent: Pos) -> Grid:
        return grid

    def listing(self, grid: Grid, agent: Pos) -> str | None:
        return None

    def step_note(self, position: Pos) -> str | None:
        return None

    def record(self) -> dict[str, object]:
        return {}

    def dry_run_note(self) -> str | None:
        return None


WHOLE_GRID = WholeGrid()


@dataclass(frozen=True)
class Views:
    """Several extensions' views applied one after another (in registry order)."""

    parts: Sequence[View]
    kind: ClassVar[str] = "views"

    def seen(self, grid: Grid, agent: Pos) -> Grid:
        for part in self.parts:
            grid = part.seen(grid, agent)
        return grid

    def listing(self, grid: Grid, agent: Pos) -> str | None:
        listings = [text for part in self.parts if (text := part.listing(grid, agent)) is not None]
        return listings[-1] if listings else None

    def step_note(self, position: Pos) -> str | None:
        notes = [n for n in (part.step_note(position) for part in self.parts) if n is not None]
        return "\n".join(notes) if notes else None

    def record(self) -> dict[str, object]:
        out: dict[str, object] = {}
        for part in self.parts:
            out |= part.record()
        return out

    def dry_run_note(self) -> str | None:
        notes = [n for n in (part.dry_run_note() for part in self.parts) if n is not None]
        return " ".join(notes) if notes else None


class VerdictField(Protocol):
    """The answer stage: a field an extension adds to each audit verdict, e.g. a
    corrected entry for each entry judged stale.

    Attributes:
        name: its key in a verdict object and in the response schema (a nullable
            string there), and its column in the audit's transcript table.
        record: the key of a detection window's record (and of its score metadata)
            that holds its value for each entry flagged stale.
        judged: the title of the audit table's column judging it against the truth.
    """

    @property
    def name(self) -> str: ...

    @property
    def record(self) -> str: ...

    @property
    def judged(self) -> str: ...

    def read(self, low: Mapping[str, Any]) -> str | None:
        """Its value in a verdict object (keys normalised by ``_scan.lowered``); None: none."""
        ...

    def read_prose(self, answer: str, cells: Mapping[str, Pos]) -> dict[str, str]:
        """Its values written as prose in an answer, by entry id (``cells``: each id's cell)."""
        ...

    def judge(self, value: str | None, pos: Pos, now: Cell) -> str:
        """A truly stale entry's value (None: flagged without one, or not flagged)
        judged against its cell's type ``now``."""
        ...

    def asked(self, prompt: str) -> bool:
        """Whether an audit prompt asks for it (the reference agents read prompts)."""
        ...

    def believed(self, pos: Pos, cell: str) -> str:
        """What an auditor that believes the cell at ``pos`` is ``cell`` (S, F, H, G) writes."""
        ...

    def guessed(self, pos: Pos, rng: Random) -> str:
        """What an auditor that guesses writes, drawn from ``rng``."""
        ...


@dataclass(frozen=True)
class Scores:
    """The score stage's declarations of an extension for one task kind.

    Attributes:
        counts: the score values it adds that a rate divides (the docs list them).
        rates: the rates each sample's score holds beside the counts.
        metrics: the task's metrics it adds, each ``only`` the extension's name.
        when: how the docs say when they are added, e.g. `` (with `-T name=value`)``.
        columns: the score values the report reads as columns of its runs.
    """

    counts: tuple[Count, ...] = ()
    rates: tuple[Measure, ...] = ()
    metrics: tuple[TaskMetric, ...] = ()
    when: str = ""
    columns: tuple[str, ...] = ()


ReportShows = Literal[
    "model", "regime", "modality", "strategy", "value", "seeds", "runs", "base", "delta", "p",
    "mean", "share", "ratio", "pooled", "total", "average",
]  # fmt: skip
"""What a column of an extension's report table shows (:class:`ReportColumn`)."""


@dataclass(frozen=True)
class ReportColumn:
    """A column of an extension's report table, under ``header``; ``shows`` says what:

    - the cell's keys: ``model``, ``regime``, ``modality``, ``value`` (the axis's value)
      and, for navigation, ``strategy`` (a row a strategy);
    - the comparison on the seeds both ran, of F1 (detection) or the per-seed death rate
      (navigation, in percent): ``seeds``, ``runs`` (mean [95 % CI] of the runs away from
      the paper's value, linked to their log), ``base`` (the same cell at the paper's
      value), ``delta`` (the mean paired difference) and ``p`` (its Wilcoxon test);
    - the score values (``numerator`` and ``denominator``: score values the extension's
      :class:`Scores` ``columns`` or the scorers' declare, summed row by row):
      ``mean`` (mean [95 % CI] of ``numerator``), ``share`` and ``ratio`` (mean
      [95 % CI] of each row's numerator / denominator, in percent or as a number),
      ``pooled`` (their totals, ``a / b``), ``total`` (the numerator's total) and
      ``average`` (its mean, one decimal, no interval).
    """

    header: str
    shows: ReportShows
    numerator: tuple[str, ...] = ()
    denominator: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReportTable:
    """One table of an extension's report part: every cell (model, regime, modality and
    the axis's value away from the paper's) of task kind ``kind``, the other extensions'
    axes at the paper's value, beside the same cell at the paper's value.

    Attributes:
        kind: ``detection`` or ``navigation``.
        caption: its summary line when it is folded (long tables are).
        columns: its columns, in order.
        text: the paragraph before it (Markdown); empty: none.
    """

    kind: str
    caption: str
    columns: tuple[ReportColumn, ...]
    text: str = ""


@dataclass(frozen=True)
class ReportPart:
    """The report stage: an extension's part of the report's section on experiments
    beyond the paper, present when the logs hold runs with ``axis`` away from the
    paper's value. The report's other tables read its axis at the paper's value.

    Attributes:
        axis: the axis whose runs it compares with the paper's value.
        title: its heading.
        text: its opening paragraph (Markdown).
        tables: its tables, each shown when the logs hold its kind's runs.
    """

    axis: str
    title: str
    text: str
    tables: tuple[ReportTable, ...]


@dataclass(frozen=True)
class ReportSweep:
    """The report stage: a section of its own for a navigation axis whose values the
    report sets side by side, the paper's value last: success / death per value (a table
    per modality, rows model x regime x strategy, with the paper's filter mode and
    navigator), a figure of both rates against the value, whether NoMemory is still an
    upper bound on success at each value, and the paired tests between strategies within
    each value. The report's other tables read the axis at the paper's value.

    Attributes:
        axis: the navigation axis.
        title: the section's heading.
        text: its opening paragraph (Markdown).
        caption: the summary line of a folded table of rates.
        value: how a value away from the paper's is named (``"radius {}"``).
        paper: how the paper's value is named (``"full view"``).
        unit: what one value is called in the prose (``radius``).
        away: how the prose says "away from the paper's value" (``under fog``).
        column: the header of the tests table's column of values.
        empty: the section's line when the logs hold none of its runs with the paper's
            filter mode and navigator.
        figure: the figure's file name (``figN_name.png``), caption, title and x label.
    """

    axis: str
    title: str
    text: str
    caption: str
    value: str
    paper: str
    unit: str
    away: str
    column: str
    empty: str
    figure: tuple[str, str, str, str]

    def name(self, value: str, paper_value: str) -> str:
        """How a value of the axis (as the report shows it) is named in headers and prose."""
        return self.paper if value == paper_value else self.value.format(value)


@dataclass(frozen=True)
class ScorePart:
    """What an extension adds to one sample's score: ``counts`` among its values, a
    ``clause`` at the end of its explanation (``; ...``), a ``note`` among the score's
    own counts in it (``; ...``, before the clause of a sample limit), and ``metadata``."""

    counts: Mapping[str, int]
    clause: str = ""
    metadata: Mapping[str, object] = field(default_factory=dict)
    note: str = ""


class AuditMarks(Protocol):
    """The transcript: how an audit table marks the verdicts on an extension's entries
    (those its :meth:`Extension.memory` put in the store), apart from the cells'.

    Attributes:
        wrong: the marks that are errors (shown in bold, their ids named in the
            summary line).
    """

    @property
    def wrong(self) -> tuple[str, ...]: ...

    def mark(self, entry: MemoryEntry, flagged: bool) -> str | None:
        """The result column's mark of the verdict on ``entry`` (None: not one of the
        extension's entries)."""
        ...

    def note(self, results: Mapping[str, int], named: Callable[[str], str]) -> str | None:
        """A clause of the table's summary line, given the count of each mark and
        ``named(mark)``, the ids marked so (None: nothing to add)."""
        ...


class Navigator(Protocol):
    """The navigator stage (``-T agent``): how an episode's moves are asked of the model.

    A navigator is one value of the navigation task's ``agent`` axis, listed in
    ``_navigators.NAVIGATORS``; the paper's is :data:`PROMPT_NAVIGATOR` (one fresh call a
    step, the memory view in the prompt), the default. Its loop is the solvers' (a
    loop registered under its name there); here is what the protocol declares of it.

    Attributes:
        name: its value of ``-T agent`` (and its sample ids' part, ``-NAME``).
        help: how ``-T agent``'s help describes it.
        call_kind: the kind of its calls (``system_message``'s tag).
    """

    @property
    def name(self) -> str: ...

    @property
    def help(self) -> str: ...

    @property
    def call_kind(self) -> str: ...

    @property
    def channel(self) -> str:
        """How it reads memory: ``prompt`` (the view in every call's prompt), ``recall``
        (a ``recall`` tool over the view) or ``files`` (Inspect's ``memory()`` tool,
        seeded with the view: the agent keeps it)."""
        ...

    def system_prompt(self) -> str | None:
        """The settings stage: its default navigation prompt; None: the prompt set's."""
        ...

    def dry_run_note(self) -> str | None:
        """The dry run's method note for its tasks; None: nothing to say."""
        ...

    def dry_run_counts(self) -> str | None:
        """The dry run's word for its navigation counts; None: as the paper's navigator's."""
        ...


@dataclass(frozen=True)
class PromptNavigator:
    """The paper's navigator: one fresh call a step, the memory view in the prompt."""

    name: str = "prompt"
    help: str = "prompt (one call a step, memory in the prompt: the paper)"
    call_kind: str = "navigate"
    channel: str = "prompt"

    def system_prompt(self) -> str | None:
        return None

    def dry_run_note(self) -> str | None:
        return None

    def dry_run_counts(self) -> str | None:
        return None


PROMPT_NAVIGATOR = PromptNavigator()


class FilterMode(Protocol):
    """The memory stage's filter (``-T filter``): how a strategy's flags shape its view.

    A filtering strategy (SelfVerify, OMCD, Oracle, LocalVerify) hands the store and its
    flags (entry id -> step of the audit that flagged it) to the task's filter mode,
    listed in ``_extensions.FILTER_MODES``; the paper's is :data:`DELETE`, the default.
    """

    @property
    def name(self) -> str: ...

    @property
    def help(self) -> str:
        """How ``-T filter``'s help describes it."""
        ...

    def apply(self, memory: Sequence[MemoryEntry], flags: Mapping[str, int]) -> tuple[MemoryEntry, ...]:
        """The view: ``memory`` with ``flags`` applied."""
        ...


@dataclass(frozen=True)
class WithheldEntry(MemoryEntry):
    """An entry a filter mode keeps in the view without its claim: it names the cell
    (and the audit step that flagged it) but makes no claim, so it cannot mislead as a
    stale one can; a step's record counts them (``unknown_in_view``). It never equals
    the entry it replaces."""

    flagged_at: int

    @classmethod
    def of(cls, entry: MemoryEntry, step: int) -> Self:
        return cls(**{f.name: getattr(entry, f.name) for f in fields(entry)}, flagged_at=step)


@dataclass(frozen=True)
class Delete:
    """The paper's filter: a flagged entry leaves the view."""

    name: str = "delete"
    help: str = "delete removes a flagged entry (the paper)"

    def apply(self, memory: Sequence[MemoryEntry], flags: Mapping[str, int]) -> tuple[MemoryEntry, ...]:
        return tuple(e for e in memory if e.id not in flags)


DELETE = Delete()
