"""Run ``python -m llama_cpp.server`` for the launcher, in the server's own interpreter.

Run by path by the interpreter that has ``llama-cpp-python[server]``; it needs only the
standard library and ``llama_cpp``, never this package (that interpreter may not have
it). Its arguments are ``llama_cpp.server``'s own. It adds three things to the plain
server, each for a failure seen with llama-cpp-python 0.3.36 and Inspect 0.3.285:

- **It lives as long as its stdin.** The launcher holds the only write end of a pipe on
  the server's stdin; when that end closes (the launcher stopping the server, or dying
  by any signal, SIGKILL included) the read below returns and the server kills its own
  process group. ``llama_cpp.server`` never looks at its parent: a launcher killed by a
  CI timeout or the OOM killer would leave it holding its port and the model's memory.
- **Content parts become one string.** Inspect sends a user turn as a list of text
  parts (the observation, then what is asked, so that servers can cache the prefix).
  SmolLM2's GGUF chat template, like many text-only ones, adds ``message['content']`` to
  a string, which jinja2 refuses for a list: every call fails with HTTP 500 ("can only
  concatenate str (not "list") to str"). llama-cpp-python's built-in formats
  (``--chat_format chatml``, ...) are worse: they read a list as no content, and the
  model answers an empty turn. The text parts are joined with new lines, as vLLM does
  for string-only templates, and the GGUF's own template renders the prompt; image
  parts are dropped (a text-only model; a multimodal GGUF needs llama-cpp-python's
  ``--clip_model_path`` handlers, which read the parts themselves).
- **OpenAI's ``response_format`` of type ``json_schema`` is honoured.** llama-cpp-python
  accepts only ``text`` and ``json_object`` (optionally with a ``schema``, which it
  compiles into a grammar) and fails a ``json_schema`` request with HTTP 500 ("Input
  should be 'text' or 'json_object'"). Inspect's providers send a ``ResponseSchema``
  (``-T structured=true``) as ``{"type": "json_schema", "json_schema": {"name": ...,
  "schema": {...}}}``; it becomes ``{"type": "json_object", "schema": {...}}``, so the
  answer is grammar-constrained.

The two rewrites are an ASGI middleware wrapped around the server's app before it serves.
"""

from __future__ import annotations

import importlib
import json
import os
import runpy
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the server's interpreter may be older than this package's
    from collections.abc import Awaitable, Callable, MutableMapping

    Scope = MutableMapping[str, Any]
    Message = MutableMapping[str, Any]
    Receive = Callable[[], Awaitable[Message]]
    Send = Callable[[Message], Awaitable[None]]
    ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

REWRITTEN_PATHS = ("/v1/chat/completions", "/v1/completions")


def die_with_stdin() -> None:
    """Kill this process group when stdin reaches its end (the launcher closed it or died)."""

    def watch() -> None:
        # the raw descriptor: a daemon thread blocked in sys.stdin's buffer would hold
        # its lock when the interpreter exits, which Python reports as a fatal error
        while os.read(0, 4096):
            pass
        os.killpg(os.getpgrp(), signal.SIGKILL)

    threading.Thread(target=watch, name="die-with-stdin", daemon=True).start()


def joined_content(content: Any) -> Any:
    """A message's content as one string when it is a list of parts; otherwise unchanged."""
    if not isinstance(content, list):
        return content
    texts = [part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"]
    return "\n".join(str(text) for text in texts)


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
    """A chat request's JSON body with content parts joined and ``response_format``
    rewritten; a body with nothing to rewrite (or not JSON) is returned as it came."""
    try:
        request = json.loads(body)
    except ValueError:
        return body
    if not isinstance(request, dict):
        return body
    rewritten = dict(request)
    if isinstance(request.get("messages"), list):
        rewritten["messages"] = [
            {**m, "content": joined_content(m["content"])} if isinstance(m, dict) and "content" in m else m
            for m in request["messages"]
        ]
    if "response_format" in request:
        rewritten["response_format"] = json_object_format(request["response_format"])
    return body if rewritten == request else json.dumps(rewritten).encode()


class RewriteChatRequests:
    """ASGI middleware: ``rewrite_request`` on the body of every completion request."""

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
    """Run ``llama_cpp.server``'s ``__main__`` with the options ``argv[1:]``, its app behind the middleware."""
    die_with_stdin()
    app = importlib.import_module("llama_cpp.server.app")
    create_app = app.create_app

    def create_wrapped_app(*args: Any, **kwargs: Any) -> RewriteChatRequests:
        return RewriteChatRequests(create_app(*args, **kwargs))

    app.create_app = create_wrapped_app  # type: ignore[attr-defined]  # read by llama_cpp.server.__main__
    sys.argv = list(argv)
    runpy.run_module(
        "llama_cpp.server",  # inspect-evals-lint: ignore[host_code_execution] -- a fixed module; argv is the user's
        run_name="__main__",
        alter_sys=True,
    )


if __name__ == "__main__":
    main(sys.argv)
