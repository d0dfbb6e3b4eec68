"""``inspect eval`` from the command line: registered names, checkout paths, bad -T values."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from inspect_ai.event import ModelEvent
from inspect_ai.log import list_eval_logs, read_eval_log

ROOT = Path(__file__).resolve().parents[2]
INSPECT = [sys.executable, "-m", "inspect_ai"]


def inspect_eval(*args: str, log_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*INSPECT, "eval", *args, "--log-dir", str(log_dir), "--display", "plain"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_registered_task_runs_by_name(tmp_path: Path) -> None:
    result = inspect_eval(
        "spatialstale/detection",
        "--model",
        "spatialstale/observer",
        "-T",
        "regime=L1",
        "-T",
        "seeds=4810",
        log_dir=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    [info] = list_eval_logs(str(tmp_path))
    log = read_eval_log(info)
    assert log.status == "success"
    assert log.eval.task == "spatialstale/detection"
    assert [s.id for s in log.samples or []] == ["L1-s4810"]


def test_task_file_runs_from_a_checkout(tmp_path: Path) -> None:
    result = inspect_eval(
        "evals/navigation.py",
        "--model",
        "spatialstale/observer",
        "-T",
        "strategies=[omcd, nofilter]",
        "-T",
        "seeds=4810",
        "-T",
        "max_steps=3",
        "--epochs",
        "1",
        log_dir=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    [info] = list_eval_logs(str(tmp_path))
    log = read_eval_log(info)
    assert log.status == "success"
    assert sorted(s.id for s in log.samples or []) == ["L2-nofilter-s4810", "L2-omcd-s4810"]


@pytest.mark.parametrize(
    ("task", "arg", "message"),
    # every bad value is checked in process (tests/evals/test_tasks.py, test_params.py);
    # through the command line, one per task: the path from -T to the one line is the same
    # for every value
    [
        ("spatialstale/detection", "batch_size=0", "batch_size must be an integer of at least 1"),
        ("spatialstale/navigation", "strategies=teleport", "strategies must be one of nomemory, nofilter"),
    ],
)
def test_bad_task_argument_is_one_clear_line_before_any_model_call(
    task: str, arg: str, message: str, tmp_path: Path
) -> None:
    result = inspect_eval(task, "--model", "spatialstale/observer", "-T", arg, log_dir=tmp_path)
    output = " ".join((result.stdout + result.stderr).split())
    assert result.returncode != 0
    assert message in output
    assert "Traceback" not in output
    assert not list(tmp_path.glob("*.eval"))


def run_inspect(*args: str, log_dir: Path, display: str = "none") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*INSPECT, "eval", *args, "--log-dir", str(log_dir), "--display", display],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


REJECTED = {
    "bad regime": (
        ["-T", "regime=L4"],
        "regime must be one of L1, L2, L3, MA (or none), an installed plug-in's name or module:Class; got 'L4'",
    ),
    "empty prompt": (["-T", "audit_prompt="], "audit_prompt must not be empty; got ''"),
    "misspelled name": (
        ["-T", "regmie=L1"],
        "unknown task parameter 'regmie' (did you mean 'regime'?); valid: audit_prompt, batch_size, distractors, "
        "edits, master_seed, memory, modality, n_seeds, observation, prompt_set, regime, seeds, size, structured",
    ),
    "unknown agent": (
        ["--model", "spatialstale/oracle"],
        "spatialstale model must be one of observer, credulous, random, colourblind; got 'oracle'",
    ),
    "unknown auditor": (
        ["--model-role", "auditor=spatialstale/oracle"],
        "spatialstale model must be one of observer, credulous, random, colourblind; got 'oracle'",
    ),
    "model argument": (
        ["-M", "temperature_scale=2"],
        "spatialstale/observer takes no model arguments; got temperature_scale",
    ),
}


FAST_CASES = ("misspelled name", "unknown agent")
"""The fast tier's cases; the others run in the slow tier, read by the same checks (each
one an `inspect eval` subprocess). One case a path from the command line to the line on
stderr: a task parameter's value (a bad regime), one that Inspect reads as no value (an
empty prompt), a name no parameter has, the model, the auditor's role and a model
argument; tests/evals/test_params.py and each option's tests check every bad value of
every parameter in process."""


@pytest.mark.parametrize(
    ("case", "display"),
    [(case, "none") for case in FAST_CASES]
    + [("bad regime", "full")]
    + [
        pytest.param(case, display, marks=pytest.mark.slow)
        for case, display in (
            *((case, "none") for case in REJECTED if case not in FAST_CASES),
            *(("bad regime", display) for display in ("plain", "rich", "log")),
            *(("unknown agent", display) for display in ("plain", "rich", "full", "log")),
        )
    ],
)
def test_a_rejected_value_is_one_line_on_stderr_in_every_display_mode(case: str, display: str, tmp_path: Path) -> None:
    args, message = REJECTED[case]
    model = [] if "--model" in args else ["--model", "spatialstale/observer"]
    result = run_inspect("spatialstale/detection", *model, *args, log_dir=tmp_path, display=display)
    assert result.returncode != 0
    assert result.stderr.splitlines() == [message], result.stderr[-2000:]
    assert result.stdout.strip() == ""
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


# plain instructions: the reference agents tell the call kinds apart by the system
# message's tag, whatever its text
AUDIT = (
    "Audit the memory of a {size}x{size} grid against the current grid.\n"
    'Answer with JSON only: [{"memory_id": "mem_000", "is_stale": false, "reason": "(0,0) is S"}]'
)
NAVIGATE = 'Reach the goal of the {size}x{size} grid. Answer {"action": "RIGHT"}, nothing else.'
SELFVERIFY = 'List the stale entries: {"inconsistent": ["mem_012"]}; {{size}} stays as written.'


@pytest.mark.slow  # two `inspect eval` subprocesses; braces from -T stay in the fast tier
def test_prompts_with_braces_run_end_to_end_from_a_task_config(tmp_path: Path) -> None:
    config = tmp_path / "prompts.yaml"
    config.write_text(
        yaml.safe_dump({"audit_prompt": AUDIT, "navigate_prompt": NAVIGATE, "selfverify_prompt": SELFVERIFY})
    )
    logs = tmp_path / "logs"
    detection = run_inspect(
        "spatialstale/detection",
        "--model",
        "spatialstale/observer",
        "-T",
        "seeds=4810,1734",
        "--task-config",
        str(config),
        log_dir=logs / "detection",
    )
    assert detection.returncode == 0, detection.stderr[-2000:]
    [info] = list_eval_logs(str(logs / "detection"))
    log = read_eval_log(info, resolve_attachments=True)
    assert log.status == "success" and log.results is not None
    assert log.results.scores[0].metrics["f1_mean"].value == 1.0
    systems = {event.input[0].text for s in log.samples or [] for event in s.events if isinstance(event, ModelEvent)}
    assert systems == {AUDIT.replace("{size}", "8")}

    navigation = run_inspect(
        "spatialstale/navigation",
        "--model",
        "spatialstale/observer",
        "-T",
        "seeds=4810",
        "-T",
        "regime=L1",
        "-T",
        "strategies=omcd,selfverify",
        "--epochs",
        "1",
        "--task-config",
        str(config),
        log_dir=logs / "navigation",
    )
    assert navigation.returncode == 0, navigation.stderr[-2000:]
    [info] = list_eval_logs(str(logs / "navigation"))
    log = read_eval_log(info, resolve_attachments=True)
    assert log.status == "success" and log.results is not None
    assert log.results.scores[0].metrics["success"].value == 1.0
    systems = {event.input[0].text for s in log.samples or [] for event in s.events if isinstance(event, ModelEvent)}
    assert systems == {p.replace("{size}", "8") for p in (AUDIT, NAVIGATE, SELFVERIFY)}


@pytest.mark.slow  # an `inspect eval` subprocess; the readers of -T values are tested in process
def test_a_prompt_with_commas_and_braces_from_the_command_line_reaches_the_model(tmp_path: Path) -> None:
    # compact JSON: -T values are read as YAML, where ": " would make a mapping
    prompt = 'Audit a {size}x{size} grid, then answer [{"memory_id":"mem_000","is_stale":true}], as JSON'
    result = run_inspect(
        "spatialstale/detection",
        "--model",
        "spatialstale/credulous",
        "-T",
        "seeds=4810",
        "-T",
        f"audit_prompt={prompt}",
        "-T",
        "structured=on",
        log_dir=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    [info] = list_eval_logs(str(tmp_path))
    log = read_eval_log(info, resolve_attachments=True)
    assert log.status == "success"
    assert log.eval.metadata is not None and log.eval.metadata["structured"] is True
    [sample] = log.samples or []
    first = next(event for event in sample.events if isinstance(event, ModelEvent))
    assert first.input[0].text == prompt.replace("{size}", "8")
    assert first.config.response_schema is not None  # -T structured=on reached the solver


def auditor_answers(log_dir: Path) -> list[str]:
    [info] = list_eval_logs(str(log_dir))
    log = read_eval_log(info)
    assert log.status == "success"
    return [
        event.output.completion
        for sample in log.samples or []
        for event in sample.events
        if isinstance(event, ModelEvent) and event.role == "auditor"
    ]


def random_auditor_runs(tmp_path: Path, *args: str) -> tuple[list[str], list[str]]:
    runs = []
    for n in (1, 2):
        result = run_inspect(
            "spatialstale/detection",
            "--model",
            "spatialstale/observer",
            "-T",
            "seeds=4810",
            "-T",
            "regime=L1",
            *args,
            log_dir=tmp_path / str(n),
        )
        assert result.returncode == 0, result.stderr[-2000:]
        runs.append(auditor_answers(tmp_path / str(n)))
    assert runs[0] and len(runs[0]) == len(runs[1])
    return runs[0], runs[1]


@pytest.mark.slow
def test_a_seed_in_the_auditor_role_spec_makes_the_random_auditor_reproducible(tmp_path: Path) -> None:
    first, second = random_auditor_runs(tmp_path, "--model-role", "auditor={model: spatialstale/random, seed: 7}")
    assert first == second


@pytest.mark.slow  # three `inspect eval` subprocesses
def test_the_run_seed_reaches_the_auditor_role(tmp_path: Path) -> None:
    first, second = random_auditor_runs(tmp_path, "--seed", "7", "--model-role", "auditor=spatialstale/random")
    assert first == second
