"""The study runs the matrix a user asks for: a combination of values that the task
refuses (its settings' own validation) is skipped, counted and said in one line a reason,
never an error of the whole study; the study and the task never disagree on which
combinations run. Each option is declared once in ``--help``."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from typing import Any

import pytest

from spatialstale.protocol import MODALITIES, TaskParameterError
from spatialstale.solvers import FILTERING, STRATEGIES
from spatialstale.study import study_matrix
from spatialstale.study._cli import main
from spatialstale.study._matrix import TASKS, beyond_paper, skipped_lines

SEED = 4810
OPEN_VALUES: dict[str, tuple[Any, ...]] = {"distractors": (0, 8), "edits": (False, True), "view_radius": (None, 1)}
"""Two values of each axis without a closed vocabulary: its default and another."""


def _values(kind: str) -> dict[str, tuple[Any, ...]]:
    """Two values (or every value, where a pair can conflict) of each axis of ``kind``
    beyond the paper, the default first: every pair of axes meets in the product."""
    out = {}
    for a in beyond_paper(kind):
        values = OPEN_VALUES.get(a.name) or a.values
        out[a.name] = tuple(dict.fromkeys((a.value, *values)))[: None if a.name == "memory" else 2]
    return out


def _refusal(kind: str, args: dict[str, Any]) -> str | None:
    """The task's own verdict on these arguments: None, or its one-line refusal."""
    try:
        TASKS[kind](seeds=[SEED], regime="L2", **args)
    except TaskParameterError as error:
        return str(error)
    return None


def _key(settings: object, names: list[str]) -> tuple[Any, ...]:
    return tuple(getattr(settings, name) for name in names)


def test_detection_runs_every_combination_the_task_accepts_and_skips_the_rest_with_its_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    axes = _values("detection")
    names = ["modality", *axes]
    matrix = study_matrix(seeds=[SEED], regimes=["L2"], modalities=MODALITIES, navigation_on=False, axes=axes)
    accepted, refused = set(), Counter()
    for combo in itertools.product(MODALITIES, *axes.values()):
        args = dict(zip(names, combo, strict=True))
        reason = _refusal("detection", args)
        if reason is None:
            accepted.add(combo)
        else:
            refused[reason] += 1
    capsys.readouterr()  # the task prints each refusal on stderr
    # memory=crops with modality text, and with distractors, are what the task refuses
    assert len(refused) == 2 and sum(refused.values()) < len(accepted)
    assert {_key(spec.settings, names) for spec in matrix.tasks} == accepted
    assert len(matrix.tasks) == len(accepted)
    assert Counter(s.reason for s in matrix.skipped) == refused
    assert {s.kind for s in matrix.skipped} == {"detection"}


def test_navigation_runs_every_combination_and_a_filter_mode_only_where_it_changes_something(
    capsys: pytest.CaptureFixture[str],
) -> None:
    axes = _values("navigation")
    strategies = tuple(STRATEGIES)
    names = ["strategies", *axes]
    matrix = study_matrix(seeds=[SEED], regimes=["L2"], strategies=strategies, detection_on=False, axes=axes)
    run, idle = set(), 0
    for combo in itertools.product(strategies, *axes.values()):
        args = dict(zip(names, combo, strict=True))
        assert _refusal("navigation", {**args, "strategies": [args["strategies"]]}) is None
        if args["filter"] != "delete" and args["strategies"] not in FILTERING:
            idle += 1  # the task accepts it, but it would repeat the filter=delete run
        else:
            run.add(((args["strategies"],), *combo[1:]))
    capsys.readouterr()
    assert {_key(spec.settings, names) for spec in matrix.tasks} == run
    assert idle and len(matrix.skipped) == idle
    assert {s.reason for s in matrix.skipped} == {
        "filter=unknown changes only the strategies that flag entries (selfverify, omcd, oracle, localverify); "
        "nomemory, nofilter run at filter=delete only"
    }


def test_the_skipped_tasks_are_counted_one_line_a_reason() -> None:
    matrix = study_matrix(seeds=[SEED], navigation_on=False, axes={"distractors": [0, 8], "memory": ["text", "crops"]})
    # 3 regimes x 2 modalities x 2 distractor counts x 2 memories, less what crops cannot show
    assert len(matrix.tasks) == 24 - 9
    # a task two refusals apply to (crops, text, K = 8) gets the first extension's in registry order
    assert skipped_lines(matrix.skipped) == [
        "skipped 3 detection tasks: memory=crops compares pictures of the memory with the current grid's image: "
        "it needs modality vision or both; got modality=text",
        "skipped 6 detection tasks: memory=crops draws each entry as a picture of its cell and distractors are about "
        "no cell: use distractors=0 with memory=crops; got distractors=8",
    ]


STUDY = ["study", "--model", "spatialstale/observer", "--n-seeds", "2", "--regimes", "L2"]


def test_the_dry_run_runs_what_is_valid_and_says_what_it_skips(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*STUDY, "--no-navigation", "--distractors", "0,8", "--memory", "text,crops", "--dry-run"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.startswith("spatialstale/observer ")]
    assert len(rows) == 8 - 3  # crops: vision without distractors only
    skipped = [line.strip() for line in out.splitlines() if line.strip().startswith("skipped ")]
    assert [line.split(":")[0] for line in skipped] == ["skipped 1 detection task", "skipped 2 detection tasks"]
    assert "modality=text" in skipped[0] and "distractors=8" in skipped[1]


def test_a_study_left_with_nothing_to_run_fails_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*STUDY, "--no-navigation", "--modalities", "text", "--memory", "crops", "--dry-run"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "spatialstale study: error: nothing to run: skipped 1 detection task: memory=crops compares pictures of the "
        "memory with the current grid's image: it needs modality vision or both; got modality=text\n"
    )


def test_each_study_option_is_listed_once_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["study", "--help"])
    text = capsys.readouterr().out
    for line in text.splitlines():
        flags = re.findall(r"(?<![\w-])--[a-z][a-z-]*", line)
        assert len(flags) == len(set(flags)), line
    # the axes whose -T name is their study option: one spelling, one entry
    for flag in ("--distractors", "--memory", "--edits"):
        assert len(re.findall(rf"^  {flag} [A-Z]+", text, re.MULTILINE)) == 1, flag
