"""Same (seed, regime, size), same instance: across calls, caches and processes."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from spatialstale.env import default_seeds, make_instance
from spatialstale.env._instance import _make_instance

from ._support import PROPERTY, REGIMES, SEEDS, SIZES, run_python

CASES = [(seed, regime, size) for seed in (0, 1, 4810, 999_999) for regime in REGIMES for size in (4, 8, 13)]
CASES += [(77, regime, 32) for regime in REGIMES]

DIGESTS = """
import hashlib, sys
from spatialstale.env import default_seeds, make_instance
print(",".join(map(str, default_seeds())))
for spec in sys.argv[1:]:
    seed, regime, size = spec.split(":")
    print(hashlib.sha256(make_instance(int(seed), regime, int(size)).to_json().encode()).hexdigest())
"""


def digest(seed: int, regime: str, size: int) -> str:
    return hashlib.sha256(make_instance(seed, regime, size).to_json().encode()).hexdigest()


def test_identical_in_separate_processes_with_different_hash_seeds() -> None:
    args = [f"{seed}:{regime}:{size}" for seed, regime, size in CASES]
    expected = [",".join(map(str, default_seeds())), *(digest(*case) for case in CASES)]
    outputs = []
    for hash_seed in ("0", "2024", "random"):
        result = run_python(DIGESTS, *args, hash_seed=hash_seed)
        assert result.returncode == 0, result.stderr
        outputs.append(result.stdout.splitlines())
    assert outputs[0] == outputs[1] == outputs[2] == expected


@PROPERTY
@given(seed=SEEDS, size=SIZES, regime=st.sampled_from(REGIMES))
def test_identical_without_the_cache(seed: int, size: int, regime: str) -> None:
    first = make_instance(seed, regime, size).to_json()
    _make_instance.cache_clear()
    assert make_instance(seed, regime, size).to_json() == first


def test_different_seeds_give_different_worlds() -> None:
    assert len({make_instance(seed, "none").g0 for seed in default_seeds()}) == 50


def test_default_seeds() -> None:
    seeds = default_seeds()
    assert isinstance(seeds, tuple)
    assert len(seeds) == 50 == len(set(seeds))
    assert all(type(seed) is int and 0 <= seed < 10_000 for seed in seeds)
    assert default_seeds() == seeds == default_seeds(2024, 50)
    assert default_seeds(2024, 10) == seeds[:10]
    assert default_seeds(2025) != seeds
