"""Plain-text tables for the terminal (the demo's printout)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from spatialstale.env import CHANGE_REGIMES as REGIMES

from ._detection_stats import detection_summary, main_detection
from ._load import Results
from ._navigation_stats import outcome_rates, paper_cells, strategy_order


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns separated by two spaces, with a dashed rule under the header."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _pct(x: float) -> str:
    return "missing" if math.isnan(x) else f"{100 * x:.0f}%"


def demo_tables(results: Results) -> str:
    """The outcome table (success/death/timeout by model x regime x strategy) and the
    detection table (mean per-seed F1 by model x regime x modality)."""
    parts = []
    # the paper's cells (delete filter, full view, prompt agent); the report shows the others
    nav = paper_cells(results.navigation) if not results.navigation.empty else results.navigation
    rates = outcome_rates(nav) if not nav.empty else None
    if rates is not None:
        rows = []
        for model in sorted(rates.model.unique()):
            for regime in REGIMES:
                for strategy in strategy_order(rates.strategy):
                    cell = rates[(rates.model == model) & (rates.regime == regime) & (rates.strategy == strategy)]
                    if cell.empty:
                        rows.append([model, regime, strategy, "missing", "", "", ""])
                        continue
                    r = cell.iloc[0]
                    rows.append(
                        [model, regime, strategy, _pct(r.success), _pct(r.death), _pct(r.timeout), str(r.episodes)]
                    )
        parts.append(
            "Navigation outcomes (text)\n"
            + text_table(["model", "regime", "strategy", "success", "death", "timeout", "episodes"], rows)
        )
    if not results.detection.empty:
        summary = detection_summary(main_detection(results.detection))
        modalities = [m for m in ("text", "vision", "both") if m in set(summary.modality)]
        rows = []
        for model in sorted(summary.model.unique()):
            for regime in REGIMES:
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
                        row.append(f"{r.f1_mean:.3f}{std} (n={r.seeds})")
                rows.append(row)
        parts.append(
            "Detection F1 (mean ± std over seeds)\n"
            + text_table(["model", "regime", *(f"F1 {m}" for m in modalities)], rows)
        )
    return "\n\n".join(parts)
