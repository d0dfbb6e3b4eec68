"""The start-up heap is frozen out of the cycle collector once per process, when the
first task of the suite is made, before any sample starts; ``SPATIALSTALE_GC_FREEZE=0``
leaves it alone; the scores are the same either way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import gc, json, sys
from inspect_ai import eval

calls = [0]
freeze = gc.freeze
def counted_freeze():
    calls[0] += 1
    freeze()
gc.freeze = counted_freeze

from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation

counts = [gc.get_freeze_count()]
freezes = [calls[0]]
scores = []
for make, args in (
    (detection, {"regime": "L2", "seeds": "4810"}),
    (navigation, {"regime": "L2", "seeds": "4810", "strategies": "omcd", "max_steps": 5}),
):
    task = make(**args)
    # made, not run: whatever is frozen was alive before any sample
    counts.append(gc.get_freeze_count())
    freezes.append(calls[0])
    [log] = eval(task, model="spatialstale/observer", epochs=1, log_dir=sys.argv[1], display="none")
    assert log.status == "success", log.error
    counts.append(gc.get_freeze_count())
    freezes.append(calls[0])
    scores.append([s.model_dump() for s in log.results.scores])
# a sample's state outlives its run only if it was frozen (its transcript is a cycle)
from inspect_ai.solver import TaskState
gc.collect()
gc.unfreeze()
leaked = sum(isinstance(o, TaskState) for o in gc.get_objects())
print(json.dumps({"counts": counts, "freezes": freezes, "scores": scores, "leaked": leaked}))
"""


def _run(log_dir: Path, freeze: str | None) -> dict[str, list]:
    env = {k: v for k, v in os.environ.items() if k != "SPATIALSTALE_GC_FREEZE"}
    if freeze is not None:
        env["SPATIALSTALE_GC_FREEZE"] = freeze
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(log_dir)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def frozen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list]:
    return _run(tmp_path_factory.mktemp("frozen"), None)


def test_the_first_task_freezes_the_start_up_heap_once_before_any_sample(frozen: dict[str, list]) -> None:
    # frozen when the detection task is made, before its sample runs; neither its run nor
    # the navigation task in the same process freezes more, so their objects (the
    # samples' transcripts, a caller's) stay collectable
    assert frozen["freezes"] == [0, 1, 1, 1, 1]
    before, detection_made, _, _, _ = frozen["counts"]
    assert before == 0
    # every import (Inspect, pydantic, the provider, the suite) is frozen by then
    assert detection_made > 50_000
    # and no sample: each sample's state (and transcript) was freed after its run
    assert frozen["leaked"] == 0


@pytest.mark.parametrize("setting", ["0", "off"])
def test_the_freeze_can_be_turned_off_and_the_scores_do_not_change(
    frozen: dict[str, list], tmp_path: Path, setting: str
) -> None:
    unfrozen = _run(tmp_path, setting)
    assert unfrozen["freezes"] == [0, 0, 0, 0, 0]
    assert unfrozen["counts"] == [0, 0, 0, 0, 0]
    assert unfrozen["scores"] == frozen["scores"]
