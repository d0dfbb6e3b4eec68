"""The shipped seed map sets: manifest, byte-for-byte regeneration, loading."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from spatialstale.env import default_seeds, make_instance
from spatialstale.env._data import DATA_DIR, load_instances, verify_dataset, write_dataset

FILES = ("L1.jsonl", "L2.jsonl", "L3.jsonl")


def test_shipped_files_verify() -> None:
    assert verify_dataset() == []


def test_manifest_matches_the_files() -> None:
    lines = (DATA_DIR / "SHA256SUMS").read_text().splitlines()
    listed = dict(reversed(line.split("  ")) for line in lines)
    assert sorted(listed) == list(FILES)
    for name, digest in listed.items():
        assert hashlib.sha256((DATA_DIR / name).read_bytes()).hexdigest() == digest


def test_regenerating_reproduces_the_files(tmp_path: Path) -> None:
    written = write_dataset(tmp_path)
    assert sorted(path.name for path in written) == sorted([*FILES, "SHA256SUMS"])
    for path in written:
        assert path.read_bytes() == (DATA_DIR / path.name).read_bytes(), path.name


@pytest.mark.parametrize("regime", ["L1", "L2", "L3"])
def test_loaded_instances_equal_generated_ones(regime: str) -> None:
    loaded = load_instances(regime)
    assert loaded == [make_instance(seed, regime) for seed in default_seeds()]
    assert [instance.seed for instance in loaded] == list(default_seeds())


def test_verify_reports_tampering(tmp_path: Path) -> None:
    for name in [*FILES, "SHA256SUMS"]:
        shutil.copy(DATA_DIR / name, tmp_path / name)
    assert verify_dataset(tmp_path) == []
    path = tmp_path / "L2.jsonl"
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"F"', b'"H"', 1))
    problems = verify_dataset(tmp_path)
    assert len(problems) == 2 and all(problem.startswith("L2.jsonl:") for problem in problems)
    (tmp_path / "L3.jsonl").unlink()
    assert "L3.jsonl: missing" in verify_dataset(tmp_path)
    (tmp_path / "SHA256SUMS").unlink()
    assert len(verify_dataset(tmp_path)) == 1
