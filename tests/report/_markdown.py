"""Reading a written report back: its Markdown, one section, a model's table rows; and
the navigation rows of a hand-made table."""

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


def episode(seed: int, strategy: str, success: float, **more: object) -> dict[str, object]:
    """A navigation table's row: model ``m`` on L2, text, epoch 1, dead when not successful."""
    row = {"model": "m", "regime": "L2", "modality": "text", "strategy": strategy, "seed": seed, "epoch": 1}
    return {**row, "success": success, "death": 1 - success, **more}
