"""What the tests share: one helper to run an eval, and logs that several tests read
(the small studies of the report and study tests, the runs a module's tests share),
made once per test run whatever the number of xdist workers: the first worker to ask
makes them, the others wait, then read them (:func:`shared`).

Shared logs are read-only: a test that changes a log directory copies it first."""

from __future__ import annotations

import fcntl
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, EvalSample, resolve_sample_attachments
from inspect_ai.util import Store

from spatialstale.protocol import Episode, NavigationRecord
from spatialstale.study import Study, run_study, study_seeds, study_tasks

MODELS = ("spatialstale/observer", "spatialstale/credulous")
SEEDS = study_seeds(None, 2)
"""The first two default seeds: the seeds of the shared studies."""


def run_eval(task: Any, model: Any, log_dir: Path, **kwargs: Any) -> EvalLog:
    """One task through Inspect's ``eval`` into ``log_dir``; the run must succeed."""
    [log] = eval(task, model=model, log_dir=str(log_dir), display="none", log_realtime=False, **kwargs)
    assert log.status == "success", log.error
    assert log.samples
    return log


def metrics(log: EvalLog) -> dict[str, float]:
    """Every metric of the log's scores, by name."""
    assert log.results
    return {name: m.value for s in log.results.scores for name, m in s.metrics.items()}


def episode_log(sample: EvalSample) -> dict[str, Any]:
    """A navigation sample's episode as the log holds it: its score's metadata."""
    assert sample.scores is not None
    metadata = sample.scores["episode_outcome"].metadata
    assert metadata is not None
    return metadata


def stored_episode(sample: EvalSample) -> Episode:
    """A navigation sample's episode as its store holds it, read back from the log (as
    ``inspect score`` reads it)."""
    episode = NavigationRecord(store=Store(sample.store)).episode
    assert episode is not None
    return episode


def prompts(sample: EvalSample) -> list[str]:
    """The text of each model call's input, in call order."""
    resolved = resolve_sample_attachments(sample)
    return ["\n".join(m.text for m in e.input) for e in resolved.events if isinstance(e, ModelEvent)]


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


Shared = Callable[[str, Callable[[Path], None]], Path]
"""The type of the :func:`shared` fixture."""


@pytest.fixture(scope="session")
def shared(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Shared:
    """``shared(name, make)``: the folder ``name``, made by ``make`` once per test run."""
    base = tmp_path_factory.getbasetemp()
    root = base if worker_id == "master" else base.parent

    def get(name: str, make: Callable[[Path], None]) -> Path:
        folder = root / f"shared-{name}"
        with _locked(root / f"shared-{name}.lock"):
            if not (folder / ".done").exists():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir()
                make(folder)
                (folder / ".done").touch()
        return folder

    return get


def _run_study(study: Study) -> None:
    ok, _ = run_study(study, display="none")
    assert ok


PAPER_TASKS = study_tasks(seeds=SEEDS, regimes=["L1", "L3"], modalities=["text", "vision"], episodes=1)


@pytest.fixture(scope="session")
def paper_study(shared: Shared) -> Study:
    """The paper's matrix on the reference agents, small: L1 and L3, detection in text
    and vision, navigation with every strategy, two seeds, one episode."""
    folder = shared("paper", lambda path: _run_study(Study(MODELS, PAPER_TASKS, log_dir=str(path))))
    return Study(MODELS, PAPER_TASKS, log_dir=str(folder))


@pytest.fixture(scope="session")
def l2_study(shared: Shared) -> Path:
    """L2 alone, text, one seed."""
    tasks = study_tasks(seeds=SEEDS[:1], regimes=["L2"], modalities=["text"], episodes=1)
    return shared("l2", lambda path: _run_study(Study(MODELS, tasks, log_dir=str(path))))


GROWTH_TASKS = study_tasks(
    seeds=SEEDS, regimes=["L1"], modalities=["text"], batch_sweep=True, sizes=[8, 16], navigation_on=False
)


@pytest.fixture(scope="session")
def growth_study(shared: Shared) -> Path:
    """App. E's sweep at two grid sides: detection on L1 text, n = 8 at B = 1, 5, 10, 20,
    n = 16 at B = 1, 5, 10, 20, 40, 80 (two seeds)."""
    return shared("growth", lambda path: _run_study(Study(MODELS, GROWTH_TASKS, log_dir=str(path))))
