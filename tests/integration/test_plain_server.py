"""The plain route of docs/models.md: llama.cpp's server started by hand, nothing of this
package on the server's side, reached through Inspect's own providers.

Both providers the docs name reach it: ``llama-cpp-python/`` through
``LLAMA_CPP_PYTHON_BASE_URL``, and ``openai-api/llama/`` through ``LLAMA_BASE_URL`` and
``LLAMA_API_KEY``; a plain prompt is answered. The suite's prompts are not: Inspect sends
each as several text parts, SmolLM2's chat template refuses them with HTTP 500, and the
sample errors. The same ``inspect eval`` command run through the launcher scores its
sample: what the launcher adds, measured. Skipped like the other SmolLM2 tests when
llama.cpp or the model is missing.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai.event import ModelEvent
from inspect_ai.log import read_eval_log
from inspect_ai.model import GenerateConfig, get_model

from spatialstale.llamacpp import find_gguf
from spatialstale.llamacpp._server import free_port

from ._llama_support import LLAMA_PYTHON, local_llm_missing

pytestmark = pytest.mark.slow

INSPECT = str(Path(sys.executable).with_name("inspect"))
TEMPLATE_REFUSES_PARTS = 'can only concatenate str (not "list") to str'


@pytest.fixture(scope="module")
def plain_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``python -m llama_cpp.server`` with SmolLM2's GGUF, as a user starts it; its base URL."""
    reason = local_llm_missing()
    if reason:
        pytest.skip(reason)
    port = free_port()
    gguf = find_gguf(LLAMA_PYTHON)
    log = tmp_path_factory.mktemp("plain") / "server.log"
    command = [LLAMA_PYTHON, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", "smollm2"]
    command += ["--n_ctx", "8192", "--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=log.parent)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=5):
                    break
            except OSError:
                time.sleep(0.25)
        yield base_url
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.parametrize(
    ("model", "env"),
    [
        ("llama-cpp-python/smollm2", {"LLAMA_CPP_PYTHON_BASE_URL": "{url}"}),
        ("openai-api/llama/smollm2", {"LLAMA_BASE_URL": "{url}", "LLAMA_API_KEY": "none"}),
    ],
)
def test_inspects_providers_reach_a_plain_server(
    plain_server: str, model: str, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(url=plain_server))
    config = GenerateConfig(temperature=0.0, max_tokens=16, max_retries=1)
    output = asyncio.run(get_model(model, config=config, memoize=False).generate("Say hello."))
    assert output.error is None and output.completion.strip(), output
    assert output.usage is not None and output.usage.input_tokens > 0


def detection_command(log_dir: Path) -> list[str]:
    """One detection sample, as docs/models.md runs it."""
    return [
        INSPECT,
        "eval",
        "spatialstale/detection",
        "--model",
        "llama-cpp-python/smollm2",
        "-T",
        "n_seeds=1",
        "-T",
        "batch_size=32",
        "--temperature",
        "0",
        "--max-tokens",
        "128",
        "--max-connections",
        "1",
        "--max-retries",
        "1",
        "--log-dir",
        str(log_dir),
        "--display",
        "none",
    ]


def test_the_suites_prompts_fail_on_the_plain_server_and_pass_through_the_launcher(
    plain_server: str, tmp_path: Path
) -> None:
    plain = subprocess.run(
        detection_command(tmp_path / "plain"),
        env=os.environ | {"LLAMA_CPP_PYTHON_BASE_URL": plain_server},
        capture_output=True,
        text=True,
        timeout=600,
    )
    [log] = [read_eval_log(str(path)) for path in (tmp_path / "plain").glob("*.eval")]
    assert log.status == "error", (plain.stdout, plain.stderr)
    [sample] = log.samples or []
    assert sample.error is not None and not sample.scores
    errors = [event.error for event in sample.events if isinstance(event, ModelEvent) and event.error]
    assert f"Error code: 500 - {TEMPLATE_REFUSES_PARTS}" in errors[0], errors

    launcher = [sys.executable, "-m", "spatialstale.llamacpp", "--server-python", LLAMA_PYTHON, "--"]
    served = subprocess.run(
        [*launcher, *detection_command(tmp_path / "launcher")], capture_output=True, text=True, timeout=600
    )
    assert served.returncode == 0, (served.stdout, served.stderr)
    [log] = [read_eval_log(str(path)) for path in (tmp_path / "launcher").glob("*.eval")]
    assert log.status == "success" and log.eval.model == "llama-cpp-python/smollm2"
    [sample] = log.samples or []
    assert sample.error is None and sample.scores
