"""Aggregations of the tidy tables: the numbers every table and figure shows.

Units: a navigation rate is over episodes (seed x epoch); its confidence interval
resamples seeds (a cluster bootstrap of per-seed rates), and paired tests compare
per-seed rates on the seeds both strategies share. Detection F1 is per seed (L3
pools a seed's windows first); mean and sample std (ddof=1) over seeds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from spatialstale.solvers import STRATEGIES

from ._load import AGENT_KEY, FILTER_KEY, FLAG_CELLS, FULL_VIEW, OUTCOMES, PROMPT_AGENT, VIEW_KEY
from ._stats import ALPHA, bootstrap_ci, correlations, holm, mcnemar, paired_wilcoxon, wilcoxon_min_p

REGIMES = ("L1", "L2", "L3")
STRATEGY_ORDER = tuple(STRATEGIES)
MAIN_BATCH_SIZE = 10
CONTRASTS: tuple[tuple[str, str], ...] = (
    ("nofilter", "nomemory"),
    ("selfverify", "nofilter"),
    ("omcd", "nofilter"),
    ("omcd", "selfverify"),
    ("omcd", "nomemory"),
    ("oracle", "nofilter"),
    ("oracle", "omcd"),
)
"""The paper's paired contrasts (A vs B) between memory strategies."""


def _frame(rows: list[dict[str, object]], columns: Sequence[str]) -> pd.DataFrame:
    """``rows`` as a frame whose columns exist even when there are no rows, so a
    partial matrix selects empty cells instead of failing on absent columns."""
    return pd.DataFrame(rows, columns=list(columns)) if not rows else pd.DataFrame(rows)


def _sd(values: pd.Series) -> float:
    return float(values.std(ddof=1)) if len(values) > 1 else math.nan


PAPER_FILTER = "delete"
"""The paper's filter mode: flagged entries are removed from the memory view."""


AXES = (FILTER_KEY, VIEW_KEY, AGENT_KEY)
"""The navigation axes beside the paper's matrix: filter mode, view radius, agent."""
PAPER_AXES = {FILTER_KEY: PAPER_FILTER, VIEW_KEY: FULL_VIEW, AGENT_KEY: PROMPT_AGENT}
"""Each axis's value in the paper's protocol, and in logs from before the axis existed."""


def with_filter(nav: pd.DataFrame) -> pd.DataFrame:
    """``nav`` with its filter mode, view radius and agent columns; a table without one
    ran the paper's value of it."""
    missing = {key: value for key, value in PAPER_AXES.items() if key not in nav.columns}
    return nav.assign(**missing) if missing else nav


def paper_view(nav: pd.DataFrame) -> pd.DataFrame:
    """The rows of the paper's observation and navigator (full view, per-step prompt
    agent), every filter mode kept: what the paper's tables show side by side."""
    nav = with_filter(nav)
    return nav[(nav[VIEW_KEY] == FULL_VIEW) & (nav[AGENT_KEY] == PROMPT_AGENT)]


def paper_cells(nav: pd.DataFrame) -> pd.DataFrame:
    """The rows of the paper's protocol alone: full view, prompt agent, ``delete``."""
    nav = paper_view(nav)
    return nav[nav[FILTER_KEY] == PAPER_FILTER]


def view_order(radii: Sequence[object]) -> list[str]:
    """View radii as the fog tables and figure order them: by radius, ``full`` last."""
    labels = {str(r) for r in radii}
    numeric = sorted(
        (label for label in labels if label != FULL_VIEW),
        key=lambda x: (not x.isdigit(), int(x) if x.isdigit() else 0, x),
    )
    return numeric + ([FULL_VIEW] if FULL_VIEW in labels else [])


def strategy_label(strategy: str, filter_mode: str, names: dict[str, str] | None = None) -> str:
    """A strategy's name in a table, with its filter mode when it is not the paper's:
    ``omcd (unknown)``."""
    label = (names or {}).get(strategy, strategy)
    return label if filter_mode == PAPER_FILTER else f"{label} ({filter_mode})"


def per_seed_rates(nav: pd.DataFrame) -> pd.DataFrame:
    """Per (model, regime, modality, strategy, filter, view radius, agent, seed): outcome
    rates over its episodes."""
    keys = ["model", "regime", "modality", "strategy", *AXES, "seed"]
    return (
        with_filter(nav)
        .groupby(keys, as_index=False)
        .agg(
            episodes=("epoch", "size"),
            success=("success", "mean"),
            death=("death", "mean"),
            timeout=("timeout", "mean"),
        )
    )


RATE_COLUMNS = (
    "model",
    "regime",
    "modality",
    "strategy",
    *AXES,
    "episodes",
    "seeds",
    "fallbacks",
    "died_on_stale",
    *(f"{part}{outcome}" for outcome in OUTCOMES for part in ("", "steps_", "n_")),
    *(f"{outcome}_{end}" for outcome in ("success", "death") for end in ("low", "high")),
)


def outcome_rates(nav: pd.DataFrame) -> pd.DataFrame:
    """Table 3: per (model, regime, modality, strategy, filter mode, view radius, agent)
    the outcome rates over episodes, with seeded bootstrap CIs over seeds and mean steps
    by outcome."""
    rows = []
    nav = with_filter(nav)
    seeds = per_seed_rates(nav)
    for key, group in nav.groupby(["model", "regime", "modality", "strategy", *AXES]):
        model, regime, modality, strategy, filter_mode, radius, agent = key
        per_seed = seeds[
            (seeds.model == model)
            & (seeds.regime == regime)
            & (seeds.modality == modality)
            & (seeds.strategy == strategy)
            & (seeds[FILTER_KEY] == filter_mode)
            & (seeds[VIEW_KEY] == radius)
            & (seeds[AGENT_KEY] == agent)
        ]
        row = {
            "model": model,
            "regime": regime,
            "modality": modality,
            "strategy": strategy,
            FILTER_KEY: filter_mode,
            VIEW_KEY: radius,
            AGENT_KEY: agent,
            "episodes": len(group),
            "seeds": group.seed.nunique(),
            "fallbacks": int(group.fallbacks.sum()),
            "died_on_stale": int(group.died_on_stale.sum()),
        }
        for outcome in OUTCOMES:
            row[outcome] = float(group[outcome].mean())
            steps = group.loc[group.outcome == outcome, "steps"]
            row[f"steps_{outcome}"] = float(steps.mean()) if len(steps) else math.nan
            row[f"n_{outcome}"] = len(steps)
        for outcome in ("success", "death"):
            low, high = bootstrap_ci(list(per_seed[outcome]))
            row[f"{outcome}_low"], row[f"{outcome}_high"] = low, high
        rows.append(row)
    return _frame(rows, RATE_COLUMNS)


def strategy_tests(nav: pd.DataFrame, contrasts: Sequence[tuple[str, str]] = CONTRASTS) -> pd.DataFrame:
    """Paired Wilcoxon (per-seed success and death rates) and exact McNemar (success
    by seed x episode) for each contrast within each (model, regime, modality, filter
    mode, view radius, agent); Holm adjusts the Wilcoxon p-values across the whole
    family of the report."""
    nav = with_filter(nav)
    seeds = per_seed_rates(nav)
    rows = []
    for key, group in seeds.groupby(["model", "regime", "modality", *AXES]):
        model, regime, modality, filter_mode, radius, agent = key
        episodes = nav[
            (nav.model == model)
            & (nav.regime == regime)
            & (nav.modality == modality)
            & (nav[FILTER_KEY] == filter_mode)
            & (nav[VIEW_KEY] == radius)
            & (nav[AGENT_KEY] == agent)
        ]
        for a, b in contrasts:
            left = group[group.strategy == a].set_index("seed")
            right = group[group.strategy == b].set_index("seed")
            shared = sorted(set(left.index) & set(right.index))
            if not shared:
                continue
            ea = episodes[episodes.strategy == a].set_index(["seed", "epoch"]).success
            eb = episodes[episodes.strategy == b].set_index(["seed", "epoch"]).success
            pairs = sorted(set(ea.index) & set(eb.index))
            mc = mcnemar([ea[p] for p in pairs], [eb[p] for p in pairs])
            for metric in ("success", "death"):
                w = paired_wilcoxon(list(left.loc[shared, metric]), list(right.loc[shared, metric]))
                rows.append(
                    {
                        "model": model,
                        "regime": regime,
                        "modality": modality,
                        FILTER_KEY: filter_mode,
                        VIEW_KEY: radius,
                        AGENT_KEY: agent,
                        "a": a,
                        "b": b,
                        "metric": metric,
                        "seeds": w.n,
                        "nonzero": w.nonzero,
                        "difference": w.mean_difference,
                        "W": w.statistic,
                        "p": w.p,
                        "mcnemar_pairs": mc.n if metric == "success" else math.nan,
                        "only_a": mc.only_a if metric == "success" else math.nan,
                        "only_b": mc.only_b if metric == "success" else math.nan,
                        "mcnemar_p": mc.p if metric == "success" else math.nan,
                    }
                )
    table = _frame(rows, TEST_COLUMNS)
    table["p_holm"] = holm(list(table.p))
    table["significant"] = table.p_holm < ALPHA
    table["p_min"] = [wilcoxon_min_p(int(n)) for n in table.seeds]
    # Holm's adjusted p-values only grow with any input p, so adjusting every test's
    # smallest attainable p gives each test's best case: above alpha, it cannot pass.
    table["reachable"] = [p <= ALPHA for p in holm(list(table.p_min))]
    return table


TEST_COLUMNS = (
    "model",
    "regime",
    "modality",
    *AXES,
    "a",
    "b",
    "metric",
    "seeds",
    "nonzero",
    "difference",
    "W",
    "p",
    "mcnemar_pairs",
    "only_a",
    "only_b",
    "mcnemar_p",
)


UPPER_BOUND_COLUMNS = (
    "model",
    "regime",
    "modality",
    VIEW_KEY,
    "nomemory",
    "best",
    "best_success",
    "bounded",
    "seeds",
    "seeds_at_least",
    "seeds_more",
)


def nomemory_bound(nav: pd.DataFrame) -> pd.DataFrame:
    """Per (model, regime, modality, view radius) of ``nav`` (one filter mode and agent):
    NoMemory's success, the memory strategy with the highest success, whether NoMemory is
    still an upper bound (no strategy succeeds more often), and seed by seed on the seeds
    both ran: on how many the best strategy's success is at least NoMemory's, and above it."""
    rows: list[dict[str, object]] = []
    nav = with_filter(nav)
    if nav.empty or "nomemory" not in set(nav.strategy):
        return _frame(rows, UPPER_BOUND_COLUMNS)
    rates = outcome_rates(nav)
    seeds = per_seed_rates(nav)
    for (model, regime, modality, radius), group in rates.groupby(["model", "regime", "modality", VIEW_KEY]):
        nomemory = group[group.strategy == "nomemory"]
        others = group[group.strategy != "nomemory"]
        if nomemory.empty or others.empty:
            continue
        best = others.loc[others.success.idxmax()]
        base = float(nomemory.success.iloc[0])
        cell = seeds[
            (seeds.model == model)
            & (seeds.regime == regime)
            & (seeds.modality == modality)
            & (seeds[VIEW_KEY] == radius)
        ]
        left = cell[cell.strategy == best.strategy].set_index("seed").success
        right = cell[cell.strategy == "nomemory"].set_index("seed").success
        shared = sorted(set(left.index) & set(right.index))
        rows.append(
            {
                "model": model,
                "regime": regime,
                "modality": modality,
                VIEW_KEY: radius,
                "nomemory": base,
                "best": str(best.strategy),
                "best_success": float(best.success),
                "bounded": bool(base >= float(others.success.max())),
                "seeds": len(shared),
                "seeds_at_least": sum(bool(left[s] >= right[s]) for s in shared),
                "seeds_more": sum(bool(left[s] > right[s]) for s in shared),
            }
        )
    return _frame(rows, UPPER_BOUND_COLUMNS)


AGENT_TEST_COLUMNS = (
    "model",
    "regime",
    "modality",
    "strategy",
    FILTER_KEY,
    VIEW_KEY,
    "agent",
    "metric",
    "seeds",
    "prompt",
    "tools",
    "nonzero",
    "difference",
    "W",
    "p",
    "mcnemar_pairs",
    "only_agent",
    "only_prompt",
    "mcnemar_p",
)


def agent_tests(nav: pd.DataFrame, baseline: str = PROMPT_AGENT) -> pd.DataFrame:
    """Each other navigator against ``baseline`` (the per-step prompt agent), per
    (model, regime, modality, strategy, filter mode, view radius): the mean per-seed
    success and death under each on the seeds both ran, paired Wilcoxon over per-seed
    rates (difference = agent - baseline) and exact McNemar on success by seed x
    episode; Holm over the family. ``prompt`` and ``tools`` hold the two means (the
    ``tools`` column is the compared agent's, whatever its name)."""
    nav = with_filter(nav)
    seeds = per_seed_rates(nav)
    keys = ["model", "regime", "modality", "strategy", FILTER_KEY, VIEW_KEY]
    rows = []
    for key, group in seeds.groupby(keys):
        model, regime, modality, strategy, filter_mode, radius = key
        base = group[group[AGENT_KEY] == baseline].set_index("seed")
        if base.empty:
            continue
        episodes = nav[
            (nav.model == model)
            & (nav.regime == regime)
            & (nav.modality == modality)
            & (nav.strategy == strategy)
            & (nav[FILTER_KEY] == filter_mode)
            & (nav[VIEW_KEY] == radius)
        ]
        eb = episodes[episodes[AGENT_KEY] == baseline].set_index(["seed", "epoch"]).success
        for agent in sorted(set(group[AGENT_KEY]) - {baseline}):
            other = group[group[AGENT_KEY] == agent].set_index("seed")
            shared = sorted(set(base.index) & set(other.index))
            if not shared:
                continue
            ea = episodes[episodes[AGENT_KEY] == agent].set_index(["seed", "epoch"]).success
            pairs = sorted(set(ea.index) & set(eb.index))
            mc = mcnemar([ea[p] for p in pairs], [eb[p] for p in pairs])
            for metric in ("success", "death"):
                a, b = list(other.loc[shared, metric]), list(base.loc[shared, metric])
                w = paired_wilcoxon(a, b)
                rows.append(
                    {
                        "model": model,
                        "regime": regime,
                        "modality": modality,
                        "strategy": strategy,
                        FILTER_KEY: filter_mode,
                        VIEW_KEY: radius,
                        "agent": agent,
                        "metric": metric,
                        "seeds": w.n,
                        "prompt": float(np.mean(b)),
                        "tools": float(np.mean(a)),
                        "nonzero": w.nonzero,
                        "difference": w.mean_difference,
                        "W": w.statistic,
                        "p": w.p,
                        "mcnemar_pairs": mc.n if metric == "success" else math.nan,
                        "only_agent": mc.only_a if metric == "success" else math.nan,
                        "only_prompt": mc.only_b if metric == "success" else math.nan,
                        "mcnemar_p": mc.p if metric == "success" else math.nan,
                    }
                )
    table = _frame(rows, AGENT_TEST_COLUMNS)
    table["p_holm"] = holm(list(table.p))
    table["significant"] = table.p_holm < ALPHA
    table["reachable"] = [p <= ALPHA for p in holm([wilcoxon_min_p(int(n)) for n in table.seeds])]
    return table


def main_detection(det: pd.DataFrame) -> pd.DataFrame:
    """The detection rows of the main matrix: B=10 where it was run, else each
    (model, regime, modality)'s most common batch size."""
    if det.empty:
        return det
    keep = []
    for _, group in det.groupby(["model", "regime", "modality"]):
        sizes = group.batch_size
        b = MAIN_BATCH_SIZE if (sizes == MAIN_BATCH_SIZE).any() else int(sizes.mode().iloc[0])
        keep.append(group[sizes == b])
    return pd.concat(keep, ignore_index=True)


def detection_summary(det: pd.DataFrame) -> pd.DataFrame:
    """Fig. 3: per (model, regime, modality, batch size) mean ± std of per-seed F1,
    its bootstrap CI, mean precision and recall, calls and answer problems."""
    rows = []
    for (model, regime, modality, b), group in det.groupby(["model", "regime", "modality", "batch_size"]):
        low, high = bootstrap_ci(list(group.f1))
        rows.append(
            {
                "model": model,
                "regime": regime,
                "modality": modality,
                "batch_size": int(b),
                "seeds": len(group),
                "f1_mean": float(group.f1.mean()),
                "f1_std": _sd(group.f1),
                "f1_low": low,
                "f1_high": high,
                "precision": float(group.precision.mean()),
                "recall": float(group.recall.mean()),
                "calls_per_seed": float(group.calls.mean()),
                "unparseable": int(group.unparseable.sum()),
                "unanswered": int(group.unanswered.sum()),
                "unknown_ids": int(group.unknown_ids.sum()),
            }
        )
    return _frame(
        rows,
        (
            "model",
            "regime",
            "modality",
            "batch_size",
            "seeds",
            "f1_mean",
            "f1_std",
            "f1_low",
            "f1_high",
            "precision",
            "recall",
            "calls_per_seed",
            "unparseable",
            "unanswered",
            "unknown_ids",
        ),
    )


def modality_tests(det: pd.DataFrame) -> pd.DataFrame:
    """Vision vs text per model: paired Wilcoxon over (regime, seed) pairs of F1, Holm-adjusted."""
    main = main_detection(det)
    rows = []
    for model, group in main.groupby("model"):
        text = group[group.modality == "text"].set_index(["regime", "seed"]).f1
        vision = group[group.modality == "vision"].set_index(["regime", "seed"]).f1
        shared = sorted(set(text.index) & set(vision.index))
        if not shared:
            continue
        w = paired_wilcoxon([vision[k] for k in shared], [text[k] for k in shared])
        rows.append({"model": model, "pairs": w.n, "difference": w.mean_difference, "W": w.statistic, "p": w.p})
    table = _frame(rows, ("model", "pairs", "difference", "W", "p"))
    table["p_holm"] = holm(list(table.p))
    table["significant"] = table.p_holm < ALPHA
    table["reachable"] = [p <= ALPHA for p in holm([wilcoxon_min_p(int(n)) for n in table.pairs])]
    return table


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
    return _frame(rows, ("model", "modality", *FLAG_CELLS, *(f"{cell}_n" for cell in FLAG_CELLS)))


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
    return _frame(rows, ("model", "modality", "regime", "thaw", "thaw_n", "freeze", "freeze_n"))


def f1_vs_success(det: pd.DataFrame, nav: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fig. 9: per-seed text detection F1 against per-seed text OMCD success, paired
    by (model, regime, seed); and Pearson/Spearman per (model, regime)."""
    main = main_detection(det)
    f1 = main[main.modality == "text"][["model", "regime", "seed", "f1"]]
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
    return pairs, _frame(rows, columns)


def batch_sweep(det: pd.DataFrame, regime: str = "L1", modality: str = "text") -> pd.DataFrame:
    """Table 5: per (model, batch size) on ``regime`` ``modality``: F1 and calls per seed."""
    part = det[(det.regime == regime) & (det.modality == modality)]
    rows = []
    for (model, b), group in part.groupby(["model", "batch_size"]):
        rows.append(
            {
                "model": model,
                "batch_size": int(b),
                "seeds": len(group),
                "f1_mean": float(group.f1.mean()),
                "f1_std": _sd(group.f1),
                "calls_per_seed": float(group.calls.mean()),
            }
        )
    return _frame(rows, ("model", "batch_size", "seeds", "f1_mean", "f1_std", "calls_per_seed"))


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
    return _frame(rows, ("regime", "seeds", "mean", "std", "min", "max"))
