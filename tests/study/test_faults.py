"""Studies on a flaky endpoint: the reference observer behind ``spatialstale-faults``
(agents/_faults.py), which fails a seeded share of its calls. A study under a few
percent of faults finishes under its defaults with the scores of a fault-free study;
what it prints stays a few lines a task; a failing study says why in a line per cause
and gives up on a broken setup; its resume command runs from a plain shell, after a
kill -9 too."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from spatialstale.agents._faults import CALLS
from spatialstale.study._cli import main
from tests.conftest import Shared
from tests.study.test_study import _last_line, wait_until_midway

# one worker runs the module, so its module fixtures' runs are made once
pytestmark = pytest.mark.xdist_group("faults")

SCRIPT = Path(sys.executable).parent / "spatialstale"
"""The installed ``spatialstale`` script, as a user runs it."""
FAULTY = "spatialstale-faults/observer"
MATRIX = ["--n-seeds", "2", "--regimes", "L3", "--modalities", "text", "--strategies", "omcd", "--episodes", "1"]
"""Detection L3 text (35-49 calls a sample) and navigation L3 OMCD, two seeds: two tasks."""
NO_WAIT = ["-M", "retry_wait=0"]
"""Inspect retries a 503 or 429 at once instead of after its backoff."""
PLAIN_SHELL = ["env", "-i", "PATH=/usr/bin:/bin", "bash", "-c"]
"""A shell without the venv on its PATH, nor anything else of this session's environment."""


def _as_in_a_terminal() -> None:
    """A command's SIGINT as a terminal gives it: a shell without job control (a CI
    runner's background job, ``cmd &`` in a script) starts it ignored (test_stopping.py
    starts studies that way)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _study(argv: list[str], cwd: Path, timeout: float = 600) -> tuple[int, list[str]]:
    """``spatialstale study ARGV`` as a user runs it: its exit status and every line it
    printed, stdout and stderr together."""
    process = subprocess.run(
        [str(SCRIPT), "study", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_env(),
        preexec_fn=_as_in_a_terminal,
    )
    return process.returncode, (process.stdout + process.stderr).splitlines()


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1"}


def _per_sample(log_dir: Path) -> dict[tuple[str, str, str, int], dict[str, Any]]:
    """Every sample's scores in the successful logs, by (task, task arguments, sample id, epoch)."""
    out: dict[tuple[str, str, str, int], dict[str, Any]] = {}
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info)
        if log.status != "success":
            continue
        args = json.dumps(log.eval.task_args_passed, sort_keys=True)
        for sample in log.samples or []:
            assert sample.scores is not None
            out[(log.eval.task, args, str(sample.id), sample.epoch)] = {
                name: score.value for name, score in sample.scores.items()
            }
    return out


def _reruns(log_dir: Path) -> int:
    """Sample attempts that errored and were rerun, in the successful logs."""
    logs = (read_eval_log(info) for info in list_eval_logs(str(log_dir)))
    return sum(len(s.error_retries or []) for log in logs if log.status == "success" for s in log.samples or [])


@pytest.fixture(scope="module")
def fault_free(shared: Shared) -> Path:
    """The matrix on the reference observer itself, no faults: the scores to match."""

    def make(path: Path) -> None:
        assert main(["study", "--model", "spatialstale/observer", *MATRIX, "--log-dir", str(path)]) == 0

    return shared("faults-fault-free", make)


def _counts_add_up(lines: list[str]) -> list[tuple[int, int]]:
    """Every "k/n samples done" the study printed, each checked to be at most its total."""
    counts = [
        (int(k.replace(",", "")), int(n.replace(",", "")))
        for k, n in re.findall(r"([\d,]+)/([\d,]+) samples", "\n".join(lines))
    ]
    assert all(done <= total for done, total in counts), counts
    return counts


def test_retryable_faults_are_retried_call_by_call(
    fault_free: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("spatialstale.study._run.PROGRESS_EVERY", 0.0)  # a count after every sample
    monkeypatch.setattr("spatialstale.study._run.PROGRESS_GROWTH", 0.0)
    CALLS.clear()
    faults = ["-M", "transient=0.1", "-M", "rate_limit=0.05", *NO_WAIT]
    # no sample reruns: each call is retried until it is answered, or the study fails
    argv = ["study", "--model", FAULTY, *MATRIX, *faults, "--retry-on-error", "0", "--log-dir", str(tmp_path)]
    assert main(argv) == 0
    assert CALLS["transient"] > 0 and CALLS["rate_limit"] > 0
    assert _per_sample(tmp_path) == _per_sample(fault_free)
    out = capsys.readouterr().out.splitlines()
    _counts_add_up(out)
    retried = [line for line in out if "calls retried" in line]
    assert retried and re.search(
        r"\(HTTP 503 x[\d,]+, HTTP 429 x[\d,]+\)|\(HTTP 429 x[\d,]+, HTTP 503 x[\d,]+\)", retried[-1]
    )


@pytest.mark.slow  # a study of a thousand calls against a flaky provider
def test_a_few_percent_of_rejected_calls_finish_under_the_defaults(fault_free: Path, tmp_path: Path) -> None:
    argv = [*MATRIX, "--model", FAULTY, "-M", "non_retryable=0.05", "-M", "fault_seed=3", "--log-dir", "logs"]
    code, lines = _study(argv, tmp_path)
    assert code == 0, "\n".join(lines[-20:])
    assert _last_line("\n".join(lines)) == "study complete: 2 of 2 task logs in logs"
    # the plan (~25 lines), the resume command, a line per task and a few counts
    assert len(lines) <= 40, "\n".join(lines)
    assert "Traceback" not in "\n".join(lines)
    assert _counts_add_up(lines)[-1] == (2 + 2, 4)
    # faults there were, each rerun, and the scores are a fault-free study's
    assert _reruns(tmp_path / "logs") > 0
    assert _per_sample(tmp_path / "logs") == _per_sample(fault_free)
    log = read_eval_log(list_eval_logs(str(tmp_path / "logs"))[0], header_only=True)
    assert (log.eval.config.retry_on_error, log.eval.config.continue_on_fail) == (10, True)
    assert log.eval.model_generate_config.attempt_timeout == 600


@pytest.mark.slow
def test_a_failing_study_says_why_in_one_line_a_cause(tmp_path: Path) -> None:
    # every call rejected: the study gives up instead of rerunning every sample 121 times
    argv = [*MATRIX, "--model", FAULTY, "-M", "non_retryable=1", "--log-dir", "logs"]
    code, lines = _study(argv, tmp_path)
    text = "\n".join(lines)
    assert code == 1, text
    assert len(lines) <= 40, text
    assert "Traceback" not in text and "RetryError" not in text
    message = "InjectedFault: Error code: 400 - Bad Request: the request was rejected (injected non_retryable fault)"
    gave_up = f"20 sample attempts in a row failed, no model call answered in between: {message}"
    assert f"study: giving up: {gave_up}" in lines
    # the two cells are missing: cancelled when the study gave up (its reason), not yet
    # started (not run), or, on a loaded machine, failed on the fault before the
    # cancellation reached them
    causes = {m[2]: int(m[1]) for line in lines if (m := re.fullmatch(r"  (\d+) cells? missing: (.*)", line))}
    assert sum(causes.values()) == 2, text
    assert set(causes) <= {f"the study gave up: {gave_up}", "not run"} | {c for c in causes if message in c}, text
    last = _last_line(text)
    assert last.startswith("study stopped: 2 of 2 task logs missing in logs; resume with: ")
    command = last.split("resume with: ", 1)[1]
    assert shlex.split(command) == [str(SCRIPT.absolute()), "study", *argv]
    # as printed, from a shell that has no venv: it runs (and stops the same way)
    process = subprocess.run(
        [*PLAIN_SHELL, command], cwd=tmp_path, capture_output=True, text=True, timeout=600, preexec_fn=_as_in_a_terminal
    )
    assert process.returncode == 1, process.stdout[-2000:] + process.stderr[-2000:]
    assert _last_line(process.stdout) == last


def test_when_retries_run_out_the_provider_message_is_shown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # every call a 503, retried once: Inspect raises tenacity's bare RetryError(<Future ...>)
    faults = ["-M", "transient=1", *NO_WAIT, "--max-retries", "1", "--retry-on-error", "0", "--retry-attempts", "0"]
    argv = ["study", "--model", FAULTY, *MATRIX, "--no-navigation", *faults, "--log-dir", str(tmp_path)]
    assert main(argv) == 1
    out = capsys.readouterr().out
    message = (
        "InjectedFault: Error code: 503 - Service Unavailable: the server is overloaded, try again later "
        "(injected transient fault) (retries ran out)"
    )
    assert f"study: {FAULTY}: detection L3 text B=10: failed (2 of 2 samples errored): {message}" in out.splitlines()
    assert f"  1 cell missing: {message}" in out.splitlines()
    assert "RetryError" not in out


@pytest.mark.slow
def test_an_unreachable_endpoint_is_a_few_lines_with_its_error(tmp_path: Path) -> None:
    # a real provider (openai) at a port nobody listens on; one retry of each call, no reruns
    model = ["--model", "openai/gpt-4o", "--model-base-url", "http://127.0.0.1:9/v1", "--max-retries", "1"]
    argv = [*MATRIX, "--no-navigation", *model, "--retry-on-error", "0", "--retry-attempts", "0", "--log-dir", "logs"]
    process = subprocess.run(
        [str(SCRIPT), "study", *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**_env(), "OPENAI_API_KEY": "sk-unused"},
        preexec_fn=_as_in_a_terminal,
    )
    lines = (process.stdout + process.stderr).splitlines()
    assert process.returncode == 1, "\n".join(lines[-20:])
    assert len(lines) <= 40, "\n".join(lines)
    message = "APIConnectionError: Connection error. (retries ran out)"
    assert f"study: openai/gpt-4o: detection L3 text B=10: failed (2 of 2 samples errored): {message}" in lines
    assert f"  1 cell missing: {message}" in lines
    assert "Traceback" not in process.stdout + process.stderr


def test_the_dry_run_says_what_errors_cost(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "--model", FAULTY, *MATRIX, "--dry-run"]) == 0
    out = capsys.readouterr().out
    errors = next(line for line in out.splitlines() if line.startswith("Errors: "))
    assert "a call unanswered after 600 s is abandoned and retried (--attempt-timeout)" in errors
    assert "up to 10 times (--retry-on-error), its task's other samples running on" in errors
    assert "after 20 sample attempts in a row fail with no call answered, the study gives up" in errors
    assert (
        main(["study", "--model", FAULTY, *MATRIX, "--dry-run", "--attempt-timeout", "90", "--retry-on-error", "2"])
        == 0
    )
    out = capsys.readouterr().out
    assert "after 90 s" in out and "up to 2 times (--retry-on-error)" in out


@pytest.mark.slow
def test_hung_calls_are_abandoned_and_the_study_finishes(fault_free: Path, tmp_path: Path) -> None:
    CALLS.clear()
    faults = ["-M", "hang=0.02", "-M", "non_retryable=0.02", *NO_WAIT, "--attempt-timeout", "2"]
    assert main(["study", "--model", FAULTY, *MATRIX, *faults, "--log-dir", str(tmp_path)]) == 0
    assert CALLS["hang"] > 0 and CALLS["non_retryable"] > 0
    assert _per_sample(tmp_path) == _per_sample(fault_free)


@pytest.mark.slow
def test_killed_on_a_flaky_endpoint_the_printed_command_finishes_it(fault_free: Path, tmp_path: Path) -> None:
    """kill -9 midway through a study meeting faults, then its resume command as it
    printed it, from a shell without the venv: the scores are a fault-free study's."""
    faults = ["-M", "non_retryable=0.03", "-M", "transient=0.05", "-M", "latency=0.3", "-M", "fault_seed=5", *NO_WAIT]
    process = subprocess.Popen(
        [str(SCRIPT), "study", *MATRIX, "--model", FAULTY, *faults, "--log-dir", "logs"],
        cwd=tmp_path,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=_as_in_a_terminal,
    )
    wait_until_midway(process, tmp_path / "logs")
    process.send_signal(signal.SIGKILL)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == -signal.SIGKILL, output[-3000:]
    [command] = [line.split(": ", 2)[2] for line in output.splitlines() if line.startswith("study: if it stops, ")]
    resumed = subprocess.run(
        [*PLAIN_SHELL, command], cwd=tmp_path, capture_output=True, text=True, timeout=900, preexec_fn=_as_in_a_terminal
    )
    lines = (resumed.stdout + resumed.stderr).splitlines()
    assert resumed.returncode == 0, "\n".join(lines[-20:])
    assert _last_line(resumed.stdout).startswith("study complete: 2 of 2 task logs in logs")
    # right after the resume, the samples the killed run finished count, never beyond the
    # total; a resume that found its tasks' samples all finished (a loaded machine, a late
    # kill) has no sample to count
    counts = _counts_add_up(lines)
    if counts:
        assert counts[-1] == (4, 4), counts
        assert re.search(r"samples done \([\d,]+ by earlier runs\)", resumed.stdout), resumed.stdout[-2000:]
    assert _per_sample(tmp_path / "logs") == _per_sample(fault_free)
