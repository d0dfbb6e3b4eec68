"""Running a study: one Inspect eval set, interrupts, and what is done afterwards.

Running the same study again into the same log directory completes only what is
missing: eval_set pairs every task with its log by a hash of the task, its arguments
and the model, reuses finished logs and finished samples, and runs the rest. After a
run, :func:`account` reads the log directory and says which (model, task) cells are
done and which are missing; logs that a resume superseded do not count as missing.

While a study runs, an Inspect hook (:class:`StudyHooks`, public ``inspect_ai.hooks``)
reports progress when stdout is no terminal (a line per finished task, and the count
of samples done every ``PROGRESS_EVERY`` seconds), and takes the first interrupt: it
says at once that the samples in flight are being cancelled, silences the console
for the rest of the run (Inspect's per-task retry hints and its closing "Completed
all tasks" line would contradict the study's own verdict), and a second interrupt
exits at once with the study's resume command.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any

import rich
from inspect_ai import eval_set
from inspect_ai.hooks import Hooks, RunEnd, RunStart, SampleEnd, TaskEnd, hooks
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log
from inspect_ai.model import ModelRoles
from inspect_ai.util import DisplayType

from spatialstale.solvers import AUDITOR_ROLE

from ._concurrency import tasks_at_once
from ._matrix import Cell, Study

PROGRESS_EVERY = 30.0
"""Seconds between two counts of the samples done, when stdout is no terminal."""


def run_study(
    study: Study,
    *,
    display: DisplayType = "full",
    retry_attempts: int | None = None,
    progress: bool | None = None,
    resume: str | None = None,
) -> tuple[bool, list[EvalLog]]:
    """Run (or resume) the study as one Inspect eval set; returns eval_set's result.

    ``progress``: print a line per finished task and, every ``PROGRESS_EVERY``
    seconds, the count of samples done; by default when stdout is no terminal (in one,
    Inspect's display shows progress). ``resume`` is the command a second interrupt
    prints before it exits.

    Raises:
        KeyboardInterrupt: when the run was interrupted (Ctrl-C, or SIGTERM/SIGHUP
            while :func:`interrupts_as_keyboard` is active).
    """
    roles: dict[str, Any] = dict(study.model_roles or {})
    if study.auditor:
        roles[AUDITOR_ROLE] = study.auditor
    options = dict(study.options)
    # the samples in flight set the peak memory (_concurrency)
    options.setdefault("max_tasks", tasks_at_once(study))
    if retry_attempts is not None:
        options["retry_attempts"] = retry_attempts
    if study.shard is not None:
        # the other shards' logs share the directory and are not part of this eval set
        options.setdefault("log_dir_allow_dirty", True)
    # Inspect's control server holds SIGINT and SIGTERM back while it serves, so an
    # interrupted study would run on; without it a signal cancels the run at once.
    options.setdefault("ctl_server", False)
    model_roles: ModelRoles | None = roles or None
    if progress is None:
        progress = not sys.stdout.isatty()
    global _WATCH
    _register_hooks()
    _WATCH = watch = _Watch(study, PROGRESS_EVERY if progress else None, resume)
    console = rich.get_console()
    quiet = console.quiet
    try:
        return eval_set(
            [spec.task() for spec in study.tasks],
            log_dir=study.log_dir,
            model=list(study.models),
            model_roles=model_roles,
            display=display,
            **options,
        )
    finally:
        watch.give_back_sigint()
        _WATCH = None
        console.quiet = quiet


class _Watch:
    """The running study, as its hook sees it: progress counts and the interrupt."""

    def __init__(self, study: Study, every: float | None, resume: str | None) -> None:
        self.every = every
        self.resume = resume
        self.cells = {cell.key: cell for cell in study.cells}
        self.tasks_total = len(study.cells)
        self.samples_total = sum(cell.spec.records for cell in study.cells)
        self.tasks_done = 0
        self.samples_done = 0
        if every is not None:  # a resume: what earlier runs finished counts as done
            done = account(study).done
            self.tasks_done = len(done)
            self.samples_done = sum(cell.spec.records for cell in done)
        self.last = time.monotonic()
        self.interrupts = 0
        self.inner: Callable[[int, FrameType | None], Any] | None = None

    def counts(self) -> str:
        return f"{self.tasks_done}/{self.tasks_total} tasks, {self.samples_done:,}/{self.samples_total:,} samples done"

    def sample_done(self) -> None:
        self.samples_done += 1
        if self.every is not None and not self.interrupts and time.monotonic() - self.last >= self.every:
            self.last = time.monotonic()
            print(f"study: {self.counts()}", flush=True)

    def task_done(self, log: EvalLog) -> None:
        key = (log.eval.model, log.eval.task.rsplit("/", 1)[-1], json.dumps(log.eval.task_args_passed, sort_keys=True))
        cell = self.cells.get(key)
        if log.status == "success":
            self.tasks_done += 1
        if self.every is not None and not self.interrupts:
            name = cell.name if cell is not None else f"{log.eval.model}: {log.eval.task}"
            print(f"study: {name}: {log.status}; {self.counts()}", flush=True)

    def take_sigint(self) -> None:
        """Put :meth:`on_sigint` before whoever handles SIGINT in this run (asyncio's
        runner, which cancels the run); nothing when SIGINT is ignored."""
        current = signal.getsignal(signal.SIGINT)
        if callable(current) and current != self.on_sigint:
            self.inner = current
            signal.signal(signal.SIGINT, self.on_sigint)

    def give_back_sigint(self) -> None:
        if self.inner is not None and signal.getsignal(signal.SIGINT) == self.on_sigint:
            signal.signal(signal.SIGINT, self.inner)
        self.inner = None

    def on_sigint(self, number: int, frame: FrameType | None) -> None:
        self.interrupts += 1
        if self.interrupts == 1:
            print(
                "study: interrupted: cancelling the samples in flight and saving their logs "
                "(interrupt again to stop at once)",
                flush=True,
            )
            rich.get_console().quiet = True  # Inspect's retry hints and closing verdict
            if self.inner is not None:
                self.inner(number, frame)
            return
        resume = f"; resume with: {self.resume}" if self.resume else ""
        print(f"study interrupted (SIGINT): stopped at once, the samples in flight not saved{resume}", flush=True)
        sys.stderr.flush()
        os._exit(SIGNAL_EXIT[signal.SIGINT])


_WATCH: _Watch | None = None
"""The study being run, while :func:`run_study` runs it."""


_registered: list[type[Hooks]] = []


def _register_hooks() -> None:
    """Register :class:`StudyHooks` with Inspect, once, when a study first runs:
    Inspect prints a banner of the hooks registered when it first looks for them,
    which a dry run, or an eval outside a study, has no use for."""
    if not _registered:
        _registered.append(hooks(name="spatialstale_study", description="spatialstale study progress")(StudyHooks))


class StudyHooks(Hooks):
    """Reports to the running study (:func:`run_study`); idle otherwise."""

    def enabled(self) -> bool:
        return _WATCH is not None

    async def on_run_start(self, data: RunStart) -> None:
        if _WATCH is not None:
            _WATCH.take_sigint()

    async def on_run_end(self, data: RunEnd) -> None:
        if _WATCH is not None:
            _WATCH.give_back_sigint()

    async def on_task_end(self, data: TaskEnd) -> None:
        if _WATCH is not None:
            _WATCH.task_done(data.log)

    async def on_sample_end(self, data: SampleEnd) -> None:
        if _WATCH is not None:
            _WATCH.sample_done()


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
