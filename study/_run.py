"""Running a study: one Inspect eval set, interrupts, and what is done afterwards.

Running the same study again into the same log directory completes only what is
missing (eval_set pairs each task with its log and reuses finished samples);
:func:`account` then says which (model, task) cells are done and why the others are
missing. While a study runs, an Inspect hook (:class:`StudyHooks`) reports progress,
adds up what the calls cost (``--max-cost``), counts the failed sample attempts
(``--max-reruns``) and takes interrupts. A study stops itself (it gives up, a limit
runs out, SIGTERM or SIGHUP) by cancelling the task group Inspect's eval runs in:
Inspect then cancels the samples in flight and writes every log as ``cancelled``, as
after Ctrl-C, with no signal sent.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

import rich
from inspect_ai import eval_set

# the task group an eval runs in, which the eval cancels itself as it ends (eval_async);
# Inspect has no public handle on it
from inspect_ai._util.background import (  # inspect-evals-lint: ignore[private_api_imports] -- see above
    background_task_group,
)
from inspect_ai.event import Event, ModelEvent
from inspect_ai.hooks import (
    Hooks,
    ModelRetry,
    ModelUsageData,
    RunEnd,
    RunStart,
    SampleAttemptEnd,
    SampleEnd,
    TaskEnd,
    TaskStart,
    hooks,
)
from inspect_ai.log import (
    EvalLog,
    EvalLogInfo,
    EvalSampleSummary,
    list_eval_logs,
    read_eval_log,
    read_eval_log_sample,
    read_eval_log_sample_summaries,
)
from inspect_ai.model import ModelCost, ModelRoles, compute_model_cost
from inspect_ai.util import DisplayType

from spatialstale.solvers import AUDITOR_ROLE

from ._concurrency import tasks_at_once
from ._matrix import Cell, Study

PROGRESS_EVERY = 30.0
"""Seconds between two counts of the samples done, at first; the interval then grows
with the time the study has run (``PROGRESS_GROWTH`` of it), up to ``PROGRESS_EVERY_MAX``,
so that a two-day study prints about a hundred counts, not thousands."""
PROGRESS_GROWTH = 0.1
PROGRESS_EVERY_MAX = 1800.0
FAILURES_SHOWN = 40
"""Failure lines printed in a run at most; the closing summary counts them all."""
GIVE_UP_AFTER = 20
"""Sample attempts failing in a row, with no model call answered in between, after
which the study stops: the failure is the setup's (a bad key, a model that does not
exist, every request rejected), and reruns would only repeat it. (Faults a few percent
of calls meet fall between answered calls.)"""


DEFAULT_RERUNS_PER_SAMPLE = 10
MIN_DEFAULT_RERUNS = 100
"""Without ``--max-reruns``, a study stops once its failed sample attempts exceed
:func:`default_reruns`: ``DEFAULT_RERUNS_PER_SAMPLE`` times its sample records (the
reruns ``--retry-on-error`` allows each sample by default), at least
``MIN_DEFAULT_RERUNS`` (a small study's L3 audits of 35-49 calls fail whole at a few
percent of rejected calls): no endpoint, however broken, makes it run for ever."""


def default_reruns(records: int) -> int:
    """The failed sample attempts a study of ``records`` sample records allows by default."""
    return max(MIN_DEFAULT_RERUNS, DEFAULT_RERUNS_PER_SAMPLE * records)


class StudyStopped(Exception):
    """The study stopped itself: it gave up (``GIVE_UP_AFTER``), or its budget
    (``--max-cost``) or its reruns (``--max-reruns``) ran out. ``kind`` is ``gave up``,
    ``budget`` or ``reruns``; the message says why."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Limits:
    """What a study may spend: ``max_cost`` dollars of model calls, at ``prices`` (by
    model name, as :func:`~spatialstale.study._estimate.price_of` finds them), and
    ``max_reruns`` failed sample attempts (None: :func:`default_reruns`)."""

    max_cost: float | None = None
    prices: Mapping[str, ModelCost] = field(default_factory=dict)
    max_reruns: int | None = None


RETRY_DEFAULTS: Mapping[str, Any] = {
    "retry_on_error": 10,
    "continue_on_fail": True,
    "attempt_timeout": 600,
}
"""The study's defaults for a flaky endpoint, each overridden by its option: a sample
whose call fails for good reruns (up to 10 times) while its task's other samples run
on, and a call unanswered after 600 s (a hang) is abandoned and retried. None costs a
healthy provider a call (docs/study.md, "Errors and retries")."""

Key = tuple[str, str, str]
"""A cell's (model, task name, task arguments), as its logs record them."""


def run_options(study: Study) -> dict[str, Any]:
    """The keyword arguments the study hands to :func:`inspect_ai.eval_set`: its own
    options over :data:`RETRY_DEFAULTS`."""
    options = {**RETRY_DEFAULTS, **study.options}
    # the samples in flight set the peak memory (_concurrency)
    options.setdefault("max_tasks", tasks_at_once(study))
    if study.shard is not None:
        # the other shards' logs share the directory and are not part of this eval set
        options.setdefault("log_dir_allow_dirty", True)
    # Inspect's control server holds SIGINT and SIGTERM back while it serves, so an
    # interrupted study would run on; without it a signal cancels the run at once.
    options.setdefault("ctl_server", False)
    return options


def retry_summary(options: Mapping[str, Any]) -> str:
    """The dry run's paragraph on errors: what a study does when calls fail (``options``
    as :func:`run_options` makes them)."""
    retries, timeout = options.get("max_retries"), options.get("attempt_timeout")
    reruns, attempts = options.get("retry_on_error") or 0, options.get("retry_attempts", 10)
    calls = "without limit" if retries is None else f"up to {retries} times"
    hang = (
        "a call that hangs is waited for (--attempt-timeout S abandons it)"
        if timeout is None
        else f"a call unanswered after {timeout} s is abandoned and retried (--attempt-timeout)"
    )
    rerun = f"reruns from its first call, up to {reruns} times" if reruns else "is not rerun"
    on = (
        "its task's other samples running on (--no-continue-on-fail stops them)"
        if options.get("continue_on_fail")
        else "its task stopping, with every sample in flight (--continue-on-fail runs them on)"
    )
    return (
        f"Errors: Inspect retries a failed call {calls}, with backoff, when the provider calls its error "
        f"transient (--max-retries); {hang}; a sample whose call fails for good {rerun} (--retry-on-error), "
        f"{on}; a task left with an errored sample is retried up to {attempts} times (--retry-attempts), reusing "
        f"its finished samples; after {GIVE_UP_AFTER} sample attempts in a row fail with no call answered, the "
        "study gives up. A healthy provider makes no extra call; a rerun repeats the sample's calls (docs/study.md, "
        "Errors and retries)."
    )


def run_study(
    study: Study,
    *,
    display: DisplayType = "none",
    retry_attempts: int | None = None,
    progress: bool | None = None,
    resume: str | None = None,
    limits: Limits | None = None,
) -> tuple[bool, list[EvalLog]]:
    """Run (or resume) the study as one Inspect eval set; returns eval_set's result.

    ``progress``: print a line per finished task and per failure, and counts of the
    samples done; by default with the display ``none`` or when stdout is no terminal.
    ``resume`` is the command a second interrupt prints before it exits.

    Raises:
        KeyboardInterrupt: when the run was interrupted (Ctrl-C, or SIGTERM/SIGHUP
            while :func:`interrupts_as_keyboard` is active).
        StudyStopped: when the study stopped itself (it gave up, or a limit ran out).
    """
    roles: dict[str, Any] = dict(study.model_roles or {})
    if study.auditor:
        roles[AUDITOR_ROLE] = study.auditor
    options = run_options(study)
    if retry_attempts is not None:
        options["retry_attempts"] = retry_attempts
    model_roles: ModelRoles | None = roles or None
    if progress is None:
        progress = display == "none" or not sys.stdout.isatty()
    global _WATCH
    _register_hooks()
    _WATCH = watch = _Watch(study, Progress() if progress else None, resume, limits or Limits())
    console = rich.get_console()
    quiet = console.quiet
    # Inspect makes the console quiet for display "none" only when its display first
    # starts in a process: a second run in the process (the demo's second eval set)
    # would print every task's result panel, and the hooks' banner, without this.
    console.quiet = quiet or display == "none"
    watch.start()
    try:
        result = eval_set(
            [spec.task() for spec in study.tasks],
            log_dir=study.log_dir,
            model=list(study.models),
            model_roles=model_roles,
            display=display,
            **options,
        )
    except KeyboardInterrupt:
        if watch.stopping is None or watch.signal is not None:
            raise
        result = (False, [])
    finally:
        watch.stop()
        watch.give_back_sigint()
        _WATCH = None
        console.quiet = quiet
    if watch.signal is not None:  # a SIGTERM or SIGHUP that cancelled the run
        raise KeyboardInterrupt
    if watch.stopping is not None:
        raise StudyStopped(watch.kind, watch.closing())
    return result


_RETRY_ERROR = re.compile(r"RetryError[\[(]<Future .* raised (\w+)>[\])]")
_REPR = re.compile(r"(\w+)\((['\"])(.*)\2\)")
MESSAGE_CHARS = 240
"""A provider's message is cut to this many characters on a line of the study's."""


def error_line(message: str, events: Sequence[Event] = ()) -> str:
    """A sample's error as one line for the study's output: the first line of its
    message (``BadRequestError('Error code: 400 - …')`` read as ``BadRequestError:
    Error code: 400 - …``). Where Inspect's retries of a call ran out, the message is
    tenacity's bare ``RetryError(<Future … raised X>)``: the provider's own error is
    then the failed call's, in the sample's ``events`` when they are given (``X:
    Connection error. (retries ran out)``), else ``X (retries ran out)``."""
    if retry := _RETRY_ERROR.fullmatch(message.strip()):
        kind = retry[1]
        errors = [event.error for event in events if isinstance(event, ModelEvent) and event.error]
        # the calls the failure cancelled (an audit's other batches) say so; the failed one is the cause
        cause = ([error for error in errors if "cancelled" not in error] or errors or [kind])[-1]
        message = f"{cause if cause.startswith(kind) else f'{kind}: {cause}'} (retries ran out)"
    first = next((line.strip() for line in message.splitlines() if line.strip()), "unknown error")
    if match := _REPR.match(first):
        first = f"{match[1]}: {match[3]}{first[match.end() :]}"
    return first if len(first) <= MESSAGE_CHARS else first[: MESSAGE_CHARS - 1] + "…"


@dataclass
class Progress:
    """When the next count of the samples done is due: every ``PROGRESS_EVERY``
    seconds at first, then a ``PROGRESS_GROWTH`` share of the time run so far, at
    most ``PROGRESS_EVERY_MAX``."""

    started: float = field(default_factory=time.monotonic)
    last: float = field(default_factory=time.monotonic)

    def interval(self, now: float) -> float:
        return min(PROGRESS_EVERY_MAX, max(PROGRESS_EVERY, PROGRESS_GROWTH * (now - self.started)))

    def due(self, now: float) -> bool:
        if now - self.last < self.interval(now):
            return False
        self.last = now
        return True


def _key_of(model: str, task: str, args: Mapping[str, Any]) -> Key:
    return (model, task.rsplit("/", 1)[-1], json.dumps(args, sort_keys=True))


class _Watch:
    """The running study, as its hook sees it: progress counts, failures and the interrupt.

    Samples count as done once per (cell, sample id, epoch) when they end without an
    error, or all of a cell's when its log succeeds; those finished by earlier runs (a
    resume's) count from the start. So the count never exceeds the study's samples,
    whatever the errors, reruns and eval-set retries.
    """

    def __init__(self, study: Study, progress: Progress | None, resume: str | None, limits: Limits) -> None:
        self.progress = progress
        self.resume = resume
        self.limits = limits
        self.cells = {cell.key: cell for cell in study.cells}
        self.tasks_total = len(study.cells)
        self.samples_total = sum(cell.spec.records for cell in study.cells)
        self.complete: set[Key] = set()
        self.finished: dict[Key, set[tuple[str, int]]] = {key: set() for key in self.cells}
        self.earlier = 0
        if progress is not None:  # a resume: what earlier runs finished counts as done
            accounting = account(study)
            self.complete = {cell.key for cell in accounting.done}
            for key, samples in accounting.finished.items():
                self.finished[key] |= samples
            self.earlier = self.samples_done()
        self.tasks: dict[str, Key] = {}
        """The cell of each task attempt (Inspect's eval id) of this run."""
        self.continue_on_fail = bool(run_options(study).get("continue_on_fail"))
        self.errors: dict[str, tuple[int, str]] = {}
        """Each task attempt's errored samples: how many, and the first one's message."""
        self.failures: set[tuple[Key, str]] = set()
        self.calls_retried: Counter[str] = Counter()
        self.reruns = 0
        self.last_error: str | None = None
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.thread: threading.Thread | None = None
        self.failing = 0
        """Sample attempts failed since a model call last answered."""
        self.stopping: str | None = None
        """Why the study stops itself, once it does; ``kind`` says which limit."""
        self.kind = ""
        self.signal: signal.Signals | None = None
        """The SIGTERM or SIGHUP that cancelled the run, if one did."""
        self.failed_attempts = 0
        """Sample attempts that failed (not those cancelled): each is rerun, by
        ``--retry-on-error`` or an eval-set retry, or is the sample's last."""
        self.max_reruns = limits.max_reruns if limits.max_reruns is not None else default_reruns(self.samples_total)
        self.spent = 0.0
        """Dollars of the calls answered in this run, at the study's prices."""
        self.loop: asyncio.AbstractEventLoop | None = None
        self.group: TaskGroup | None = None
        """The eval's own task group (Inspect's ``background_task_group``), once the run starts."""
        self.interrupts = 0
        self.inner: Callable[[int, FrameType | None], Any] | None = None

    def samples_done(self) -> int:
        return sum(
            self.cells[key].spec.records if key in self.complete else min(len(samples), self.cells[key].spec.records)
            for key, samples in self.finished.items()
        )

    def counts(self) -> str:
        earlier = f" ({self.earlier:,} by earlier runs)" if self.earlier else ""
        return (
            f"{len(self.complete)}/{self.tasks_total} tasks, {self.samples_done():,}/{self.samples_total:,} samples "
            f"done{earlier}"
        )

    def retried(self) -> str:
        """The retries so far, when there were any: calls by cause, sample reruns."""
        if not self.calls_retried and not self.reruns:
            return ""
        calls = sum(self.calls_retried.values())
        causes = ", ".join(f"{cause} x{n:,}" for cause, n in self.calls_retried.most_common(3))
        parts = [f"{calls:,} calls retried ({causes})"] if calls else []
        if self.reruns:
            parts.append(f"{self.reruns:,} samples rerun")
        last = f"; last error: {self.last_error}" if self.last_error else ""
        return f"; so far {' and '.join(parts)}{last}"

    def say(self, line: str) -> None:
        if self.progress is not None and not self.interrupts:
            # one write per line: the counts come from a thread of their own
            sys.stdout.write(f"study: {line}\n")
            sys.stdout.flush()

    def start(self) -> None:
        """Print the count when due, from a thread of its own: a study whose calls all
        wait on retries finishes no sample that could trigger it."""
        if self.progress is None:
            return
        self.thread = threading.Thread(target=self._tick, name="spatialstale-progress", daemon=True)
        self.thread.start()

    def _tick(self) -> None:
        assert self.progress is not None
        while not self.stopped.wait(min(1.0, max(PROGRESS_EVERY, 0.05))):
            with self.lock:
                if self.progress.due(time.monotonic()):
                    self.say(self.counts() + self.retried())

    def stop(self) -> None:
        """Stop the counts; a last one when errors were retried, so the run's retries
        are told however short it was."""
        self.stopped.set()
        if self.thread is not None:
            self.thread.join()
            self.thread = None
            if self.retried():
                self.say(self.counts() + self.retried())

    def task_started(self, eval_id: str, key: Key) -> None:
        if key in self.cells:
            self.tasks[eval_id] = key

    def sample_done(self, eval_id: str, sample_id: str | int, epoch: int, error: str | None) -> None:
        key = self.tasks.get(eval_id)
        if key is None:
            return
        with self.lock:
            if error is None:
                self.finished[key].add((str(sample_id), epoch))
            elif not _cancelled(error):  # a cancelled sample is no error of its task's
                errored, first = self.errors.get(eval_id, (0, error))
                self.errors[eval_id] = (errored + 1, first)
                self.last_error = error
                if not errored and not self.continue_on_fail:  # the task stops here: no task end follows
                    self.failed(key, f"failed: sample {sample_id}: ", error)
            if self.progress is not None and self.progress.due(time.monotonic()):
                self.say(self.counts() + self.retried())

    def failed(self, key: Key, what: str, message: str) -> None:
        """A line for a failed task, once per cell and message (an eval-set retry that
        fails as the attempt before says nothing new), at most ``FAILURES_SHOWN`` in a
        run; the closing summary counts them all."""
        if (key, message) in self.failures:
            return
        self.failures.add((key, message))
        if len(self.failures) <= FAILURES_SHOWN:
            self.say(f"{self.cells[key].name}: {what}{message}")
        elif len(self.failures) == FAILURES_SHOWN + 1:
            self.say(f"more than {FAILURES_SHOWN} failures: the next are not shown (the closing lines count them)")

    def task_done(self, eval_id: str, log: EvalLog) -> None:
        key = self.tasks.get(eval_id) or _key_of(log.eval.model, log.eval.task, log.eval.task_args_passed)
        if key not in self.cells:
            return
        with self.lock:
            if log.status == "success":
                self.complete.add(key)
                self.say(f"{self.cells[key].name}: success; {self.counts()}")
                return
            errored, first = self.errors.get(eval_id, (0, None))
            message = first or (error_line(log.error.message) if log.error else log.status)
            samples = f" ({errored} of {self.cells[key].spec.records} samples errored)" if errored else ""
            self.failed(key, f"failed{samples}: ", message)

    def call_retried(self, data: ModelRetry) -> None:
        cause = f"HTTP {data.status_code}" if data.status_code else (data.exception_type or "error")
        with self.lock:
            self.calls_retried[cause] += 1

    def attempt_failed(self, error: str, will_retry: bool) -> None:
        """A sample attempt ended in an error; the study gives up after ``GIVE_UP_AFTER``
        of them in a row with no model call answered in between, and stops once they
        exceed its reruns. An attempt cancelled (the study stopping, an interrupt) is no
        failure of the provider's and counts toward neither."""
        with self.lock:
            if self.stopping is not None or self.signal is not None or self.interrupts or _cancelled(error):
                return
            self.reruns += will_retry
            self.last_error = error
            self.failing += 1
            self.failed_attempts += 1
            if self.failing >= GIVE_UP_AFTER:
                why = f"{self.failing} sample attempts in a row failed, no model call answered in between: {error}"
                self._halt("gave up", why, f"giving up: {why}")
            elif self.failed_attempts > self.max_reruns:
                given = "--max-reruns" if self.limits.max_reruns is not None else "the default --max-reruns"
                why = (
                    f"{self.failed_attempts:,} sample attempts failed, more than the {self.max_reruns:,} reruns "
                    f"allowed ({given}); last error: {error}"
                )
                self._halt("reruns", why, f"stopping: {why}")

    def call_answered(self, model: str, cost: float | None) -> None:
        """A model call answered, costing ``cost`` dollars (None: no price is known);
        past the budget the study stops."""
        with self.lock:
            self.failing = 0
            if cost is None:
                return
            self.spent += cost
            budget = self.limits.max_cost
            if budget is not None and self.spent >= budget and self.stopping is None:
                why = f"spent ${self.spent:,.2f} of the ${budget:,.2f} budget (--max-cost)"
                self._halt("budget", why, f"stopping: {why}; cancelling the samples in flight")

    def closing(self) -> str:
        """Why the study stopped, as its closing lines say it: for the budget, all that
        the run spent, the calls that answered after it was reached included."""
        if self.kind == "budget" and self.limits.max_cost is not None:
            return f"spent ${self.spent:,.2f} of the ${self.limits.max_cost:,.2f} budget (--max-cost)"
        return self.stopping or ""

    def price(self, model: str) -> ModelCost | None:
        return self.limits.prices.get(model)

    def run_started(self) -> None:
        """Hold the eval's loop and task group, through which the study stops itself."""
        self.loop = asyncio.get_running_loop()
        self.group = background_task_group()
        self.take_sigint()

    def _halt(self, kind: str, why: str, line: str) -> None:
        """Stop the study (the lock held): say why, then cancel the run."""
        self.stopping, self.kind = why, kind
        self.say(line)
        rich.get_console().quiet = True  # Inspect's retry hints and closing verdict
        self._cancel_run()

    def _cancel_run(self) -> None:
        """Cancel the eval's task group on its loop: Inspect cancels the samples in
        flight, starts no other and writes its logs as cancelled (as on Ctrl-C)."""
        group, loop = self.group, self.loop
        if group is None or loop is None:
            return
        with suppress(RuntimeError):  # the loop has closed: the run is over
            loop.call_soon_threadsafe(group.cancel_scope.cancel)

    def on_signal(self, number: int) -> bool:
        """SIGTERM or SIGHUP while the run is running: the first cancels it (as Ctrl-C
        does), a second exits at once. False when no run is running to cancel."""
        sig = signal.Signals(number)
        if self.group is None or self.loop is None:
            return False
        self.interrupts += 1
        if self.interrupts > 1:
            self._exit_at_once(sig)
        self.signal = sig
        _announce(sig)
        self._cancel_run()
        return True

    def _exit_at_once(self, sig: signal.Signals) -> None:
        resume = f"; resume with: {self.resume}" if self.resume else ""
        print(f"study interrupted ({sig.name}): stopped at once, the samples in flight not saved{resume}", flush=True)
        sys.stderr.flush()
        os._exit(SIGNAL_EXIT[sig])

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
            _announce(signal.SIGINT)
            if self.inner is not None:
                self.inner(number, frame)
            return
        self._exit_at_once(signal.SIGINT)


def _announce(sig: signal.Signals) -> None:
    print(
        f"study: interrupted ({sig.name}): cancelling the samples in flight and saving their logs "
        "(interrupt again to stop at once)",
        flush=True,
    )
    rich.get_console().quiet = True  # Inspect's retry hints and closing verdict


def _cancelled(error: str) -> bool:
    """Whether a sample attempt's error is its cancellation (the run being cancelled),
    not a failure."""
    return error.startswith(("CancelledError", "Cancelled"))


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
            _WATCH.run_started()

    async def on_run_end(self, data: RunEnd) -> None:
        if _WATCH is not None:
            _WATCH.give_back_sigint()

    async def on_task_start(self, data: TaskStart) -> None:
        if _WATCH is not None:
            _WATCH.task_started(data.eval_id, _key_of(data.spec.model, data.spec.task, data.spec.task_args_passed))

    async def on_task_end(self, data: TaskEnd) -> None:
        if _WATCH is not None:
            _WATCH.task_done(data.eval_id, data.log)

    async def on_sample_end(self, data: SampleEnd) -> None:
        if _WATCH is not None:
            sample = data.sample
            error = error_line(sample.error.message, sample.events) if sample.error else None
            _WATCH.sample_done(data.eval_id, sample.id, sample.epoch, error)

    async def on_sample_attempt_end(self, data: SampleAttemptEnd) -> None:
        if _WATCH is not None and data.error is not None:
            _WATCH.attempt_failed(error_line(data.error.message), data.will_retry)

    async def on_model_usage(self, data: ModelUsageData) -> None:
        if _WATCH is not None:
            price = _WATCH.price(data.model_name)
            cost = None if price is None else compute_model_cost(price, data.usage)
            _WATCH.call_answered(data.model_name, cost)

    async def on_model_retry(self, data: ModelRetry) -> None:
        if _WATCH is not None:
            _WATCH.call_retried(data)


SIGNAL_EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
"""Shell convention: 128 + the signal's number."""


@contextmanager
def interrupts_as_keyboard() -> Iterator[list[signal.Signals]]:
    """SIGTERM and SIGHUP act as Ctrl-C does, so Inspect cancels the running samples
    and writes their logs as ``cancelled`` instead of the process dying mid-write:
    while a study runs they cancel its run (:meth:`_Watch.on_signal`), before it runs
    they raise ``KeyboardInterrupt``. Whether SIGINT is ignored (a background job) makes
    no difference. Yields the list of SIGTERM/SIGHUP signals received."""
    received: list[signal.Signals] = []

    def handler(number: int, frame: FrameType | None) -> None:
        if not received:
            received.append(signal.Signals(number))
        watch = _WATCH
        if watch is not None and watch.on_signal(number):
            return
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield received
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


class Missing(NamedTuple):
    """A cell without a successful log: the state of its newest log (``no log`` when
    none) and why it is not done, in one line."""

    cell: Cell
    state: str
    cause: str


STATE_CAUSES = {
    "no log": "not run",
    "started": "stopped while running (the process was killed)",
    "cancelled": "cancelled (interrupted)",
}
"""Why a cell is missing, by the state of its newest log, where no error says it."""


@dataclass(frozen=True)
class Accounting:
    """Which cells of a study have a successful log in its log directory."""

    done: tuple[Cell, ...]
    missing: tuple[Missing, ...]
    superseded: int
    """Logs of done cells that a later run replaced (cancelled, error or stopped)."""
    finished: Mapping[Key, frozenset[tuple[str, int]]] = field(default_factory=dict)
    """The samples (id, epoch) that ended without an error in the logs of missing
    cells: a resume reuses them."""
    succeeded: Mapping[Key, EvalLogInfo] = field(default_factory=dict)
    """The newest successful log of each done cell (the one the report reads)."""

    @property
    def complete(self) -> bool:
        return not self.missing


def account(study: Study) -> Accounting:
    """Pair every cell of ``study`` with the logs in its log directory.

    A cell is done when some log of it has status ``success``. Logs of the same cell
    that were cancelled, errored or never finished (a killed process leaves
    ``started``) and then completed by a resume are counted as superseded, never as
    missing work. Logs of other studies or shards in the directory are ignored. A
    missing cell's cause is its newest log's error (its first errored sample's,
    :func:`error_line`), else what its state says (:data:`STATE_CAUSES`).
    """
    logs: dict[Key, list[tuple[str, str, EvalLogInfo, EvalLog]]] = {}
    try:
        infos = list_eval_logs(study.log_dir)
    except FileNotFoundError:
        infos = []
    for info in infos:
        try:
            log = read_eval_log(info, header_only=True)
        except Exception:  # an unreadable file is no cell's log
            continue
        key = _key_of(log.eval.model, log.eval.task, log.eval.task_args_passed)
        logs.setdefault(key, []).append((log.eval.created, log.status, info, log))
    done: list[Cell] = []
    missing: list[Missing] = []
    finished: dict[Key, frozenset[tuple[str, int]]] = {}
    succeeded: dict[Key, EvalLogInfo] = {}
    superseded = 0
    for cell in study.cells:
        attempts = sorted(logs.get(cell.key, []), key=lambda attempt: attempt[0])
        if any(status == "success" for _, status, _, _ in attempts):
            done.append(cell)
            superseded += sum(status != "success" for _, status, _, _ in attempts)
            succeeded[cell.key] = [info for _, status, info, _ in attempts if status == "success"][-1]
            continue
        samples: set[tuple[str, int]] = set()
        for _, _, info, _ in attempts:
            samples |= {(str(s.id), s.epoch) for s in sample_summaries(info) if s.error is None}
        finished[cell.key] = frozenset(samples)
        if not attempts:
            missing.append(Missing(cell, "no log", STATE_CAUSES["no log"]))
            continue
        _, status, info, log = attempts[-1]
        missing.append(Missing(cell, status, _cause(status, info, log)))
    return Accounting(tuple(done), tuple(missing), superseded, finished, succeeded)


def sample_summaries(info: EvalLogInfo) -> list[EvalSampleSummary]:
    try:
        return list(read_eval_log_sample_summaries(info))
    except Exception:  # a log a killed process left half written holds none to read
        return []


def _cause(status: str, info: EvalLogInfo, log: EvalLog) -> str:
    if status != "error":
        return STATE_CAUSES.get(status, status)
    errored = next((s for s in sample_summaries(info) if s.error), None)
    if errored is None or errored.error is None:
        return error_line(log.error.message) if log.error else "error"
    events: Sequence[Event] = ()
    if _RETRY_ERROR.fullmatch(errored.error.strip()):
        try:  # the provider's own message is in the failed call's model event
            events = read_eval_log_sample(info, errored.id, errored.epoch).events
        except Exception:
            events = ()
    return error_line(errored.error, events)
