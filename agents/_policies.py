"""The reference agents' decisions: what each one answers to a perceived prompt.

- ``observer`` believes the observation: it flags exactly the entries whose claim
  disagrees with the observed cell and walks a shortest hole-free path.
- ``credulous`` believes memory where memory and observation disagree: it flags
  nothing and walks a shortest path on the remembered map. An entry listed as
  UNKNOWN (``filter=unknown``) is no memory to it: it plans on what it sees there,
  exactly as if the entry had been deleted.
- ``random`` is the chance baseline: uniform actions, each entry flagged with p=1/2.
- ``colourblind`` is the observer with one defect: it cannot tell a hole from ice in
  the image (it sees every hole as ice there) but reads the text listing exactly.

Under fog a cell beyond the view is unknown (``?``). The
observer plans on what it sees and, where it sees nothing, on its memory view's
claim when it has one; the credulous agent trusts memory wherever memory speaks and
the observation elsewhere. A cell neither shows is walkable to both, but entered only
when no route over known cells exists (:func:`cautious_path`). Neither keeps a
map between steps: each step is planned afresh on that step's prompt (a model may do
better by remembering what it saw), so an agent can walk back and forth until the
step budget ends the episode. An auditor keeps every entry whose cell it cannot see.

All of them answer the perception probe with the cell types of the grid they believe
(the random agent with coin flips between hole and ice).

Answers are the JSON the suite's prompts ask for; a prompt an agent cannot read gets
a short plain-text answer saying so, which the tasks count as unparseable.
"""

from __future__ import annotations

import heapq
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from spatialstale.env import Action, Grid, Pos, greedy_action, move, shortest_path
from spatialstale.protocol import VerdictField, every_verdict_field

from ._perception import UNKNOWN_CELL, CallKind, MemoryClaim, Perception, with_holes

Verdict = tuple[MemoryClaim, bool, str]
"""An entry, whether it is judged stale, and why."""

ACTION_ORDER = (Action.DOWN, Action.RIGHT, Action.UP, Action.LEFT)
"""Tie-breaking order among moves (the order ``shortest_path`` expands in)."""


def not_understood(why: str) -> str:
    """The plain-text answer to a prompt an agent cannot act on."""
    return f"I cannot answer this prompt: {why}."


def _hazard(cell: str) -> int | None:
    return None if cell == UNKNOWN_CELL else int(cell == "H")


def believed_grid(seen: Perception, *, trust_memory: bool) -> Grid | None:
    """The map an agent plans on: the observation, overridden by memory if it trusts it.

    A trusted SAFE entry makes its cell walkable (an observed hole becomes ice); a
    trusted DANGER entry makes it a hole. An UNKNOWN entry (``seen.unknown``) claims
    nothing, so its cell keeps what the observation shows. An agent that does not
    trust memory over its eyes still takes memory's claim for a cell it cannot see.
    """
    if seen.grid is None:
        return None
    rows = [list(row) for row in seen.grid]
    for entry in seen.memory:
        r, c = entry.pos
        if not (0 <= r < seen.size and 0 <= c < seen.size):
            continue
        if not trust_memory and rows[r][c] != UNKNOWN_CELL:
            continue
        if entry.claim == "DANGER":
            rows[r][c] = "H"
        elif rows[r][c] in ("H", UNKNOWN_CELL):
            rows[r][c] = "F"
    return tuple("".join(row) for row in rows)


def judge(entries: Sequence[MemoryClaim], grid: Grid) -> list[Verdict]:
    """Each entry is stale when its claimed hazard differs from the cell's in ``grid``."""
    size = len(grid)
    verdicts: list[Verdict] = []
    for entry in entries:
        r, c = entry.pos
        cell = grid[r][c] if 0 <= r < size and 0 <= c < size else UNKNOWN_CELL
        hazard = _hazard(cell)
        where = f"({r},{c})"
        if hazard is None:
            verdicts.append((entry, False, f"{where} is not visible in the current grid; keeping the claim"))
        elif hazard != entry.hazard:
            verdicts.append((entry, True, f"{where} is {cell} in the current grid; the {entry.claim} claim is stale"))
        else:
            verdicts.append((entry, False, f"{where} is {cell} in the current grid; the {entry.claim} claim holds"))
    return verdicts


NOTE_REASON = "a note about no cell; no change of the grid can make it stale"


def seen_cell(grid: Grid, pos: Pos) -> str:
    """The cell at ``pos`` in ``grid``; unknown off the grid."""
    r, c = pos
    return grid[r][c] if 0 <= r < len(grid) and 0 <= c < len(grid) else UNKNOWN_CELL


def asked(seen: Perception) -> list[VerdictField]:
    """The extensions' verdict fields the audit prompt asks for."""
    return [f for f in every_verdict_field() if f.name in seen.asked]


def audit_answer(
    verdicts: Sequence[Verdict],
    notes: Sequence[tuple[str, bool, str]] = (),
    fields: Mapping[str, Mapping[str, str]] | None = None,
) -> str:
    """The JSON array the audit prompt asks for: the cell entries in the order given,
    then the entries about no cell (``notes``: id, stale, reason). Each of ``fields``
    (the verdict fields the prompt asks for: name -> value by id) is a key of each
    stale entry's verdict that has a value."""
    items: list[dict[str, object]] = [
        {"memory_id": e.id, "is_stale": stale, "reason": why} for e, stale, why in verdicts
    ]
    for name, values in (fields or {}).items():
        for item in items:
            if item["is_stale"] and item["memory_id"] in values:
                item[name] = values[str(item["memory_id"])]
    items += [{"memory_id": mid, "is_stale": stale, "reason": why} for mid, stale, why in notes]
    return json.dumps(items)


def selfverify_answer(ids: Sequence[str]) -> str:
    """The JSON object the SelfVerify prompt asks for."""
    return json.dumps({"inconsistent": list(ids)})


def perception_answer(cells: Sequence[Pos], grid: Grid) -> str:
    """The JSON array the perception prompt asks for: each asked cell's type in ``grid``."""
    size = len(grid)
    return json.dumps(
        [
            {"cell": f"({r},{c})", "type": grid[r][c] if 0 <= r < size and 0 <= c < size else UNKNOWN_CELL}
            for r, c in cells
        ]
    )


def action_answer(action: Action) -> str:
    """The JSON object the navigation prompt asks for."""
    return json.dumps({"action": action.name})


def _manhattan(a: Pos, b: Pos) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def cautious_path(grid: Grid, start: Pos, goal: Pos) -> list[Pos] | None:
    """A hole-free path that enters as few unknown (``?``) cells as it can, then the
    shortest such; ties break in ``shortest_path``'s neighbour order."""
    size = len(grid)
    # entering an unknown cell costs more than any route over known cells (< n² steps)
    unknown_cost = size * size
    best: dict[Pos, int] = {start: 0}
    parent: dict[Pos, Pos | None] = {start: None}
    frontier: list[tuple[int, int, Pos]] = [(0, 0, start)]
    order = 0
    while frontier:
        cost, _, pos = heapq.heappop(frontier)
        if cost > best[pos]:
            continue
        if pos == goal:
            path = [pos]
            while (prev := parent[path[-1]]) is not None:
                path.append(prev)
            return path[::-1]
        for action in ACTION_ORDER:
            nxt = move(pos, action, size)
            if nxt == pos or grid[nxt[0]][nxt[1]] == "H":
                continue
            step = cost + (unknown_cost if grid[nxt[0]][nxt[1]] == UNKNOWN_CELL else 1)
            if step < best.get(nxt, step + 1):
                best[nxt] = step
                parent[nxt] = pos
                order += 1
                heapq.heappush(frontier, (step, order, nxt))
    return None


def plan_action(grid: Grid, agent: Pos, goal: Pos) -> Action:
    """The first move of a shortest hole-free path from ``agent`` to ``goal``.

    On a grid with unknown cells (fog) the path keeps to known cells where it can
    (:func:`cautious_path`): an unknown cell is walkable but only worth entering when
    no known route exists. With no path at all: the move onto the non-hole neighbour
    closest to the goal; when holes surround the agent, a move into the border (which
    stays in place); and only when none exists, the greedy step toward the goal.
    """
    size = len(grid)
    fogged = any(UNKNOWN_CELL in row for row in grid)
    path = cautious_path(grid, agent, goal) if fogged else shortest_path(grid, agent, goal)
    if path is not None and len(path) >= 2:
        step = (path[1][0] - agent[0], path[1][1] - agent[1])
        for action in ACTION_ORDER:
            if action.delta == step:
                return action
    options = []
    for rank, action in enumerate(ACTION_ORDER):
        nxt = move(agent, action, size)
        if nxt != agent and grid[nxt[0]][nxt[1]] != "H":
            options.append((_manhattan(nxt, goal), rank, action))
    if options:
        return min(options)[2]
    for action in ACTION_ORDER:
        if move(agent, action, size) == agent:
            return action
    return greedy_action(agent, goal)


@dataclass(frozen=True)
class BeliefAgent:
    """An agent that audits and plans on one believed map.

    ``trust_memory=False`` is the observer; ``True`` is the credulous agent, whose
    believed map agrees with every memory entry and so never flags one.
    """

    trust_memory: bool

    def answer(self, seen: Perception, rng: random.Random) -> str:
        if seen.kind is None:
            return not_understood("it is not a SpatialSTALE audit, self-check, perception or navigation prompt")
        grid = believed_grid(seen, trust_memory=self.trust_memory)
        if grid is None or seen.grid is None or seen.problem is not None:
            return not_understood(seen.problem or "the prompt shows no grid")
        # the observer answers what it sees; a cell it cannot see it leaves unjudged
        judged = grid if self.trust_memory else seen.grid
        if seen.kind is CallKind.PERCEPTION:
            return perception_answer(seen.cells, judged)
        if seen.kind is CallKind.AUDIT:
            verdicts = judge(seen.memory, judged)
            # each asked field states what the agent believes is at the cell now
            fields = {
                f.name: {e.id: f.believed(e.pos, seen_cell(judged, e.pos)) for e, stale, _ in verdicts if stale}
                for f in asked(seen)
            }
            return audit_answer(verdicts, [(mid, False, NOTE_REASON) for mid in seen.notes], fields)
        if seen.kind is CallKind.SELFVERIFY:
            return selfverify_answer([entry.id for entry, stale, _ in judge(seen.memory, judged) if stale])
        if seen.agent is None or seen.goal is None:
            return not_understood("the prompt gives no agent position")
        if not (0 <= seen.agent[0] < len(grid) and 0 <= seen.agent[1] < len(grid)):
            return not_understood(f"the position {seen.agent} lies outside the grid")
        return action_answer(plan_action(grid, seen.agent, seen.goal))


@dataclass(frozen=True)
class RandomAgent:
    """Uniform random actions; each entry flagged stale with probability 1/2."""

    def answer(self, seen: Perception, rng: random.Random) -> str:
        if seen.kind is None:
            return not_understood("it is not a SpatialSTALE audit, self-check, perception or navigation prompt")
        if seen.kind is CallKind.NAVIGATE:
            return action_answer(rng.choice(ACTION_ORDER))
        if seen.kind is CallKind.PERCEPTION:
            return json.dumps([{"cell": f"({r},{c})", "type": rng.choice("HF")} for r, c in seen.cells])
        flags = [(entry, rng.random() < 0.5) for entry in seen.memory]
        notes = [(mid, rng.random() < 0.5, "a coin flip") for mid in seen.notes]
        if seen.kind is CallKind.AUDIT:
            fields = {f.name: {e.id: f.guessed(e.pos, rng) for e, stale in flags if stale} for f in asked(seen)}
            return audit_answer([(e, stale, "a coin flip") for e, stale in flags], notes, fields)
        return selfverify_answer([e.id for e, stale in flags if stale] + [mid for mid, stale, _ in notes if stale])


@dataclass(frozen=True)
class ColourBlindAgent:
    """The observer, except that in an image a hole looks like ice to it.

    Holes are near-black and ice light blue, so no real eye confuses them; the agent
    is a deliberately broken reader that the perception probe must catch: hole recall
    0 from the image, 1 from the text listing (which wins when both are shown). A
    memory entry shown as a picture is an image too: a remembered hole reads as ice.
    """

    def answer(self, seen: Perception, rng: random.Random) -> str:
        if seen.source == "image" and seen.grid is not None:
            # the holes it is told of (regime MA) it does not need to see
            seen = replace(seen, grid=with_holes(tuple(row.replace("H", "F") for row in seen.grid), seen.broken))
        if any(entry.pictured for entry in seen.memory):
            seen = replace(seen, memory=tuple(replace(e, claim="SAFE") if e.pictured else e for e in seen.memory))
        return OBSERVER.answer(seen, rng)


OBSERVER = BeliefAgent(trust_memory=False)

Policy = BeliefAgent | RandomAgent | ColourBlindAgent

AGENTS: dict[str, Policy] = {
    "observer": OBSERVER,
    "credulous": BeliefAgent(trust_memory=True),
    "random": RandomAgent(),
    "colourblind": ColourBlindAgent(),
}
"""The reference agents by model name: ``spatialstale/<name>``."""
