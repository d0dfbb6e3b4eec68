"""A local model for the suite: a GGUF served by llama.cpp for Inspect's ``llama-cpp-python/`` provider.

A tool beside the product, not a part of it: the tasks know nothing of it, and any
llama.cpp server reached through Inspect's provider gives the same logs. It adds only
what that provider does not do: starting the server (with the request rewrites the
suite needs), waiting until it answers and stopping it (``python -m
spatialstale.llamacpp``, ``llama_server``). The model calls are Inspect's.
"""

from ._server import (
    DEFAULT_MODEL_NAME,
    LLAMA_PYTHON_ENV,
    LlamaServerError,
    RunningServer,
    default_server_python,
    find_gguf,
    llama_server,
)

__all__ = [
    "DEFAULT_MODEL_NAME",
    "LLAMA_PYTHON_ENV",
    "LlamaServerError",
    "RunningServer",
    "default_server_python",
    "find_gguf",
    "llama_server",
]
