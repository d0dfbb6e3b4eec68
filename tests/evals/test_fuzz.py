"""Randomized nasty answers through both tasks: no sample errors, and every reading
that is lost or ambiguous is counted, checked by re-reading the raw answers stored in
the log. The fast tier sends over a thousand; the slow tier over ten thousand."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.log import EvalLog, EvalSample, resolve_sample_attachments

from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.protocol import call_kind, read_action, read_audit, read_selfverify
from spatialstale.protocol._edits import read_edits
from tests import fuzz  # noqa: F401  (registers the fuzz/ model provider)

_ID = re.compile(r"\[(mem_\d+)\]")
_CELL = re.compile(r"\[(mem_\d+)\] (?:SAFE|DANGER) at \((\d+),(\d+)\)")
REGIMES = "L1,L2,L3"


def _run(task: Any, tmp_path: Path, name: str) -> EvalLog:
    [log] = eval(
        task,
        model=f"fuzz/{name}",
        log_dir=str(tmp_path / name),
        display="none",
        log_realtime=False,
        max_connections=32,
        max_samples=32,
        fail_on_error=False,
    )
    assert log.status == "success", log.error
    assert log.samples
    return log


def _edits_of(sample: EvalSample) -> list[tuple[str, str]]:
    """(id, edit) of every edit the audit answers propose, re-read from the raw answers."""
    out = []
    for event in resolve_sample_attachments(sample).events:
        if event.event == "model" and call_kind(event.input) == "audit":
            text = event.input[-1].text
            cells = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in _CELL.finditer(text)}
            out += read_edits(event.output.completion, _ID.findall(text), cells).items()
    return sorted(out)


def _check_edits(log: EvalLog) -> None:
    for sample in log.samples or []:
        value = _score(sample, "stale_f1")
        stale = value["tp"] + value["fn"]
        counts = [value[f"edits_{k}"] for k in ("correct", "wrong", "missing", "unreadable")]
        assert sum(counts) == value["edits_stale"] == stale
        windows = sample.scores["stale_f1"].metadata["windows"]  # type: ignore[index]
        assert sorted((mid, edit) for w in windows for mid, edit in w["edits"].items()) == _edits_of(sample)
    metrics = log.results.scores[0].metrics if log.results else {}
    assert 0 <= metrics["edit_accuracy"].value <= 1


def _calls(sample: EvalSample) -> list[tuple[str, list[str], str]]:
    """(kind, memory ids in the prompt, raw answer) of every model call of a sample."""
    out = []
    for event in resolve_sample_attachments(sample).events:
        if event.event == "model":
            kind = call_kind(event.input)
            out.append((str(kind), _ID.findall(event.input[-1].text), event.output.completion))
    return out


def _score(sample: EvalSample, name: str) -> dict[str, Any]:
    assert sample.error is None, sample.error
    assert sample.scores is not None and name in sample.scores
    value = sample.scores[name].value
    assert isinstance(value, dict)
    return value


def _check_detection(log: EvalLog) -> int:
    calls = 0
    for sample in log.samples or []:
        value = _score(sample, "stale_f1")
        raw = _calls(sample)
        readings = [read_audit(answer, ids) for kind, ids, answer in raw if kind == "audit"]
        calls += len(raw)
        assert value["calls"] == len(readings) == len(raw)
        assert value["unparseable"] == sum(r.error is not None for r in readings)
        assert value["unanswered"] == sum(len(r.unanswered) for r in readings)
        assert value["conflicting"] == sum(len(r.conflicting) for r in readings)
        assert value["unknown_ids"] == sum(len(r.unknown_ids) for r in readings)
        judged = value["tp"] + value["fp"] + value["fn"] + value["tn"]
        assert judged == value["judgments"]
    return calls


def _check_navigation(log: EvalLog) -> int:
    calls = 0
    for sample in log.samples or []:
        value = _score(sample, "episode_outcome")
        raw = _calls(sample)
        calls += len(raw)
        steps = [read_action(answer) for kind, _, answer in raw if kind == "navigate"]
        audits = [read_audit(answer, ids) for kind, ids, answer in raw if kind == "audit"]
        checks = [read_selfverify(answer, ids) for kind, ids, answer in raw if kind == "selfverify"]
        assert value["steps"] == len(steps)
        assert value["fallbacks"] == sum(s.action is None for s in steps)
        assert value["ambiguous"] == sum(s.status == "ambiguous" for s in steps)
        assert value["unreadable"] == sum(s.status == "unreadable" for s in steps)
        assert value["audit_calls"] == len(audits) + len(checks)
        assert value["audit_unparseable"] == sum(a.error is not None for a in [*audits, *checks])
        assert value["audit_unanswered"] == sum(len(a.unanswered) for a in audits)
        assert value["audit_conflicting"] == sum(len(a.conflicting) for a in [*audits, *checks])
        assert sum(value[k] for k in ("success", "death", "timeout", "limit")) == 1
    return calls


def _fuzz(tmp_path: Path, scale: int) -> int:
    """Fuzzed answers through both tasks, all regimes, text and vision; ``scale`` seeds
    a text task (vision a third as many); the number of answers read."""
    calls = 0
    # Text audits one entry a call (B=1), so most of the answers are audit answers.
    runs = [
        ("det-text", detection(regime=REGIMES, modality="text", batch_size=1, n_seeds=scale)),
        ("det-vision", detection(regime=REGIMES, modality="vision", n_seeds=max(1, scale // 3))),
        ("det-edits", detection(regime=REGIMES, batch_size=2, n_seeds=max(1, scale // 3), edits=True)),
        ("nav-text", navigation(regime=REGIMES, modality="text", n_seeds=scale, episodes=1)),
        ("nav-vision", navigation(regime=REGIMES, modality="vision", n_seeds=max(1, scale // 3), episodes=1)),
    ]
    for name, task in runs:
        log = _run(task, tmp_path, name)
        if name.startswith("det"):
            calls += _check_detection(log)
            if name == "det-edits":
                _check_edits(log)
        else:
            calls += _check_navigation(log)
            metrics = log.results.scores[0].metrics if log.results else {}
            assert 0 < metrics["fallback_rate"].value < 1
    print(f"{calls} fuzzed answers")
    return calls


def test_a_thousand_nasty_answers_error_no_sample_and_every_loss_is_counted(tmp_path: Path) -> None:
    # every task, modality and answer kind on one seed; the slow tier's run below is the breadth
    assert _fuzz(tmp_path, 1) >= 1_000


@pytest.mark.slow
def test_ten_thousand_nasty_answers_error_no_sample_and_every_loss_is_counted(tmp_path: Path) -> None:
    assert _fuzz(tmp_path, 16) >= 10_000
