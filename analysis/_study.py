"""The paper's study matrix as one Inspect eval set.

A study is a list of :class:`TaskSpec` (one Inspect task each) run for every model
through :func:`inspect_ai.eval_set`. Running the same study again into the same log
directory completes only what is missing: eval_set pairs every task with its log by
a hash of the task, its arguments and the model, reuses finished logs and finished
samples, and runs the rest.

A study too big for one machine runs as shards (:class:`Shard`): shard K of N runs
every task on every N-th seed, so the shards are disjoint, together complete, and can
all write into one log directory (a local folder or an ``s3://`` prefix). After a
run, :func:`account` reads the log directory and says which (model, task) cells are
done and which are missing; logs that a resume superseded do not count as missing.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, Literal

from inspect_ai import Task, eval_set
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log
from inspect_ai.model import ModelRoles
from inspect_ai.util import DisplayType

from spatialstale.env import DEFAULT_SIZE, MASTER_SEED, MAX_STEPS, default_seeds
from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import EPISODES, navigation
from spatialstale.solvers import DEFAULT_FILTER, DEFAULT_PROMPT_SET, FILTERS, MODALITIES, PROMPT_SETS, STRATEGIES

STUDY_REGIMES = ("L1", "L2", "L3")
DEFAULT_BATCH_SIZE = 10
SWEEP_BATCH_SIZES = (1, 5, 10, 20)
SWEEP_REGIME = "L1"
SWEEP_MODALITY = "text"
AUDITOR_ROLE = "auditor"
MIN_SIZE = 4
MAX_STUDY_SIZE = 64
"""The largest grid a study runs: its navigation prompts hold ~66k tokens (chars / 4)."""

TaskKind = Literal["detection", "navigation"]

FULL_VIEW = "full"
"""How a study names the paper's full view (``-T view_radius`` left unset)."""
NAVIGATORS = ("prompt", "tools")
"""``-T agent`` values: the paper's one-call-a-step navigator, or the tool-calling one."""
DEFAULT_NAVIGATOR = "prompt"
FILTERING_STRATEGIES = ("selfverify", "omcd", "oracle")
"""The strategies a filter mode changes; NoMemory and NoFilter flag nothing."""


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
    prompt_set: str = DEFAULT_PROMPT_SET
    filter: str = DEFAULT_FILTER
    """Navigation: ``-T filter`` (``delete``, the paper, or ``unknown``)."""
    view_radius: int | None = None
    """Navigation: ``-T view_radius`` (fog); None is the paper's full view."""
    agent: str = DEFAULT_NAVIGATOR
    """Navigation: ``-T agent`` (``prompt``, the paper's navigator, or ``tools``)."""

    @property
    def base_name(self) -> str:
        """The cell without its study axes: ``detection L1 text B=10``, ``navigation L2 text``."""
        if self.kind == "detection":
            return f"detection {self.regime} {self.modality} B={self.batch_size}"
        return f"navigation {self.regime} {self.modality}"

    def axes(self) -> dict[str, str]:
        """The study axes this cell sets away from the paper's protocol, by column name
        (``prompt set``, ``filter``, ``view radius``, ``agent``); empty for a paper cell."""
        axes: dict[str, str] = {}
        if self.prompt_set != DEFAULT_PROMPT_SET:
            axes["prompt set"] = self.prompt_set
        if self.filter != DEFAULT_FILTER:
            axes["filter"] = self.filter
        if self.view_radius is not None:
            axes["view radius"] = str(self.view_radius)
        if self.agent != DEFAULT_NAVIGATOR:
            axes["agent"] = self.agent
        return axes

    @property
    def name(self) -> str:
        """A short label such as ``detection L1 text B=10``, ``navigation L2 text [warned]`` or
        ``navigation L2 text filter=unknown view_radius=1 agent=tools``."""
        settings = [
            f"{key}={value}"
            for key, value in (
                ("filter", self.filter if self.filter != DEFAULT_FILTER else None),
                ("view_radius", self.view_radius),
                ("agent", self.agent if self.agent != DEFAULT_NAVIGATOR else None),
            )
            if value is not None
        ]
        wording = [] if self.prompt_set == DEFAULT_PROMPT_SET else [f"[{self.prompt_set}]"]
        return " ".join([self.base_name, *settings, *wording])

    @property
    def samples(self) -> int:
        """Inspect samples: one per seed (per (seed, strategy) for navigation)."""
        if self.kind == "detection":
            return len(self.seeds)
        return len(self.seeds) * len(self.strategies)

    @property
    def records(self) -> int:
        """Sample records in the log: each sample once per epoch (``episodes``)."""
        return self.samples * (self.episodes if self.kind == "navigation" else 1)

    def args(self) -> dict[str, Any]:
        """The task's arguments, as the log records them (``task_args_passed``)."""
        args: dict[str, Any] = {"regime": self.regime, "modality": self.modality}
        if self.kind == "navigation":
            args["strategies"] = list(self.strategies)
        args |= {"batch_size": self.batch_size, "seeds": list(self.seeds), "size": self.size}
        if self.kind == "navigation":
            args |= {"max_steps": self.max_steps, "episodes": self.episodes}
        if self.prompt_set != DEFAULT_PROMPT_SET:
            # only when set, so that the default study's task arguments (and the logs a
            # resume recognises) stay what they were before prompt sets existed
            args["prompt_set"] = self.prompt_set
        # likewise each navigation axis is passed only away from the paper's protocol
        if self.kind == "navigation":
            if self.filter != DEFAULT_FILTER:
                args["filter"] = self.filter
            if self.view_radius is not None:
                args["view_radius"] = self.view_radius
            if self.agent != DEFAULT_NAVIGATOR:
                args["agent"] = self.agent
        return args

    def task(self) -> Task:
        """The Inspect task; its arguments are recorded in the log (and in eval_set's task hash)."""
        if self.kind == "detection":
            return detection(**self.args())
        return navigation(**self.args())


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

    @property
    def cells(self) -> tuple[Cell, ...]:
        """Every (model, task) of the study: one log each once it is done."""
        return tuple(Cell(model, spec) for model in self.models for spec in self.tasks)


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
    prompt_sets: Sequence[str] = (DEFAULT_PROMPT_SET,),
    filters: Sequence[str] = (DEFAULT_FILTER,),
    view_radii: Sequence[int | None] = (None,),
    agents: Sequence[str] = (DEFAULT_NAVIGATOR,),
) -> tuple[TaskSpec, ...]:
    """The paper's matrix: detection over regimes x modalities, navigation over
    regimes (every strategy in one task, ``episodes`` epochs), and with
    ``batch_sweep`` detection on L1 text at B in {1, 5, 10, 20} (App. E); all of it
    once per prompt set in ``prompt_sets`` (the sweep under the default set only).

    Navigation also runs once per filter mode x view radius x navigator agent of
    ``filters``, ``view_radii`` (None: the full view) and ``agents``; the defaults are
    the paper's cell alone. A filter mode other than ``delete`` runs only the
    strategies it changes (SelfVerify, OMCD, Oracle): NoMemory and NoFilter would
    repeat their ``delete`` runs.

    Raises:
        ValueError: for an unknown regime, modality, strategy, prompt set, filter mode
            or agent, a view radius below 0, a count below 1, or a filter mode other than
            ``delete`` without a strategy it changes.
    """
    check_axes(filters, view_radii, agents)
    for name in prompt_sets:
        if name not in PROMPT_SETS:
            raise ValueError(f"prompt sets must be among {', '.join(PROMPT_SETS)}; got {name!r}")
    if not prompt_sets:
        raise ValueError("a study needs at least one prompt set")
    for regime in regimes:
        if regime not in STUDY_REGIMES:
            raise ValueError(f"regimes must be among {', '.join(STUDY_REGIMES)}; got {regime!r}")
    for modality in [*modalities, navigation_modality]:
        if modality not in MODALITIES:
            raise ValueError(f"modalities must be among {', '.join(MODALITIES)}; got {modality!r}")
    for strategy in strategies:
        if strategy not in STRATEGIES:
            raise ValueError(f"strategies must be among {', '.join(STRATEGIES)}; got {strategy!r}")
    if not MIN_SIZE <= size <= MAX_STUDY_SIZE:
        # a navigation prompt of a 128x128 grid holds ~260k tokens, beyond any context window
        raise ValueError(f"size must be from {MIN_SIZE} to {MAX_STUDY_SIZE}; got {size}")
    for value, name in ((episodes, "episodes"), (max_steps, "max_steps"), (batch_size, "batch_size")):
        if value < 1:
            raise ValueError(f"{name} must be at least 1; got {value}")
    if not seeds:
        raise ValueError("a study needs at least one seed")
    seed_tuple = tuple(seeds)
    specs: list[TaskSpec] = []
    if detection_on:
        for wording in prompt_sets:
            for modality in modalities:
                for regime in regimes:
                    specs.append(
                        TaskSpec("detection", regime, modality, batch_size, seed_tuple, size, prompt_set=wording)
                    )
        if batch_sweep:
            for b in SWEEP_BATCH_SIZES:
                spec = TaskSpec("detection", SWEEP_REGIME, SWEEP_MODALITY, b, seed_tuple, size)
                if spec not in specs:
                    specs.append(spec)
    if navigation_on and strategies:
        for wording in prompt_sets:
            for filter_mode in filters:
                ran = tuple(strategies)
                if filter_mode != DEFAULT_FILTER:
                    ran = tuple(s for s in strategies if s in FILTERING_STRATEGIES)
                if not ran:
                    raise ValueError(
                        f"filter mode {filter_mode} changes only {', '.join(FILTERING_STRATEGIES)}; "
                        f"none of them is among the strategies ({', '.join(strategies)})"
                    )
                for radius in view_radii:
                    for agent in agents:
                        for regime in regimes:
                            specs.append(
                                TaskSpec(
                                    "navigation",
                                    regime,
                                    navigation_modality,
                                    batch_size,
                                    seed_tuple,
                                    size,
                                    strategies=ran,
                                    max_steps=max_steps,
                                    episodes=episodes,
                                    prompt_set=wording,
                                    filter=filter_mode,
                                    view_radius=radius,
                                    agent=agent,
                                )
                            )
    return tuple(specs)


def check_axes(filters: Sequence[str], view_radii: Sequence[int | None], agents: Sequence[str]) -> None:
    """The navigation axes of a study, checked before anything runs.

    Raises:
        ValueError: one line naming the valid choices.
    """
    if not filters or not view_radii or not agents:
        raise ValueError("a study needs at least one filter mode, view radius and agent")
    for mode in filters:
        if mode not in FILTERS:
            raise ValueError(f"filters must be among {', '.join(FILTERS)}; got {mode!r}")
    for radius in view_radii:
        if radius is not None and (isinstance(radius, bool) or not isinstance(radius, int) or radius < 0):
            raise ValueError(f"view radii must be {FULL_VIEW} or integers >= 0; got {radius!r}")
    for agent in agents:
        if agent not in NAVIGATORS:
            raise ValueError(f"agents must be among {', '.join(NAVIGATORS)}; got {agent!r}")


def parse_view_radii(items: Sequence[str]) -> list[int | None]:
    """``full`` and integers >= 0 (``full,1,2``) as view radii, None for the full view,
    in the order given, without repeats.

    Raises:
        ValueError: for anything else (one line naming the choices).
    """
    radii: list[int | None] = []
    for item in items:
        text = item.strip()
        radius: int | None
        if text.lower() == FULL_VIEW:
            radius = None
        else:
            try:
                radius = int(text)
            except ValueError:
                raise ValueError(f"view radii must be {FULL_VIEW} or integers >= 0; got {item!r}") from None
            if radius < 0:
                raise ValueError(f"view radii must be {FULL_VIEW} or integers >= 0; got {item!r}")
        if radius not in radii:
            radii.append(radius)
    return radii


def run_study(
    study: Study, *, display: DisplayType = "full", retry_attempts: int | None = None
) -> tuple[bool, list[EvalLog]]:
    """Run (or resume) the study as one Inspect eval set; returns eval_set's result.

    Raises:
        KeyboardInterrupt: when the run was interrupted (Ctrl-C, or SIGTERM/SIGHUP
            while :func:`interrupts_as_keyboard` is active).
    """
    roles: dict[str, Any] = dict(study.model_roles or {})
    if study.auditor:
        roles[AUDITOR_ROLE] = study.auditor
    options = dict(study.options)
    if retry_attempts is not None:
        options["retry_attempts"] = retry_attempts
    if study.shard is not None:
        # the other shards' logs share the directory and are not part of this eval set
        options.setdefault("log_dir_allow_dirty", True)
    # Inspect's control server holds SIGINT and SIGTERM back while it serves, so an
    # interrupted study would run on; without it a signal cancels the run at once.
    options.setdefault("ctl_server", False)
    model_roles: ModelRoles | None = roles or None
    return eval_set(
        [spec.task() for spec in study.tasks],
        log_dir=study.log_dir,
        model=list(study.models),
        model_roles=model_roles,
        display=display,
        **options,
    )


SIGNAL_EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
"""Shell convention: 128 + the signal's number."""


@contextmanager
def interrupts_as_keyboard() -> Iterator[list[signal.Signals]]:
    """SIGTERM and SIGHUP act as Ctrl-C does, so Inspect cancels the running samples
    and writes their logs as ``cancelled`` instead of the process dying mid-write.
    Yields the list of SIGTERM/SIGHUP signals received."""
    received: list[signal.Signals] = []

    def handler(number: int, frame: FrameType | None) -> None:
        received.append(signal.Signals(number))
        if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL):
            raise KeyboardInterrupt  # nobody would act on a SIGINT (e.g. a background job)
        # Whoever handles SIGINT now (asyncio's runner, Inspect) cancels cleanly; an
        # exception raised here would land in the middle of the event loop instead.
        os.kill(os.getpid(), signal.SIGINT)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield received
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@dataclass(frozen=True)
class Accounting:
    """Which cells of a study have a successful log in its log directory."""

    done: tuple[Cell, ...]
    missing: tuple[tuple[Cell, str], ...]
    """Each missing cell with the state of its newest log (``no log`` when none)."""
    superseded: int
    """Logs of done cells that a later run replaced (cancelled, error or stopped)."""

    @property
    def complete(self) -> bool:
        return not self.missing


def account(study: Study) -> Accounting:
    """Pair every cell of ``study`` with the logs in its log directory.

    A cell is done when some log of it has status ``success``. Logs of the same cell
    that were cancelled, errored or never finished (a killed process leaves
    ``started``) and then completed by a resume are counted as superseded, never as
    missing work. Logs of other studies or shards in the directory are ignored.
    """
    states: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    try:
        infos = list_eval_logs(study.log_dir)
    except FileNotFoundError:
        infos = []
    for info in infos:
        try:
            log = read_eval_log(info, header_only=True)
        except Exception:  # an unreadable file is no cell's log
            continue
        key = (log.eval.model, log.eval.task.rsplit("/", 1)[-1], json.dumps(log.eval.task_args_passed, sort_keys=True))
        states.setdefault(key, []).append((log.eval.created, log.status))
    done: list[Cell] = []
    missing: list[tuple[Cell, str]] = []
    superseded = 0
    for cell in study.cells:
        logs = sorted(states.get(cell.key, []))
        if any(status == "success" for _, status in logs):
            done.append(cell)
            superseded += sum(status != "success" for _, status in logs)
        else:
            missing.append((cell, logs[-1][1] if logs else "no log"))
    return Accounting(tuple(done), tuple(missing), superseded)
