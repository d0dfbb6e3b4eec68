"""What each solver leaves its scorer lands in the log's sample store as its typed record,
which a log scored again (``inspect score``) reads back into the same scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai import Task, score
from inspect_ai.log import EvalLog, EvalScore
from inspect_ai.scorer import Scorer
from inspect_ai.util import Store

from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.evals.perception import perception
from spatialstale.protocol import DetectionRecord, NavigationRecord, PerceptionRecord
from spatialstale.scorers import episode_outcome, perception_accuracy, stale_f1
from tests.conftest import run_eval

SEED = 4810

RUNS: dict[str, tuple[Task, str, Scorer]] = {
    "detection": (detection(regime="L3", seeds=[SEED], distractors=2, edits=True), "random", stale_f1()),
    "perception": (perception(regime="L3", seeds=[SEED], modality="vision"), "colourblind", perception_accuracy()),
    "navigation": (
        navigation(regime="L3", seeds=[SEED], strategies="omcd,nomemory", agent="tools", filter="unknown", episodes=1),
        "credulous",
        episode_outcome(),
    ),
}


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, EvalLog]:
    folder = tmp_path_factory.mktemp("store")
    return {
        name: run_eval(task, f"spatialstale/{agent}", Path(folder / name), seed=7)
        for name, (task, agent, _) in RUNS.items()
    }


def test_each_record_in_the_store_is_what_the_score_logs(logs: dict[str, EvalLog]) -> None:
    for name, log in logs.items():
        for sample in log.samples or []:
            store = Store(sample.store)
            [logged] = (sample.scores or {}).values()
            assert logged.metadata is not None
            if name == "navigation":
                record = NavigationRecord(store=store)
                assert record.episode is not None and record.cost is not None
                assert record.episode.to_dict() | {"cost": record.cost.to_dict()} == logged.metadata
                tools = (record.episode.navigated or {})["tools"]
                assert isinstance(tools, dict) and tools["moves"] == record.episode.steps
            else:
                windows = (DetectionRecord if name == "detection" else PerceptionRecord)(store=store)
                assert windows.windows is not None
                assert [w.to_dict() for w in windows.windows] == logged.metadata["windows"]
                assert windows.limit is None is logged.metadata["limit"]


def test_a_log_scored_again_from_its_store_gets_the_same_scores(logs: dict[str, EvalLog]) -> None:
    for name, log in logs.items():
        again = score(log, scorers=[RUNS[name][2]], action="overwrite", display="none")
        for first, second in zip(log.samples or [], again.samples or [], strict=True):
            assert first.scores is not None and second.scores is not None
            for key, original in first.scores.items():
                rescored = second.scores[key]
                assert (rescored.value, rescored.answer, rescored.explanation, rescored.metadata) == (
                    original.value,
                    original.answer,
                    original.explanation,
                    original.metadata,
                ), (name, first.id)
        assert again.results is not None and log.results is not None
        # as JSON with sorted keys, where a NaN rate (no death, no mean death step) equals itself
        assert canonical(again.results.scores) == canonical(log.results.scores), name


def canonical(scores: list[EvalScore]) -> list[str]:
    return [json.dumps(json.loads(s.model_dump_json()), sort_keys=True) for s in scores]


def test_a_store_without_the_scorers_record_errors_the_sample(logs: dict[str, EvalLog]) -> None:
    with pytest.raises(RuntimeError, match="no navigation record in the sample store"):
        score(logs["detection"], scorers=[episode_outcome()], action="overwrite", display="none")
