"""Every rate means what it says: the fuzz provider's nasty answers through every option
that changes the entries or the answers (distractors, edits, memory crops, MA, fog,
holes, structured output, filter modes, every strategy, both navigators, a sample limit
cutting audits short), then, for every sample, every count of its score recomputed
from the sample's own records (the score metadata's windows, or the episode's steps,
audits and cost), every rate of its score in [0, 1] and equal to its declared
numerator over its declared denominator, and every metric of the log equal to its
declaration pooled over the samples (overall and per group).

The recomputation reads the records and the sample metadata only (the memory claims
from g0, the truth from g0 against each window's grid), never the scorer's code; the
declarations (``spatialstale.scorers.METRICS``, ``SCORE_RATES``) say which counts a
rate divides, and the arithmetic is done here.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage, get_model

from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.evals.perception import perception
from spatialstale.scorers import COUNTS, METRICS, SAMPLES, SCORE_RATES, Combined, Rate, TaskMetric
from tests import fuzz  # noqa: F401  (registers the fuzz/ model provider)
from tests.conftest import metrics, run_eval

SCORER = {"detection": "stale_f1", "navigation": "episode_outcome", "perception": "perception_accuracy"}
GROUPS = {"detection": ("regime", None), "navigation": ("strategy", "regime"), "perception": ("regime", None)}
"""Each task's metric grouping: (key, within), as the tasks group their metrics."""

Counts = dict[str, float]
Row = tuple[Mapping[str, Any], Counts]
"""A sample's metadata and its recomputed counts."""


def _ids(size: int) -> list[str]:
    return [f"mem_{i:03d}" for i in range(size * size)]


def _detection_counts(sample: EvalSample, score: Any) -> Counts:
    """A detection sample's counts from its windows and its metadata alone."""
    meta = sample.metadata
    g0 = meta["g0"]
    n = len(g0)
    cells = meta.get("cell_ids") or _ids(n)
    positions = {cells[r * n + c]: (r, c) for r in range(n) for c in range(n)}
    claims_hole = {mid: g0[r][c] == "H" for mid, (r, c) in positions.items()}
    distractors = {str(d["id"]) for d in meta.get("distractor_entries", [])}
    entries = set(claims_hole) | distractors
    assert len(entries) == n * n + meta.get("distractors", 0)
    windows = score.metadata["windows"]
    c: Counts = dict.fromkeys(COUNTS["detection"], 0)
    c.pop(SAMPLES)
    for w in windows:
        grid = w["grid"]
        truth = {mid for mid, (r, col) in positions.items() if claims_hole[mid] != (grid[r][col] == "H")}
        assert set(w["truth"]) == truth
        flagged = set(w["flagged"])
        assert flagged <= entries
        for name in ("unanswered", "conflicting"):
            # each an entry of the store, at most once a window: a part of the judgments
            assert set(w[name]) <= entries and len(set(w[name])) == len(w[name])
        assert not set(w["unanswered"]) & flagged and 0 <= w["unparseable"] <= w["calls"]
        for mid, hole in claims_hole.items():
            stale, hit = mid in truth, mid in flagged
            c["tp"] += stale and hit
            c["fp"] += hit and not stale
            c["fn"] += stale and not hit
            kind = "freeze" if hole else "thaw"
            c[f"{kind}_total"] += stale
            c[f"{kind}_detected"] += stale and hit
        c["unanswered"] += len(w["unanswered"])
        c["conflicting"] += len(w["conflicting"])
        c["calls"] += w["calls"]
        c["unparseable"] += w["unparseable"]
        c["judgments"] += len(entries)
        c["distractors_flagged"] += len(flagged & distractors)
        c["distractor_judgments"] += len(distractors)
    c["limit"] = int(score.metadata["limit"] is not None)
    if not distractors:
        del c["distractors_flagged"], c["distractor_judgments"]
    if meta.get("edits"):
        judged = score.metadata["edits"]
        stale_judgments = {(i, mid) for i, w in enumerate(windows) for mid in w["truth"]}
        assert {(e["window"], e["id"]) for e in judged} == stale_judgments
        c["edits_stale"] = len(judged)
        c["edits_correct"] = sum(e["judged"] == "correct" for e in judged)
    else:
        del c["edits_stale"], c["edits_correct"]
    return c


def _navigation_counts(sample: EvalSample, score: Any) -> Counts:
    """An episode's counts from its steps, audits and cost."""
    episode = score.metadata
    records, outcome = episode["records"], episode["outcome"]
    assert outcome in ("success", "death", "timeout", "limit")
    assert len(records) == episode["steps"]
    c: Counts = {key: int(outcome == key) for key in ("success", "death", "timeout", "limit")}
    c |= {f"{key}_steps": len(records) * (outcome == key) for key in ("success", "death", "timeout")}
    c["steps"] = len(records)
    c["fallbacks"] = sum(not r["parsed"] for r in records)
    c["audit_calls"] = sum(a["calls"] for a in episode["audits"])
    c["audit_unparseable"] = sum(a["unparseable"] for a in episode["audits"])
    c["audit_model_calls"] = episode["cost"]["audit_calls"]
    return c


def _perception_counts(sample: EvalSample, score: Any) -> Counts:
    """A perception sample's counts from its observations' grids and readings."""
    c: Counts = dict.fromkeys(COUNTS["perception"], 0)
    c.pop(SAMPLES)
    for w in score.metadata["windows"]:
        labels = {f"({r},{col})": cell for r, row in enumerate(w["grid"]) for col, cell in enumerate(row)}
        for name in ("unanswered", "conflicting"):
            assert set(w[name]) <= set(labels) and len(set(w[name])) == len(w[name])
        for label, truth in labels.items():
            read = w["readings"].get(label)
            c["cells"] += 1
            c["holes"] += truth == "H"
            c["ices"] += truth != "H"
            c["hole_as_hole"] += truth == "H" and read == "H"
            c["ice_as_ice"] += truth != "H" and isinstance(read, str) and read != "H"
            c["typed"] += read == truth
        c["unanswered"] += len(w["unanswered"])
        c["conflicting"] += len(w["conflicting"])
        c["calls"] += w["calls"]
        c["unparseable"] += w["unparseable"]
    c["limit"] = int(score.metadata["limit"] is not None)
    return c


RECOUNT: dict[str, Callable[[EvalSample, Any], Counts]] = {
    "detection": _detection_counts,
    "navigation": _navigation_counts,
    "perception": _perception_counts,
}


def _side(counts: Iterable[Counts], keys: tuple[str, ...]) -> float:
    return sum(1 if key == SAMPLES else c[key] for c in counts for key in keys)


def _rate(rate: Rate, counts: list[Counts]) -> float:
    """``rate`` of the summed counts, with its declared 0/0."""
    top, bottom = _side(counts, rate.numerator), _side(counts, rate.denominator)
    if bottom:
        if rate.bounded:
            assert 0 <= top <= bottom, (rate.name, top, bottom)
        return top / bottom
    if rate.clean is None:
        return math.nan
    return float(_side(counts, (rate.clean,)) == 0)


def _measure(measure: Rate | Combined, counts: list[Counts]) -> float:
    if isinstance(measure, Rate):
        return _rate(measure, counts)
    a, b = (_rate(part, counts) for part in measure.parts)
    if measure.how == "f1":
        return 2 * a * b / (a + b) if a + b > 0 else 0.0
    defined = [x for x in (a, b) if not math.isnan(x)]
    return sum(defined) / len(defined) if defined else math.nan


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-9, abs=1e-12)


def _metric(declared: TaskMetric, counts: list[Counts]) -> float:
    if declared.over == "pooled":
        return _measure(declared.measure, counts)
    each = [x for x in (_measure(declared.measure, [c]) for c in counts) if not math.isnan(x)]
    if declared.over == "mean":
        return statistics.fmean(each) if each else math.nan
    return statistics.stdev(each) if len(each) > 1 else 0.0


def _expected_metrics(task: str, samples: list[Row], present: set[str]) -> dict[str, tuple[float, TaskMetric]]:
    """Every metric of ``task`` the log should hold, by name: its value recomputed, and
    its declaration."""
    key, within = GROUPS[task]

    def groups(rows: list[Row], by: str) -> dict[str, list[Row]]:
        out: dict[str, list[Row]] = {}
        for row in rows:
            out.setdefault(str(row[0][by]), []).append(row)
        return out

    def value(d: TaskMetric, rows: list[Row]) -> tuple[float, TaskMetric]:
        return _metric(d, [counts for _, counts in rows]), d

    expected: dict[str, tuple[float, TaskMetric]] = {}
    for d in (d for d in METRICS[task] if d.name in present):
        expected[d.name] = value(d, samples)
        expected |= {f"{d.name}_{g}": value(d, rows) for g, rows in groups(samples, key).items()}
        outer = groups(samples, within) if within is not None else {}
        if len(outer) > 1:
            for w, rows in outer.items():
                expected[f"{d.name}_{w}"] = value(d, rows)
                expected |= {f"{d.name}_{w}_{g}": value(d, part) for g, part in groups(rows, key).items()}
    return expected


def check_rates(log: EvalLog, task: str) -> list[Counts]:
    """Every count, rate and metric of ``log`` against its recomputation; the counts."""
    scorer = SCORER[task]
    rows: list[Row] = []
    for sample in log.samples or []:
        assert sample.error is None, sample.error
        score = (sample.scores or {})[scorer]
        value = score.value
        assert isinstance(value, dict)
        counts = RECOUNT[task](sample, score)
        assert {k: value[k] for k in counts} == counts, sample.id
        for measure in SCORE_RATES[task]:
            if measure.name not in value:
                assert measure.name == "edit_accuracy" and "edits_stale" not in counts
                continue
            expected, got = _measure(measure, [counts]), value[measure.name]
            assert _same(got, expected), (sample.id, measure.name, got, expected)
            assert math.isnan(got) or 0 <= got <= 1, (sample.id, measure.name, got)
        rows.append((sample.metadata, counts))
    got = metrics(log)
    present = {d.name for d in METRICS[task]} & set(got)
    assert {d.name for d in METRICS[task] if d.only is None} <= present
    expected = _expected_metrics(task, rows, present)
    assert set(got) == set(expected), "a metric of the log is not a declared one, or one is missing"
    for name, value in got.items():
        recomputed, declared = expected[name]
        assert _same(value, recomputed), (name, value, recomputed)
        if not isinstance(declared.measure, Rate) or declared.measure.bounded:
            assert math.isnan(value) or 0 <= value <= 1, (name, value)
    return [counts for _, counts in rows]


def _run(task: Task, model: str, log_dir: Path, **limits: Any) -> EvalLog:
    return run_eval(task, model, log_dir, max_connections=32, max_samples=32, **limits)


def answers(counts: list[Counts]) -> int:
    """About the answers the samples read: every audit and perception call, and every
    navigation step (a tool navigator's step may take several calls)."""
    return int(sum(c.get("calls", 0) + c.get("audit_model_calls", 0) + c.get("steps", 0) for c in counts))


FAST: list[tuple[str, Callable[[], Task], str, dict[str, Any]]] = [
    (
        "detection: distractors, edits, MA, holes, structured",
        lambda: detection(
            regime="L2,L3,MA", n_seeds=1, batch_size=8, distractors=8, edits=True, observation="holes", structured=True
        ),
        "fuzz/rates-a",
        {},
    ),
    (
        "detection: crops with edits, both modalities",
        lambda: detection(regime="L3", n_seeds=1, modality="both", memory="crops", edits=True, batch_size=16),
        "fuzz/rates-b",
        {},
    ),
    (
        "detection: audits cut short by a token limit",
        lambda: detection(regime="L3", n_seeds=2, distractors=4),
        "fuzz/rates-c",
        {"token_limit": 12_000},
    ),
    (
        "navigation: every strategy, distractors, filter unknown, fog, holes, structured, MA",
        lambda: navigation(
            regime="L3,MA",
            n_seeds=1,
            episodes=2,
            max_steps=14,
            strategies="nomemory,nofilter,omcd,selfverify,oracle,localverify",
            distractors=8,
            filter="unknown",
            view_radius=1,
            observation="holes",
            structured=True,
        ),
        "fuzz/rates-d",
        {},
    ),
    (
        "navigation: the tool navigator",
        lambda: navigation(regime="L3", n_seeds=1, episodes=1, max_steps=6, strategies="nofilter,omcd", agent="tools"),
        "fuzz/rates-e",
        {},
    ),
    (
        "navigation: the observer, which reaches the goal",
        lambda: navigation(regime="L2,L3", n_seeds=1, episodes=1, strategies="nofilter,omcd,oracle", view_radius=2),
        "spatialstale/observer",
        {},
    ),
    ("perception: the random reader", lambda: perception(regime="L2,L3", n_seeds=2), "spatialstale/random", {}),
    (
        "perception: observations cut short by a token limit",
        lambda: perception(regime="L3", n_seeds=1, observation="holes"),
        "fuzz/rates-f",
        {"token_limit": 5_000},
    ),
]


def _kind(task: Task) -> str:
    return str(task.name).removeprefix("spatialstale/")


@pytest.mark.parametrize(("make", "model", "limits"), [r[1:] for r in FAST], ids=[r[0] for r in FAST])
def test_every_rate_is_its_declared_numerator_over_its_denominator(
    make: Callable[[], Task], model: str, limits: dict[str, Any], tmp_path: Path
) -> None:
    task = make()
    counts = check_rates(_run(task, model, tmp_path, **limits), _kind(task))
    print(f"{answers(counts)} answers")
    if limits:
        assert any(c["limit"] for c in counts), "no sample was cut short: the limit path went untested"


SLOW: list[tuple[str, Callable[[], Task], str, dict[str, Any]]] = [
    (
        "detection: one entry a call, every regime, distractors",
        lambda: detection(regime="L1,L2,L3,MA", n_seeds=4, batch_size=1, distractors=16),
        "fuzz/rates-slow-a",
        {},
    ),
    (
        "detection: edits, holes, structured, vision",
        lambda: detection(
            regime="L1,L2,L3,MA", n_seeds=4, modality="vision", edits=True, observation="holes", structured=True
        ),
        "fuzz/rates-slow-b",
        {},
    ),
    (
        "detection: crops, edits",
        lambda: detection(regime="L2,L3,MA", n_seeds=3, modality="vision", memory="crops", edits=True),
        "fuzz/rates-slow-c",
        {},
    ),
    (
        "detection: token limits over distractors and edits",
        lambda: detection(regime="L2,L3", n_seeds=6, batch_size=4, distractors=8, edits=True),
        "fuzz/rates-slow-d",
        {"token_limit": 20_000},
    ),
    *(
        (
            f"navigation: filter {mode}, fog {radius}",
            lambda mode=mode, radius=radius: navigation(
                regime="L1,L2,L3,MA",
                n_seeds=1,
                episodes=2,
                strategies="nomemory,nofilter,omcd,selfverify,oracle,localverify",
                filter=mode,
                view_radius=radius,
                distractors=4,
            ),
            f"fuzz/rates-slow-{mode}-{radius}",
            {},
        )
        for mode in ("delete", "unknown")
        for radius in ("full", 1)
    ),
    (
        "navigation: the tool navigator under a message limit",
        lambda: navigation(
            regime="L2,L3,MA", n_seeds=2, episodes=1, strategies="nofilter,omcd,selfverify", agent="tools"
        ),
        "fuzz/rates-slow-tools",
        {"message_limit": 12},
    ),
    (
        "perception: vision and holes, under a token limit",
        lambda: perception(regime="L1,L2,L3,MA", n_seeds=3, modality="both", observation="holes"),
        "fuzz/rates-slow-p",
        {"token_limit": 6_000},
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(("make", "model", "limits"), [r[1:] for r in SLOW], ids=[r[0] for r in SLOW])
def test_every_rate_of_thousands_of_nasty_answers_is_its_declared_numerator_over_its_denominator(
    make: Callable[[], Task], model: str, limits: dict[str, Any], tmp_path: Path
) -> None:
    task = make()
    counts = check_rates(_run(task, model, tmp_path, **limits), _kind(task))
    print(f"{answers(counts)} answers")
    if limits:
        assert any(c["limit"] for c in counts), "no sample was cut short: the limit path went untested"


def _unreadable(messages: list[ChatMessage], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
    output = ModelOutput.from_content(model="unreadable", content="I cannot tell.")
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def test_unreadable_answers_with_distractors_leave_each_judgment_unanswered_once(tmp_path: Path) -> None:
    # every answer unreadable: every entry of every window, the 16 distractors among
    # them, is unanswered once, and the rate is 1 (it was 80/64 when the denominator
    # counted the cell entries alone)
    model = get_model("mockllm/model", custom_outputs=_unreadable, memoize=False)
    log = run_eval(detection(regime="L2,L3", n_seeds=1, distractors=16), model, tmp_path)
    for sample in log.samples or []:
        value = (sample.scores or {})["stale_f1"].value
        assert isinstance(value, dict)
        assert value["unanswered"] == value["judgments"] == (64 + 16) * value["windows"]
        assert value["unparseable"] == value["calls"] == 8 * value["windows"]
    assert metrics(log)["unanswered_rate"] == metrics(log)["unparseable_rate"] == 1.0
