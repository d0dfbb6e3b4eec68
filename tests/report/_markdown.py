"""Reading a written report back: its Markdown, one section, a model's table rows."""

from __future__ import annotations

from pathlib import Path

from spatialstale.study._cli import main


def report_of(log_dir: Path, out: Path) -> str:
    """``spatialstale report LOG_DIR --out OUT``, then the Markdown it wrote."""
    assert main(["report", str(log_dir), "--out", str(out)]) == 0
    return (out / "report.md").read_text()


def section(markdown: str, heading: str) -> str:
    """The text after ``heading`` up to the next heading of level 2 or 3."""
    return markdown.split(heading)[1].split("\n### ")[0].split("\n## ")[0]


def rows(text: str, model: str) -> list[list[str]]:
    """The cells of each table row of ``text`` whose first cell is ``model``."""
    return [
        [c.strip() for c in line.strip(" |").split(" | ")]
        for line in text.splitlines()
        if line.startswith(f"| {model} ")
    ]
