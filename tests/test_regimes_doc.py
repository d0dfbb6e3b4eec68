"""docs/regimes.md as a user runs it: its ``# my_regimes.py`` block written to a scratch
directory, then the commands of its walk-through, as written, run there as subprocesses
(``python -m spatialstale.env stats``, ``inspect eval``, ``spatialstale study`` and
``spatialstale report``); the outputs and tables the page shows are the ones they give."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "regimes.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.DOTALL | re.MULTILINE)
LINK = re.compile(r"\[([^\]]*)\]\(<[^>]*>\)")
BIN = Path(sys.executable).parent


def section(title: str) -> str:
    """The text of the page's section ``## title``, up to the next one."""
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def blocks(text: str, language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(text) if lang == language]


def plugin_source() -> str:
    [source] = [b for b in blocks(PAGE.read_text(encoding="utf-8"), "python") if b.startswith("# my_regimes.py\n")]
    return source


def commands(text: str) -> list[list[str]]:
    """Each command of the section's bash blocks, its executable resolved in this venv and a
    ``PYTHONPATH=.`` prefix left to the environment (the test sets it)."""
    out = []
    for block in blocks(text, "bash"):
        for line in block.splitlines():
            argv = shlex.split(line.removeprefix("PYTHONPATH=. "))
            executable = sys.executable if argv[0] == "python" else str(BIN / argv[0])
            out.append([executable, *argv[1:]])
    return out


@pytest.mark.slow
def test_the_page_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "my_regimes.py").write_text(plugin_source(), encoding="utf-8")
    walk = section("From an empty file")
    # Inspect's default log directory, ./logs, as for a user without INSPECT_LOG_DIR
    env = {**{k: v for k, v in os.environ.items() if k != "INSPECT_LOG_DIR"}, "PYTHONPATH": "."}
    runs = []
    for argv in commands(walk):
        result = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, (argv, result.stderr)
        runs.append(result)
    stats, _, study, report = runs
    # the stats the page prints are the command's output, line for line
    [shown] = [b for b in blocks(walk, "") if b.startswith("Stale ratio over")]
    assert stats.stdout == shown
    # detection: the plug-in's samples, their regime, and the observer's F1
    [info] = list_eval_logs(str(tmp_path / "logs"), recursive=False)
    log = read_eval_log(info)
    assert sorted(str(s.id) for s in log.samples or []) == ["Seasonal-s1734", "Seasonal-s4810"]
    assert {s.metadata["regime"] for s in log.samples or []} == {"Seasonal"}
    assert log.results is not None
    values = {name: m.value for score in log.results.scores for name, m in score.metrics.items()}
    assert values["f1_mean"] == values["f1_mean_Seasonal"] == 1.0
    assert "study complete: 6 of 6 task logs in logs/seasonal" in study.stdout
    # the report gives the regime its column and its rows: every table row the page shows
    markdown = LINK.sub(r"\1", (tmp_path / "logs" / "seasonal" / "report" / "report.md").read_text(encoding="utf-8"))
    shown_rows = [line for line in walk.splitlines() if line.startswith("| ") and "---" not in line]
    assert any("Seasonal SR / Death" in row for row in shown_rows)
    assert any(row.startswith("| Seasonal |") for row in shown_rows)
    for row in shown_rows:
        assert row in markdown.splitlines(), row
    assert "report.md" in report.stdout
