"""The study's matrix: which tasks a study runs, for which models, on which seeds.

A study is a list of :class:`TaskSpec` (one Inspect task each) run for every model
(:class:`Study`): detection over regimes x modalities, navigation over regimes x
strategies, one strategy a task (sample ids such as ``L2-omcd-s4810`` pair the
strategies across logs); with the batch sweep, detection on L1 text at the B values of
App. E; with several ``sizes``, the whole matrix once per grid side. Every axis beyond
the paper's protocol multiplies the cells of the task kinds that have it; a value at
its default is not passed to the task, so the paper's cells keep their task arguments
(and eval set identity). Shard K of N (:class:`Shard`) runs every task on every N-th seed.
"""

from __future__ import annotations

import inspect
import itertools
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspect_ai import Task

from spatialstale.env import CHANGE_REGIMES, MASTER_SEED, default_seeds
from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.protocol import (
    DETECTION,
    NAVIGATION,
    Axis,
    DetectionSettings,
    NavigationSettings,
    TaskParameterError,
    axes_of,
)
from spatialstale.solvers import FILTERING

Settings = DetectionSettings | NavigationSettings
TASKS: dict[str, Callable[..., Task]] = {"detection": detection, "navigation": navigation}
"""The task of each kind a study runs."""

SWEEP_BATCH_SIZES = (1, 5, 10, 20)
SWEEP_SCALED = (5, 10, 20)
"""The paper's sweep at n = 8 (64 entries): B values scaled by n²/64 keep ⌈n²/B⌉ at 13, 7, 4."""
SWEEP_REGIME = "L1"
SWEEP_MODALITY = "text"
MAX_STUDY_SIZE = 64
"""The largest grid a study runs: its navigation prompts hold ~66k tokens (chars / 4)."""
STUDY_MODALITIES = ("text", "vision")
"""The detection modalities of the paper's matrix (navigation runs in text)."""

PASSED_ALWAYS = ("regime", "modality", "strategies", "batch_size", "seeds", "size", "max_steps", "episodes")
"""The task arguments a study always passes: the cell's place in the paper's matrix."""


def sweep_batch_sizes(size: int) -> tuple[int, ...]:
    """The batch sizes of App. E's sweep at grid side ``size`` (n² memory entries).

    The paper's B in {1, 5, 10, 20} (so every n shares the absolute values) plus
    n²/64 x {5, 10, 20}, rounded and at most n², which keep the calls an audit,
    ⌈n²/B⌉, at the paper's 13, 7 and 4 whatever n: n = 8 gives {1, 5, 10, 20},
    n = 16 {1, 5, 10, 20, 40, 80}, n = 32 {1, 5, 10, 20, 80, 160, 320}. Whether F1
    holds at constant B (cost growing with n²) or at constant calls (B growing
    with n²) is the open question of App. E.
    """
    entries = size * size
    scaled = (max(1, min(entries, round(entries * b / 64))) for b in SWEEP_SCALED)
    return tuple(sorted({*(min(b, entries) for b in SWEEP_BATCH_SIZES), *scaled}))


def beyond_paper(kind: str) -> tuple[Axis, ...]:
    """The axes of a task kind beyond the paper's protocol, in declaration order."""
    settings = DetectionSettings if kind == "detection" else NavigationSettings
    return tuple(a for a in axes_of(settings) if a.beyond_paper)


@dataclass(frozen=True)
class TaskSpec:
    """One task of the study: its settings (one regime each); for detection one modality
    and batch size, for navigation its strategies (one, in a study's matrix) and
    ``episodes`` epochs."""

    settings: Settings

    @classmethod
    def make(cls, kind: str, **values: Any) -> TaskSpec:
        """A cell of ``kind`` with ``values`` (``regime`` one name, ``seeds`` a sequence),
        every other axis at its default."""
        base: Settings = DETECTION if kind == "detection" else NAVIGATION
        if "regime" in values:
            values["regime"] = (values["regime"],)
        for key in ("seeds", "strategies"):
            if key in values:
                values[key] = tuple(values[key])
        return cls(base.replace(**values))

    @property
    def kind(self) -> str:
        return self.settings.kind

    @property
    def regime(self) -> str:
        return self.settings.regime[0]

    @property
    def strategies(self) -> tuple[str, ...]:
        return self.settings.strategies if isinstance(self.settings, NavigationSettings) else ()

    @property
    def episodes(self) -> int:
        return self.settings.episodes if isinstance(self.settings, NavigationSettings) else 1

    @property
    def max_steps(self) -> int:
        return self.settings.max_steps if isinstance(self.settings, NavigationSettings) else 0

    def axes(self) -> dict[str, str]:
        """The axes this cell sets away from the paper's protocol, by column title
        (``prompt set``, ``filter``, ``view radius``, ``agent``); empty for a paper cell."""
        out: dict[str, str] = {}
        for a in beyond_paper(self.kind):
            value = getattr(self.settings, a.name)
            if value != a.value and a.title is not None:
                out[a.title] = a.show(value)
        return out

    @property
    def base_name(self) -> str:
        """The cell without its axes beyond the paper: ``detection L1 text B=10``,
        ``navigation L2 text omcd``."""
        # the grid side shows only away from the paper's n = 8, so paper cells keep their names
        n = "" if self.settings.size == DETECTION.size else f" n={self.settings.size}"
        if self.kind == "detection":
            return f"detection {self.regime} {self.settings.modality} B={self.settings.batch_size}{n}"
        return f"navigation {self.regime} {self.settings.modality} {'+'.join(self.strategies)}{n}"

    @property
    def name(self) -> str:
        """A short label: ``detection L1 text B=10`` (``... B=10 n=16`` on a 16x16 grid) or
        ``navigation L2 text omcd max_steps=40``."""
        changed = [
            f"{a.name}={a.show(getattr(self.settings, a.name))}"
            for a in beyond_paper(self.kind)
            if getattr(self.settings, a.name) != a.value
        ]
        return " ".join([self.base_name, *changed])

    @property
    def samples(self) -> int:
        """Inspect samples: one per seed (per (seed, strategy) for navigation)."""
        return len(self.settings.seeds) * max(1, len(self.strategies))

    @property
    def records(self) -> int:
        """Sample records in the log: each sample once per epoch (``episodes``)."""
        return self.samples * self.episodes

    def args(self) -> dict[str, Any]:
        """The task's arguments, as the log records them (``task_args_passed``), in the
        order of the task's signature: the cell's place in the paper's matrix always,
        an axis beyond the paper only away from its default."""
        beyond = {a.name: a for a in beyond_paper(self.kind)}
        args: dict[str, Any] = {}
        signature = list(inspect.signature(TASKS[self.kind]).parameters)
        # an installed extension's axes reach the task through its ** parameter
        for name in [*signature, *(a.name for a in self.settings.extension_axes() if a.name not in signature)]:
            if not hasattr(self.settings, name):
                continue
            value = getattr(self.settings, name)
            if name in beyond and value != beyond[name].value:
                args[name] = value
            elif name in PASSED_ALWAYS:
                args[name] = self.regime if name == "regime" else list(value) if isinstance(value, tuple) else value
        return args

    def task(self) -> Task:
        """The Inspect task; its arguments are recorded in the log (and in eval_set's task hash)."""
        return TASKS[self.kind](**self.args())


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (1-based): every task on the seeds at positions
    ``index - 1``, ``index - 1 + count``, ... of the study's seed list."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``K/N`` with 1 <= K <= N.

        Raises:
            ValueError: for anything else.
        """
        index, _, count = text.partition("/")
        try:
            shard = cls(int(index), int(count))
        except ValueError:
            raise ValueError(f"--shard must be K/N with 1 <= K <= N (e.g. 2/8); got {text!r}") from None
        if not 1 <= shard.index <= shard.count:
            raise ValueError(f"--shard must be K/N with 1 <= K <= N (e.g. 2/8); got {text!r}")
        return shard

    def seeds(self, seeds: Sequence[int]) -> tuple[int, ...]:
        """This shard's part of ``seeds`` (raises ValueError when it would be empty)."""
        if self.count > len(seeds):
            raise ValueError(f"--shard {self}: {self.count} shards need at least {self.count} seeds; got {len(seeds)}")
        return tuple(seeds[self.index - 1 :: self.count])

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass(frozen=True)
class Study:
    """What to run and for whom. ``auditor`` binds the ``auditor`` model role (the
    audits of detection, SelfVerify and OMCD); without it each model audits itself."""

    models: tuple[str, ...]
    tasks: tuple[TaskSpec, ...]
    auditor: str | None = None
    log_dir: str = "logs/study"
    options: Mapping[str, Any] = field(default_factory=dict)
    """Keyword arguments for :func:`inspect_ai.eval_set`: model args, generation config,
    limits, concurrency and error handling (see ``_options``)."""
    model_roles: Mapping[str, Any] | None = None
    """Model roles besides ``auditor`` (``--model-role``)."""
    shard: Shard | None = None
    skipped: tuple[Skipped, ...] = ()
    """Combinations of the requested values that the matrix does not run (:class:`Matrix`)."""

    @property
    def cells(self) -> tuple[Cell, ...]:
        """Every (model, task) of the study: one log each once it is done."""
        return tuple(Cell(model, spec) for model in self.models for spec in self.tasks)


@dataclass(frozen=True)
class Cell:
    """One model on one task: one log of the eval set."""

    model: str
    spec: TaskSpec

    @property
    def name(self) -> str:
        return f"{self.model}: {self.spec.name}"

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.model, self.spec.kind, json.dumps(self.spec.args(), sort_keys=True))


def study_seeds(seeds: Sequence[int] | None, n_seeds: int, master_seed: int = MASTER_SEED) -> tuple[int, ...]:
    """Explicit seeds when given, else the first ``n_seeds`` derived from ``master_seed``."""
    if seeds:
        if len(set(seeds)) != len(seeds):
            raise ValueError("seeds must be distinct")
        if any(s < 0 for s in seeds):
            raise ValueError("seeds must be non-negative integers")
        return tuple(seeds)
    return default_seeds(master_seed, n_seeds)


def study_tasks(**options: Any) -> tuple[TaskSpec, ...]:
    """The tasks of :func:`study_matrix` (same keyword arguments), without what it skipped."""
    return study_matrix(**options).tasks


@dataclass(frozen=True)
class Skipped:
    """A combination of the requested values that the study does not run, and why."""

    kind: str
    reason: str
    """One line: the task's own refusal (its settings' validation), or why the run
    would repeat another cell."""


@dataclass(frozen=True)
class Matrix:
    """The tasks a study runs, in order, and the combinations it skipped."""

    tasks: tuple[TaskSpec, ...]
    skipped: tuple[Skipped, ...] = ()


def skipped_lines(skipped: Sequence[Skipped]) -> list[str]:
    """One line a reason, counted: ``skipped 3 detection tasks: <the task's reason>``."""
    counts = Counter((s.kind, s.reason) for s in skipped)
    return [f"skipped {n} {kind} task{'' if n == 1 else 's'}: {reason}" for (kind, reason), n in counts.items()]


def study_matrix(
    *,
    seeds: Sequence[int],
    regimes: Sequence[str] = CHANGE_REGIMES,
    modalities: Sequence[str] = STUDY_MODALITIES,
    strategies: Sequence[str] = NAVIGATION.strategies,
    navigation_modality: str = NAVIGATION.modality,
    episodes: int = NAVIGATION.episodes,
    max_steps: int = NAVIGATION.max_steps,
    batch_size: int = NAVIGATION.batch_size,
    batch_sweep: bool = False,
    size: int = NAVIGATION.size,
    sizes: Sequence[int] | None = None,
    detection_on: bool = True,
    navigation_on: bool = True,
    axes: Mapping[str, Sequence[Any]] | None = None,
) -> Matrix:
    """The paper's matrix, once per combination of the values of ``axes``.

    Detection runs over regimes x modalities (and with ``batch_sweep`` on L1 text at
    :func:`sweep_batch_sizes`, B in {1, 5, 10, 20} at n = 8, App. E, under the default
    values of ``axes`` only);
    navigation over regimes x strategies, one strategy a task, ``episodes`` epochs. ``axes``
    maps an axis beyond the paper (``prompt_set``, ``filter``, ``agent``, an
    extension's, ...) to the values to run, canonical; each task kind runs once per
    combination of the values of its own axes (default: the paper's value alone).
    ``sizes`` (default: ``size`` alone) runs the whole matrix once per grid side.

    A combination the task refuses (its settings' own validation, an extension's
    check among them) is skipped, with the task's reason;
    so is a filter mode other than ``delete`` for a strategy it does not change (only
    ``FILTERING`` flag entries: NoMemory and NoFilter would repeat their ``delete``
    runs). :func:`skipped_lines` says what was skipped.

    Raises:
        ValueError: for a value the settings refuse, a size beyond
            ``MAX_STUDY_SIZE``, no seed, or nothing left to run.
    """
    axes = dict(axes or {})
    for name, given in axes.items():
        if not given:
            raise ValueError(f"a study needs at least one value of {name}")
    grids = tuple(dict.fromkeys(sizes)) if sizes else (size,)
    for n in grids:
        if not 4 <= n <= MAX_STUDY_SIZE:
            # a navigation prompt of a 128x128 grid holds ~260k tokens, beyond any context window
            raise ValueError(f"size must be from 4 to {MAX_STUDY_SIZE}; got {n}")
    if not seeds:
        raise ValueError("a study needs at least one seed")
    specs: list[TaskSpec] = []
    skipped: list[Skipped] = []

    def add(kind: str, *, once: bool = False, **values: Any) -> None:
        try:
            spec = _spec(kind, **values)
        except Refused as refused:
            skipped.append(Skipped(kind, str(refused)))
            return
        if not once or spec not in specs:
            specs.append(spec)

    idle = [s for s in strategies if s not in FILTERING]
    for n in grids:
        common: dict[str, Any] = {"seeds": tuple(seeds), "size": n, "batch_size": batch_size}
        for values in _combinations("detection", axes) if detection_on else ():
            for modality in modalities:
                for regime in regimes:
                    add("detection", regime=regime, modality=modality, **common, **values)
        for b in sweep_batch_sizes(n) if detection_on and batch_sweep else ():
            # the sweep's B = 10 cell is the matrix's own
            add("detection", once=True, regime=SWEEP_REGIME, modality=SWEEP_MODALITY, **{**common, "batch_size": b})
        for values in _combinations("navigation", axes) if navigation_on else ():
            mode = values.get("filter", NAVIGATION.filter)
            for regime in regimes:
                for strategy in strategies:
                    if mode != NAVIGATION.filter and strategy in idle:
                        reason = (
                            f"filter={mode} changes only the strategies that flag entries ({', '.join(FILTERING)}); "
                            f"{', '.join(idle)} run at filter={NAVIGATION.filter} only"
                        )
                        skipped.append(Skipped("navigation", reason))
                        continue
                    add(
                        "navigation",
                        regime=regime,
                        modality=navigation_modality,
                        strategies=(strategy,),
                        episodes=episodes,
                        max_steps=max_steps,
                        **common,
                        **values,
                    )
    if skipped and not specs:
        raise ValueError(f"nothing to run: {'; '.join(skipped_lines(skipped))}")
    return Matrix(tuple(specs), tuple(skipped))


def _combinations(kind: str, axes: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of the values of ``kind``'s axes beyond the paper (the default
    where ``axes`` gives none), in declaration order, the first axis outermost."""
    own = beyond_paper(kind)
    choices = [axes.get(a.name, (a.value,)) for a in own]
    return [dict(zip((a.name for a in own), combo, strict=True)) for combo in itertools.product(*choices)]


class Refused(ValueError):
    """A combination of valid values that the task's settings refuse."""


def _spec(kind: str, **values: Any) -> TaskSpec:
    """A cell, its values checked as the task would check them.

    Raises:
        ValueError: for a value the task refuses on its own.
        Refused: for a combination of values the task refuses (its settings' own
            validation), with the task's one-line reason.
    """
    settings = DetectionSettings if kind == "detection" else NavigationSettings
    checked = {}
    for a in axes_of(settings):
        if a.name in values:
            value = values[a.name]
            try:
                checked[a.name] = a.read(list(value) if isinstance(value, tuple) else value, a.name)
            except ValueError as error:
                raise ValueError(str(error)) from None
    try:
        return TaskSpec.make(kind, **{**values, **checked, "regime": checked.get("regime", values["regime"])[0]})
    except TaskParameterError as error:  # each value is valid alone: the settings refuse them together
        raise Refused(str(error)) from None
