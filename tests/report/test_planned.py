"""The report's App. K section: a real study with the App. K axes on the reference
agents, its tables read against the raw logs, and the paper's tables left to the
paper's runs."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from spatialstale.study._cli import main
from tests.report._markdown import report_of as _report
from tests.report._markdown import rows as _rows
from tests.report._markdown import section as _section

# one worker runs the module, so its module fixtures' runs are made once
pytestmark = pytest.mark.xdist_group("planned")

SEEDS = "4810,1734,77"


def _study(log_dir: Path, model: str, *axes: str) -> None:
    argv = ["study", "--model", model, "--seeds", SEEDS, "--regimes", "L1", "--modalities", "text"]
    argv += ["--strategies", "nofilter,omcd", "--episodes", "1", "--max-steps", "10"]
    assert main([*argv, "--log-dir", str(log_dir), "--display", "none", *axes]) == 0


@pytest.fixture(scope="module")
def distractor_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    log_dir = tmp_path_factory.mktemp("distractors")
    _study(log_dir, "spatialstale/random", "--distractors", "0,8")
    return log_dir


def test_the_distractor_tables_equal_the_raw_logs(distractor_study: Path, tmp_path: Path) -> None:
    markdown = _report(distractor_study, tmp_path / "out")
    section = _section(markdown, "### Distractor entries")
    flagged: list[float] = []
    death: dict[str, list[float]] = {}
    for info in list_eval_logs(str(distractor_study)):
        log = read_eval_log(info.name)
        assert log.samples
        k = (log.eval.task_args or {}).get("distractors", 0)
        for sample in log.samples:
            value = next(iter((sample.scores or {}).values())).value
            assert isinstance(value, dict)
            if log.eval.task.endswith("detection") and k == 8:
                flagged.append(value["distractors_flagged"] / value["distractor_judgments"])
            if log.eval.task.endswith("navigation"):
                death.setdefault(f"{sample.metadata['strategy']}-{k}", []).append(float(value["death"]))
    [detection] = [r for r in _rows(section, "random") if len(r) == 10]
    assert detection[:5] == ["random", "L1", "text", "8", "3"]
    assert detection[-1].startswith(f"{100 * float(np.mean(flagged)):.0f} %")
    assert 0 < np.mean(flagged) < 1  # the random auditor flags distractors about half the time
    navigation = {r[3]: r for r in _rows(section, "random") if len(r) == 11}
    assert set(navigation) == {"NoFilter", "OMCD"}
    for label, strategy in (("NoFilter", "nofilter"), ("OMCD", "omcd")):
        shown = navigation[label][6].split("](")[0].lstrip("[")
        assert shown.startswith(f"{100 * float(np.mean(death[f'{strategy}-8'])):.0f} %")
    assert float(navigation["OMCD"][-1]) >= math.ceil((64 + 8) / 10)  # one audit at least, 8 calls each
    # the paper's tables read the runs without distractors alone: every log they link to
    paper_part = markdown.split("## The paper's planned experiments")[0]
    linked = set(re.findall(r"\(<[^>]*?([^>/]+\.eval)>\)", paper_part))
    assert linked
    for file in linked:
        assert not (read_eval_log(str(distractor_study / file), header_only=True).eval.task_args or {}).get(
            "distractors"
        )


def test_a_report_without_app_k_runs_has_no_app_k_section(distractor_study: Path, tmp_path: Path) -> None:
    only_paper = tmp_path / "paper"
    only_paper.mkdir()
    for info in list_eval_logs(str(distractor_study)):
        log = read_eval_log(info.name, header_only=True)
        if not (log.eval.task_args or {}).get("distractors"):
            path = Path(info.name.removeprefix("file://"))
            (only_paper / path.name).write_bytes(path.read_bytes())
    assert "App. K" not in _report(only_paper, tmp_path / "out")


def test_the_dry_run_counts_the_distractors_in_every_audit(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["study", "--model", "spatialstale/observer", "--seeds", "1,2", "--regimes", "L1", "--modalities", "text"]
    assert main([*argv, "--no-navigation", "--distractors", "0,8", "--dry-run"]) == 0
    out = capsys.readouterr().out
    calls = {}
    for line in out.splitlines():
        words = line.split()
        if words[:3] == ["spatialstale/observer", "detection", "L1"]:
            calls[int(words[5])] = int(words[9].replace(",", ""))
    assert calls == {0: 2 * 7, 8: 2 * 8}  # two seeds, ⌈(64 + K)/10⌉ calls an audit


@pytest.fixture(scope="module")
def planned_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Edits, crops and another agent's world on the random agent (vision detection)."""
    log_dir = tmp_path_factory.mktemp("planned")
    argv = ["study", "--model", "spatialstale/random", "--seeds", SEEDS, "--regimes", "L1,MA", "--modalities", "vision"]
    argv += ["--edits", "false,true", "--memory", "text,crops", "--strategies", "nofilter", "--episodes", "1"]
    assert main([*argv, "--max-steps", "10", "--log-dir", str(log_dir), "--display", "none"]) == 0
    return log_dir


def _values(log_dir: Path, task: str, **args: object) -> list[dict[str, float]]:
    """The score values of the samples whose task arguments hold ``args`` (a missing one: its default)."""
    defaults = {"edits": False, "memory": "text", "regime": None}
    out = []
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info.name)
        passed = {**defaults, **(log.eval.task_args_passed or {})}
        if log.eval.task.endswith(task) and all(passed.get(k) == v for k, v in args.items()):
            out += [next(iter((s.scores or {}).values())).value for s in log.samples or []]  # type: ignore[misc]
    assert out, args
    return out


@pytest.mark.slow  # a study of edits, crops and MA; the distractor tables stay fast
def test_the_edits_crops_and_other_agent_tables_equal_the_raw_logs(planned_study: Path, tmp_path: Path) -> None:
    markdown = _report(planned_study, tmp_path / "out")
    edits = {r[1]: r for r in _rows(_section(markdown, "### Memory edits"), "random")}
    assert set(edits) == {"L1", "MA"}
    for regime, row in edits.items():
        values = _values(planned_study, "detection", regime=regime, edits=True, memory="text")
        correct = sum(v["edits_correct"] for v in values)
        stale = sum(v["edits_correct"] + v["edits_wrong"] + v["edits_missing"] + v["edits_unreadable"] for v in values)
        assert stale == sum(v["tp"] + v["fn"] for v in values)
        assert row[6] == f"{int(correct)} / {int(stale)}"
        assert row[7:10] == [
            str(int(sum(v[k] for v in values))) for k in ("edits_wrong", "edits_missing", "edits_unreadable")
        ]
    crops = {r[1]: r for r in _rows(_section(markdown, "### Memory as pictures"), "random")}
    assert set(crops) == {"L1", "MA"}
    for regime, row in crops.items():
        pictured = _values(planned_study, "detection", regime=regime, edits=False, memory="crops")
        textual = _values(planned_study, "detection", regime=regime, edits=False, memory="text")
        assert row[4].lstrip("[").startswith(f"{np.mean([v['f1'] for v in pictured]):.3f}")
        assert row[6].startswith(f"{np.mean([v['f1'] for v in textual]):.3f}")
        assert row[-1] == f"0 / {int(sum(v['calls'] for v in pictured))}"
    other = _section(markdown, "### A world changed by another agent (MA)")
    ratios = {r[0]: r for r in (line.strip(" |").split(" | ") for line in other.splitlines()) if r[0] in ("L1", "MA")}
    for regime in ("L1", "MA"):
        logs = [read_eval_log(i.name) for i in list_eval_logs(str(planned_study))]
        seen = {
            s.metadata["seed"]: s.metadata["stale_ratio"]
            for log in logs
            if log.eval.task.endswith("detection")
            for s in log.samples or []
            if s.metadata["regime"] == regime
        }
        assert ratios[regime][1] == "3" and ratios[regime][2].startswith(f"{np.mean(list(seen.values())):.3f}")
    death = _values(planned_study, "navigation", regime="MA")
    nav = [r for r in _rows(other, "random") if len(r) == 8]
    assert [r[2] for r in nav] == ["NoFilter"]
    assert nav[0][5].startswith(f"{100 * np.mean([v['death'] for v in death]):.0f} %")


def test_an_extension_part_is_computed_from_its_declaration(distractor_study: Path, tmp_path: Path) -> None:
    """A part declared column by column (``Extension.report``), as a new extension would
    declare it, is computed from the logs: every kind of column, checked against the raw
    scores."""
    from spatialstale.protocol import ReportColumn, ReportPart, ReportTable
    from spatialstale.report import read_logs
    from spatialstale.report._document import Links
    from spatialstale.report._sections_k import compared

    columns = (
        ReportColumn("who", "model"),
        ReportColumn("K", "value"),
        ReportColumn("n", "seeds"),
        ReportColumn("recall", "mean", ("recall",)),
        ReportColumn("flagged", "share", ("distractors_flagged",), ("distractor_judgments",)),
        ReportColumn("flagged of all", "ratio", ("distractors_flagged",), ("distractor_judgments", "tp")),
        ReportColumn("pooled", "pooled", ("distractors_flagged",), ("distractor_judgments",)),
        ReportColumn("total", "total", ("distractors_flagged",)),
        ReportColumn("judged a seed", "average", ("distractor_judgments",)),
    )
    table = ReportTable("detection", "everything", columns)
    part = ReportPart("distractors", "A new experiment", "What it varies.", (table,))
    det = read_logs(str(distractor_study)).detection
    shown = compared(part, table, det, Links(str(distractor_study), tmp_path))
    assert shown is not None
    assert shown.header == [c.header for c in columns]
    [row] = shown.rows
    scores = []
    for info in list_eval_logs(str(distractor_study)):
        log = read_eval_log(info.name)
        if log.eval.task.endswith("detection") and (log.eval.task_args or {}).get("distractors") == 8:
            scores += [next(iter((s.scores or {}).values())).value for s in log.samples or []]
    assert len(scores) == 3 and all(isinstance(v, dict) for v in scores)
    flagged = [v["distractors_flagged"] for v in scores]  # type: ignore[index]
    judged = [v["distractor_judgments"] for v in scores]  # type: ignore[index]
    assert row[:3] == ["random", "8", "3"]
    assert row[3].startswith(f"{np.mean([v['recall'] for v in scores]):.3f}")  # type: ignore[index]
    assert row[4].startswith(f"{100 * np.mean(np.divide(flagged, judged)):.0f} %")
    shares = [f / (j + v["tp"]) for f, j, v in zip(flagged, judged, scores, strict=True)]  # type: ignore[index]
    assert row[5].startswith(f"{np.mean(shares):.3f}")
    assert row[6] == f"{sum(flagged)} / {sum(judged)}"
    assert row[7] == str(sum(flagged))
    assert row[8] == f"{np.mean(judged):.1f}"


def test_a_column_that_shows_nothing_known_is_refused() -> None:
    from spatialstale.protocol import ReportColumn
    from spatialstale.report._sections_k import _shown

    with pytest.raises(ValueError, match="a report column cannot show 'median'"):
        _shown(ReportColumn("x", "median", ("tp",)), pd.DataFrame({"tp": [1]}))  # type: ignore[arg-type]
