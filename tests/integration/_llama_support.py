"""Where the llama.cpp server's interpreter and model are, why a test must skip, and the
model a test reaches the server with (Inspect's own ``llama-cpp-python/`` provider)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from functools import cache

from inspect_ai.model import GenerateConfig, Model, ResponseSchema, get_model

from spatialstale.llamacpp import DEFAULT_MODEL_NAME, LLAMA_PYTHON_ENV, LlamaServerError, find_gguf

LLAMA_PYTHON = os.environ.get(LLAMA_PYTHON_ENV) or sys.executable
"""The interpreter with ``llama-cpp-python[server]``: ``$SPATIALSTALE_LLAMA_PYTHON`` or this one."""

MAX_RETRIES = 3
"""Retries of a failed request: Inspect retries without end by default, so a server that
died mid-test (a crash in llama.cpp) would hold the test forever."""


@cache
def llama_cpp_missing() -> str | None:
    """Why ``LLAMA_PYTHON`` cannot run the server, or None when it can."""
    try:
        probe = subprocess.run(
            [LLAMA_PYTHON, "-c", "import llama_cpp.server.app"],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tempfile.gettempdir(),
        )
    except OSError as error:
        return f"cannot run {LLAMA_PYTHON}: {error}"
    if probe.returncode != 0:
        return (
            f"llama_cpp (llama-cpp-python[server]) is not importable by {LLAMA_PYTHON}; "
            f"install it there or set {LLAMA_PYTHON_ENV} to an interpreter that has it"
        )
    return None


@cache
def local_llm_missing() -> str | None:
    """Why no local LLM can be served here (no llama_cpp or no GGUF), or None."""
    reason = llama_cpp_missing()
    if reason:
        return reason
    try:
        find_gguf(LLAMA_PYTHON)
    except LlamaServerError as error:
        return str(error)
    return None


def smollm2(base_url: str, max_tokens: int, response_schema: ResponseSchema | None = None) -> Model:
    """SmolLM2 at ``base_url`` through Inspect's ``llama-cpp-python/`` provider: greedy, one
    request at a time (llama.cpp answers one at a time, and consecutive calls then reuse
    its cached prompt prefix)."""
    return get_model(
        f"llama-cpp-python/{DEFAULT_MODEL_NAME}",
        base_url=base_url,
        config=GenerateConfig(
            temperature=0.0,
            max_tokens=max_tokens,
            max_connections=1,
            max_retries=MAX_RETRIES,
            response_schema=response_schema,
        ),
        memoize=False,
    )
