"""Distractor entries in the world (``-T distractors=K``): a pure function of
(seed, size, K) and the bank's version, ids from the cells' id space, never stale."""

from __future__ import annotations

from pathlib import Path

import pytest

from spatialstale.env import (
    MAX_DISTRACTORS,
    Cell,
    Instance,
    MemoryEntry,
    default_seeds,
    distractor_bank,
    make_instance,
    with_distractor_entries,
)
from spatialstale.env._distractor_bank import BANK_DIR, _with_entries

SEEDS = default_seeds()[:5]


def with_k(seed: int, regime: str, size: int, k: int) -> Instance:
    return with_distractor_entries(make_instance(seed, regime, size), k)


def extra(instance: Instance) -> list[MemoryEntry]:
    """The entries about no cell, in id order."""
    return [e for e in instance.memory if not e.is_cell]


def test_the_bank_is_checksummed_and_worded_like_the_entries() -> None:
    bank = distractor_bank()
    assert len(bank) == MAX_DISTRACTORS == 48
    assert {topic for topic, _ in bank} == {"RULE", "NOTE", "SELF"}
    for topic, text in bank:
        # "TOPIC: statement - gloss", as "SAFE at (5,4): Frozen ice - safe to walk"; no
        # coordinate and no SAFE/DANGER claim a reader could take for a cell's
        assert text.startswith(f"{topic}: ") and " - " in text
        assert "(" not in text and "SAFE" not in text and "DANGER" not in text
    assert (BANK_DIR / "SHA256SUMS").read_text().endswith("  v1.jsonl\n")


@pytest.mark.parametrize("seed", SEEDS)
def test_same_seed_same_entries_and_ids_byte_for_byte(seed: int) -> None:
    # past the cache: two independent constructions
    a = _with_entries.__wrapped__(seed, "L3", 8, 8)
    b = _with_entries.__wrapped__(seed, "L3", 8, 8)
    assert a.to_json() == b.to_json()
    assert [e.line for e in a.memory] == [e.line for e in b.memory]
    # the regime does not move them: one seed, one store
    assert [e.line for e in with_k(seed, "L1", 8, 8).memory] == [e.line for e in a.memory]


@pytest.mark.parametrize("seed", SEEDS)
def test_ids_are_one_shuffled_space_over_cells_and_distractors(seed: int) -> None:
    k = 8
    instance = with_k(seed, "L2", 8, k)
    paper = make_instance(seed, "L2", 8)
    ids = [e.id for e in instance.memory]
    assert ids == [f"mem_{i:03d}" for i in range(64 + k)]  # listed in id order
    numbers = [int(e.id[4:]) for e in extra(instance)]
    assert len(numbers) == k
    assert min(numbers) < 64, "the distractors' ids are not all at the end"
    assert sorted(numbers) != list(range(numbers[0], numbers[0] + k)), "nor one block"
    # the cells keep their claims and texts, under new ids
    for e in instance.memory:
        if e.is_cell:
            assert paper.entry_at(e.pos).text == e.text and paper.entry_at(e.pos).cell is e.cell
        else:
            assert e.topic in ("RULE", "NOTE", "SELF") and e.line == f"[{e.id}] {e.text}"


def test_fewer_distractors_are_a_prefix_of_more() -> None:
    few = [e.text for e in extra(with_k(SEEDS[0], "L2", 8, 3))]
    many = {e.text for e in extra(with_k(SEEDS[0], "L2", 8, 10))}
    assert set(few) <= many and len(set(few)) == 3


@pytest.mark.parametrize("seed", SEEDS)
def test_distractors_are_never_stale_and_the_labels_are_the_cells(seed: int) -> None:
    instance = with_k(seed, "L3", 8, 12)
    paper = make_instance(seed, "L3", 8)
    for step in range(0, 51, 5):
        grid = instance.grid_after(step)
        stale = instance.stale_ids(grid)
        assert not stale & {e.id for e in extra(instance)}
        assert {instance.entry(i).pos for i in stale} == {paper.entry(i).pos for i in paper.stale_ids(grid)}


def test_zero_distractors_is_the_paper_store() -> None:
    for seed in SEEDS:
        assert with_k(seed, "L2", 8, 0) is make_instance(seed, "L2", 8)
        memory = make_instance(seed, "L2", 8).memory
        assert [e.id for e in memory] == [f"mem_{i:03d}" for i in range(64)]
        assert all(e.is_cell and "topic" not in e.to_dict() for e in memory)


def test_a_distractor_round_trips_through_json() -> None:
    instance = with_k(SEEDS[0], "L2", 8, 4)
    again = Instance.from_dict(__import__("json").loads(instance.to_json()))
    assert again.memory == instance.memory
    assert all(e.cell is Cell.FROZEN and e.pos == (-1, -1) for e in extra(again))


@pytest.mark.parametrize("k", [-1, MAX_DISTRACTORS + 1, True, 2.0])
def test_a_bad_count_is_refused(k: object) -> None:
    with pytest.raises(ValueError, match=f"distractors must be an integer from 0 to {MAX_DISTRACTORS}"):
        with_distractor_entries(make_instance(SEEDS[0], "L2", 8), k)  # type: ignore[arg-type]


def test_an_edited_bank_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from spatialstale.env import _distractor_bank

    for name in ("v1.jsonl", "SHA256SUMS"):
        shutil.copy(BANK_DIR / name, tmp_path / name)
    monkeypatch.setattr(_distractor_bank, "BANK_DIR", tmp_path)
    assert _distractor_bank.distractor_bank.__wrapped__("v1") == distractor_bank()
    (tmp_path / "v1.jsonl").write_text((BANK_DIR / "v1.jsonl").read_text().replace("hole", "pit", 1))
    with pytest.raises(RuntimeError, match="SHA-256 differs"):
        _distractor_bank.distractor_bank.__wrapped__("v1")


def test_verify_checks_the_bank_beside_the_instances(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    from spatialstale.env import _distractor_bank
    from spatialstale.env.__main__ import main

    assert main(["verify"]) == 0
    assert f"{BANK_DIR}: v1.jsonl matches its SHA-256 ({MAX_DISTRACTORS} entries)" in capsys.readouterr().out
    for name in ("v1.jsonl", "SHA256SUMS"):
        shutil.copy(BANK_DIR / name, tmp_path / name)
    (tmp_path / "v1.jsonl").write_text((BANK_DIR / "v1.jsonl").read_text().replace("hole", "pit", 1))
    monkeypatch.setattr(_distractor_bank, "BANK_DIR", tmp_path)
    try:
        assert main(["verify"]) == 1
        assert "distractor bank v1:" in capsys.readouterr().err
    finally:
        _distractor_bank.distractor_bank.cache_clear()  # the next reader reads the shipped bank again
