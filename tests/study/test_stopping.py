"""A study stops when it says it stops, however it was started: in the background of a
script (SIGINT ignored), under ``nohup``, under ``timeout -s TERM``, on a SIGHUP; at its
budget (``--max-cost``) and its reruns (``--max-reruns``). Its closing lines name the
true cause, and its resume gives each sample the scores of a study never stopped.

The studies run ``spatialstale-faults/observer`` (agents/_faults.py), priced by a price
file where a budget is tested."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest

from spatialstale.agents._faults import CALLS
from spatialstale.study._cli import main
from spatialstale.study._run import GIVE_UP_AFTER
from tests.study.test_faults import FAULTY, MATRIX, PLAIN_SHELL, SCRIPT, _per_sample, fault_free  # noqa: F401
from tests.study.test_study import _last_line, wait_until_midway

pytestmark = pytest.mark.xdist_group("faults")

SLOW = ["-M", "latency=0.4"]
"""Each call takes 0.4 s: the study runs long enough to be stopped midway."""
PRICES = (
    "spatialstale-faults/observer:\n  input: 100\n  output: 100\n  input_cache_read: 100\n  input_cache_write: 100\n"
)
"""$100 per million tokens: a call of the observer costs about 10 cents, the matrix about $25
(the dry run's upper bound)."""


def _script(tmp_path: Path, body: str) -> subprocess.Popen[str]:
    """``body`` run by a non-interactive ``bash -c`` (as a cron job or a CI step runs a
    script): a command it starts with ``&`` has SIGINT ignored."""
    return subprocess.Popen(
        ["bash", "-c", body],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def _command(argv: list[str]) -> str:
    return shlex.join([str(SCRIPT), "study", *argv])


def _background(tmp_path: Path, argv: list[str], prefix: str = "") -> tuple[subprocess.Popen[str], int]:
    """The study started with ``&`` from a script, its output in out.txt; the script and
    the study's pid."""
    body = f"{prefix}{_command(argv)} > out.txt 2>&1 &\necho $!\nwait $!\n"
    script = _script(tmp_path, body)
    assert script.stdout is not None
    pid = int(script.stdout.readline())
    return script, pid


def _finish(script: subprocess.Popen[str], pid: int, timeout: float = 60) -> int:
    """Wait for the study to exit; its exit status (the script's ``wait``)."""
    script.communicate(timeout=timeout)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    return script.returncode


def _resume(tmp_path: Path, lines: list[str]) -> str:
    """The last line's resume command, run as printed from a plain shell: its output."""
    command = _last_line("\n".join(lines)).split("resume with", 1)[1].split(": ", 1)[1]
    process = subprocess.run(
        [*PLAIN_SHELL, command], cwd=tmp_path, capture_output=True, text=True, timeout=900, env=None
    )
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-3000:]
    return process.stdout


@pytest.mark.slow
def test_in_the_background_a_study_on_a_broken_provider_stops(tmp_path: Path) -> None:
    argv = [*MATRIX, "--model", FAULTY, "-M", "non_retryable=1", "--log-dir", "logs"]
    script, pid = _background(tmp_path, argv)
    deadline = time.monotonic() + 300
    while "study: giving up: " not in _read(tmp_path / "out.txt") and time.monotonic() < deadline:
        time.sleep(0.1)
    gave_up = time.monotonic()
    status = _finish(script, pid, timeout=300)
    assert time.monotonic() - gave_up < 60
    text = (tmp_path / "out.txt").read_text()
    lines = text.splitlines()
    assert status == 1, text[-3000:]
    assert "Traceback" not in text and "KeyboardInterrupt" not in text
    assert any(line.startswith("study: giving up: 20 sample attempts in a row failed") for line in lines), text
    assert "CancelledError" not in text
    assert _last_line(text).startswith("study stopped: 2 of 2 task logs missing in logs; resume with: ")
    assert re.search(r"  2 cells missing: the study gave up: 20 sample attempts", text), text


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def test_giving_up_makes_no_further_call(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # every call rejected: a sample attempt is its first call, or an audit's first batches
    # (7 at once at n = 8, B = 10), so the calls are those of the attempts that failed before
    # the study gave up and of those in flight when it did (4 samples at most); a study that
    # went on after giving up would rerun each sample up to 121 times
    CALLS.clear()
    assert main(["study", *MATRIX, "--model", FAULTY, "-M", "non_retryable=1", "--log-dir", str(tmp_path)]) == 1
    assert sum(CALLS.values()) <= (GIVE_UP_AFTER + 4) * 7, CALLS
    assert "study: giving up: 20 sample attempts in a row failed" in capsys.readouterr().out


def _interrupted(tmp_path: Path, sig: signal.Signals, prefix: str = "") -> list[str]:
    argv = [*MATRIX, "--model", FAULTY, *SLOW, "--log-dir", "logs"]
    script, pid = _background(tmp_path, argv, prefix)
    deadline = time.monotonic() + 240
    while not (tmp_path / "logs").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    probe = subprocess.Popen(["sleep", "infinity"])  # wait_until_midway watches a process
    try:
        wait_until_midway(probe, tmp_path / "logs")
    finally:
        probe.kill()
    os.kill(pid, sig)
    status = _finish(script, pid)
    text = (tmp_path / "out.txt").read_text()
    assert status == 128 + sig, text[-3000:]
    assert "Traceback" not in text and "giving up" not in text and "CancelledError" not in text, text
    assert f"study: interrupted ({sig.name}): cancelling the samples in flight and saving their logs" in text
    lines = text.splitlines()
    assert f"  1 cell missing: cancelled: the study was interrupted ({sig.name})" in lines, text
    assert _last_line(text).startswith(f"study interrupted ({sig.name}): 1 of 2 task logs missing in logs")
    return lines


@pytest.mark.slow
def test_sigterm_to_a_background_study_then_its_resume(fault_free: Path, tmp_path: Path) -> None:  # noqa: F811
    lines = _interrupted(tmp_path, signal.SIGTERM)
    _resume(tmp_path, lines)
    assert _per_sample(tmp_path / "logs") == _per_sample(fault_free)


@pytest.mark.slow
def test_sighup_to_a_background_study_then_its_resume(fault_free: Path, tmp_path: Path) -> None:  # noqa: F811
    lines = _interrupted(tmp_path, signal.SIGHUP)
    _resume(tmp_path, lines)
    assert _per_sample(tmp_path / "logs") == _per_sample(fault_free)


@pytest.mark.slow
def test_under_nohup_sigterm_stops_it(tmp_path: Path) -> None:
    _interrupted(tmp_path, signal.SIGTERM, prefix="nohup ")


@pytest.mark.slow
def test_timeout_sends_sigterm(tmp_path: Path) -> None:
    # each call takes 5 s: the study is still running when the 20 s are up
    argv = [*MATRIX, "--model", FAULTY, "-M", "latency=5", "--log-dir", "logs"]
    script = _script(tmp_path, f"timeout --preserve-status -s TERM 20 {_command(argv)}")
    output, _ = script.communicate(timeout=120)
    assert script.returncode == 143, output[-3000:]
    assert "Traceback" not in output and "giving up" not in output, output[-3000:]
    assert _last_line(output).startswith("study interrupted (SIGTERM): ")


@pytest.mark.slow
def test_a_study_stops_at_its_budget_and_resumes_with_a_larger_one(fault_free: Path, tmp_path: Path) -> None:  # noqa: F811
    (tmp_path / "prices.yaml").write_text(PRICES)
    # a sample at a time a task, so that some finish before the budget (the study costs ~$12.70)
    budget = ["--model-cost-config", "prices.yaml", "--max-cost", "8", "--max-samples", "1"]
    argv = [*MATRIX, "--model", FAULTY, *budget, "--log-dir", "logs"]
    script, pid = _background(tmp_path, argv)
    status = _finish(script, pid, timeout=300)
    text = (tmp_path / "out.txt").read_text()
    lines = text.splitlines()
    assert status == 1, text[-3000:]
    assert "Traceback" not in text and "CancelledError" not in text
    [stop] = [line for line in lines if line.startswith("study: stopping: spent $")]
    spent = float(re.findall(r"spent \$([\d.,]+) of the \$8\.00 budget", stop)[0].replace(",", ""))
    # over the budget by at most the calls in flight when it was reached (2 samples, an
    # audit's 7 batches at once, ~10 cents a call)
    assert 8 <= spent < 8 + 2 * 7 * 0.2, stop
    last = _last_line(text)
    assert last.startswith("study stopped at its budget: spent $"), last
    assert last.endswith("--max-cost 16")
    assert re.search(r"  \d cells? missing: the budget ran out: spent \$", text), text
    resumed = _resume(tmp_path, lines)  # with $16, more than the whole study costs
    assert re.search(r"samples done \(\d by earlier runs\)", resumed), resumed[-2000:]
    assert _per_sample(tmp_path / "logs") == _per_sample(fault_free)


def test_a_budget_needs_a_price_for_every_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["study", *MATRIX, "--model", FAULTY, "--max-cost", "5", "--log-dir", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"spatialstale study: error: --max-cost: no price is known for {FAULTY}, so its calls could not be counted "
        "against the budget; give one with --model-cost-config FILE ($ per million tokens)"
    ]
    assert not any(tmp_path.iterdir())


def test_the_dry_run_prints_the_budget_against_its_estimate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "prices.yaml").write_text(PRICES)
    prices = ["--model-cost-config", str(tmp_path / "prices.yaml")]
    assert main(["study", *MATRIX, "--model", FAULTY, *prices, "--max-cost", "15", "--dry-run"]) == 0
    out = capsys.readouterr().out
    [line] = [line for line in out.splitlines() if line.startswith("Budget: ")]
    assert re.match(r"Budget: \$15\.00 \(--max-cost\) against an estimate of ~\$25\.\d\d: the study would stop", line)
    reruns = "Reruns: the study stops once more than 100 sample attempts have failed (10 a sample record, at least 100"
    assert reruns in out


@pytest.mark.parametrize("value", ["0", "-3", "ten", "inf"])
def test_a_bad_budget_fails_in_one_line(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit:
        main(["study", "--model", FAULTY, "--max-cost", value, "--dry-run"])
    assert exit.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].endswith(f"expected an amount of US dollars above 0 (e.g. 50); got {value!r}")


def test_a_study_stops_when_its_reruns_run_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    faults = ["-M", "non_retryable=0.2", "-M", "fault_seed=1"]
    argv = ["study", *MATRIX, "--no-navigation", "--model", FAULTY, *faults, "--max-reruns", "3"]
    assert main([*argv, "--log-dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert re.search(r"study: stopping: 4 sample attempts failed, more than the 3 reruns allowed \(--max-reruns\)", out)
    assert "  1 cell missing: the reruns ran out: 4 sample attempts failed" in out
    assert _last_line(out).startswith("study stopped: 1 of 1 task logs missing")


@pytest.mark.parametrize("value", ["-1", "many", "2.5"])
def test_a_bad_reruns_count_fails_in_one_line(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit:
        main(["study", "--model", FAULTY, "--max-reruns", value, "--dry-run"])
    assert exit.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].endswith(f"expected a whole number of 0 or more; got {value!r}")
