"""Distractor entries: non-spatial memory entries drawn from a versioned bank.

The paper's App. K: memory that holds, beside one entry a cell, notes no grid change
can contradict (the rules of the game, past episodes, the agent itself). With ``K``
distractors the store has n² + K entries whose ids are a seeded permutation of
``mem_000`` … so neither an id nor a position in the listing tells a distractor apart.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from ._instance import Instance, make_instance
from ._rng import Stream
from ._types import Cell, MemoryEntry

BANK_VERSION = "v1"
BANK_DIR = Path(__file__).parent / "data" / "distractors"
MANIFEST = "SHA256SUMS"


@lru_cache(maxsize=4)
def distractor_bank(version: str = BANK_VERSION) -> tuple[tuple[str, str], ...]:
    """The bank's ``(topic, text)`` pairs in file order, checked against its manifest.

    Raises:
        RuntimeError: a missing file or a checksum mismatch (an infrastructure failure).
    """
    path = BANK_DIR / f"{version}.jsonl"
    data = path.read_bytes()
    sums: dict[str, str] = {}
    for line in (BANK_DIR / MANIFEST).read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        sums[name] = digest
    if sums.get(path.name) != hashlib.sha256(data).hexdigest():
        raise RuntimeError(f"{path}: SHA-256 differs from {BANK_DIR / MANIFEST}")
    rows = [json.loads(line) for line in data.decode().splitlines() if line]
    return tuple((str(row["topic"]), str(row["text"])) for row in rows)


MAX_DISTRACTORS = len(distractor_bank())
"""K can be at most the bank's size: distractors are drawn without replacement."""


def validate_distractors(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= MAX_DISTRACTORS:
        raise ValueError(f"distractors must be an integer from 0 to {MAX_DISTRACTORS} (the bank's size); got {k!r}")
    return k


def with_distractor_entries(instance: Instance, k: int) -> Instance:
    """``instance`` (as ``make_instance`` draws it) with ``k`` distractors in its store.

    The distractors (drawn from bank version ``BANK_VERSION``) and the ids of a store
    that holds them depend on (seed, size, k) only; ``k == 0`` returns ``instance``
    itself, whose ids are the paper's ``mem_{row*n+col}``.

    Raises:
        ValueError: a count outside 0 … the bank's size.
    """
    k = validate_distractors(k)
    return instance if k == 0 else _with_entries(instance.seed, instance.regime, instance.size, k)


@lru_cache(maxsize=4096)
def _with_entries(seed: int, regime: str, size: int, k: int) -> Instance:
    instance = make_instance(seed, regime, size)
    memory = add_distractors(
        instance.memory, k, Stream(seed, size, "distractor_bank"), Stream(seed, size, "distractor_ids"), BANK_VERSION
    )
    return replace(instance, memory=memory)


def _shuffled(n: int, rng: Stream) -> list[int]:
    # Fisher-Yates from the front, so the first k of K draws do not depend on K
    items = list(range(n))
    for i in range(n - 1):
        j = i + rng.below(n - i)
        items[i], items[j] = items[j], items[i]
    return items


def add_distractors(
    memory: tuple[MemoryEntry, ...], k: int, bank: Stream, ids: Stream, version: str = BANK_VERSION
) -> tuple[MemoryEntry, ...]:
    """``memory`` (n² cell entries in cell order) with ``k`` distractors, in id order.

    The distractors are the first ``k`` of a ``bank``-seeded shuffle of the bank; the
    n² + k ids are a uniform ``ids``-seeded permutation of ``mem_000`` … ``mem_{n²+k-1}``
    (cells first in cell order, then the distractors in draw order). ``k == 0``
    returns ``memory`` itself: the paper's ids, ``mem_{row*n+col}``.
    """
    if k == 0:
        return memory
    entries = distractor_bank(version)
    if not 0 < k <= len(entries):
        raise ValueError(f"distractors must be an integer from 0 to {len(entries)}; got {k!r}")
    drawn = [entries[i] for i in _shuffled(len(entries), bank)[:k]]
    total = len(memory) + k
    names = [f"mem_{number:03d}" for number in _shuffled(total, ids)]
    cells = [replace(entry, id=name) for entry, name in zip(memory, names, strict=False)]
    extra = [
        MemoryEntry(id=name, row=-1, col=-1, cell=Cell.FROZEN, text=text, explored=False, topic=topic)
        for (topic, text), name in zip(drawn, names[len(memory) :], strict=True)
    ]
    return tuple(sorted([*cells, *extra], key=lambda e: int(e.id.removeprefix("mem_"))))
