"""The perception probe end to end: real ``eval()`` runs into a tmp log dir, against the
reference agents and a scripted ``mockllm`` model that answers in messy forms."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.log import EvalLog, EvalSample, list_eval_logs, read_eval_log, resolve_sample_attachments
from inspect_ai.model import ChatMessage, Content, ContentImage, ContentText, Model, ModelOutput, ModelUsage, get_model

from spatialstale.env import HOLES_NOTE, make_instance
from spatialstale.evals.perception import perception
from spatialstale.protocol import Sight, audit_messages, call_kind, perception_messages
from spatialstale.protocol._prompts import CELLS_HEADER
from spatialstale.solvers import detection_windows

SEED = 4810
ROOT = Path(__file__).resolve().parents[2]
_ASKED = re.compile(r"^\((\d+),(\d+)\)$", re.MULTILINE)
_LISTED = re.compile(r"\((\d+),(\d+)\)=([SFHG])")


def run(task: Any, model: str | Model, tmp_path: Path, **kwargs: Any) -> EvalLog:
    [log] = eval(task, model=model, log_dir=str(tmp_path), display="none", log_realtime=False, **kwargs)
    assert log.status == "success", log.error
    assert log.samples
    return log


def value(sample: EvalSample) -> dict[str, Any]:
    assert sample.scores is not None
    v = sample.scores["perception_accuracy"].value
    assert isinstance(v, dict)
    return v


def metrics(log: EvalLog) -> dict[str, float]:
    assert log.results is not None
    return {name: float(m.value) for name, m in log.results.scores[0].metrics.items()}


def model_calls(sample: EvalSample) -> int:
    return sum(1 for e in sample.events if e.event == "model")


def observations(regime: str, seed: int = SEED) -> list[tuple[str, ...]]:
    instance = make_instance(seed, regime)
    if regime == "L3":
        return [instance.grid_after(event.step) for event in instance.schedule]
    return [instance.initial_grid]


@dataclass
class Reader:
    """A scripted model: reads the asked cells and the listed grid from the real prompt
    and answers with ``answer(cells, grid)``; records every call."""

    answer: Callable[[list[tuple[int, int]], dict[tuple[int, int], str]], str]
    calls: list[list[tuple[int, int]]] = field(default_factory=list)
    configs: list[Any] = field(default_factory=list)

    def __call__(self, messages: list[ChatMessage], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        assert call_kind(messages) == "perception"
        text = messages[-1].text
        cells = [(int(r), int(c)) for r, c in _ASKED.findall(text.split(CELLS_HEADER, 1)[1])]
        grid = {(int(r), int(c)): t for r, c, t in _LISTED.findall(text)}
        self.calls.append(cells)
        self.configs.append(config)
        content = self.answer(cells, grid)
        output = ModelOutput.from_content(model="reader", content=content)
        # a usage of its own, so Inspect needs no tokenizer download to count tokens
        tokens = (len(text) + len(content)) // 4 + 2
        output.usage = ModelUsage(
            input_tokens=len(text) // 4 + 1, output_tokens=len(content) // 4 + 1, total_tokens=tokens
        )
        return output

    def model(self) -> Model:
        return get_model("mockllm/model", custom_outputs=self, memoize=False)


# --- the reference agents -------------------------------------------------------------


@pytest.mark.parametrize("modality", ["text", "vision", "both"])
def test_observer_reads_every_grid_exactly(modality: str, tmp_path: Path) -> None:
    log = run(perception(regime="L1,L3", seeds=[SEED, 1734], modality=modality), "spatialstale/observer", tmp_path)
    for sample in log.samples or []:
        v = value(sample)
        assert (v["accuracy"], v["hole_recall"], v["ice_recall"], v["type_accuracy"]) == (1.0, 1.0, 1.0, 1.0)
        assert (v["unparseable"], v["unanswered"], v["conflicting"], v["unknown_cells"]) == (0, 0, 0, 0)
    m = metrics(log)
    assert next(iter(m)) == "accuracy"
    assert m["accuracy"] == m["accuracy_L1"] == m["accuracy_L3"] == m["balanced_accuracy"] == 1.0


def test_the_holes_only_listing_reads_the_same_grid(tmp_path: Path) -> None:
    log = run(perception(regime="L2", seeds=[SEED], observation="holes"), "spatialstale/observer", tmp_path)
    [sample] = log.samples or []
    assert value(sample)["accuracy"] == 1.0 and sample.metadata["observation"] == "holes"
    event = next(e for e in resolve_sample_attachments(sample).events if e.event == "model")
    assert HOLES_NOTE in event.input[-1].text  # type: ignore[union-attr]


@pytest.mark.parametrize(("modality", "blind"), [("vision", True), ("text", False), ("both", False)])
def test_colourblind_agent_misses_every_hole_in_the_image_only(modality: str, blind: bool, tmp_path: Path) -> None:
    log = run(perception(regime="L1,L3", seeds=[SEED, 1734], modality=modality), "spatialstale/colourblind", tmp_path)
    for sample in log.samples or []:
        v = value(sample)
        grids = observations(sample.metadata["regime"], sample.metadata["seed"])
        holes = sum(row.count("H") for grid in grids for row in grid)
        cells = sum(len(grid) ** 2 for grid in grids)
        assert v["holes"] == holes and v["cells"] == cells
        if blind:
            assert (v["hole_recall"], v["ice_recall"], v["balanced_accuracy"]) == (0.0, 1.0, 0.5)
            assert v["hole_as_ice"] == holes and v["accuracy"] == pytest.approx(1 - holes / cells)
        else:
            assert (v["hole_recall"], v["ice_recall"], v["accuracy"]) == (1.0, 1.0, 1.0)
    assert metrics(log)["hole_recall"] == (0.0 if blind else 1.0)


def test_random_agent_reads_about_half_the_cells(tmp_path: Path) -> None:
    log = run(perception(n_seeds=5), "spatialstale/random", tmp_path, seed=7)
    m = metrics(log)
    assert 0.3 < m["accuracy"] < 0.7 and 0.2 < m["hole_recall"] < 0.8
    assert m["unparseable_rate"] == 0.0


# --- batching, windows and the observation -------------------------------------------


@pytest.mark.parametrize("batch_size", [1, 7, 10, 64])
@pytest.mark.parametrize("regime", ["L2", "L3"])
def test_calls_per_observation_is_ceil_n2_over_b_and_every_cell_is_asked_once(
    batch_size: int, regime: str, tmp_path: Path
) -> None:
    reader = Reader(lambda cells, grid: json.dumps([{"cell": f"({r},{c})", "type": grid[r, c]} for r, c in cells]))
    log = run(perception(regime=regime, seeds=[SEED], batch_size=batch_size), reader.model(), tmp_path)
    [sample] = log.samples or []
    windows = len(observations(regime))
    per = math.ceil(64 / batch_size)
    assert model_calls(sample) == value(sample)["calls"] == windows * per
    assert value(sample)["windows"] == windows
    for w in range(windows):
        asked = [cell for call in reader.calls[w * per : (w + 1) * per] for cell in call]
        assert asked == [(r, c) for r in range(8) for c in range(8)]
    assert value(sample)["accuracy"] == 1.0


def test_probe_reads_the_detection_windows_grids(tmp_path: Path) -> None:
    [sample] = run(perception(regime="L3", seeds=[SEED]), "spatialstale/observer", tmp_path).samples or []
    assert sample.scores is not None
    logged = [w["grid"] for w in sample.scores["perception_accuracy"].metadata["windows"]]  # type: ignore[index]
    assert logged == [list(grid) for _, grid in detection_windows(make_instance(SEED, "L3"))]


@pytest.mark.parametrize("modality", ["text", "vision", "both"])
def test_probe_shows_the_observation_an_audit_shows(modality: str) -> None:
    instance = make_instance(SEED, "L2")
    grid = instance.initial_grid
    probe = perception_messages([(0, 0), (0, 1)], grid, instance.start, Sight(modality))[1].content
    audit = audit_messages(instance.memory[:2], grid, instance.start, Sight(modality))[1].content
    assert isinstance(probe, list) and isinstance(audit, list)
    shown = [p for p in probe if not (isinstance(p, ContentText) and p.text.lstrip().startswith(CELLS_HEADER))]
    observation = [p for p in audit if not (isinstance(p, ContentText) and p.text.lstrip().startswith("Memory"))]
    assert [_shown(p) for p in shown] == [_shown(p) for p in observation]


def _shown(part: Content) -> str:
    # what the model sees, not how the part is marked for caching
    return part.text if isinstance(part, ContentText) else part.image if isinstance(part, ContentImage) else ""


# --- answers that are not clean ------------------------------------------------------


def test_unparseable_unanswered_conflicting_and_unknown_cells_are_counted(tmp_path: Path) -> None:
    def answer(cells: list[tuple[int, int]], grid: dict[tuple[int, int], str]) -> str:
        if cells[0] == (0, 0):
            return "I am not sure what the grid shows."  # unparseable: 10 cells unanswered
        if cells[0] == (1, 2):
            # (1,2) conflicting, (1,3) unanswered, (9,9) outside the batch, the rest as prose
            lines = ["(1,2): hole", "(1,2): ice", "(9,9): hole"]
            lines += [f"({r},{c}): {'hole' if grid[r, c] == 'H' else 'ice'}" for r, c in cells[2:]]
            return "\n".join(lines)
        return json.dumps([{"row": r, "col": c, "cell": grid[r, c]} for r, c in cells])

    log = run(perception(regime="L2", seeds=[SEED]), Reader(answer).model(), tmp_path)
    [sample] = log.samples or []
    v = value(sample)
    assert (v["unparseable"], v["unanswered"], v["conflicting"], v["unknown_cells"]) == (1, 11, 1, 1)
    assert v["calls"] == 7 and v["cells"] == 64
    assert v["accuracy"] == pytest.approx(52 / 64)
    m = metrics(log)
    assert m["unparseable_rate"] == pytest.approx(1 / 7)
    assert m["unanswered_rate"] == pytest.approx(11 / 64)
    assert m["conflicting_rate"] == pytest.approx(1 / 64)


WORDS = {"S": "start", "F": "frozen ice", "H": "hole", "G": "goal"}
FORMS: list[Callable[[list[tuple[int, int]], dict[tuple[int, int], str]], str]] = [
    lambda cells, grid: json.dumps([{"row": r, "col": c, "cell": grid[r, c]} for r, c in cells]),
    lambda cells, grid: "\n".join(json.dumps({"cell": f"({r},{c})", "type": WORDS[grid[r, c]]}) for r, c in cells),
    lambda cells, grid: "{" + ", ".join(f"({r}, {c}): '{WORDS[grid[r, c]]}'" for r, c in cells) + "}",
    lambda cells, grid: "Sure.\n" + "\n".join(f"- ({r},{c}): **{WORDS[grid[r, c]]}**" for r, c in cells),
    lambda cells, grid: (
        "<think>every cell looks like ice</think>```json\n"
        + json.dumps({"cells": [{"cell": f"r{r}c{c}", "type": grid[r, c].lower()} for r, c in cells]})
        + "\n```"
    ),
    lambda cells, grid: json.dumps([[r, c, WORDS[grid[r, c]].upper()] for r, c in cells]),
    lambda cells, grid: json.dumps(
        {f"({r}, {c})": {"type": grid[r, c], "is_hole": grid[r, c] == "H"} for r, c in cells}
    ),
]


def test_correct_answers_in_the_forms_real_models_write_score_one(tmp_path: Path) -> None:
    calls = iter(range(10_000))
    reader = Reader(lambda cells, grid: FORMS[next(calls) % len(FORMS)](cells, grid))
    log = run(perception(regime="L1,L3", seeds=[SEED]), reader.model(), tmp_path, max_connections=1)
    for sample in log.samples or []:
        v = value(sample)
        assert (v["accuracy"], v["type_accuracy"], v["unparseable"], v["unanswered"]) == (1.0, 1.0, 0, 0)


def test_a_hole_read_as_ice_and_ice_read_as_hole_fill_the_confusion_matrix(tmp_path: Path) -> None:
    # every cell read inverted: the confusion matrix is all off-diagonal
    reader = Reader(
        lambda cells, grid: json.dumps({f"({r},{c})": "ice" if grid[r, c] == "H" else "hole" for r, c in cells})
    )
    log = run(perception(regime="L1", seeds=[SEED]), reader.model(), tmp_path)
    [sample] = log.samples or []
    v = value(sample)
    holes = sum(row.count("H") for row in observations("L1")[0])
    assert (v["hole_as_ice"], v["ice_as_hole"], v["hole_as_hole"], v["ice_as_ice"]) == (holes, 64 - holes, 0, 0)
    assert (v["accuracy"], v["balanced_accuracy"]) == (0.0, 0.0)


def test_structured_output_sends_the_batchs_schema(tmp_path: Path) -> None:
    reader = Reader(
        lambda cells, grid: json.dumps({"cells": [{"cell": f"({r},{c})", "type": grid[r, c]} for r, c in cells]})
    )
    log = run(perception(regime="L2", seeds=[SEED], structured=True), reader.model(), tmp_path)
    assert value((log.samples or [])[0])["accuracy"] == 1.0
    schema = reader.configs[0].response_schema
    assert schema is not None and schema.name == "grid_cells"
    item = schema.json_schema.properties["cells"].items
    assert item.properties["cell"].enum == [f"({r},{c})" for r, c in reader.calls[0]]
    assert item.properties["type"].enum == ["S", "F", "H", "G"]
    unstructured = Reader(reader.answer)
    run(perception(regime="L2", seeds=[SEED]), unstructured.model(), tmp_path / "off")
    assert unstructured.configs[0].response_schema is None


def test_a_sample_limit_scores_the_cells_read_so_far(tmp_path: Path) -> None:
    reader = Reader(lambda cells, grid: json.dumps([{"cell": f"({r},{c})", "type": grid[r, c]} for r, c in cells]))
    log = run(perception(regime="L2", seeds=[SEED]), reader.model(), tmp_path, message_limit=2)
    [sample] = log.samples or []
    v = value(sample)
    assert v["limit"] == 1 and v["unanswered"] == 64 and v["accuracy"] == 0.0
    assert metrics(log)["limit_rate"] == 1.0


def test_a_token_limit_midway_keeps_the_batches_answered_before_it(tmp_path: Path) -> None:
    reader = Reader(lambda cells, grid: json.dumps([{"cell": f"({r},{c})", "type": grid[r, c]} for r, c in cells]))
    log = run(perception(regime="L2", seeds=[SEED]), reader.model(), tmp_path, token_limit=600)
    [sample] = log.samples or []
    v = value(sample)
    assert v["limit"] == 1 and 0 < v["calls"] < 7
    # every cell of an answered batch was read right; every other cell is unanswered
    assert v["unanswered"] == 64 - 10 * v["calls"]
    assert v["accuracy"] == pytest.approx(10 * v["calls"] / 64)
    assert sample.scores is not None
    assert "Token limit" in sample.scores["perception_accuracy"].metadata["limit"]  # type: ignore[index]


def test_a_custom_prompt_reaches_the_model_with_size_filled_in(tmp_path: Path) -> None:
    prompt = 'Read the {size}x{size} grid. Answer {"(0,0)": "S"}.'
    reader = Reader(lambda cells, grid: json.dumps({f"({r},{c})": grid[r, c] for r, c in cells}))
    log = run(perception(regime="L2", seeds=[SEED], perception_prompt=prompt), reader.model(), tmp_path)
    [sample] = log.samples or []
    event = next(e for e in sample.events if e.event == "model")
    assert event.input[0].text == 'Read the 8x8 grid. Answer {"(0,0)": "S"}.'  # type: ignore[union-attr]
    assert value(sample)["accuracy"] == 1.0


# --- parameters and the command line -------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"regime": "L4"}, "regime must be one of L1, L2, L3"),
        ({"modality": "smell"}, "modality must be one of text, vision, both"),
        ({"batch_size": 0}, "batch_size must be an integer of at least 1"),
        ({"n_seeds": 0}, "n_seeds must be an integer of at least 1"),
        ({"seeds": [3, 3]}, "seeds must be distinct"),
        ({"size": 2}, "size must be an integer of at least 4"),
        ({"perception_prompt": " "}, "perception_prompt must not be empty"),
        ({"structured": "maybe"}, "structured must be one of true, false"),
        ({"observation": "some"}, "observation must be one of full, holes"),
    ],
)
def test_bad_parameters_fail_with_the_valid_choices(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        perception(**kwargs)


def test_samples_pair_with_the_detection_tasks() -> None:
    task = perception(regime="L1,L2", seeds="4810, 1734", modality="vision", batch_size=5)
    assert [s.id for s in task.dataset] == ["L1-s4810", "L1-s1734", "L2-s4810", "L2-s1734"]
    meta = task.dataset[0].metadata or {}
    assert (meta["seed"], meta["regime"], meta["modality"], meta["batch_size"]) == (4810, "L1", "vision", 5)


def inspect_eval(*args: str, log_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", *args, "--log-dir", str(log_dir), "--display", "plain"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    "task", [pytest.param(t, marks=pytest.mark.slow) for t in ("spatialstale/perception", "evals/perception.py")]
)
def test_observer_scores_one_in_vision_from_the_command_line(task: str, tmp_path: Path) -> None:
    result = inspect_eval(
        task, "--model", "spatialstale/observer", "-T", "modality=vision", "-T", "seeds=4810", log_dir=tmp_path
    )
    assert result.returncode == 0, result.stderr
    [info] = list_eval_logs(str(tmp_path))
    log = read_eval_log(info)
    assert log.status == "success" and log.eval.task.endswith("perception") and log.eval.task_version == 3
    assert metrics(log)["accuracy"] == 1.0


@pytest.mark.slow  # an `inspect eval` subprocess; the fast tier pins the one line in tests/evals/test_cli.py
def test_a_bad_value_is_one_line_on_stderr(tmp_path: Path) -> None:
    result = inspect_eval(
        "spatialstale/perception", "--model", "spatialstale/observer", "-T", "modality=smell", log_dir=tmp_path
    )
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == ["modality must be one of text, vision, both; got 'smell'"]
