"""``spatialstale study`` on real Inspect runs: forwarded model and generation options,
honest exits after an interrupt, resumes, and shards."""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, modelapi
from inspect_ai.tool import ToolChoice, ToolInfo

from spatialstale.agents._provider import ReferenceAgentAPI
from spatialstale.study import Study, account, study_seeds, study_tasks
from spatialstale.study._cli import main


class SlowAgentAPI(ReferenceAgentAPI):
    """A reference agent (``slowagent/observer``) that takes model arguments: ``delay``
    seconds before each answer (so a run can be interrupted midway), ``fail`` to raise
    instead of answering, and any other key, which it keeps, so the log shows what
    ``-M`` forwarded."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 (Inspect's ModelAPI signature)
        delay: float = 0.0,
        fail: bool = False,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, config)
        self.delay = float(delay)
        self.fail = fail
        self.extra_args = model_args

    async def generate(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        await asyncio.sleep(self.delay)
        if self.fail:
            raise RuntimeError("the model server went away")
        return await super().generate(input, tools, tool_choice, config)


@modelapi(name="slowagent")
def slowagent() -> type[SlowAgentAPI]:
    return SlowAgentAPI


ROOT = Path(__file__).resolve().parents[2]
SCRIPT = shlex.quote(str(Path(sys.executable).parent.absolute() / "spatialstale"))
"""How a resume command names the ``spatialstale`` script of a study run from the tests
(``python -c``, or pytest in-process): its full path beside the interpreter."""
SESSION_ENV = dict(os.environ)
SLOW = 1.0
"""Seconds each call of an interrupted study waits: the navigation task's episodes then
outlast the detection task by several seconds, however loaded the machine."""
BASE = [
    "study",
    "--model",
    "slowagent/observer",
    "--n-seeds",
    "2",
    "--regimes",
    "L1",
    "--modalities",
    "text",
    "--strategies",
    "nofilter,omcd",
    "--episodes",
    "1",
    "--display",
    "none",
]


def _logs(log_dir: Path | str) -> list[EvalLog]:
    return [read_eval_log(info) for info in list_eval_logs(str(log_dir))]


def _scores(log_dir: Path | str) -> dict[tuple[str, str, int], dict[str, Any]]:
    """Every sample's scores by (task, sample id, epoch), from the successful logs."""
    out: dict[tuple[str, str, int], dict[str, Any]] = {}
    for log in _logs(log_dir):
        if log.status != "success":
            continue
        for sample in log.samples or []:
            assert sample.scores is not None
            key = (log.eval.task, str(sample.id), sample.epoch)
            out[key] = {name: score.value for name, score in sample.scores.items()}
    return out


def _last_line(text: str) -> str:
    return [line for line in text.splitlines() if line.strip()][-1]


def _start(argv: list[str]) -> subprocess.Popen[str]:
    """The CLI in its own process, with the slow agent registered.

    SIGINT acts as Ctrl-C does in a terminal: a shell without job control starts a
    background job (a CI runner's, say) with SIGINT ignored, and its children inherit that.
    """
    code = (
        "import signal, sys, tests.study.test_study; from spatialstale.study._cli import main; "
        "signal.signal(signal.SIGINT, signal.default_int_handler); sys.exit(main())"
    )
    # the environment as the test session began (earlier in-process evals may have set
    # variables), plus the S3 test's AWS settings
    aws = {k: v for k, v in os.environ.items() if k.startswith("AWS_")}
    env = {**SESSION_ENV, **aws, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-c", code, *argv],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def wait_until_midway(process: subprocess.Popen[str], log_dir: Path | str, timeout: float = 240) -> None:
    """Wait until a task of the study has finished and the process still runs: the
    other task is then in its samples (every call sleeps ``SLOW``), past Inspect's
    start-up, where a signal could land before the run can act on it."""
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        try:
            infos = list_eval_logs(str(log_dir))
        except FileNotFoundError:
            infos = []
        for info in infos:
            try:
                if read_eval_log(info, header_only=True).status == "success":
                    return
            except Exception:  # a log being written may not read yet
                continue
        time.sleep(0.2)


def _stop_midway(argv: list[str], log_dir: Path, sig: signal.Signals) -> tuple[int, str]:
    """Start the study, send ``sig`` once it is midway, return (status, output)."""
    process = _start(argv)
    wait_until_midway(process, log_dir)
    process.send_signal(sig)
    output, _ = process.communicate(timeout=240)
    return process.returncode, output


def test_model_args_and_generation_options_reach_the_logs(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    argv = [*BASE, "--no-navigation", "--log-dir", str(log_dir)]
    options = ["-M", "delay=0", "-M", "note=vllm", "--temperature", "0.3", "--max-tokens", "512", "--seed", "7"]
    options += ["--token-limit", "500k", "--max-samples", "3", "--retry-on-error", "--max-connections", "4"]
    options += ["--no-log-realtime"]
    assert main([*argv, *options]) == 0
    [log] = _logs(log_dir)
    assert log.status == "success"
    assert log.eval.model_args == {"delay": 0, "note": "vllm"}
    config = log.eval.model_generate_config
    assert (config.temperature, config.max_tokens, config.seed, config.max_connections) == (0.3, 512, 7, 4)
    assert log.eval.config.token_limit == 500_000
    assert (log.eval.config.max_samples, log.eval.config.retry_on_error) == (3, 1)
    assert log.eval.config.log_realtime is False


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--reasoning-effort", "extreme"], "--reasoning-effort"),
        (["--cost-limit", "2"], "--model-cost-config"),
        (["--shard", "3/2"], "--shard must be K/N"),
        (["--shard", "1/3"], "3 shards need at least 3 seeds"),
        (["--auditor", "a/b", "--model-role", "auditor=c/d"], "bound twice"),
        # Inspect's options, read as Inspect reads them
        (["--temperature", "hot"], "Invalid value for '--temperature': 'hot' is not a valid float."),
        (["--temprature", "0.5"], "No such option '--temprature'. (Did you mean one of: '--temperature'"),
        (["--epochs", "3"], "not passed to Inspect, the study sets it: --epochs (the study's is --episodes)"),
        (["--continue-on-fail", "--no-continue-on-fail"], "contradict each other"),
    ],
)
def test_bad_options_fail_early_in_one_line(
    options: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*BASE, "--log-dir", str(tmp_path / "x"), *options]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("spatialstale study: error: ") and message in err and "\n" not in err
    assert not (tmp_path / "x").exists()


def test_missing_api_key_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("OPENAI_API_KEY", "AZUREAI_OPENAI_API_KEY", "AZURE_OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    argv = [*BASE[:2], "openai/gpt-4o", *BASE[3:], "--no-navigation", "--log-dir", str(tmp_path / "x")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("spatialstale study: error: ") and "OPENAI_API_KEY" in err and "\n" not in err
    assert "[bold]" not in err


POSITIVE = ["--attempt-timeout", "--timeout", "--max-connections", "--max-samples", "--max-tasks"]


@pytest.mark.parametrize("flag", POSITIVE)
@pytest.mark.parametrize("value", ["0", "-5", "1.5"])
def test_a_count_or_a_time_of_nothing_is_refused(flag: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BASE, flag, value, "--dry-run"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("spatialstale study: error: ") and flag in line
    if value != "1.5":  # not a whole number: Inspect's own message
        assert line.endswith(f"{flag} must be a whole number of at least 1; got {value}")


def test_progress_lines_without_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("spatialstale.study._run.PROGRESS_EVERY", 0.0)  # a count after every sample
    monkeypatch.setattr("spatialstale.study._run.PROGRESS_GROWTH", 0.0)
    assert main([*BASE, "-M", "delay=0", "--log-dir", str(tmp_path / "logs")]) == 0
    said = [line for line in capsys.readouterr().out.splitlines() if line.startswith("study: ")]
    assert said[0].startswith("study: if it stops, this command resumes it: ")
    said = said[1:]
    finished = [line for line in said if ": success; " in line]
    assert sorted(line.split(": success; ")[0] for line in finished) == [
        "study: slowagent/observer: detection L1 text B=10",
        "study: slowagent/observer: navigation L1 text nofilter",
        "study: slowagent/observer: navigation L1 text omcd",
    ]
    assert finished[-1].endswith("; 3/3 tasks, 6/6 samples done")
    counts = [line for line in said if line not in finished]
    assert counts and all(re.fullmatch(r"study: [0-3]/3 tasks, [0-6]/6 samples done", line) for line in counts)
    assert re.fullmatch(r"study: [0-3]/3 tasks, 6/6 samples done", counts[-1])


def test_a_log_dir_of_another_matrix_takes_the_flag_the_hint_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*BASE, "-M", "delay=0", "--log-dir", str(tmp_path / "logs")]
    assert main([*argv, "--no-detection", "--n-seeds", "1"]) == 0  # another matrix's log
    assert main([*argv, "--no-navigation"]) == 2
    err = capsys.readouterr().err
    hinted = set(re.findall(r"--[a-z][a-z-]+", err))
    assert hinted == {"--log-dir-allow-dirty"}, err
    # every hint the study prints is an option it accepts
    assert main([*argv, "--no-navigation", *hinted]) == 0
    assert _last_line(capsys.readouterr().out).startswith("study complete: 1 of 1 task logs in ")
    # a resume's progress counts what earlier runs did
    assert main([*argv, *hinted]) == 0
    out = capsys.readouterr().out
    assert re.search(
        r"^study: slowagent/observer: navigation L1 text \w+: success; 3/3 tasks, 6/6 samples done "
        r"\(2 by earlier runs\)$",
        out,
        re.M,
    )
    assert _last_line(out).startswith("study complete: 3 of 3 task logs in ")


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "status", "display"), [(signal.SIGINT, 130, "full"), (signal.SIGTERM, 143, "none")])
def test_interrupted_study_says_so_and_the_same_command_resumes(
    sig: signal.Signals, status: int, display: str, tmp_path: Path
) -> None:
    log_dir = tmp_path / "logs"
    argv = [*BASE, "--display", display, "-M", f"delay={SLOW}", "--log-dir", str(log_dir)]
    code, output = _stop_midway(argv, log_dir, sig)
    last = _last_line(output)
    assert code == status, output[-3000:]
    assert last.startswith(f"study interrupted ({sig.name}): ")
    assert last.endswith(f"resume with: {SCRIPT} {shlex.join(argv)}")
    # said at once, once; one resume command; nothing of Inspect's contradicts it
    said = [line for line in output.splitlines() if line.startswith("study: interrupted ")]
    assert said == [
        f"study: interrupted ({sig.name}): cancelling the samples in flight and saving their logs "
        "(interrupt again to stop at once)"
    ]
    # the cause is the signal, never a provider's failure
    assert re.search(rf"cells? missing: cancelled: the study was interrupted \({sig.name}\)", output), output
    assert "giving up" not in output and "CancelledError" not in output
    assert output.count("resume with:") == 1 and "eval-retry" not in output
    assert "Completed all tasks" not in output and "Traceback" not in output
    assert re.search(r"^  missing: slowagent/observer: navigation L1 text \w+ \(cancelled\)$", output, re.M)
    # a task whose log was being opened as the signal came may stay "started", as after a kill
    assert {log.status for log in _logs(log_dir)} <= {"cancelled", "success", "started"}
    assert "cancelled" in {log.status for log in _logs(log_dir)}

    # the resume line's command, as printed, completes the study
    resume = shlex.split(last.split("resume with: ", 1)[1])[1:]
    process = _start(resume)
    output, _ = process.communicate(timeout=600)
    assert process.returncode == 0, output[-3000:]
    assert _last_line(output).startswith("study complete: 3 of 3 task logs in ")

    uninterrupted = tmp_path / "uninterrupted"
    assert main([*BASE, "-M", "delay=0", "--log-dir", str(uninterrupted)]) == 0
    assert _scores(log_dir) == _scores(uninterrupted)
    assert len(_scores(log_dir)) == 2 + 2 * 2


@pytest.mark.slow
def test_a_second_interrupt_stops_at_once_with_the_resume_command(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    argv = [*BASE, "-M", f"delay={SLOW}", "--log-dir", str(log_dir)]
    process = _start(argv)
    wait_until_midway(process, log_dir)
    process.send_signal(signal.SIGINT)
    time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 130, output[-3000:]
    assert "Traceback" not in output and output.count("resume with:") == 1
    assert _last_line(output) == (
        "study interrupted (SIGINT): stopped at once, the samples in flight not saved; "
        f"resume with: {SCRIPT} {shlex.join(argv)}"
    )


@pytest.mark.slow
def test_killed_run_leaves_logs_a_resume_supersedes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log_dir = tmp_path / "logs"
    argv = [*BASE, "-M", f"delay={SLOW}", "--log-dir", str(log_dir)]
    code, _ = _stop_midway(argv, log_dir, signal.SIGKILL)
    assert code == -signal.SIGKILL
    assert "started" in {log.status for log in _logs(log_dir)}
    assert main(argv) == 0
    last = _last_line(capsys.readouterr().out)
    assert last.startswith("study complete: 3 of 3 task logs in ")
    assert "superseded log(s) of earlier attempts ignored" in last
    accounting = account(_study(log_dir))
    assert accounting.complete and accounting.superseded >= 1


def _study(log_dir: Path) -> Study:
    seeds = study_seeds(None, 2)
    tasks = study_tasks(seeds=seeds, regimes=["L1"], modalities=["text"], strategies=["nofilter", "omcd"], episodes=1)
    return Study(("slowagent/observer",), tasks, log_dir=str(log_dir), options={"model_args": {"delay": SLOW}})


@pytest.mark.slow  # three studies
def test_shards_are_disjoint_and_together_complete(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shared = tmp_path / "shared"
    argv = [*BASE, "--n-seeds", "5", "-M", "delay=0", "--log-dir", str(shared)]
    parts = []
    for k in (1, 2, 3):
        assert main([*argv, "--shard", f"{k}/3"]) == 0
        assert _last_line(capsys.readouterr().out).startswith(
            f"study complete: 3 of 3 task logs in {shared} (shard {k}/3)"
        )
        parts.append({log.eval.task_args_passed["seeds"][0] for log in _logs(shared)})
    seeds = [sample_seed for log in _logs(shared) for sample_seed in log.eval.task_args_passed["seeds"]]
    # each seed runs in exactly one shard per task; all five seeds are covered
    assert sorted(seeds) == sorted(3 * list(study_seeds(None, 5)))
    whole = tmp_path / "whole"
    assert main([*argv[:-1], str(whole)]) == 0
    assert _scores(shared).keys() == _scores(whole).keys()
    assert _scores(shared) == _scores(whole)


def test_failed_study_is_incomplete_and_names_the_missing_cells(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log_dir = tmp_path / "logs"
    # no reruns: six failed sample attempts, too few for the study to give up (tests/study/test_faults.py)
    argv = [*BASE, "-M", "fail=true", "--retry-attempts", "0", "--retry-on-error", "0", "--log-dir", str(log_dir)]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "  missing: slowagent/observer: detection L1 text B=10 (error)" in out
    assert out.splitlines()[-2] == "  3 cells missing: RuntimeError: the model server went away"
    assert _last_line(out) == (
        f"study incomplete: 3 of 3 task logs missing in {log_dir}; resume with: {SCRIPT} {shlex.join(argv)}"
    )


def _dry_run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main([*argv, "--dry-run"]) == 0
    return capsys.readouterr().out


def _number_after(text: str, marker: str) -> float:
    return float(text.split(marker, 1)[1].split()[0].replace(",", "").lstrip("~$"))


def test_dry_run_costs_follow_the_price_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "openai/gpt-4o:\n  input: 2.5\n  output: 10\n  input_cache_write: 2.5\n  input_cache_read: 1.25\n"
    )
    argv = [*BASE, "--model", "openai/gpt-4o", "--auditor", "openai/gpt-4o", "--model-cost-config", str(prices)]
    out = _dry_run(argv, capsys)
    header = out.splitlines()[0].split()
    assert header[-2:] == ["$", "counts"] and "cached" in header and "epochs" in header
    line = next(line for line in out.splitlines() if line.startswith("  openai/gpt-4o:"))
    prompt = _number_after(line, "calls, ~")
    completion = _number_after(line, "prompt tokens, ~")
    headline = out.split("  openai/gpt-4o:", 1)[1].splitlines()[1]
    assert headline.startswith("    cost: ~$") and " with caching (" in headline  # navigation prompts reach 1,024
    no_cache = _number_after(headline, "; ~$")
    assert no_cache == pytest.approx((2.5 * prompt + 10 * completion) / 1e6, abs=0.006)
    with_cache = _number_after(headline, "    cost: ~$")
    assert with_cache < no_cache
    assert "cache write per million tokens (--model-cost-config)" in out
    # the slow agent has no price: its row and total say so instead of guessing
    assert "no price (give one with --model-cost-config FILE)" in out
    assert "n/a" in out


def test_dry_run_cached_tokens_are_the_prompts_shared_prefix() -> None:
    from spatialstale.env import make_instance
    from spatialstale.protocol import DETECTION, Sight, audit_messages
    from spatialstale.study._calls import Meter, audit_calls, detection_plan_of, prompt_parts

    instance = make_instance(study_seeds(None, 1)[0], "L1", 8)
    grid = instance.initial_grid
    [window] = detection_plan_of(DETECTION, instance)  # L1: one window, the episode's start
    assert window.grid == grid
    calls = audit_calls(window, Meter())
    batches = [instance.memory[i : i + 10] for i in range(0, len(instance.memory), 10)]
    prompts = [prompt_parts(audit_messages(b, grid, instance.start, Sight("text"))) for b in batches]
    # measured from the built prompts, whatever their order
    meter = Meter()
    expected = sum(meter.shared(a, b) for a, b in itertools.pairwise(prompts))
    assert calls.calls == len(batches) and calls.cached_tokens == expected
    first_batch = next(i for i, part in enumerate(prompts[0]) if "[mem_" in part[1])
    assert prompts[0][:first_batch] == prompts[1][:first_batch]  # the observation comes first
    assert meter.shared([("text", "abcdefgh")], [("text", "abcdefXY")]) == 2  # ceil(6 / 4)
    assert meter.shared([("image", "x"), ("text", "a" * 8)], [("image", "y"), ("text", "a" * 8)]) == 0


def test_sampled_estimates_stay_close_to_the_full_measurement(monkeypatch: pytest.MonkeyPatch) -> None:
    from spatialstale.study import _calls, _estimate

    spec = study_tasks(seeds=study_seeds(None, 8), regimes=["L3"], modalities=["text"], episodes=1)
    full = {}
    monkeypatch.setattr(_calls, "CHAIN_PAIRS", 1000)
    monkeypatch.setattr(_calls, "WINDOWS_MEASURED", 1000)
    for task in spec:
        full[task.name] = _estimate.estimate_task(task)
    monkeypatch.undo()
    monkeypatch.setattr(_estimate, "EXACT_CELLS", 4 * 64)
    for task in spec:
        sampled = _estimate.estimate_task(task)
        assert sampled.sampled and sampled.measured_seeds == 4
        for field in ("calls", "prompt_tokens", "completion_tokens", "cached_tokens"):
            exact, estimate = getattr(full[task.name].total, field), getattr(sampled.total, field)
            assert estimate == pytest.approx(exact, rel=0.2), (task.kind, field)


def test_study_sizes_beyond_any_context_window_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BASE, "--size", "65", "--dry-run"]) == 2
    assert capsys.readouterr().err.strip() == "spatialstale study: error: size must be from 4 to 64; got 65"


def test_prompt_sets_repeat_the_matrix_and_leave_the_default_cells_as_they_were(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seeds = study_seeds([4810, 1734], 2)
    plain = study_tasks(seeds=seeds, regimes=["L2"], modalities=["text"], strategies=["nofilter"], episodes=1)
    both = study_tasks(
        seeds=seeds,
        regimes=["L2"],
        modalities=["text"],
        strategies=["nofilter"],
        episodes=1,
        axes={"prompt_set": ["default", "warned"]},
    )
    assert set(plain) <= set(both)
    assert len(both) == 2 * len(plain)
    assert all("prompt_set" not in spec.args() for spec in plain)
    warned = [spec for spec in both if spec.settings.prompt_set == "warned"]
    assert warned and all(spec.args()["prompt_set"] == "warned" for spec in warned)
    with pytest.raises(ValueError, match="prompt_set must be one of default, no_rule, warned, minimal"):
        study_tasks(seeds=seeds, axes={"prompt_set": ["terse"]})
    log_dir = tmp_path / "logs"
    code = main(
        [
            "study",
            "--model",
            "spatialstale/credulous",
            "--regimes",
            "L2",
            "--modalities",
            "text",
            "--strategies",
            "nofilter",
            "--seeds",
            "4810,1734",
            "--episodes",
            "1",
            "--prompt-sets",
            "default,WARNED",
            "--log-dir",
            str(log_dir),
            "--display",
            "none",
        ]
    )
    assert code == 0, capsys.readouterr().err
    sets = sorted(
        str(read_eval_log(info.name, header_only=True).eval.task_args.get("prompt_set", "default"))
        for info in list_eval_logs(str(log_dir))
    )
    assert sets == ["default", "default", "warned", "warned"]
