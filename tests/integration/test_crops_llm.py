"""``-T memory=crops`` on a real LLM: SmolLM2-135M-Instruct served by llama.cpp.

SmolLM2 reads text only: the launcher's server drops image parts, so the crops (and the
grid's image) never reach it. The run is ``modality=both``: the model sees
the grid's listing and, of the memory, only each entry's id line, and must still
answer every batch. The test checks the plumbing: every sample is scored, the calls
are ⌈n²/B⌉ an audit, and every raw answer is either read or counted as unreadable.
Skipped when the server's interpreter (``$SPATIALSTALE_LLAMA_PYTHON``, else this one)
lacks llama_cpp or no GGUF model is installed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval
from inspect_ai.event import ModelEvent
from inspect_ai.log import resolve_sample_attachments
from inspect_ai.model import ContentImage, ContentText

from spatialstale.evals.detection import detection
from spatialstale.protocol import read_audit

from ._llama_support import smollm2

pytestmark = pytest.mark.slow

ENTRIES = 64
BATCH_SIZE = 32


def test_crops_detection_answers_are_read_or_counted(server: str, tmp_path: Path) -> None:
    task = detection(regime="L2", n_seeds=2, modality="both", memory="crops", batch_size=BATCH_SIZE)
    [log] = eval(task, model=smollm2(server, 128), log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    samples = log.samples or []
    assert [s.id for s in samples] and all(str(s.id).startswith("L2-crops-s") for s in samples)
    for sample in samples:
        assert sample.error is None and sample.scores
        [score] = sample.scores.values()
        value = score.value
        assert isinstance(value, dict)
        calls = [e for e in resolve_sample_attachments(sample).events if isinstance(e, ModelEvent)]
        assert len(calls) == value["calls"] == -(-ENTRIES // BATCH_SIZE) * value["windows"]
        parsed = []
        for event in calls:
            parts = event.input[-1].content
            assert not isinstance(parts, str)
            # sent as pictures: the grid's image and one crop an entry, each after its id line
            assert sum(isinstance(p, ContentImage) for p in parts) == 1 + BATCH_SIZE
            ids = [p.text.strip()[1:-1] for p in parts if isinstance(p, ContentText) and p.text.strip()[:5] == "[mem_"]
            assert len(ids) == BATCH_SIZE
            parsed.append(read_audit(event.output.completion, ids))
        # the score counts exactly what could not be read
        assert value["unparseable"] == sum(p.error is not None for p in parsed)
        assert value["unanswered"] == sum(len(p.unanswered) for p in parsed)
        assert value["tp"] + value["fp"] + value["fn"] + value["tn"] == ENTRIES * value["windows"]
        print(f"{sample.id}: f1 {value['f1']}, unparseable {value['unparseable']} of {value['calls']} calls")
