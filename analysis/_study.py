"""The paper's study matrix as one Inspect eval set.

A study is a list of :class:`TaskSpec` (one Inspect task each) run for every model
through :func:`inspect_ai.eval_set`. Running the same study again into the same log
directory completes only what is missing: eval_set pairs every task with its log by
a hash of the task, its arguments and the model, reuses finished logs and finished
samples, and runs the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from inspect_ai import Task, eval_set
from inspect_ai.log import EvalLog
from inspect_ai.model import ModelRoles
from inspect_ai.util import DisplayType

from spatialstale.env import DEFAULT_SIZE, MASTER_SEED, MAX_STEPS, default_seeds
from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import EPISODES, navigation
from spatialstale.solvers import MODALITIES, STRATEGIES

STUDY_REGIMES = ("L1", "L2", "L3")
DEFAULT_BATCH_SIZE = 10
SWEEP_BATCH_SIZES = (1, 5, 10, 20)
SWEEP_REGIME = "L1"
SWEEP_MODALITY = "text"
AUDITOR_ROLE = "auditor"

TaskKind = Literal["detection", "navigation"]


@dataclass(frozen=True)
class TaskSpec:
    """One task of the study: a detection cell (regime x modality x batch size) or a
    navigation cell (regime, every strategy, ``episodes`` epochs)."""

    kind: TaskKind
    regime: str
    modality: str
    batch_size: int
    seeds: tuple[int, ...]
    size: int = DEFAULT_SIZE
    strategies: tuple[str, ...] = ()
    max_steps: int = MAX_STEPS
    episodes: int = 1

    @property
    def name(self) -> str:
        """A short label such as ``detection L1 text B=10`` or ``navigation L2 text``."""
        if self.kind == "detection":
            return f"detection {self.regime} {self.modality} B={self.batch_size}"
        return f"navigation {self.regime} {self.modality}"

    @property
    def samples(self) -> int:
        """Sample records in the log: seeds (x strategies x epochs for navigation)."""
        if self.kind == "detection":
            return len(self.seeds)
        return len(self.seeds) * len(self.strategies) * self.episodes

    def task(self) -> Task:
        """The Inspect task; its arguments are recorded in the log (and in eval_set's task hash)."""
        seeds = list(self.seeds)
        if self.kind == "detection":
            return detection(
                regime=self.regime, modality=self.modality, batch_size=self.batch_size, seeds=seeds, size=self.size
            )
        return navigation(
            regime=self.regime,
            modality=self.modality,
            strategies=list(self.strategies),
            batch_size=self.batch_size,
            seeds=seeds,
            size=self.size,
            max_steps=self.max_steps,
            episodes=self.episodes,
        )


@dataclass(frozen=True)
class Study:
    """What to run and for whom. ``auditor`` binds the ``auditor`` model role (the
    audits of detection, SelfVerify and OMCD); without it each model audits itself."""

    models: tuple[str, ...]
    tasks: tuple[TaskSpec, ...]
    auditor: str | None = None
    log_dir: str = "logs/study"
    max_connections: int | None = None


def study_seeds(seeds: Sequence[int] | None, n_seeds: int, master_seed: int = MASTER_SEED) -> tuple[int, ...]:
    """Explicit seeds when given, else the first ``n_seeds`` derived from ``master_seed``."""
    if seeds:
        if len(set(seeds)) != len(seeds):
            raise ValueError("seeds must be distinct")
        if any(s < 0 for s in seeds):
            raise ValueError("seeds must be non-negative integers")
        return tuple(seeds)
    return default_seeds(master_seed, n_seeds)


def study_tasks(
    *,
    seeds: Sequence[int],
    regimes: Sequence[str] = STUDY_REGIMES,
    modalities: Sequence[str] = ("text", "vision"),
    strategies: Sequence[str] = tuple(STRATEGIES),
    navigation_modality: str = "text",
    episodes: int = EPISODES,
    max_steps: int = MAX_STEPS,
    batch_size: int = DEFAULT_BATCH_SIZE,
    batch_sweep: bool = False,
    size: int = DEFAULT_SIZE,
    detection_on: bool = True,
    navigation_on: bool = True,
) -> tuple[TaskSpec, ...]:
    """The paper's matrix: detection over regimes x modalities, navigation over
    regimes (every strategy in one task, ``episodes`` epochs), and with
    ``batch_sweep`` detection on L1 text at B in {1, 5, 10, 20} (App. E).

    Raises:
        ValueError: for an unknown regime, modality or strategy, or a count below 1.
    """
    for regime in regimes:
        if regime not in STUDY_REGIMES:
            raise ValueError(f"regimes must be among {', '.join(STUDY_REGIMES)}; got {regime!r}")
    for modality in [*modalities, navigation_modality]:
        if modality not in MODALITIES:
            raise ValueError(f"modalities must be among {', '.join(MODALITIES)}; got {modality!r}")
    for strategy in strategies:
        if strategy not in STRATEGIES:
            raise ValueError(f"strategies must be among {', '.join(STRATEGIES)}; got {strategy!r}")
    for value, name in ((episodes, "episodes"), (max_steps, "max_steps"), (batch_size, "batch_size")):
        if value < 1:
            raise ValueError(f"{name} must be at least 1; got {value}")
    if not seeds:
        raise ValueError("a study needs at least one seed")
    seed_tuple = tuple(seeds)
    specs: list[TaskSpec] = []
    if detection_on:
        for modality in modalities:
            for regime in regimes:
                specs.append(TaskSpec("detection", regime, modality, batch_size, seed_tuple, size))
        if batch_sweep:
            for b in SWEEP_BATCH_SIZES:
                spec = TaskSpec("detection", SWEEP_REGIME, SWEEP_MODALITY, b, seed_tuple, size)
                if spec not in specs:
                    specs.append(spec)
    if navigation_on and strategies:
        for regime in regimes:
            specs.append(
                TaskSpec(
                    "navigation",
                    regime,
                    navigation_modality,
                    batch_size,
                    seed_tuple,
                    size,
                    strategies=tuple(strategies),
                    max_steps=max_steps,
                    episodes=episodes,
                )
            )
    return tuple(specs)


def run_study(
    study: Study, *, display: DisplayType = "full", retry_attempts: int | None = None
) -> tuple[bool, list[EvalLog]]:
    """Run (or resume) the study as one Inspect eval set; returns eval_set's result."""
    roles: ModelRoles | None = {AUDITOR_ROLE: study.auditor} if study.auditor else None
    return eval_set(
        [spec.task() for spec in study.tasks],
        log_dir=study.log_dir,
        model=list(study.models),
        model_roles=roles,
        display=display,
        retry_attempts=retry_attempts,
        max_connections=study.max_connections,
    )
