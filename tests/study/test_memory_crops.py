"""``spatialstale study --memory text,crops``: the matrix, its dry run and its estimate."""

from __future__ import annotations

import pytest

from spatialstale.env import make_instance
from spatialstale.protocol import DetectionSettings
from spatialstale.protocol._crops import CROP_NAME
from spatialstale.study import study_seeds, study_tasks
from spatialstale.study._calls import sample_calls, stand_in_tokens
from spatialstale.study._cli import main

SEEDS = study_seeds(None, 2)
CROP_TOKENS = 255
"""A crop of 144x160 px is one 512-px tile: 85 + 170 tokens (OpenAI's high-detail count)."""


def test_crops_run_only_the_modalities_with_an_image() -> None:
    tasks = study_tasks(seeds=SEEDS, regimes=("L2",), navigation_on=False, axes={"memory": ["text", "crops"]})
    assert [t.name for t in tasks] == [
        "detection L2 text B=10",
        "detection L2 vision B=10",
        "detection L2 vision B=10 memory=crops",
    ]
    # the paper's cells pass no memory argument; the crops cell passes it
    assert "memory" not in tasks[0].args() and tasks[2].args()["memory"] == "crops"
    assert tasks[2].axes() == {"memory": "crops"}
    # crops without an image: the task refuses them, so nothing is left to run
    with pytest.raises(ValueError, match="nothing to run: skipped 3 detection tasks: memory=crops compares pictures"):
        study_tasks(seeds=SEEDS, modalities=("text",), navigation_on=False, axes={"memory": ["crops"]})


def test_the_estimate_counts_a_crop_per_entry() -> None:
    instance = make_instance(SEEDS[0], "L2")
    vision = DetectionSettings(modality="vision")
    crops = DetectionSettings().replace(modality="vision", memory="crops")
    text_calls = sample_calls(vision, instance)[1]
    crop_calls = sample_calls(crops, instance)[1]
    assert crop_calls.calls == text_calls.calls == 7
    # 64 crops in place of 64 text claims, each crop a 255-token image (144x160 px: one tile)
    assert stand_in_tokens(CROP_NAME) == CROP_TOKENS == 255
    assert crop_calls.prompt_tokens - text_calls.prompt_tokens > 64 * CROP_TOKENS - 64 * 20


def test_the_dry_run_has_a_memory_column(capsys: pytest.CaptureFixture[str]) -> None:
    args = "study --model spatialstale/observer --memory text,crops --modalities vision --no-navigation"
    code = main([*args.split(), "--regimes", "L2", "--n-seeds", "2", "--dry-run"])
    out = capsys.readouterr().out
    assert code in (0, None)
    header = out.splitlines()[0].split()
    assert "memory" in header
    rows = [line for line in out.splitlines() if line.startswith("spatialstale/observer")]
    assert len(rows) == 2 and "crops" in rows[1] and "text" in rows[0]
