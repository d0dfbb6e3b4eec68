"""A small real study on the reference agents, then the dry run, the report and the
CLI checked against the raw logs (read with ``read_eval_log``)."""

from __future__ import annotations

import shutil
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import pytest
from inspect_ai import eval
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from spatialstale.report import read_logs
from spatialstale.report._detection_stats import detection_summary
from spatialstale.report._navigation_stats import outcome_rates
from spatialstale.report._report import write_report
from spatialstale.study import Study, TaskSpec, estimate_task, run_study, study_seeds
from spatialstale.study._cli import main
from tests.scripted import Script

MODELS = ("spatialstale/observer", "spatialstale/credulous")
SEEDS = study_seeds(None, 2)


@pytest.fixture
def study(paper_study: Study) -> Study:
    return paper_study


def _logs(log_dir: str) -> list[EvalLog]:
    return [read_eval_log(info.name) for info in list_eval_logs(log_dir)]


def _model_events(log: EvalLog) -> int:
    return sum(1 for s in log.samples or [] for e in s.events if e.event == "model")


def _spec_of(log: EvalLog, study: Study) -> TaskSpec:
    args = log.eval.task_args_passed
    kind = log.eval.task.rsplit("/", 1)[-1]
    return next(t for t in study.tasks if t.kind == kind and t.regime == args["regime"])


def test_rerun_resumes_without_running_anything(study: Study, tmp_path: Path) -> None:
    # the shared logs stay as they are: the rerun runs in a copy
    shutil.copytree(study.log_dir, tmp_path / "logs")
    study = replace(study, log_dir=str(tmp_path / "logs"))
    before = sorted(i.name for i in list_eval_logs(study.log_dir))
    ok, logs = run_study(study, display="none")
    assert ok and len(logs) == len(study.tasks) * len(MODELS)
    assert sorted(i.name for i in list_eval_logs(study.log_dir)) == before


def test_dry_run_detection_calls_equal_the_real_calls(study: Study) -> None:
    for log in _logs(study.log_dir):
        spec = _spec_of(log, study)
        estimate = estimate_task(spec)
        if spec.kind == "detection":
            assert _model_events(log) == estimate.total.calls
            assert estimate.exact
        else:
            # the reference agents end episodes early: the bound holds, not equality
            assert _model_events(log) <= estimate.total.calls


def test_navigation_upper_bound_is_reached_by_an_agent_that_never_ends(tmp_path: Path) -> None:
    spec = TaskSpec.make(
        "navigation",
        regime="L3",
        seeds=SEEDS[:1],
        strategies=("nomemory", "selfverify", "omcd", "oracle"),
        max_steps=12,
        episodes=1,
    )
    [log] = eval(
        spec.task(), model=Script(act=lambda call: '{"action": "UP"}').model(), log_dir=str(tmp_path), display="none"
    )
    assert log.status == "success"
    estimate = estimate_task(spec)
    assert not estimate.exact
    assert _model_events(log) == estimate.total.calls
    assert {s.scores["episode_outcome"].answer for s in log.samples or [] if s.scores} == {"timeout"}


def test_report_numbers_equal_the_raw_logs(study: Study, tmp_path: Path) -> None:
    results = read_logs(study.log_dir)
    outcomes: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    f1: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for log in _logs(study.log_dir):
        for sample in log.samples or []:
            assert sample.scores is not None
            meta = sample.metadata
            if "episode_outcome" in sample.scores:
                value = sample.scores["episode_outcome"].value
                assert isinstance(value, dict)
                outcomes[(log.eval.model, meta["regime"], meta["strategy"])].append(float(value["success"]))
            else:
                value = sample.scores["stale_f1"].value
                assert isinstance(value, dict)
                f1[(log.eval.model, meta["regime"], meta["modality"])].append(float(value["f1"]))
    rates = outcome_rates(results.navigation)
    assert len(rates) == len(outcomes)
    for (model, regime, strategy), values in outcomes.items():
        row = rates[(rates.model == model) & (rates.regime == regime) & (rates.strategy == strategy)].iloc[0]
        assert row.success == pytest.approx(sum(values) / len(values))
        assert row.episodes == len(values)
    summary = detection_summary(results.detection)
    for (model, regime, modality), values in f1.items():
        row = summary[(summary.model == model) & (summary.regime == regime) & (summary.modality == modality)].iloc[0]
        assert row.f1_mean == pytest.approx(sum(values) / len(values))
        assert row.seeds == len(values)
    # the reference agents' known behaviour shows through
    observer = summary[summary.model == "spatialstale/observer"]
    assert set(observer.f1_mean) == {1.0}

    paths = write_report(results, tmp_path / "report")
    names = {p.name for p in paths}
    assert {"report.md", "report.html", "fig3_f1.png", "fig5_filtering.png", "fig9_f1_success.png"} <= names
    markdown = (tmp_path / "report" / "report.md").read_text()
    credulous = rates[(rates.model == "spatialstale/credulous") & (rates.regime == "L1")]
    for _, row in credulous.iterrows():
        assert f"{100 * row.success:.1f}% / {100 * row.death:.1f}%" in markdown


def test_partial_logs_mark_missing_cells(study: Study, tmp_path: Path) -> None:
    partial = tmp_path / "partial"
    partial.mkdir()
    for info in list_eval_logs(study.log_dir):
        log = read_eval_log(info.name, header_only=True)
        if log.eval.task.endswith("navigation") and log.eval.task_args_passed["regime"] == "L3":
            continue
        name = info.name.removeprefix("file://")
        shutil.copy(name, partial / Path(name).name)
    assert main(["report", str(partial), "--out", str(tmp_path / "out")]) == 0
    markdown = (tmp_path / "out" / "report.md").read_text()
    table3 = markdown.split("### Table 3: success and death rate")[1].split("###")[0]
    rows = [line for line in table3.splitlines() if line.startswith("| observer")]
    assert rows and all(line.rstrip(" |").endswith("missing") for line in rows)
    assert "| observer | text | L2 | 0 | missing" in markdown


@pytest.mark.parametrize("content", [None, b"not a log"])
def test_empty_or_unreadable_log_dir_is_one_clear_error(
    content: bytes | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if content is not None:
        (tmp_path / "2026-01-01T00-00-00-00-00_detection_x.eval").write_bytes(content)
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("spatialstale report: error:") and "\n" not in err
    assert main(["report", str(tmp_path / "absent")]) == 2


def test_dry_run_prints_counts_without_running(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "study",
        "--model",
        "openai/gpt-4o",
        "--n-seeds",
        "2",
        "--regimes",
        "L1",
        "--modalities",
        "text",
        "--strategies",
        "omcd",
        "--episodes",
        "1",
        "--log-dir",
        str(tmp_path / "x"),
        "--dry-run",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "detection L1 text B=10" in out and "upper bound" in out and "exact" in out
    assert "14" in out  # 2 seeds x ceil(64/10) detection calls
    assert not (tmp_path / "x").exists()
    assert main(["study", "--model", "m", "--regimes", "L4", "--dry-run"]) == 2


def test_model_label_marks_a_separate_auditor() -> None:
    from spatialstale.report._load import model_label

    assert model_label("a/b", {"auditor": {"model": "c/d"}}) == "a/b (auditor c/d)"
    assert model_label("a/b", '{"auditor": {"model": "a/b"}}') == "a/b"
