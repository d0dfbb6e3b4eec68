"""Where the llama.cpp server's interpreter and model are, and why a test must skip."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from functools import cache

from spatialstale.agents.llama_server import LLAMA_PYTHON_ENV, LlamaServerError, find_gguf

LLAMA_PYTHON = os.environ.get(LLAMA_PYTHON_ENV) or sys.executable
"""The interpreter with ``llama-cpp-python[server]``: ``$SPATIALSTALE_LLAMA_PYTHON`` or this one."""


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
