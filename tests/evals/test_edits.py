"""``-T edits=true`` through the real detection task, into tmp log dirs.

Off (the default, the paper) the ids, prompts, metadata, scores and metrics are those of
a run without the parameter. On, the audit prompt asks for the corrected entry of each
stale one; the observer, which proposes what it sees, scores F1 1.0 and edit_accuracy
1.0 in every regime, text and vision, structured or not; the credulous agent flags
nothing, so every stale entry's edit is missing; the random agent's counts add up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai.event import InfoEvent, ModelEvent
from inspect_ai.log import EvalSample, resolve_sample_attachments

from spatialstale.env import default_seeds
from spatialstale.evals.detection import detection
from spatialstale.protocol import TaskParameterError
from spatialstale.protocol._edits import EDITS_REQUEST
from spatialstale.study import Study, study_tasks
from spatialstale.study._cli import main
from spatialstale.study._estimate import plan
from tests.conftest import metrics, prompts, run_eval

SEEDS = list(default_seeds()[:2])
SEED_ARG = ",".join(map(str, SEEDS))
COUNTS = ("edits_correct", "edits_wrong", "edits_missing", "edits_unreadable")


def value(sample: EvalSample) -> dict[str, Any]:
    assert sample.scores is not None
    score = sample.scores["stale_f1"].value
    assert isinstance(score, dict)
    return score


def test_edits_off_is_todays_detection_run(tmp_path: Path) -> None:
    before = run_eval(detection(seeds=SEED_ARG, regime="L1,L2"), "spatialstale/observer", tmp_path / "a")
    off = run_eval(detection(seeds=SEED_ARG, regime="L1,L2", edits=False), "spatialstale/observer", tmp_path / "b")
    assert [s.id for s in off.samples or []] == [s.id for s in before.samples or []]
    for a, b in zip(before.samples or [], off.samples or [], strict=True):
        assert prompts(a) == prompts(b) and prompts(a)
        assert not any(EDITS_REQUEST in p for p in prompts(a))
        assert a.metadata == b.metadata and a.metadata["edits"] is False
        assert a.scores == b.scores
        assert not any("edit" in key for key in value(a))
    assert off.eval.metadata == before.eval.metadata and (off.eval.metadata or {})["edits"] is False
    assert off.eval.task_version == before.eval.task_version == 4
    assert list(metrics(off)) == list(metrics(before))
    assert not any("edit" in name for name in metrics(off))
    assert off.eval.tags == before.eval.tags


@pytest.mark.parametrize(
    ("modality", "structured"),
    [
        ("text", False),
        ("vision", True),
        pytest.param("text", True, marks=pytest.mark.slow),
        pytest.param("vision", False, marks=pytest.mark.slow),
    ],
)
def test_the_observer_proposes_every_edit_right(modality: str, structured: bool, tmp_path: Path) -> None:
    task = detection(seeds=SEED_ARG, regime="L1,L2,L3", modality=modality, structured=structured, edits=True)
    log = run_eval(task, "spatialstale/observer", tmp_path)
    assert sorted(str(s.id) for s in log.samples or []) == sorted(
        f"{r}-edits-s{s}" for r in ("L1", "L2", "L3") for s in SEEDS
    )
    assert (log.eval.metadata or {})["edits"] is True and "edits=true" in log.eval.tags
    score = metrics(log)
    for regime in ("", "_L1", "_L2", "_L3"):
        assert score[f"f1_mean{regime}"] == 1.0
        assert score[f"edit_accuracy{regime}"] == 1.0
    names = list(score)
    assert names.index("edit_accuracy") > names.index("limit_rate")  # after the paper's metrics
    for sample in log.samples or []:
        assert sample.metadata["edits"] is True
        v = value(sample)
        assert v["edits_stale"] == v["tp"] + v["fn"] == v["edits_correct"] > 0
        assert v["edit_accuracy"] == 1.0
        judged = sample.scores["stale_f1"].metadata["edits"]  # type: ignore[index]
        assert {e["judged"] for e in judged} == {"correct"}
        assert all(e["edit"].startswith(("DANGER at", "SAFE at")) for e in judged)
        assert all(EDITS_REQUEST in p for p in prompts(sample))
        # the audit table shows each edit and its judgment beside the truth
        events = resolve_sample_attachments(sample).events
        tables = [e.data for e in events if isinstance(e, InfoEvent) and "edit judged" in str(e.data)]
        assert tables and any("correct" in str(t) for t in tables)
    if structured:
        answers = [e.output.completion for s in log.samples or [] for e in s.events if isinstance(e, ModelEvent)]
        assert all(a.startswith('{"verdicts": [') for a in answers)


def test_the_credulous_agent_proposes_no_edit(tmp_path: Path) -> None:
    log = run_eval(detection(seeds=SEED_ARG, regime="L2,L3", edits=True), "spatialstale/credulous", tmp_path)
    score = metrics(log)
    assert score["edit_accuracy"] == 0.0 and score["f1_mean"] == 0.0
    for sample in log.samples or []:
        v = value(sample)
        assert v["edits_missing"] == v["edits_stale"] > 0
        assert v["edits_correct"] == v["edits_wrong"] == v["edits_unreadable"] == 0


def test_the_random_agents_edits_are_all_counted(tmp_path: Path) -> None:
    log = run_eval(detection(seeds=SEED_ARG, regime="L1,L3", edits=True), "spatialstale/random", tmp_path)
    total = {key: 0 for key in (*COUNTS, "edits_stale")}
    for sample in log.samples or []:
        v = value(sample)
        assert sum(v[k] for k in COUNTS) == v["edits_stale"] == v["tp"] + v["fn"]
        assert v["edits_missing"] >= v["fn"]
        total = {key: total[key] + v[key] for key in total}
    assert total["edits_correct"] and total["edits_wrong"]
    assert metrics(log)["edit_accuracy"] == pytest.approx(total["edits_correct"] / total["edits_stale"])


def test_edits_and_distractors_together(tmp_path: Path) -> None:
    log = run_eval(detection(seeds=SEED_ARG, distractors=4, edits=True), "spatialstale/observer", tmp_path)
    assert sorted(str(s.id) for s in log.samples or []) == sorted(f"L2-d4-edits-s{s}" for s in SEEDS)
    score = metrics(log)
    assert score["edit_accuracy"] == score["f1_mean"] == 1.0 and score["distractor_flag_rate"] == 0.0


@pytest.mark.parametrize("value_", ["maybe", 2, "", "true,false"])
def test_a_bad_value_fails_before_any_model_call(value_: object) -> None:
    with pytest.raises(TaskParameterError) as error:
        detection(edits=value_)
    assert str(error.value).startswith("edits must be one of true, false")


def test_the_usual_spellings_of_a_flag_are_read() -> None:
    assert [s.id for s in detection(seeds=SEED_ARG, edits="yes").dataset] == [f"L2-edits-s{s}" for s in SEEDS]
    assert [s.id for s in detection(seeds=SEED_ARG, edits="off").dataset] == [f"L2-s{s}" for s in SEEDS]


def test_a_custom_audit_prompt_is_sent_as_given() -> None:
    task = detection(seeds=SEED_ARG, edits=True, audit_prompt="mine")
    assert "audit_prompt=custom" in task.tags
    default = detection(seeds=SEED_ARG, edits=True)
    assert "audit_prompt=custom" not in default.tags


def test_a_study_runs_edits_as_its_own_detection_cells_and_prices_them(capsys: pytest.CaptureFixture[str]) -> None:
    tasks = study_tasks(seeds=SEEDS[:1], regimes=["L2"], modalities=["text"], axes={"edits": [False, True]})
    detection_cells = [t for t in tasks if t.kind == "detection"]
    assert [t.args().get("edits") for t in detection_cells] == [None, True]  # passed only away from the default
    assert [t.axes() for t in detection_cells] == [{}, {"edits": "true"}]
    assert len([t for t in tasks if t.kind == "navigation"]) == 5  # a detection axis: navigation runs once
    rows = plan(Study(("m",), detection_cells))
    off, on = (r.estimate.total for r in rows)
    assert (on.calls, on.prompt_tokens > off.prompt_tokens, on.completion_tokens > off.completion_tokens) == (
        off.calls,
        True,
        True,
    )
    assert main(["study", "--model", "spatialstale/observer", "--n-seeds", "1", "--regimes", "L2",
                 "--no-navigation", "--edits", "false,true", "--dry-run"]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].split()[:4] == ["model", "task", "edits", "samples"]
    assert "detection L2 text B=10    true" in printed
