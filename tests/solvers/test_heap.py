"""The start-up heap is frozen out of the cycle collector once per process, when the
first sample of the suite starts; ``SPATIALSTALE_GC_FREEZE=0`` leaves it alone; the
scores are the same either way."""

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

counts = [gc.get_freeze_count()]
freezes = [calls[0]]
scores = []
for task, args in (
    ("spatialstale/detection", {"regime": "L2", "seeds": "4810"}),
    ("spatialstale/navigation", {"regime": "L2", "seeds": "4810", "strategies": "omcd", "max_steps": 5}),
):
    [log] = eval(task, model="spatialstale/observer", task_args=args, epochs=1,
                 log_dir=sys.argv[1], display="none")
    assert log.status == "success", log.error
    counts.append(gc.get_freeze_count())
    freezes.append(calls[0])
    scores.append([s.model_dump() for s in log.results.scores])
print(json.dumps({"counts": counts, "freezes": freezes, "scores": scores}))
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


def test_the_first_sample_freezes_the_start_up_heap_once(frozen: dict[str, list]) -> None:
    # frozen when the detection sample starts; the navigation task in the same process
    # freezes nothing more, so its objects (and a caller's) stay collectable
    assert frozen["freezes"] == [0, 1, 1]
    before, after_detection, _ = frozen["counts"]
    assert before == 0
    # every import (Inspect, pydantic, the provider, the suite) is frozen by then
    assert after_detection > 50_000


@pytest.mark.parametrize("setting", ["0", "off"])
def test_the_freeze_can_be_turned_off_and_the_scores_do_not_change(
    frozen: dict[str, list], tmp_path: Path, setting: str
) -> None:
    unfrozen = _run(tmp_path, setting)
    assert unfrozen["freezes"] == [0, 0, 0]
    assert unfrozen["counts"] == [0, 0, 0]
    assert unfrozen["scores"] == frozen["scores"]
