"""Plain-text tables for the terminal (the demo's printout)."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.table import Table

from ._detection_stats import detection_summary, main_detection
from ._load import Results
from ._navigation_stats import outcome_rates, paper_cells, regime_order, strategy_order


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table (rich, no colour): columns padded apart, a rule under the header."""
    table = Table(*header, box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 1, 0, 0), pad_edge=False)
    for row in rows:
        table.add_row(*map(str, row))
    out = io.StringIO()
    Console(file=out, width=10_000, color_system=None).print(table)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _pct(x: float) -> str:
    return "missing" if math.isnan(x) else f"{100 * x:.0f}%"


def demo_tables(results: Results) -> str:
    """The outcome table (success and death rates by model x regime, a column per
    strategy) and the detection table (mean per-seed F1 by model x regime x modality):
    a screen for the demo's three models."""
    parts = []
    # the paper's cells (delete filter, full view, prompt agent); the report shows the others
    nav = paper_cells(results.navigation) if not results.navigation.empty else results.navigation
    rates = outcome_rates(nav) if not nav.empty else None
    if rates is not None:
        strategies = strategy_order(rates.strategy)
        episodes = {int(n) for n in rates.episodes}
        rows = []
        for model in sorted(rates.model.unique()):
            for regime in regime_order(rates.regime):
                row = [model, regime]
                for strategy in strategies:
                    cell = rates[(rates.model == model) & (rates.regime == regime) & (rates.strategy == strategy)]
                    if cell.empty:
                        row.append("missing")
                        continue
                    r = cell.iloc[0]
                    count = "" if len(episodes) == 1 else f" ({r.episodes} episodes)"
                    row.append(f"{_pct(r.success)} / {_pct(r.death)}{count}")
                rows.append(row)
        over = "a cell's episodes in brackets"
        if len(episodes) == 1:
            over = f"over {_count(next(iter(episodes)), 'episode')} a cell"
        parts.append(
            f"Navigation (text): success / death, {over}; the rest ran out of steps\n"
            + text_table(["model", "regime", *strategies], rows)
        )
    if not results.detection.empty:
        summary = detection_summary(main_detection(results.detection))
        modalities = [m for m in ("text", "vision", "both") if m in set(summary.modality)]
        rows = []
        for model in sorted(summary.model.unique()):
            for regime in regime_order(summary.regime):
                row = [model, regime]
                for modality in modalities:
                    cell = summary[
                        (summary.model == model) & (summary.regime == regime) & (summary.modality == modality)
                    ]
                    if cell.empty:
                        row.append("missing")
                    else:
                        r = cell.iloc[0]
                        std = "" if math.isnan(r.f1_std) else f" ± {r.f1_std:.3f}"
                        row.append(f"{r.f1_mean:.3f}{std} ({r.seeds} seeds)")
                rows.append(row)
        parts.append(
            "Detection F1 (mean ± std over seeds)\n"
            + text_table(["model", "regime", *(f"F1 {m}" for m in modalities)], rows)
        )
    return "\n\n".join(parts)
