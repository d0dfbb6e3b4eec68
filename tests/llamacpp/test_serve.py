"""The server-side wrapper's request rewrites: content parts joined, json_schema
response formats made llama-cpp-python's.

Pure functions and the ASGI middleware, without llama_cpp; the slow SmolLM2 tests
(tests/integration) send the suite's real requests to the real server.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from spatialstale.llamacpp._serve import RewriteChatRequests, joined_content, json_object_format, rewrite_request

SCHEMA = {"type": "object", "properties": {"action": {"type": "string"}}, "required": ["action"]}


def test_json_schema_becomes_json_object_with_the_schema() -> None:
    openai = {"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA, "strict": True}}
    assert json_object_format(openai) == {"type": "json_object", "schema": SCHEMA}
    assert json_object_format({"type": "json_schema", "json_schema": {"name": "a"}}) == {"type": "json_object"}


def test_other_formats_are_left_to_the_server() -> None:
    for unchanged in ({"type": "text"}, {"type": "json_object", "schema": SCHEMA}, {"type": "xml"}, None, "json"):
        assert json_object_format(unchanged) is unchanged


def test_text_parts_are_joined_with_new_lines_and_images_dropped() -> None:
    parts = [
        {"type": "text", "text": "Grid:"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        {"type": "text", "text": "\n[mem_000] SAFE at (0,0)"},
    ]
    assert joined_content(parts) == "Grid:\n\n[mem_000] SAFE at (0,0)"
    assert joined_content([]) == ""
    for unchanged in ("text", None):
        assert joined_content(unchanged) is unchanged


def test_only_a_request_with_parts_or_json_schema_is_rewritten() -> None:
    request = {"model": "m", "messages": [], "response_format": {"type": "json_schema", "json_schema": {"schema": {}}}}
    assert json.loads(rewrite_request(json.dumps(request).encode())) == request | {
        "response_format": {"type": "json_object", "schema": {}}
    }
    messages = [
        {"role": "system", "content": "Audit."},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"role": "assistant", "content": None, "tool_calls": []},
    ]
    assert json.loads(rewrite_request(json.dumps({"messages": messages}).encode()))["messages"] == [
        messages[0],
        {"role": "user", "content": "a\nb"},
        messages[2],
    ]
    for body in (
        b'{"model": "m"}',
        b'{"response_format": {"type": "text"}}',
        b'{"messages": [{"role": "user", "content": "as it came"}]}',
        b"not json",
        b"[1, 2]",
    ):
        assert rewrite_request(body) is body


def run_middleware(path: str, chunks: list[bytes]) -> tuple[bytes, dict[bytes, bytes]]:
    """What an app behind the middleware reads from a POST to ``path`` sent in ``chunks``."""
    seen: dict[str, Any] = {}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        seen["body"], seen["headers"] = body, dict(scope["headers"])

    messages = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1} for i, chunk in enumerate(chunks)
    ]

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    async def send(message: Any) -> None:
        pass

    length = str(sum(len(c) for c in chunks)).encode()
    scope = {"type": "http", "method": "POST", "path": path, "headers": [(b"content-length", length)]}
    asyncio.run(RewriteChatRequests(app)(scope, receive, send))
    return seen["body"], seen["headers"]


def test_the_middleware_rewrites_chat_requests_and_fixes_their_length() -> None:
    request = {"messages": [], "response_format": {"type": "json_schema", "json_schema": {"schema": SCHEMA}}}
    raw = json.dumps(request).encode()
    body, headers = run_middleware("/v1/chat/completions", [raw[:10], raw[10:]])
    assert json.loads(body)["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert headers[b"content-length"] == str(len(body)).encode()
    untouched, _ = run_middleware("/v1/embeddings", [raw])
    assert untouched == raw
