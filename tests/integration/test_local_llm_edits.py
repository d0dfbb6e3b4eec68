"""A real LLM proposing memory edits: SmolLM2-135M-Instruct served by llama.cpp runs
detection with ``-T edits=true``, structured output off and on.

The model is weak; the test checks the plumbing: every sample is scored, every stale
entry's edit is counted as correct, wrong, missing or unreadable, and the edits in the
scores are exactly those a re-reading of the raw answers finds. ``pytest -s`` prints
the counts. Skipped like ``test_local_llm`` when llama.cpp or the model is missing.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from spatialstale.protocol._edits import read_edits
from spatialstale.protocol._prompts import AUDIT

from .test_local_llm import batch_ids, model_events, run, score_value

pytestmark = pytest.mark.slow

_CELL = re.compile(r"^\[(mem_\d+)\] (?:SAFE|DANGER) at \((\d+),(\d+)\)", re.MULTILINE)
COUNTS = ("edits_correct", "edits_wrong", "edits_missing", "edits_unreadable")


@pytest.mark.parametrize("structured", [False, True])
def test_smollm2_edits_are_scored_and_counted(server: str, structured: bool, tmp_path: Path) -> None:
    log = run(server, "detection", tmp_path, n_seeds=2, edits=True, structured=structured)
    samples = log.samples or []
    assert len(samples) == 2
    assert log.results is not None and "edit_accuracy" in log.results.scores[0].metrics
    total = dict.fromkeys((*COUNTS, "edits_stale"), 0)
    for sample in samples:
        assert sample.error is None
        value = score_value(sample)
        assert sum(value[k] for k in COUNTS) == value["edits_stale"] == value["tp"] + value["fn"]
        reread = []
        for event in model_events(sample, AUDIT):
            text = event.input[-1].text
            cells = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in _CELL.finditer(text)}
            reread += read_edits(event.output.completion, batch_ids(event), cells).items()
        assert sample.scores is not None
        windows = sample.scores["stale_f1"].metadata["windows"]  # type: ignore[index]
        assert sorted((mid, edit) for w in windows for mid, edit in w["edits"].items()) == sorted(reread)
        total = {k: total[k] + value[k] for k in total}
    accuracy = log.results.scores[0].metrics["edit_accuracy"].value
    print(f"SmolLM2 edits, structured={structured}: {total}, edit_accuracy {accuracy:.3f}")
