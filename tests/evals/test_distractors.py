"""``-T distractors=K`` through the real detection and navigation tasks, into tmp log dirs.

K=0 (the default, the paper) leaves ids, prompts, metadata and metrics as they were
without the parameter. With K, every audit asks about n² + K entries; the observer,
which reads each entry from the prompt, scores F1 1.0 over the cells and flags no
distractor, the credulous agent flags nothing, the random agent flags distractors
(so the metric can fail); OMCD makes ⌈(n² + K)/B⌉ audit calls.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from spatialstale.env import MAX_DISTRACTORS, default_seeds, make_instance, with_distractor_entries
from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.protocol import TaskParameterError
from tests.conftest import metrics, prompts, run_eval

SEEDS = list(default_seeds()[:2])
SEED_ARG = ",".join(map(str, SEEDS))
K = 8


def test_zero_distractors_is_todays_detection_run(tmp_path: Path) -> None:
    before = run_eval(detection(seeds=SEED_ARG, regime="L2,L3"), "spatialstale/observer", tmp_path / "a")
    zero = run_eval(detection(seeds=SEED_ARG, regime="L2,L3", distractors=0), "spatialstale/observer", tmp_path / "b")
    assert [s.id for s in zero.samples or []] == [s.id for s in before.samples or []]
    for a, b in zip(before.samples or [], zero.samples or [], strict=True):
        assert prompts(a) == prompts(b) and prompts(a)
        assert a.metadata == b.metadata
        assert a.scores == b.scores
    assert zero.eval.metadata == before.eval.metadata
    assert zero.eval.task_version == before.eval.task_version == 4
    assert list(metrics(zero)) == list(metrics(before))
    assert not any("distractor" in name for name in metrics(zero))


@pytest.mark.parametrize("model", ["spatialstale/observer", "spatialstale/credulous", "spatialstale/random"])
def test_detection_with_distractors(model: str, tmp_path: Path) -> None:
    log = run_eval(detection(seeds=SEED_ARG, regime="L2,L3", distractors=K), model, tmp_path)
    assert sorted(str(s.id) for s in log.samples or []) == sorted(f"{r}-d{K}-s{s}" for r in ("L2", "L3") for s in SEEDS)
    assert (log.eval.metadata or {})["distractors"] == K
    score = metrics(log)
    for sample in log.samples or []:
        meta = sample.metadata
        instance = with_distractor_entries(make_instance(meta["seed"], meta["regime"], meta["size"]), K)
        extra = [e for e in instance.memory if not e.is_cell]
        # replayable: the recorded entries and ids are those of (seed, K, bank version)
        assert meta["distractor_bank"] == "v1" and meta["distractors"] == K
        assert meta["distractor_entries"] == [{"id": e.id, "topic": e.topic, "text": e.text} for e in extra]
        value = sample.scores["stale_f1"].value  # type: ignore[index]
        windows = value["windows"]  # type: ignore[index]
        assert value["calls"] == windows * math.ceil((64 + K) / 10)  # type: ignore[index]
        assert value["distractor_judgments"] == K * windows  # type: ignore[index]
        assert value["unanswered"] == value["unknown_ids"] == 0  # type: ignore[index]
        # every audit lists the distractors among the cells
        lines = [e.line for e in extra]
        assert all(any(line in p for p in prompts(sample)) for line in lines)
    if model == "spatialstale/observer":
        assert score["f1_mean"] == 1.0 and score["distractor_flag_rate"] == 0.0
    elif model == "spatialstale/credulous":
        assert score["distractor_flag_rate"] == 0.0
        assert all(s.scores["stale_f1"].value["tp"] + s.scores["stale_f1"].value["fp"] == 0 for s in log.samples or [])  # type: ignore[index]
    else:
        assert 0.2 < score["distractor_flag_rate"] < 0.8


def test_omcd_audits_every_entry_and_the_view_holds_the_distractors(tmp_path: Path) -> None:
    task = navigation(seeds=str(SEEDS[0]), strategies="nofilter,omcd,selfverify", episodes=1, distractors=K)
    log = run_eval(task, "spatialstale/observer", tmp_path)
    by_strategy = {s.metadata["strategy"]: s for s in log.samples or []}
    assert sorted(by_strategy) == ["nofilter", "omcd", "selfverify"]
    assert all(s.id.endswith(f"-d{K}-s{SEEDS[0]}") for s in by_strategy.values())
    calls = {name: s.scores["episode_outcome"].value["audit_model_calls"] for name, s in by_strategy.items()}  # type: ignore[index]
    assert calls == {"nofilter": 0, "omcd": math.ceil((64 + K) / 10), "selfverify": 1}
    instance = with_distractor_entries(make_instance(SEEDS[0], "L2", 8), K)
    extra = [e for e in instance.memory if not e.is_cell]
    first_step = prompts(by_strategy["nofilter"])[0]
    assert all(e.line in first_step for e in extra)
    # the observer keeps them: nothing in the grid contradicts a rule
    for name in ("omcd", "selfverify"):
        later = prompts(by_strategy[name])[-1]
        assert all(e.line in later for e in extra)
        assert by_strategy[name].scores["episode_outcome"].value["success"] == 1  # type: ignore[index]


@pytest.mark.parametrize(
    ("value", "shown"),
    [(-1, "-1"), (MAX_DISTRACTORS + 1, str(MAX_DISTRACTORS + 1)), ("many", "'many'"), (True, "True")],
)
def test_a_bad_count_fails_before_any_model_call(value: object, shown: str) -> None:
    message = f"distractors must be an integer from 0 to {MAX_DISTRACTORS} (the distractor bank's size); got {shown}"
    for task in (detection, navigation):
        with pytest.raises(TaskParameterError) as error:
            task(distractors=value)
        assert str(error.value) == message


def test_the_count_is_read_from_text_as_inspect_passes_it() -> None:
    task = detection(seeds=SEED_ARG, distractors="5")
    assert [s.id for s in task.dataset] == [f"L2-d5-s{s}" for s in SEEDS]
    assert (task.metadata or {})["distractors"] == 5


def test_a_flagged_distractor_marked_unknown_names_no_cell(tmp_path: Path) -> None:
    task = navigation(seeds=SEED_ARG, strategies="omcd", episodes=1, distractors=K, filter="unknown")
    log = run_eval(task, "spatialstale/random", tmp_path)
    texts = [p for s in log.samples or [] for p in prompts(s)]
    assert any("UNKNOWN (flagged stale at step 0)\n" in t for t in texts), "no distractor was flagged: the test is idle"
    assert not any("(-1," in t for t in texts)
    assert "distractors=8" in log.eval.tags


def test_zero_distractors_leaves_the_navigation_samples_as_they_were() -> None:
    before = navigation(seeds=SEED_ARG, regime="L2,L3")
    zero = navigation(seeds=SEED_ARG, regime="L2,L3", distractors=0)
    assert [(s.id, s.input, s.metadata) for s in zero.dataset] == [(s.id, s.input, s.metadata) for s in before.dataset]
    assert zero.metadata == before.metadata and zero.tags == before.tags


@pytest.mark.parametrize(("k", "batch"), [(5, 7), (20, 4)])
def test_an_omcd_audit_is_one_call_per_batch_of_all_entries(k: int, batch: int, tmp_path: Path) -> None:
    task = navigation(seeds=str(SEEDS[1]), strategies="omcd", episodes=1, distractors=k, batch_size=batch)
    [sample] = run_eval(task, "spatialstale/observer", tmp_path).samples or []
    assert sample.scores["episode_outcome"].value["audit_model_calls"] == math.ceil((64 + k) / batch)  # type: ignore[index]
