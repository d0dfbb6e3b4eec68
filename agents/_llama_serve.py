"""Run ``python -m llama_cpp.server`` for the launcher, in the server's own interpreter.

Run as a script by the interpreter that has ``llama-cpp-python[server]``; it needs
only the standard library and ``llama_cpp``, never this package. Usage::

    python -c "import runpy, sys; sys.argv.pop(0); runpy.run_path(sys.argv[0], run_name='__main__')" \\
        _llama_serve.py PARENT_PID [llama_cpp.server options]

It adds two things to the plain server:

- **It dies with the launcher.** On Linux the kernel sends it SIGKILL when its parent
  (the launcher, ``PARENT_PID``) exits, however it exits (``PR_SET_PDEATHSIG``). If
  the parent is gone before that is set up, it exits at once. Elsewhere the launcher's
  watchdog (``_llama_watchdog.py``) stops it.
- **It honours OpenAI's ``response_format`` of type ``json_schema``.** llama-cpp-python
  0.3 accepts only ``text`` and ``json_object`` (optionally with a ``schema``, which it
  compiles into a grammar) and answers ``json_schema`` with HTTP 422. Inspect's
  ``openai-api`` and ``vllm`` providers send a ``ResponseSchema`` as
  ``{"type": "json_schema", "json_schema": {"name": ..., "schema": {...}}}``; an ASGI
  wrapper around the server's app rewrites it to ``{"type": "json_object", "schema":
  {...}}`` before the server reads the request, so the answer is grammar-constrained.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import runpy
import signal
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the server's interpreter may be older than this package's
    from collections.abc import Awaitable, Callable, MutableMapping

    Scope = MutableMapping[str, Any]
    Message = MutableMapping[str, Any]
    Receive = Callable[[], Awaitable[Message]]
    Send = Callable[[Message], Awaitable[None]]
    ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

PR_SET_PDEATHSIG = 1
"""From <linux/prctl.h>."""

REWRITTEN_PATHS = ("/v1/chat/completions", "/v1/completions")


def die_with_parent(parent_pid: int) -> None:
    """Have the kernel SIGKILL this process when ``parent_pid``, its parent, exits (Linux).

    The signal is tied to the thread that started this process: the launcher starts the
    server from the thread that also stops it. Checking the parent afterwards closes the
    window in which the parent died before the request was made.
    """
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"prctl(PR_SET_PDEATHSIG) failed: {os.strerror(errno)}")
    if os.getppid() != parent_pid:
        os._exit(1)


def json_object_format(response_format: Any) -> Any:
    """``response_format`` as llama-cpp-python understands it.

    ``{"type": "json_schema", "json_schema": {"schema": S, ...}}`` becomes
    ``{"type": "json_object", "schema": S}`` (a plain ``json_object`` without a schema);
    anything else is returned unchanged, for the server to accept or refuse.
    """
    if not isinstance(response_format, dict) or response_format.get("type") != "json_schema":
        return response_format
    spec = response_format.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, dict) else None
    return {"type": "json_object", "schema": schema} if isinstance(schema, dict) else {"type": "json_object"}


def rewrite_request(body: bytes) -> bytes:
    """A completion request's JSON body with its ``response_format`` rewritten; other bodies unchanged."""
    try:
        request = json.loads(body)
    except ValueError:
        return body
    if not isinstance(request, dict) or "response_format" not in request:
        return body
    rewritten = json_object_format(request["response_format"])
    if rewritten is request["response_format"]:
        return body
    return json.dumps({**request, "response_format": rewritten}).encode()


class JsonSchemaResponseFormat:
    """ASGI middleware: rewrite ``json_schema`` response formats of completion requests."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST" or scope.get("path") not in REWRITTEN_PATHS:
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                await self.app(scope, _replay([message], receive), send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = rewrite_request(b"".join(chunks))
        headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        replay = _replay([{"type": "http.request", "body": body, "more_body": False}], receive)
        await self.app({**scope, "headers": headers}, replay, send)


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return replay


def main(argv: list[str]) -> None:
    """Run ``llama_cpp.server``'s ``__main__`` with the server options in ``argv[2:]``."""
    die_with_parent(int(argv[1]))
    app = importlib.import_module("llama_cpp.server.app")
    create_app = app.create_app

    def create_wrapped_app(*args: Any, **kwargs: Any) -> JsonSchemaResponseFormat:
        return JsonSchemaResponseFormat(create_app(*args, **kwargs))

    app.create_app = create_wrapped_app  # type: ignore[attr-defined]  # read by llama_cpp.server.__main__
    sys.argv = [argv[0], *argv[2:]]
    runpy.run_module(
        "llama_cpp.server",  # inspect-evals-lint: ignore[host_code_execution] -- a fixed module; argv is the user's
        run_name="__main__",
        alter_sys=True,
    )


if __name__ == "__main__":
    main(sys.argv)
