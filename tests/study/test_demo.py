"""``spatialstale demo`` fits a screen, says what it ran, and its closing hints are
commands that work as printed, without an activated venv."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from spatialstale.study._cli import _executable


@pytest.mark.slow
def test_the_demo_fits_a_screen_and_its_header_counts_what_its_tables_show(tmp_path: Path) -> None:
    # as the README's first command runs it: the installed script, its defaults
    demo = subprocess.run(
        [str(Path(sys.executable).parent / "spatialstale"), "demo"], cwd=tmp_path, capture_output=True, text=True
    )
    assert demo.returncode == 0, demo.stderr[-3000:]
    lines = (demo.stdout + demo.stderr).splitlines()
    assert len(lines) <= 60, "\n".join(lines)
    out = demo.stdout
    header = out.splitlines()[0]
    assert re.search(r", 5 seeds \(\d+(, \d+){4}\) x 1 episode$", header), header
    # the outcome table: a row per model and regime, a success / death cell per strategy
    assert "Navigation (text): success / death, over 5 episodes a cell; the rest ran out of steps" in out
    rows = [line.split() for line in out.splitlines() if re.search(r"\sL[123]\s+\d+% / \d+%", line)]
    assert len(rows) == 3 * 3 and all(len(re.findall(r"\d+% / \d+%", " ".join(row))) == 5 for row in rows)
    hints = dict(line.split(": ", 1) for line in out.splitlines()[-3:])
    assert shlex.split(hints["Transcripts"])[1:] == ["view", "--log-dir", "logs/demo"]
    assert shlex.split(hints["Full report"])[1:] == ["report", "logs/demo"]
    assert shlex.split(hints["Your model, its cost first"])[1:] == ["study", "--model", "openai/gpt-4o", "--dry-run"]
    for hint in hints.values():
        command = shlex.split(hint)[0]
        assert Path(command).parent == Path(sys.executable).parent
        assert os.access(command, os.X_OK)


def test_executables_are_shown_relative_to_the_working_directory_inside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv_bin = Path(sys.executable).parent
    monkeypatch.chdir(venv_bin.parent)
    assert _executable("inspect") == f"{venv_bin.name}/inspect"
    monkeypatch.chdir(tmp_path)
    assert _executable("inspect") == shlex.quote(str(venv_bin.absolute() / "inspect"))
    assert _executable("no-such-script") == "no-such-script"
