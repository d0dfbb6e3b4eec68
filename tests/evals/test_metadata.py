"""The published metadata agrees with the tasks: eval.yaml, the CHANGELOG and the log header."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from inspect_ai import Task, eval

from spatialstale.evals import _registry

ROOT = Path(__file__).resolve().parents[2]


def _tasks() -> dict[str, Task]:
    return {f"spatialstale/{name}": getattr(_registry, name)() for name in _registry.__all__}


def test_eval_yaml_lists_every_task_with_its_version() -> None:
    meta = yaml.safe_load((ROOT / "eval.yaml").read_text())
    listed = {t["name"]: t for t in meta["tasks"]}
    tasks = _tasks()
    assert set(listed) == set(tasks)
    for name, task in tasks.items():
        assert listed[name]["version"] == task.version, name
        assert (ROOT / listed[name]["path"]).is_file()


def test_the_changelog_names_each_task_at_its_current_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text()
    for name, task in _tasks().items():
        assert re.search(rf"`{re.escape(name)}` {task.version}\b", changelog), (name, task.version)


def test_the_log_header_carries_the_task_version(tmp_path: Path) -> None:
    from spatialstale.evals.detection import detection

    [log] = eval(detection(seeds="4810"), model="spatialstale/observer", log_dir=str(tmp_path), display="none")
    assert log.eval.task_version == detection().version >= 2
