"""The llama.cpp server the real-LLM tests of this folder share (one per test module)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from spatialstale.agents.llama_server import llama_server, new_api_key

from ._llama_support import LLAMA_PYTHON, local_llm_missing


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, str]]:
    """A llama.cpp server of the installed GGUF model for one test module: its base URL
    and API key. Skips the module when ``local_llm_missing`` says why it cannot run."""
    reason = local_llm_missing()
    if reason:
        pytest.skip(reason)
    api_key = new_api_key()
    with llama_server(server_python=LLAMA_PYTHON, api_key=api_key) as base_url:
        yield base_url, api_key
