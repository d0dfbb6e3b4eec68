"""The released seed map sets: the default instances as versioned JSON Lines files."""

from __future__ import annotations

import hashlib
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ._instance import DEFAULT_SIZE, MASTER_SEED, N_DEFAULT_SEEDS, Instance, default_seeds, make_instance

DATA_VERSION = "v1"
DATA_DIR = Path(__file__).parent / "data" / DATA_VERSION
DATA_REGIMES = ("L1", "L2", "L3")
MANIFEST = "SHA256SUMS"

PAPER_STALE_RATIOS = {
    "L1": (0.094, 0.011, 0.078, 0.109),
    "L2": (0.141, 0.014, 0.109, 0.172),
    "L3": (0.143, 0.028, 0.078, 0.219),
}
"""The paper's Table 1 / App. A: mean, std, min, max over its 50 seeds."""


def dataset_text(regime: str, seeds: Sequence[int], size: int = DEFAULT_SIZE) -> str:
    """One canonical JSON line per instance, in seed order."""
    return "".join(make_instance(seed, regime, size).to_json() + "\n" for seed in seeds)


def write_dataset(out_dir: Path, master_seed: int = MASTER_SEED, n_seeds: int = N_DEFAULT_SEEDS) -> list[Path]:
    """Write ``L1.jsonl``, ``L2.jsonl``, ``L3.jsonl`` and their SHA-256 manifest."""
    out_dir.mkdir(parents=True, exist_ok=True)
    seeds = default_seeds(master_seed, n_seeds)
    paths = []
    sums = []
    for regime in DATA_REGIMES:
        path = out_dir / f"{regime}.jsonl"
        data = dataset_text(regime, seeds).encode()
        path.write_bytes(data)
        sums.append(f"{hashlib.sha256(data).hexdigest()}  {path.name}\n")
        paths.append(path)
    manifest = out_dir / MANIFEST
    manifest.write_text("".join(sums))
    return [*paths, manifest]


def verify_dataset(data_dir: Path = DATA_DIR) -> list[str]:
    """Problems found in a data directory: checksum mismatches and regeneration diffs.

    An empty list means every file matches its manifest line and regenerating the
    default instances reproduces it byte for byte.
    """
    problems = []
    manifest = data_dir / MANIFEST
    if not manifest.is_file():
        return [f"{manifest} is missing"]
    seeds = default_seeds()
    for line in manifest.read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        path = data_dir / name
        if not path.is_file():
            problems.append(f"{name}: missing")
            continue
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != digest:
            problems.append(f"{name}: SHA-256 differs from {MANIFEST}")
        if data != dataset_text(name.removesuffix(".jsonl"), seeds).encode():
            problems.append(f"{name}: differs from the regenerated instances")
    return problems


def load_instances(regime: str, data_dir: Path = DATA_DIR) -> list[Instance]:
    """The shipped default instances of one regime, read from their data file."""
    import json

    path = data_dir / f"{regime}.jsonl"
    return [Instance.from_dict(json.loads(line)) for line in path.read_text().splitlines() if line]


@dataclass(frozen=True)
class StaleStats:
    regime: str
    n: int
    mean: float
    std: float
    low: float
    high: float


def stale_ratio_stats(regime: str, seeds: Sequence[int], size: int = DEFAULT_SIZE) -> StaleStats:
    """Stale ratio over seeds: at the episode start for L1/L2 (and MA), after the last L3 event.

    ``std`` is the sample standard deviation (ddof=1).
    """
    ratios = []
    for seed in seeds:
        instance = make_instance(seed, regime, size)
        ratios.append(instance.stale_ratio(instance.final_grid))
    std = statistics.stdev(ratios) if len(ratios) > 1 else 0.0
    return StaleStats(regime, len(ratios), statistics.fmean(ratios), std, min(ratios), max(ratios))
