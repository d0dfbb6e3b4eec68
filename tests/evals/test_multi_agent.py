"""``-T regime=MA`` (another agent's changes) through the real tasks, into tmp log dirs.

The observation never shows a cell the other agent changed: each cell of its route is
covered by its tracks (``?`` in the listing, a brown tile in the image) and the prompt
tells its moves and habit. The observer reads them and flags exactly the stale
entries (text and vision) and never dies; the credulous agent trusts memory, flags
nothing, and walks onto a broken cell.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, EvalSample, resolve_sample_attachments
from inspect_ai.model import ContentImage
from PIL import Image

from spatialstale.env import TRACK_COLOUR, default_seeds, make_instance, probe_pixel, route_of
from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.protocol import TaskParameterError
from tests.conftest import episode_log, run_eval

SEEDS = ",".join(str(s) for s in default_seeds()[:4])
ROOT = Path(__file__).resolve().parents[2]


def values(sample: EvalSample) -> dict[str, Any]:
    assert sample.scores is not None
    [score] = sample.scores.values()
    assert isinstance(score.value, dict)
    return score.value


def model_inputs(sample: EvalSample) -> list[ModelEvent]:
    return [e for e in resolve_sample_attachments(sample).events if isinstance(e, ModelEvent)]


def test_detection_text_and_vision(tmp_path: Path) -> None:
    for modality in ("text", "vision"):
        for model, f1, recall in (("spatialstale/observer", 1.0, 1.0), ("spatialstale/credulous", 0.0, 0.0)):
            log = run_eval(
                detection(regime="MA", seeds=SEEDS, modality=modality), model, tmp_path / f"{modality}-{model[13:]}"
            )
            assert log.results is not None
            for sample in log.samples or []:
                meta = sample.metadata
                instance = make_instance(meta["seed"], "MA")
                assert sample.id == f"MA-s{meta['seed']}"
                assert meta["route"] == [list(p) for p in route_of(instance)]
                assert meta["stale_ratio"] == instance.stale_ratio(instance.final_grid) > 0
                v = values(sample)
                assert v["f1"] == f1 and v["recall"] == recall and v["unparseable"] == 0, (modality, model)
                if modality == "text" and model.endswith("observer"):
                    assert_changed_cells_hidden(sample, instance)
                if modality == "vision" and model.endswith("observer"):
                    assert_changed_cells_drawn_as_tracks(sample, instance)


def assert_changed_cells_hidden(sample: EvalSample, instance: Any) -> None:
    for event in model_inputs(sample):
        text = "\n".join(m.text for m in event.input)
        assert "Another agent crossed the lake before you" in text
        assert "it breaks the ice of every cell it leaves" in text
        for c in instance.changes:
            assert f"({c.row},{c.col})=?" in text and f"({c.row},{c.col})=H" not in text


def assert_changed_cells_drawn_as_tracks(sample: EvalSample, instance: Any) -> None:
    for event in model_inputs(sample):
        images = [
            p for m in event.input if isinstance(m.content, list) for p in m.content if isinstance(p, ContentImage)
        ]
        [image] = images
        raw = base64.b64decode(image.image.partition(",")[2])
        pixels = Image.open(io.BytesIO(raw)).convert("RGB")
        for c in instance.changes:
            assert pixels.getpixel(probe_pixel((c.row, c.col))) == TRACK_COLOUR


def episodes(log: EvalLog) -> list[tuple[EvalSample, dict[str, Any]]]:
    return [(s, episode_log(s)) for s in log.samples or []]


def test_navigation_observer_never_dies_credulous_nofilter_does(tmp_path: Path) -> None:
    observer = run_eval(
        navigation(regime="MA", seeds=SEEDS, episodes=1, strategies="nofilter,omcd,oracle"),
        "spatialstale/observer",
        tmp_path / "observer",
    )
    for sample, _ in episodes(observer):
        assert values(sample)["death"] == 0, sample.id
    credulous = run_eval(
        navigation(regime="MA", seeds=SEEDS, episodes=1, strategies="nofilter,oracle"),
        "spatialstale/credulous",
        tmp_path / "credulous",
    )
    died_on_track = 0
    for sample, episode in episodes(credulous):
        instance = make_instance(sample.metadata["seed"], "MA")
        if sample.metadata["strategy"] == "oracle":
            assert values(sample)["death"] == 0, sample.id
        elif values(sample)["death"]:
            last = tuple(episode["trajectory"][-1])
            assert last in route_of(instance)[:-1]
            died_on_track += 1
    assert died_on_track >= 1


def test_bad_regime_names_ma() -> None:
    """In process; ``tests/evals/test_cli.py`` checks the same one line from ``inspect eval``."""
    for task in (detection, navigation):
        with pytest.raises(TaskParameterError) as error:
            task(regime="M4")
        assert str(error.value) == (
            "regime must be one of L1, L2, L3, MA (or none), an installed plug-in's name or module:Class; got 'M4'"
        )


def test_fog_and_the_tool_navigator_see_the_route(tmp_path: Path) -> None:
    """Under fog the tracks beyond the view are fogged, but the route is still told: the
    observer infers the broken cells and never dies; so does the tool navigator."""
    seeds = ",".join(str(s) for s in default_seeds()[:2])
    for name, extra in (("fog", {"view_radius": 1}), ("tools", {"agent": "tools"})):
        log = run_eval(
            navigation(regime="MA", seeds=seeds, episodes=1, strategies="nofilter,omcd", **extra),
            "spatialstale/observer",
            tmp_path / name,
        )
        for sample in log.samples or []:
            assert values(sample)["death"] == 0, (name, sample.id)
            texts = [
                "\n".join(m.text for m in event.input) + "\n".join(m.text for m in sample.messages)
                for event in model_inputs(sample)
            ]
            assert texts and all("Another agent crossed the lake before you" in t for t in texts)


def test_study_runs_ma_beside_the_paper_regimes(tmp_path: Path, capsys: Any) -> None:
    from spatialstale.study._cli import main

    base = ["study", "--model", "spatialstale/observer", "--seeds", "4810", "--modalities", "text"]
    base += ["--strategies", "nofilter", "--episodes", "1", "--display", "none"]
    assert main([*base, "--regimes", "L1,L2,L3,MA", "--dry-run"]) == 0
    out = capsys.readouterr().out
    for regime in ("L1", "L2", "L3", "MA"):
        assert f"detection {regime} text" in out and f"navigation {regime} text nofilter" in out
    assert main([*base, "--regimes", "none", "--dry-run"]) == 2
    assert "regimes must be among L1, L2, L3, MA; got 'none'" in capsys.readouterr().err
    assert main([*base, "--regimes", "MA", "--log-dir", str(tmp_path)]) == 0
    from inspect_ai.log import list_eval_logs, read_eval_log

    logs = [read_eval_log(info) for info in list_eval_logs(str(tmp_path))]
    assert sorted(str(s.id) for log in logs for s in log.samples or []) == ["MA-nofilter-s4810", "MA-s4810"]
