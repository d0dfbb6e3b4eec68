"""How B should grow with n (App. E): ``--sizes`` runs the study at several grid sides,
the batch sweep at B values that grow with n², checked before anything runs, and the
dry run estimates every side."""

from __future__ import annotations

import re

import pytest

from spatialstale.study import main, study_from_args, study_seeds, study_tasks
from spatialstale.study._matrix import sweep_batch_sizes

SEEDS = study_seeds(None, 2)
MODEL = "spatialstale/observer"


def _sweep_cells(tasks: object) -> set[tuple[int, int]]:
    return {
        (t.settings.size, t.settings.batch_size)
        for t in tasks  # type: ignore[attr-defined]
        if t.kind == "detection" and t.regime == "L1" and t.settings.modality == "text"
    }


def test_sweep_grid_keeps_the_papers_b_and_the_papers_calls_at_every_n() -> None:
    assert sweep_batch_sizes(8) == (1, 5, 10, 20)
    assert sweep_batch_sizes(16) == (1, 5, 10, 20, 40, 80)
    assert sweep_batch_sizes(32) == (1, 5, 10, 20, 80, 160, 320)
    for n in (8, 16, 32, 64):
        calls = {-(-n * n // b) for b in sweep_batch_sizes(n)}
        assert {13, 7, 4} <= calls  # ⌈n²/B⌉ of the paper's B = 5, 10, 20 at n = 8
        assert all(b <= n * n for b in sweep_batch_sizes(n))
    assert sweep_batch_sizes(4) == (1, 2, 5, 10, 16)  # B never beyond the 16 entries


def test_sizes_with_the_sweep_has_every_n_x_b_cell() -> None:
    tasks = study_tasks(seeds=SEEDS, regimes=["L1", "L2"], batch_sweep=True, sizes=[8, 16], navigation_on=False)
    expected = {(8, b) for b in (1, 5, 10, 20)} | {(16, b) for b in (1, 5, 10, 20, 40, 80)}
    assert _sweep_cells(tasks) == expected
    # the main matrix (L1, L2 x text, vision at B=10) at each side, the sweep's B=10 not repeated
    assert len(tasks) == len(set(tasks)) == 2 * 4 + 3 + 5
    names = [t.name for t in tasks]
    assert "detection L1 text B=80 n=16" in names and "detection L1 text B=20" in names
    assert all(t.args()["size"] == 16 for t in tasks if t.name.endswith("n=16"))


def test_without_sizes_the_matrix_and_its_task_args_are_unchanged() -> None:
    today = study_tasks(seeds=SEEDS, batch_sweep=True, episodes=1)
    assert [t.args() for t in study_tasks(seeds=SEEDS, batch_sweep=True, episodes=1, sizes=[8])] == [
        t.args() for t in today
    ]
    assert [t.name for t in today if "n=" in t.name] == []
    sweep = [t.args() for t in today if t.kind == "detection" and t.args()["regime"] == "L1"]
    assert [a for a in sweep if a["modality"] == "text"] == [
        {"regime": "L1", "modality": "text", "batch_size": b, "seeds": list(SEEDS), "size": 8} for b in (10, 1, 5, 20)
    ]
    # the command line: no --sizes is --size's single side, --size 16 alone as before
    argv = ["--model", MODEL, "--batch-sweep", "--n-seeds", "2", "--episodes", "1"]
    plain = study_from_args(argv)
    assert [s.args() for s in plain.tasks] == [t.args() for t in today]
    single = study_from_args([*argv, "--size", "16"])
    assert _sweep_cells(single.tasks) == {(16, b) for b in (1, 5, 10, 20, 40, 80)}


@pytest.mark.parametrize(
    ("sizes", "shown"),
    [("8,abc", "got 'abc'"), ("8,128", "got 128"), ("3", "got 3"), ("16,-8", "got -8"), ("8.5", "got '8.5'")],
)
def test_bad_sizes_fail_in_one_line_naming_the_valid_values(
    sizes: str, shown: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["study", "--model", MODEL, "--sizes", sizes, "--batch-sweep", "--dry-run"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.strip().splitlines()
    assert "--sizes must be integers from 4 to 64" in line and line.endswith(shown)


def test_size_and_sizes_together_are_refused() -> None:
    with pytest.raises(SystemExit):
        study_from_args(["--model", MODEL, "--size", "16", "--sizes", "8,16"])


def test_dry_run_estimates_every_n_at_n_squared_over_b_calls(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["study", "--model", MODEL, "--sizes", "8,16,32", "--batch-sweep", "--no-navigation"]
    assert main([*argv, "--regimes", "L1", "--modalities", "text", "--seeds", "1,2", "--dry-run"]) == 0
    out = capsys.readouterr().out
    calls = {}
    for line in out.splitlines():
        found = re.match(rf"{re.escape(MODEL)}\s+detection L1 text B=(\d+)(?: n=(\d+))?\s+2\s+1\s+0\s+([\d,]+)", line)
        if found:
            b, n = int(found[1]), int(found[2] or 8)
            calls[(n, b)] = int(found[3].replace(",", ""))
    assert set(calls) == {(n, b) for n in (8, 16, 32) for b in sweep_batch_sizes(n)}
    for (n, b), audit_calls in calls.items():
        assert audit_calls == 2 * -(-n * n // b)  # two seeds, one window, ⌈n²/B⌉ an audit
    assert calls[(32, 1)] == 2048 and calls[(32, 320)] == 8
    assert "17 task logs" in out
