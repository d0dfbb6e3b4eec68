"""The llama.cpp server the real-LLM tests of this folder share (one per test module)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from spatialstale.llamacpp import llama_server

from ._llama_support import LLAMA_PYTHON, local_llm_missing


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """A llama.cpp server of the installed GGUF model for one test module, by its base
    URL. Skips the module when ``local_llm_missing`` says why it cannot run."""
    reason = local_llm_missing()
    if reason:
        pytest.skip(reason)
    with llama_server(server_python=LLAMA_PYTHON) as running:
        yield running.base_url
