"""Deterministic random streams, one per purpose, identical on every machine.

Each stream reads raw 64-bit words from NumPy's ``PCG64`` bit generator seeded by a
``SeedSequence`` of integers (instance seed, grid size, purpose code). NumPy promises
that bit generator streams and ``SeedSequence`` stay stable across releases and
platforms; it does not promise that for ``Generator`` methods, so bounded integers
and floats are mapped from the raw words here rather than drawn through
``Generator.integers``. The modulo bias of ``word % n`` for the small ``n`` used here
is below 2**-50 and the mapping is part of the instance definition.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

import numpy as np

T = TypeVar("T")

_BLOCK = 256
_FLOAT_SCALE = 2.0**-53

PURPOSES = {
    "master": 1,
    "grid": 2,
    "memory": 3,
    "L1": 11,
    "L2": 12,
    "L3": 13,
    "MA": 14,
    "distractor_bank": 21,
    "distractor_ids": 22,
}
"""Stream codes. They are part of the instance definition: never renumber them."""

NAMED = 100
"""The code of a stream keyed by a name (:meth:`Stream.named`): a plug-in regime's."""


class Stream:
    """A purpose-keyed random stream: ``Stream(seed, size, "grid")``."""

    def __init__(self, seed: int, size: int, purpose: str) -> None:
        self._start([seed, size, PURPOSES[purpose]])

    @classmethod
    def named(cls, seed: int, size: int, name: str) -> Stream:
        """The stream of ``name`` (a plug-in regime's): keyed by (seed, size, ``NAMED``,
        the first 8 bytes of the SHA-256 of the name, big-endian), so it differs from
        every purpose's stream and from every other name's, on every machine."""
        stream = cls.__new__(cls)
        digest = hashlib.sha256(name.encode("utf-8")).digest()
        stream._start([seed, size, NAMED, int.from_bytes(digest[:8], "big")])
        return stream

    def _start(self, key: list[int]) -> None:
        self._bits = np.random.PCG64(np.random.SeedSequence(key))
        self._words: list[int] = []
        self._next = 0

    def _word(self) -> int:
        if self._next == len(self._words):
            self._words = self._bits.random_raw(_BLOCK).tolist()
            self._next = 0
        word = self._words[self._next]
        self._next += 1
        return int(word)

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``."""
        return self._word() % n

    def uniform(self) -> float:
        """A uniform float in ``[0, 1)`` with 53 random bits."""
        return (self._word() >> 11) * _FLOAT_SCALE

    def chance(self, p: float) -> bool:
        """True with probability ``p``."""
        return self.uniform() < p

    def choice(self, items: Sequence[T]) -> T:
        """A uniform pick from a non-empty sequence."""
        return items[self.below(len(items))]
