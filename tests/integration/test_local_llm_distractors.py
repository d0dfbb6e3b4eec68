"""Distractor entries on a real LLM: SmolLM2-135M-Instruct served by llama.cpp runs
detection and navigation with ``-T distractors=8``.

The model is weak; the test checks the plumbing: every sample is scored, every audit
asks about all n² + K entries in ⌈(n² + K)/B⌉ calls, F1's confusion counts cover the
cells alone, and the distractors the score counts as flagged are exactly those a
re-reading of the raw answers finds. ``pytest -s`` prints the figures. Skipped like
``test_local_llm`` when llama.cpp or the model is missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from spatialstale.protocol import read_audit
from spatialstale.protocol._prompts import AUDIT

from .test_local_llm import BATCH_SIZE, ENTRIES, batch_ids, model_events, run, score_value

pytestmark = pytest.mark.slow

K = 8


def test_smollm2_audits_every_entry_and_distractor_flags_are_counted(server: str, tmp_path: Path) -> None:
    log = run(server, "detection", tmp_path, n_seeds=2, distractors=K)
    samples = log.samples or []
    assert len(samples) == 2
    assert log.results is not None and "distractor_flag_rate" in log.results.scores[0].metrics
    flagged = judged = 0
    for sample in samples:
        assert sample.error is None and str(sample.id).endswith(f"-d{K}-s{sample.metadata['seed']}")
        value = score_value(sample)
        distractors = {str(d["id"]) for d in sample.metadata["distractor_entries"]}
        assert len(distractors) == K
        calls = model_events(sample, AUDIT)
        assert len(calls) == value["calls"] == -(-(ENTRIES + K) // BATCH_SIZE) * value["windows"]
        asked = [mid for event in calls for mid in batch_ids(event)]
        assert sorted(asked) == sorted(f"mem_{i:03d}" for i in range(ENTRIES + K))  # every entry, once
        parsed = [read_audit(e.output.completion, batch_ids(e)) for e in calls]
        assert value["unparseable"] == sum(p.error is not None for p in parsed)
        reread = sum(len(distractors & set(p.flagged)) for p in parsed)
        assert value["distractors_flagged"] == reread and value["distractor_judgments"] == K * value["windows"]
        assert value["tp"] + value["fp"] + value["fn"] + value["tn"] == ENTRIES * value["windows"]
        flagged, judged = flagged + value["distractors_flagged"], judged + value["distractor_judgments"]
    rate = log.results.scores[0].metrics["distractor_flag_rate"].value
    assert rate == pytest.approx(flagged / judged)
    print(f"SmolLM2, K = {K}: {flagged} of {judged} distractor judgments flagged stale")


def test_smollm2_navigates_with_distractors_in_the_memory_view(server: str, tmp_path: Path) -> None:
    log = run(
        server,
        "navigation",
        tmp_path,
        n_seeds=1,
        max_steps=3,
        episodes=1,
        distractors=K,
        strategies="nofilter,omcd",
    )
    samples = log.samples or []
    assert sorted(str(s.metadata["strategy"]) for s in samples) == ["nofilter", "omcd"]
    for sample in samples:
        assert sample.error is None
        value = score_value(sample)
        assert value["success"] + value["death"] + value["timeout"] == 1
        audits = model_events(sample, AUDIT)
        if sample.metadata["strategy"] == "omcd":
            # one audit before the first step: every entry, distractors included
            assert len(audits) == value["audit_model_calls"] == -(-(ENTRIES + K) // BATCH_SIZE)
        else:
            assert not audits
