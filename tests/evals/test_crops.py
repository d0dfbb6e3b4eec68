"""``-T memory=crops`` through the real detection task, into tmp log dirs.

The memory entries are pictures (each an id line, then its crop); the observer reads
each crop's centre cell and label from the pixels and scores F1 1.0, the credulous
agent flags nothing. Batches, answers, scores and metrics are those of the text
audit; ``memory=text`` (the default) leaves every log as it was.
"""

from __future__ import annotations

import base64
import itertools
import math
from pathlib import Path

import pytest
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalSample, read_eval_log, resolve_sample_attachments
from inspect_ai.model import ContentImage, ContentText

from spatialstale.env import default_seeds, entry_crop, make_instance
from spatialstale.evals.detection import detection
from spatialstale.protocol import TaskParameterError
from tests.conftest import metrics, run_eval

SEEDS = list(default_seeds()[:2])
SEED_ARG = ",".join(map(str, SEEDS))


def calls(sample: EvalSample) -> list[ModelEvent]:
    resolved = resolve_sample_attachments(sample)
    return [e for e in resolved.events if isinstance(e, ModelEvent)]


def test_the_observer_reads_the_crops_and_scores_f1_one(tmp_path: Path) -> None:
    batch = 20
    log = run_eval(
        detection(seeds=SEEDS[0], regime="L1,L2,L3", modality="vision", memory="crops", batch_size=batch),
        "spatialstale/observer",
        tmp_path,
    )
    score = metrics(log)
    for regime in ("L1", "L2", "L3"):
        assert score[f"f1_mean_{regime}"] == 1.0
    assert score["unparseable_rate"] == score["unanswered_rate"] == score["conflicting_rate"] == 0.0
    assert "distractor_flag_rate" not in score
    assert (log.eval.metadata or {})["memory"] == "crops"
    assert "memory=crops" in (log.eval.tags or [])
    # read back from the .eval file, as the viewer reads it
    for sample in read_eval_log(log.location).samples or []:
        meta = sample.metadata
        assert sample.id == f"{meta['regime']}-crops-s{meta['seed']}"
        assert meta["memory"] == "crops"
        value = sample.scores["stale_f1"].value  # type: ignore[index]
        windows = value["windows"]  # type: ignore[index]
        events = calls(sample)
        # each call shows the grid's image, then each entry of its batch as an id line and its crop,
        # recomputed from the sample's metadata alone
        instance = make_instance(meta["seed"], meta["regime"], meta["size"])
        # the same batching as the text audit: ⌈entries/B⌉ calls an audit
        assert len(events) == value["calls"] == windows * math.ceil(len(instance.memory) / batch)  # type: ignore[index]
        first = events[0].input[-1].content
        assert not isinstance(first, str)
        images = [p for p in first if isinstance(p, ContentImage)]
        assert len(images) == 1 + batch
        ids = [p.text.strip() for p, q in itertools.pairwise(first) if isinstance(q, ContentImage)][1:]
        assert ids == [f"[{e.id}]" for e in instance.memory[:batch]]
        crops = [entry_crop(instance, e) for e in instance.memory[:batch]]
        assert [img.image for img in images[1:]] == [
            "data:image/png;base64," + base64.b64encode(c).decode() for c in crops
        ]
        # no textual claim
        text = "\n".join(p.text for p in first if isinstance(p, ContentText))
        assert "SAFE at" not in text and "DANGER at" not in text
        assert "pictures" in events[0].input[0].text


def test_the_credulous_agent_flags_nothing(tmp_path: Path) -> None:
    log = run_eval(
        detection(seeds=SEED_ARG, regime="L2", modality="vision", memory="crops"), "spatialstale/credulous", tmp_path
    )
    score = metrics(log)
    assert score["f1_mean"] == 0.0 and score["micro_recall"] == 0.0
    assert score["unparseable_rate"] == score["unanswered_rate"] == 0.0


def test_text_memory_is_the_default_log() -> None:
    default, text = detection(seeds=SEED_ARG), detection(seeds=SEED_ARG, memory="text")
    assert [s.id for s in text.dataset] == [s.id for s in default.dataset] == [f"L2-s{s}" for s in SEEDS]
    assert [s.metadata for s in text.dataset] == [s.metadata for s in default.dataset]
    assert all((s.metadata or {})["memory"] == "text" for s in default.dataset)
    assert text.metadata == default.metadata and (default.metadata or {})["memory"] == "text"
    assert text.tags == default.tags
    assert text.version == default.version == 4


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"memory": "crops"},
            "memory=crops compares pictures of the memory with the current grid's image: "
            "it needs modality vision or both; got modality=text",
        ),
        (
            {"memory": "crops", "modality": "vision", "distractors": 4},
            "memory=crops draws each entry as a picture of its cell and distractors are about no cell: "
            "use distractors=0 with memory=crops; got distractors=4",
        ),
        ({"memory": "pictures"}, "memory must be one of text, crops; got 'pictures'"),
    ],
)
def test_a_bad_combination_fails_before_any_model_call(args: dict[str, object], message: str) -> None:
    with pytest.raises(TaskParameterError) as error:
        detection(**args)
    assert str(error.value) == message


@pytest.mark.slow
def test_the_colourblind_agent_sees_remembered_holes_as_ice(tmp_path: Path) -> None:
    # with both, the current grid is read from the listing (exact) and the crops from pixels:
    # a remembered hole reads as ice, so every freeze is missed and every hole still a hole is flagged
    log = run_eval(
        detection(seeds=SEED_ARG, regime="L1,L2", modality="both", memory="crops"), "spatialstale/colourblind", tmp_path
    )
    for sample in log.samples or []:
        value = sample.scores["stale_f1"].value  # type: ignore[index]
        assert value["freeze_recall"] in (0.0, None) or math.isnan(value["freeze_recall"])  # type: ignore[index]
        assert value["thaw_recall"] in (1.0, None) or math.isnan(value["thaw_recall"])  # type: ignore[index]
        assert value["fp"] > 0  # type: ignore[index]
    vision = run_eval(
        detection(seeds=SEED_ARG, regime="L2", modality="vision", memory="crops"),
        "spatialstale/colourblind",
        tmp_path / "vision",
    )
    assert metrics(vision)["f1_mean"] == 0.0 and metrics(vision)["micro_recall"] == 0.0
