"""Running a study: one Inspect eval set, interrupts, and what is done afterwards.

Running the same study again into the same log directory completes only what is
missing: eval_set pairs every task with its log by a hash of the task, its arguments
and the model, reuses finished logs and finished samples, and runs the rest. After a
run, :func:`account` reads the log directory and says which (model, task) cells are
done and which are missing; logs that a resume superseded do not count as missing.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any

from inspect_ai import eval_set
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log
from inspect_ai.model import ModelRoles
from inspect_ai.util import DisplayType

from spatialstale.solvers import AUDITOR_ROLE

from ._matrix import Cell, Study


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
