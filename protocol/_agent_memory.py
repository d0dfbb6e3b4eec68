"""Memory the agent keeps (``-T agent=memory``, or an agent that asks for the memory tool):
the files it is seeded with, how its claims are read back, and how each is judged.

The navigator is given Inspect's own ``memory()`` tool (the memory tool of Claude's API),
its directory ``/memories`` seeded with the strategy's memory view at the start of the
episode: one file, :data:`MEMORY_FILE`, an entry a line as the protocol writes it
(``[mem_044] SAFE at (5,4): Frozen ice - safe to walk``). The agent may view, rewrite,
delete or add to it as it goes. The suite reads the files back (:func:`read_claims`) and
judges every claim about a cell against the live grid (:func:`judge`): at the start,
after every change of the world and at the end of the episode. Everything here is a
pure function of the files, the seeded entries and the grid, so each label can be
recomputed from the log alone (the episode's ``memory`` record holds every snapshot).

Reading a line (each line of each file, split into clauses at ``;`` and at the end of a
sentence):

- a clause names a cell by ``(r,c)`` (spaces and brackets ``[r,c]`` allowed); one that
  names none is **unplaced** (counted, never judged: a note, a heading, a distractor);
- its claim is the protocol's word when the clause starts as an entry does
  (``[mem_044] DANGER at (5,4)``, ``UNKNOWN at`` claims nothing); otherwise the words
  that say safe (``safe``, ``frozen``, ``ice``, ``walkable``, ``=F``) or dangerous
  (``danger``, ``hole``, ``lethal``, ``=H``), each turned over by ``not`` or ``no
  longer`` before it, and none said of the past (after ``was``, ``previously``,
  ``formerly``, ``used to be``, ``originally``);
- a clause whose words disagree, or that names a cell with no claim, is **unreadable**
  (counted); its cells get no claim from it.

Judging, for each seeded cell entry (the cell's claims now, against the grid now):

===============  ===========================================================
``lie_kept``     stale, and its old claim is still the only claim made
``repaired``     stale, and the memory now claims the truth (only)
``removed``      no claim about the cell is left
``corrupted``    valid, and the memory now claims the opposite (only)
``kept_valid``   valid, and its claim is still the only claim made
``conflicted``   the memory claims both (its lie, if stale, is still there)
===============  ===========================================================

A claim about a cell that was not seeded is **added**, judged true or false against the
grid (S and G are safe). Every rate is declared once (``_rates`` in the scorers), each
of two counts of one unit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from spatialstale.env import Cell, Grid, MemoryEntry, Pos, cell_at

from ._tool_navigator import AGENT_PROMPT_HEAD, AGENT_PROMPT_TAIL

MEMORY_DIR = "/memories"
MEMORY_FILE = "/memories/grid.md"
"""The one file the memory is seeded as, an entry a line."""

MEMORY_TOOL_INSTANCE = "spatialstale"
"""The instance of the episode's memory tool: its files in the sample store."""

LABELS = ("lie_kept", "repaired", "removed", "corrupted", "kept_valid", "conflicted")
"""What a seeded cell entry can have become, in the order the scores list them."""

SAFE, DANGER = "SAFE", "DANGER"

_CELL = re.compile(r"[\(\[]\s*(\d{1,3})\s*,\s*(\d{1,3})\s*[\)\]]")
_ENTRY = re.compile(r"^\s*(?:\d+\s*[\.\t:)]\s*)?(?:[-*]\s*)?(?:\[[^\]]*\]\s*)?(SAFE|DANGER|UNKNOWN)\s+at\s", re.I)
_CLAUSES = re.compile(r";|(?<=[a-z\)\]])\.\s+(?=\S)|\.$", re.I)
_PAST = re.compile(r"\b(?:was|were|previously|formerly|used\s+to\s+be|originally|earlier)\b[^,]*$", re.I)
_NEGATION = re.compile(r"\b(?:not|no\s+longer|isn't|is\s+no)\s+(?:a\s+|an\s+)?$", re.I)
_WORDS = (
    (re.compile(r"\b(?:safe|frozen|ice|walkable|passable)\b|=\s*F\b|:\s*F\b", re.I), SAFE),
    (re.compile(r"\b(?:danger|dangerous|hole|holes|lethal|deadly|unsafe)\b|=\s*H\b|:\s*H\b", re.I), DANGER),
)


def memory_files(view: Sequence[MemoryEntry] | None) -> dict[str, str]:
    """The files the memory tool is seeded with: the view's entries, a line each, in
    one file (none under NoMemory: an empty directory)."""
    if view is None:
        return {}
    return {MEMORY_FILE: "\n".join(entry.line for entry in view)}


def _other(claim: str) -> str:
    return DANGER if claim == SAFE else SAFE


def _clause_claim(clause: str, cells: Sequence[re.Match[str]]) -> str | None:
    """The claim a clause makes: SAFE, DANGER, "" (it names a cell and claims nothing,
    as an UNKNOWN entry does) or None (its words disagree, or say nothing)."""
    entry = _ENTRY.match(clause)
    if entry is not None:
        word = entry.group(1).upper()
        return "" if word == "UNKNOWN" else word
    said: set[str] = set()
    # the words after the first cell named are the claim ("(5,4) is a hole"); so are
    # those before it ("hole at (5,4)")
    for pattern, claim in _WORDS:
        for found in pattern.finditer(clause):
            before = clause[: found.start()]
            if _PAST.search(before):
                continue
            said.add(_other(claim) if _NEGATION.search(before) else claim)
    if len(said) == 1:
        return said.pop()
    return None


@dataclass(frozen=True)
class Claims:
    """What the memory says about cells: the claims about each cell named (a set of
    SAFE / DANGER; empty for a cell named without a claim), and the clauses that could
    not be placed or read."""

    cells: Mapping[Pos, frozenset[str]]
    unplaced: int = 0
    unreadable: int = 0
    clauses: int = 0

    def about(self, pos: Pos) -> frozenset[str]:
        return self.cells.get(pos, frozenset())


def read_claims(files: Mapping[str, str], size: int) -> Claims:
    """Every claim about a cell in ``files`` (path -> text), read clause by clause."""
    cells: dict[Pos, set[str]] = {}
    unplaced = unreadable = clauses = 0
    for path in sorted(files):
        for line in files[path].splitlines():
            for clause in _CLAUSES.split(line):
                if not clause.strip():
                    continue
                clauses += 1
                named = [m for m in _CELL.finditer(clause) if int(m.group(1)) < size and int(m.group(2)) < size]
                if not named:
                    unplaced += 1
                    continue
                claim = _clause_claim(clause, named)
                if claim is None:
                    unreadable += 1
                    continue
                for m in named:
                    said = cells.setdefault((int(m.group(1)), int(m.group(2))), set())
                    if claim:
                        said.add(claim)
    return Claims({pos: frozenset(said) for pos, said in cells.items()}, unplaced, unreadable, clauses)


def _truth(grid: Grid, pos: Pos) -> str:
    return DANGER if cell_at(grid, pos) is Cell.HOLE else SAFE


@dataclass(frozen=True)
class Judgment:
    """The memory judged against one grid: each seeded cell entry's label (by id), the
    cells added with a true or a false claim, and the clauses unplaced or unreadable."""

    labels: Mapping[str, str]
    stale: tuple[str, ...]
    added_true: tuple[Pos, ...] = ()
    added_false: tuple[Pos, ...] = ()
    unplaced: int = 0
    unreadable: int = 0
    counts: Mapping[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            "labels": dict(self.labels),
            "stale": list(self.stale),
            "added_true": [list(p) for p in self.added_true],
            "added_false": [list(p) for p in self.added_false],
            "unplaced": self.unplaced,
            "unreadable": self.unreadable,
            "counts": dict(self.counts),
        }


def label(original: str, stale: bool, claims: frozenset[str]) -> str:
    """What a seeded entry claiming ``original`` (stale or not now) has become, given the
    memory's claims about its cell now."""
    if not claims:
        return "removed"
    if len(claims) > 1:
        return "conflicted"
    [claim] = claims
    if claim == original:
        return "lie_kept" if stale else "kept_valid"
    return "repaired" if stale else "corrupted"


def judge(seeded: Iterable[MemoryEntry], files: Mapping[str, str], grid: Grid, stale_ids: frozenset[str]) -> Judgment:
    """Judge the memory ``files`` against ``grid``: every seeded cell entry, and every
    claim about a cell that was not seeded (``stale_ids``: the entries stale now)."""
    claims = read_claims(files, len(grid))
    labels: dict[str, str] = {}
    seeded_cells: set[Pos] = set()
    stale: list[str] = []
    for entry in seeded:
        if not entry.is_cell:
            continue
        seeded_cells.add(entry.pos)
        is_stale = entry.id in stale_ids
        stale += [entry.id] if is_stale else []
        labels[entry.id] = label(entry.claim, is_stale, claims.about(entry.pos))
    added_true: list[Pos] = []
    added_false: list[Pos] = []
    for pos in sorted(claims.cells):
        said = claims.cells[pos]
        if pos in seeded_cells or not said:
            continue
        (added_true if said == {_truth(grid, pos)} else added_false).append(pos)
    counts = {name: sum(v == name for v in labels.values()) for name in LABELS}
    counts |= {
        "seeded": len(labels),
        "seeded_stale": len(stale),
        "seeded_valid": len(labels) - len(stale),
        "added_true": len(added_true),
        "added_false": len(added_false),
        "added": len(added_true) + len(added_false),
        "clauses": claims.clauses,
        "unplaced": claims.unplaced,
        "unreadable": claims.unreadable,
    }
    return Judgment(
        labels, tuple(stale), tuple(added_true), tuple(added_false), claims.unplaced, claims.unreadable, counts
    )


@dataclass(frozen=True)
class MemorySnapshot:
    """The memory files at one moment of the episode (``when``: ``start``, ``change``
    after the step that changed the world, ``end``), the grid then, and their judgment."""

    step: int
    when: str
    files: Mapping[str, str]
    grid: Grid
    judgment: Judgment

    def to_dict(self) -> dict[str, object]:
        return {
            "step": self.step,
            "when": self.when,
            "files": dict(self.files),
            "grid": list(self.grid),
            **self.judgment.to_dict(),
        }


MEMORY_NAME = "memory"

NAVIGATE_MEMORY = "navigate-memory"
"""The kind of a turn of the memory navigator's conversation (``system_message``'s tag)."""

DEFAULT_MEMORY_PROMPT = (
    AGENT_PROMPT_HEAD
    + """\
Your memory directory /memories holds notes from earlier exploration of this grid. Use the memory tool to view and
edit it.
"""
    + AGENT_PROMPT_TAIL
)
"""The memory navigator's system prompt (``-T agent=memory``); ``-T navigate_prompt``
overrides it."""


@dataclass(frozen=True)
class MemoryNavigator:
    """The navigator that keeps its own memory (``_seams.Navigator``): a ``react()`` agent
    with ``move`` and Inspect's ``memory()`` tool, seeded with the strategy's view."""

    name: str = MEMORY_NAME
    help: str = f"{MEMORY_NAME} (move and Inspect's memory tool, seeded with the view: the agent keeps its memory)"
    call_kind: str = NAVIGATE_MEMORY
    channel: str = "files"

    def system_prompt(self) -> str | None:
        return DEFAULT_MEMORY_PROMPT

    def dry_run_note(self) -> str | None:
        return (
            "Agent memory: one conversation an episode; its calls are bounded by the steps times the calls allowed "
            "between two moves (or the message limit), an upper bound, not an estimate."
        )

    def dry_run_counts(self) -> str | None:
        return "upper bound"


MEMORY_NAVIGATOR = MemoryNavigator()
