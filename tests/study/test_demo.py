"""``spatialstale demo`` says what it ran, and its closing hints are commands that work
as printed, without an activated venv."""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

import pytest

from spatialstale.study._cli import _executable, main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_demo_header_counts_what_its_tables_show(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--n-seeds", "2", "--log-dir", "logs/demo"]) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0]
    assert re.search(r", 2 seeds \(\d+, \d+\) x 1 episode$", header), header
    # the outcome table's episodes column: seeds x episodes, per row
    rows = [line.split() for line in out.splitlines() if re.search(r"\s(nomemory|omcd|oracle)\s", line)]
    assert rows and {row[-1] for row in rows} == {"2"}
    hints = {line.split(": ", 1)[0]: shlex.split(line.split(": ", 1)[1]) for line in out.splitlines()[-2:]}
    assert hints["Transcripts"][1:] == ["view", "--log-dir", "logs/demo"]
    assert hints["Full report"][1:] == ["report", "logs/demo"]
    for command in (hints["Transcripts"][0], hints["Full report"][0]):
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
