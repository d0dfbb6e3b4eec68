"""Distractors behind the seams (``protocol/_distractors.py``): the core reaches them only
through the registry's hooks, and each hook gives what the paper's code gave by name."""

from __future__ import annotations

import pytest

from spatialstale.env import make_instance, with_distractor_entries
from spatialstale.protocol import (
    DetectionSettings,
    NavigationSettings,
    TaskParameterError,
    active_extensions,
    axes_of,
    extension_audit_notes,
    extension_audit_result,
    extension_entry_ids,
    extension_instance,
    extension_instance_metadata,
    extension_score,
    extension_scores,
    extension_wrong_results,
)
from spatialstale.scorers import COUNTS, METRICS

SEED = 4810


def test_the_memory_seam_puts_the_entries_in_the_store_and_the_metadata() -> None:
    settings = DetectionSettings.read({"distractors": 5, "seeds": str(SEED)})
    paper = make_instance(SEED, "L2", 8)
    instance = extension_instance(paper, settings.values())
    assert instance == with_distractor_entries(paper, 5)
    extra = [e for e in instance.memory if not e.is_cell]
    assert len(instance.memory) == 69 and len(extra) == 5
    meta = extension_instance_metadata(instance)
    assert meta["distractor_entries"] == [{"id": e.id, "topic": e.topic, "text": e.text} for e in extra]
    assert len(meta["cell_ids"]) == 64  # type: ignore[arg-type]
    assert meta["distractor_bank"] == "v1"
    assert extension_entry_ids(meta) == {e.id for e in extra}
    # a solver rebuilds it from the sample's metadata, which records K
    sample = {**meta, **settings.sample_metadata()}
    assert sample["distractors"] == 5
    assert extension_instance(paper, sample) == instance
    # the paper's protocol: the very instance drawn, and nothing recorded
    default = DetectionSettings.read({"seeds": str(SEED)})
    assert extension_instance(paper, default.values()) is paper
    assert extension_instance_metadata(paper) == {}
    assert default.sample_metadata()["distractors"] == 0
    assert extension_entry_ids({}) == frozenset()


def test_the_settings_seam_records_tags_and_refuses() -> None:
    on = NavigationSettings.read({"distractors": "3", "seeds": str(SEED)})
    assert on.task_metadata()["distractors"] == 3 and on.sample_metadata()["distractors"] == 3
    assert "distractors=3" in on.tags()
    assert on.extension_args() == {"observation": "full", "view_radius": None, "distractors": 3}
    assert [a.name for a in axes_of(NavigationSettings)][-5:] == [
        "agent",
        "verify_radius",
        "observation",
        "view_radius",
        "distractors",
    ]
    with pytest.raises(TaskParameterError, match=r"use distractors=0 with memory=crops; got distractors=2$"):
        DetectionSettings.read({"distractors": 2, "memory": "crops", "modality": "vision"})


def test_the_transcript_seam_marks_and_sums_up_the_entries() -> None:
    instance = with_distractor_entries(make_instance(SEED, "L2", 8), 2)
    note = next(e for e in instance.memory if not e.is_cell)
    cell = next(e for e in instance.memory if e.is_cell)
    assert extension_audit_result(cell, True) is None
    assert (extension_audit_result(note, True), extension_audit_result(note, False)) == (
        "distractor flagged",
        "distractor kept",
    )
    assert extension_wrong_results() == ("distractor flagged",)
    named = {"distractor flagged": f" ({note.id})"}
    results = {"hit": 3, "distractor flagged": 1, "distractor kept": 1}
    assert extension_audit_notes(results, lambda r: named.get(r, "")) == [
        f"of the 2 distractors, 1 flagged ({note.id}), 1 kept"
    ]
    assert extension_audit_notes({"hit": 3}, lambda r: "") == []


def test_the_scores_seam_declares_counts_and_a_metric_and_fills_them_in() -> None:
    detection = list(COUNTS["detection"])
    # with the other extensions' counts, after the task's own (edits' after them: registry order)
    assert detection.index("distractors_flagged") == detection.index("samples") + 1
    assert detection.index("distractor_judgments") < detection.index("edits_correct")
    assert extension_scores("detection")["distractors"].columns == ("distractors_flagged", "distractor_judgments")
    assert "distractors" not in extension_scores("navigation")
    names = [m.name for m in METRICS["detection"]]
    assert names.index("distractor_flag_rate") == names.index("limit_rate") + 1
    metric = METRICS["detection"][names.index("distractor_flag_rate")]
    assert (
        metric.only == "distractors"
        and metric.measure.over([{"distractors_flagged": 3, "distractor_judgments": 12}]) == 0.25
    )
    assert active_extensions("detection", DetectionSettings.read({"distractors": 1}).values()) == ("distractors",)
    assert active_extensions("detection", DetectionSettings.read({}).values()) == ()
    meta = {"distractor_entries": [{"id": "mem_003"}, {"id": "mem_070"}]}
    windows = [{"flagged": ["mem_003", "mem_001"]}, {"flagged": ["mem_003", "mem_070"]}]
    [part] = extension_score("detection", meta, windows)
    assert dict(part.counts) == {"distractors_flagged": 3, "distractor_judgments": 4}
    # among the score's own counts in the explanation; nothing at its end, nor in its metadata
    assert (part.note, part.clause, dict(part.metadata)) == ("; distractors flagged 3 of 4", "", {})
    assert extension_score("detection", {}, windows) == []
    assert extension_score("navigation", meta, windows) == []
