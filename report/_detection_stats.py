"""Detection's numbers: F1 by model x regime x modality, flags, recall by change, the batch sweep.

Detection F1 is per seed (L3 pools a seed's windows first); mean and sample std
(ddof=1) over seeds. Flag rates and thaw/freeze recall pool the entries of all seeds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ._load import FLAG_CELLS
from ._navigation_stats import MAIN_GRID_SIZE, paper_cells, per_seed_rates, table_of
from ._stats import adjusted, bootstrap_ci, correlations, paired_wilcoxon

MAIN_BATCH_SIZE = 10
"""The batch size of the paper's main matrix (the other sizes are App. E's sweep)."""


F1_COLUMNS = ("seeds", "f1_mean", "f1_std", "f1_low", "f1_high")


def _f1_over_seeds(group: pd.DataFrame) -> dict[str, object]:
    """The seeds of ``group`` and their F1: mean, sample std and bootstrap CI."""
    low, high = bootstrap_ci(list(group.f1))
    std = float(group.f1.std(ddof=1)) if len(group) > 1 else math.nan
    return {"seeds": len(group), "f1_mean": float(group.f1.mean()), "f1_std": std, "f1_low": low, "f1_high": high}


def main_detection(det: pd.DataFrame) -> pd.DataFrame:
    """The detection rows of the main matrix: n = 8 where it was run, else each
    (model, regime, modality)'s smallest grid; then B=10 where it was run, else the
    most common batch size."""
    if det.empty:
        return det
    keep = []
    for _, group in det.groupby(["model", "regime", "modality"]):
        if "size" in group.columns:  # a frame built by hand may have no grid side
            n = MAIN_GRID_SIZE if (group["size"] == MAIN_GRID_SIZE).any() else int(group["size"].min())
            group = group[group["size"] == n]
        sizes = group.batch_size
        b = MAIN_BATCH_SIZE if (sizes == MAIN_BATCH_SIZE).any() else int(sizes.mode().iloc[0])
        keep.append(group[sizes == b])
    return pd.concat(keep, ignore_index=True)


def detection_summary(det: pd.DataFrame) -> pd.DataFrame:
    """Fig. 3: per (model, regime, modality, batch size) mean ± std of per-seed F1,
    its bootstrap CI, mean precision and recall, calls and answer problems."""
    rows = []
    for (model, regime, modality, b), group in det.groupby(["model", "regime", "modality", "batch_size"]):
        rows.append(
            {
                "model": model,
                "regime": regime,
                "modality": modality,
                "batch_size": int(b),
                **_f1_over_seeds(group),
                "precision": float(group.precision.mean()),
                "recall": float(group.recall.mean()),
                "precision_undefined": int(group.precision.isna().sum()),
                "recall_undefined": int(group.recall.isna().sum()),
                "calls_per_seed": float(group.calls.mean()),
                "unparseable": int(group.unparseable.sum()),
                "unanswered": int(group.unanswered.sum()),
                "unknown_ids": int(group.unknown_ids.sum()),
            }
        )
    return table_of(
        rows,
        (
            "model",
            "regime",
            "modality",
            "batch_size",
            *F1_COLUMNS,
            "precision",
            "recall",
            "precision_undefined",
            "recall_undefined",
            "calls_per_seed",
            "unparseable",
            "unanswered",
            "unknown_ids",
        ),
    )


def modality_tests(det: pd.DataFrame) -> pd.DataFrame:
    """Vision vs text per model: paired exact Wilcoxon over (regime, seed) pairs of F1, Holm-adjusted."""
    main = main_detection(det)
    rows = []
    for model, group in main.groupby("model"):
        text = group[group.modality == "text"].set_index(["regime", "seed"]).f1
        vision = group[group.modality == "vision"].set_index(["regime", "seed"]).f1
        shared = sorted(set(text.index) & set(vision.index))
        if not shared:
            continue
        w = paired_wilcoxon([vision[k] for k in shared], [text[k] for k in shared])
        rows.append(
            {
                "model": model,
                "pairs": w.n,
                "nonzero": w.nonzero,
                "difference": w.mean_difference,
                "W": w.statistic,
                "p": w.p,
            }
        )
    return adjusted(table_of(rows, ("model", "pairs", "nonzero", "difference", "W", "p")), pairs="pairs")


def flag_rates(det: pd.DataFrame, regimes: Sequence[str] = ("L1", "L2")) -> pd.DataFrame:
    """Fig. 4: per (model, modality) the share of entries flagged in each claim x truth
    cell, pooled over the judgments of ``regimes`` (the paper pools L1 and L2)."""
    main = main_detection(det)
    main = main[main.regime.isin(regimes)]
    rows = []
    for (model, modality), group in main.groupby(["model", "modality"]):
        row: dict[str, object] = {"model": model, "modality": modality}
        for cell in FLAG_CELLS:
            flagged, total = group[f"{cell}_flagged"].sum(), group[f"{cell}_total"].sum()
            row[cell] = float(flagged / total) if total else math.nan
            row[f"{cell}_n"] = int(total)
        rows.append(row)
    return table_of(rows, ("model", "modality", *FLAG_CELLS, *(f"{cell}_n" for cell in FLAG_CELLS)))


def thaw_freeze(det: pd.DataFrame) -> pd.DataFrame:
    """Fig. 8: per (model, modality, regime) pooled per-entry recall of thaws and freezes."""
    main = main_detection(det)
    rows = []
    for (model, modality, regime), group in main.groupby(["model", "modality", "regime"]):
        row: dict[str, object] = {"model": model, "modality": modality, "regime": regime}
        for kind in ("thaw", "freeze"):
            hits, total = group[f"{kind}_detected"].sum(), group[f"{kind}_total"].sum()
            row[kind] = float(hits / total) if total else math.nan
            row[f"{kind}_n"] = int(total)
        rows.append(row)
    return table_of(rows, ("model", "modality", "regime", "thaw", "thaw_n", "freeze", "freeze_n"))


def f1_vs_success(det: pd.DataFrame, nav: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fig. 9: per-seed text detection F1 against per-seed text OMCD success, paired
    by (model, regime, seed); and Pearson/Spearman per (model, regime)."""
    main = main_detection(det)
    f1 = main[main.modality == "text"][["model", "regime", "seed", "f1"]].dropna(subset=["f1"])
    seeds = per_seed_rates(paper_cells(nav))
    omcd = seeds[(seeds.strategy == "omcd") & (seeds.modality == "text")]
    omcd = omcd[["model", "regime", "seed", "success"]]
    pairs = f1.merge(omcd, on=["model", "regime", "seed"], how="inner")
    rows = []
    for (model, regime), group in pairs.groupby(["model", "regime"]):
        c = correlations(list(group.f1), list(group.success))
        rows.append(
            {
                "model": model,
                "regime": regime,
                "seeds": c.n,
                "pearson_r": c.pearson_r,
                "pearson_p": c.pearson_p,
                "spearman_rho": c.spearman_rho,
                "spearman_p": c.spearman_p,
            }
        )
    columns = ("model", "regime", "seeds", "pearson_r", "pearson_p", "spearman_rho", "spearman_p")
    return pairs, table_of(rows, columns)


SWEEP_COLUMNS = (
    "model",
    "size",
    "batch_size",
    *F1_COLUMNS,
    "calls_per_seed",
    "calls_per_audit",
)


def batch_sweep(det: pd.DataFrame, regime: str = "L1", modality: str = "text") -> pd.DataFrame:
    """Table 5 and App. E: per (model, grid side n, batch size) on ``regime``
    ``modality``: F1 (mean, std, bootstrap CI over seeds), calls a seed and calls an
    audit (a seed's calls over its audit windows, ⌈n²/B⌉ on L1)."""
    part = det[(det.regime == regime) & (det.modality == modality)]
    rows = []
    for (model, n, b), group in part.groupby(["model", "size", "batch_size"]):
        windows = group.windows.where(group.windows > 0)
        rows.append(
            {
                "model": model,
                "size": int(n),
                "batch_size": int(b),
                **_f1_over_seeds(group),
                "calls_per_seed": float(group.calls.mean()),
                "calls_per_audit": float((group.calls / windows).mean()),
            }
        )
    return table_of(rows, SWEEP_COLUMNS)


def enough_batch(sweep: pd.DataFrame) -> pd.DataFrame:
    """App. E's answer, per (model, n): the best B (highest mean F1) and, among the B
    whose mean F1 lies within the best B's 95 % CI, the one with the fewest calls an
    audit (the largest B on a tie). Without a CI (too few seeds, or every seed alike)
    only a B with the best B's mean F1 qualifies. Undefined F1 (nan) takes no part."""
    rows = []
    for (model, n), group in sweep.dropna(subset=["f1_mean"]).groupby(["model", "size"]):
        best = group.loc[group.f1_mean.idxmax()]
        low = best.f1_mean if math.isnan(best.f1_low) else best.f1_low
        high = best.f1_mean if math.isnan(best.f1_high) else best.f1_high
        within = group[(group.f1_mean >= low) & (group.f1_mean <= high)]
        pick = within.sort_values(["calls_per_audit", "batch_size"], ascending=[True, False]).iloc[0]
        rows.append(
            {
                "model": model,
                "size": int(n),
                "best_b": int(best.batch_size),
                "best_f1": float(best.f1_mean),
                "best_low": float(best.f1_low),
                "best_high": float(best.f1_high),
                "best_calls": float(best.calls_per_audit),
                "b": int(pick.batch_size),
                "f1": float(pick.f1_mean),
                "calls": float(pick.calls_per_audit),
                "candidates": len(group),
            }
        )
    columns = ("model", "size", "best_b", "best_f1", "best_low", "best_high", "best_calls", "b", "f1", "calls")
    return table_of(rows, (*columns, "candidates"))


def stale_ratios(det: pd.DataFrame, nav_meta: pd.DataFrame | None = None) -> pd.DataFrame:
    """The suite's own stale ratio per regime (end of episode), over the distinct seeds logged."""
    frame = det[["regime", "seed", "stale_ratio"]].drop_duplicates(["regime", "seed"])
    rows = []
    for regime, group in frame.groupby("regime"):
        values = group.stale_ratio.to_numpy(dtype=float)
        rows.append(
            {
                "regime": regime,
                "seeds": len(values),
                "mean": float(np.mean(values)),
                "std": float(np.std(values, ddof=1)) if len(values) > 1 else math.nan,
                "min": float(np.min(values)),
                "max": float(np.max(values)),
            }
        )
    return table_of(rows, ("regime", "seeds", "mean", "std", "min", "max"))
