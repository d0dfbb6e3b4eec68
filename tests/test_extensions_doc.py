"""docs/extensions.md as a user runs it: its ``# my_extension.py`` block written to a
scratch directory and installed as an outside package (a dist-info on the path, with the
page's entry point), then the page's commands run there as subprocesses, as written."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from tests.test_regimes_doc import FENCE, LINK

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "extensions.md"
BIN = Path(sys.executable).parent


def blocks(language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(PAGE.read_text(encoding="utf-8")) if lang == language]


def install(where: Path) -> dict[str, str]:
    """The page's module and entry point, installed in ``where``: the environment to run in."""
    [source] = [b for b in blocks("python") if b.startswith("# my_extension.py\n")]
    (where / "my_extension.py").write_text(source, encoding="utf-8")
    [toml] = blocks("toml")
    group, declared = re.search(r'\[project\.entry-points\."([^"]+)"\]\n(.+)', toml).groups()  # type: ignore[union-attr]
    info = where / "my_extension-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-extension\nVersion: 0.1\n")
    name, _, spec = declared.partition(" = ")
    (info / "entry_points.txt").write_text(f"[{group}]\n{name} = {spec.strip(chr(34))}\n")
    return {**{k: v for k, v in os.environ.items() if k != "INSPECT_LOG_DIR"}, "PYTHONPATH": "."}


def commands() -> list[list[str]]:
    out = []
    for block in blocks("bash"):
        for line in block.replace("\\\n", " ").splitlines():
            if line.startswith(("inspect ", "spatialstale ")):
                argv = shlex.split(line)
                out.append([str(BIN / argv[0]), *argv[1:]])
    return out


def test_a_misspelt_axis_fails_in_one_line_naming_the_outside_axis(tmp_path: Path) -> None:
    env = install(tmp_path)
    [first] = [c for c in commands() if "spatialstale/detection" in c]
    argv = [arg.replace("veil=", "veils=") for arg in first]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode != 0 and not list(tmp_path.glob("logs/**/*.eval"))
    [said] = [b for b in blocks("text") if "unknown task parameter" in b]
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith(said.strip().removesuffix("...")), line
    assert line.endswith(", veil"), line  # the outside axis among the valid names


@pytest.mark.slow
def test_the_pages_extension_runs_as_an_outside_package(tmp_path: Path) -> None:
    env = install(tmp_path)
    for argv in commands():
        done = subprocess.run(
            [*argv, *(["--display", "none"] if argv[1] == "eval" else [])],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    logs = [read_eval_log(info) for info in list_eval_logs(str(tmp_path / "logs" / "veil"), recursive=False)]
    assert sorted(log.eval.task for log in logs) == ["spatialstale/detection", "spatialstale/navigation"]
    for log in logs:
        assert log.status == "success" and (log.eval.metadata or {})["veil"] == 8 and "veil=8" in log.eval.tags
        for sample in log.samples or []:
            assert sample.error is None and "-v8-" in str(sample.id) and sample.metadata["veil"] == 8
    [detection] = [log for log in logs if log.eval.task == "spatialstale/detection"]
    assert detection.results is not None
    assert "veiled_recall" in detection.results.scores[0].metrics
    # the report holds the rows the page shows
    report = LINK.sub(r"\1", (tmp_path / "logs" / "veil-study" / "report" / "report.md").read_text(encoding="utf-8"))
    shown = [line for line in PAGE.read_text(encoding="utf-8").splitlines() if line.startswith("| observer |")]
    assert len(shown) == 3 and all(line in report for line in shown), shown
