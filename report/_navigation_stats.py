"""Navigation's numbers: outcome rates, steps by outcome and paired tests.

Units: a rate is over episodes (seed x epoch); its confidence interval resamples
seeds (a cluster bootstrap of per-seed rates), and paired tests compare per-seed
rates on the seeds both conditions share. Rows are told apart by every navigation
axis beyond the paper (:data:`AXES`: filter mode, navigator, the extensions' axes); a
table without one of those columns ran the paper's value of it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from spatialstale.env import CHANGE_REGIMES, DEFAULT_SIZE, REGIMES, STATIC
from spatialstale.protocol import BUILTIN_STRATEGIES, DEFAULT_STRATEGIES

from ._load import ENDS, paper_value, row_axes
from ._stats import adjusted, bootstrap_ci, mcnemar, paired_wilcoxon

AXES = tuple(a.name for a in row_axes("navigation") if a.name != "prompt_set")
"""The navigation axes beside the paper's matrix (the report shows one prompt set at a
time): ``filter``, ``agent`` and the extensions' axes."""
PAPER = {name: paper_value(name) for name in AXES}
"""Each axis's value in the paper's protocol, and in logs from before the axis existed."""
FILTER, AGENT = "filter", "agent"
PAPER_FILTER, PROMPT_AGENT = PAPER[FILTER], PAPER[AGENT]
STRATEGY_ORDER = BUILTIN_STRATEGIES
"""The built-in strategies, the paper's five first."""


def strategy_order(present: Iterable[str] = ()) -> tuple[str, ...]:
    """The rows of a strategy table: the paper's five (a table marks an absent one
    missing), then every other strategy the logs hold (LocalVerify, then plug-ins by name)."""
    extra = set(present) - set(DEFAULT_STRATEGIES)
    return (*DEFAULT_STRATEGIES, *sorted(extra, key=lambda s: (s not in BUILTIN_STRATEGIES, s)))


def strategies_in(values: Iterable[str]) -> list[str]:
    """The strategies among ``values``, in :func:`strategy_order` (no absent ones)."""
    present = set(values)
    return [s for s in strategy_order(present) if s in present]


PAPER_REGIMES = CHANGE_REGIMES
"""The paper's regimes, L1, L2, L3: every table of regimes lists them, in this order."""
POOLED_REGIMES = (STATIC, *PAPER_REGIMES)
"""The regimes the report's pooled numbers (the headline, the vision-text test, Fig. 6)
pool: the paper's and the static grid. Every other regime (MA, a plug-in) has its own
rows or columns beside the paper's, and is not pooled with them."""


def regime_order(present: Iterable[object] = ()) -> tuple[str, ...]:
    """The regimes of a table: the paper's L1, L2, L3 (a table marks an absent one
    missing), then every other regime the logs hold: the other built-ins in their order
    (``none``, MA), then plug-ins by name."""
    builtin = {name: i for i, name in enumerate(REGIMES)}
    extra = {str(r) for r in present} - set(PAPER_REGIMES)
    return (*PAPER_REGIMES, *sorted(extra, key=lambda r: (builtin.get(r, len(builtin)), r)))


def regimes_in(values: Iterable[object]) -> list[str]:
    """The regimes among ``values``, in :func:`regime_order` (no absent ones)."""
    present = {str(v) for v in values}
    return [r for r in regime_order(present) if r in present]


def pooled(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of :data:`POOLED_REGIMES`: what the report's pooled numbers read."""
    if frame.empty or "regime" not in frame.columns:
        return frame
    return frame[frame["regime"].isin(POOLED_REGIMES)]


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
CELL = ("model", "regime", "modality")


MAIN_GRID_SIZE = DEFAULT_SIZE
"""The grid side of the paper's main matrix (other sides are ``--sizes``' extra runs)."""


def main_grid(frame: pd.DataFrame) -> pd.DataFrame:
    """Each model's rows at the paper's grid side n = 8 where it ran, else at its
    smallest, so no table pools grid sides (a frame without ``size`` is returned whole)."""
    if frame.empty or "size" not in frame.columns:
        return frame
    keep = []
    for _, group in frame.groupby("model", sort=False):
        n = MAIN_GRID_SIZE if (group["size"] == MAIN_GRID_SIZE).any() else int(group["size"].min())
        keep.append(group[group["size"] == n])
    return pd.concat(keep).sort_index()


def table_of(rows: list[dict[str, object]], columns: Sequence[str]) -> pd.DataFrame:
    """``rows`` as a frame whose columns exist even when there are no rows, so a
    partial matrix selects empty cells instead of failing on absent columns."""
    return pd.DataFrame(rows, columns=list(columns)) if not rows else pd.DataFrame(rows)


def matching(table: pd.DataFrame, keys: Mapping[str, object]) -> pd.DataFrame:
    """The rows of ``table`` whose columns equal ``keys``."""
    mask = pd.Series(True, index=table.index)
    for key, value in keys.items():
        mask &= table[key] == value
    return table[mask]


def with_axes(nav: pd.DataFrame) -> pd.DataFrame:
    """``nav`` with a column for every axis; a table without one ran the paper's value."""
    missing = {key: value for key, value in PAPER.items() if key not in nav.columns}
    return nav.assign(**missing) if missing else nav


def paper_view(nav: pd.DataFrame) -> pd.DataFrame:
    """The rows the paper's tables show: every axis at its paper value but the filter
    mode, whose values the tables set side by side."""
    nav = with_axes(nav)
    return matching(nav, {k: v for k, v in PAPER.items() if k != FILTER})


def paper_cells(nav: pd.DataFrame) -> pd.DataFrame:
    """The rows of the paper's protocol alone: every axis at its paper value."""
    return matching(with_axes(nav), PAPER)


def value_order(values: Sequence[object], axis: str) -> list[str]:
    """An axis's values as a section setting them side by side orders them (an
    extension's ``ReportSweep``): by number, then by name, the paper's value last."""
    labels = {str(v) for v in values}
    paper = str(PAPER[axis])
    others = sorted(
        (label for label in labels if label != paper),
        key=lambda x: (not x.isdigit(), int(x) if x.isdigit() else 0, x),
    )
    return others + ([paper] if paper in labels else [])


def strategy_label(strategy: str, filter_mode: str, names: dict[str, str] | None = None) -> str:
    """A strategy's name in a table, with its filter mode when it is not the paper's:
    ``omcd (unknown)``."""
    label = (names or {}).get(strategy, strategy)
    return label if filter_mode == PAPER_FILTER else f"{label} ({filter_mode})"


def per_seed_rates(nav: pd.DataFrame) -> pd.DataFrame:
    """Per (model, regime, modality, strategy, axes, seed): outcome rates over its episodes."""
    return (
        with_axes(nav)
        .groupby([*CELL, "strategy", *AXES, "seed"], as_index=False)
        .agg(
            episodes=("epoch", "size"),
            success=("success", "mean"),
            death=("death", "mean"),
            timeout=("timeout", "mean"),
        )
    )


LIMITED = "limited"
"""The rate column of the episodes a sample limit cut short (outcome neither success,
death nor timeout): with it a row's outcome rates add up to 1."""


def limited(nav: pd.DataFrame) -> pd.Series:
    """Whether each episode of ``nav`` was cut short by a sample limit before it ended."""
    cut = nav["limit"].fillna("") != "" if "limit" in nav.columns else pd.Series(False, index=nav.index)
    return cut & ~nav["outcome"].isin(ENDS)


RATE_COLUMNS = (
    *CELL,
    "strategy",
    *AXES,
    "episodes",
    "seeds",
    "fallbacks",
    "died_on_stale",
    *(f"{part}{outcome}" for outcome in (*ENDS, LIMITED) for part in ("", "steps_", "n_")),
    *(f"{outcome}_{end}" for outcome in ("success", "death") for end in ("low", "high")),
)


def outcome_rates(nav: pd.DataFrame) -> pd.DataFrame:
    """Table 3: per (model, regime, modality, strategy, axes) the outcome rates over
    episodes, with seeded bootstrap CIs over seeds and mean steps by outcome; the
    episodes a sample limit cut are the outcome :data:`LIMITED`, so the rates add up to 1."""
    rows = []
    nav = with_axes(nav)
    seeds = per_seed_rates(nav)
    names = [*CELL, "strategy", *AXES]
    for key, group in nav.groupby(names):
        cell = dict(zip(names, key, strict=True))
        per_seed = matching(seeds, cell)
        row: dict[str, object] = {
            **cell,
            "episodes": len(group),
            "seeds": group.seed.nunique(),
            "fallbacks": int(group.fallbacks.sum()),
            "died_on_stale": int(group.died_on_stale.sum()),
        }
        for outcome in ENDS:
            row[outcome] = float(group[outcome].mean())
            steps = group.loc[group.outcome == outcome, "steps"]
            row[f"steps_{outcome}"] = float(steps.mean()) if len(steps) else math.nan
            row[f"n_{outcome}"] = len(steps)
        cut = limited(group)
        row[LIMITED] = float(cut.mean())
        row[f"steps_{LIMITED}"] = float(group.steps[cut].mean()) if cut.any() else math.nan
        row[f"n_{LIMITED}"] = int(cut.sum())
        for outcome in ("success", "death"):
            row[f"{outcome}_low"], row[f"{outcome}_high"] = bootstrap_ci(list(per_seed[outcome]))
        rows.append(row)
    return table_of(rows, RATE_COLUMNS)


def _paired(
    left: pd.DataFrame, right: pd.DataFrame, episodes_left: pd.Series, episodes_right: pd.Series
) -> list[dict[str, object]]:
    """Paired tests of two conditions' per-seed rates (indexed by seed) on their shared
    seeds, success and death: Wilcoxon on each, exact McNemar on success by seed x
    episode (``episodes_*``: success indexed by (seed, epoch))."""
    shared = sorted(set(left.index) & set(right.index))
    if not shared:
        return []
    pairs = sorted(set(episodes_left.index) & set(episodes_right.index))
    mc = mcnemar([episodes_left[p] for p in pairs], [episodes_right[p] for p in pairs])
    out: list[dict[str, object]] = []
    for metric in ("success", "death"):
        a, b = list(left.loc[shared, metric]), list(right.loc[shared, metric])
        w = paired_wilcoxon(a, b)
        on_success = metric == "success"
        out.append(
            {
                "metric": metric,
                "seeds": w.n,
                "mean_a": float(np.mean(a)),
                "mean_b": float(np.mean(b)),
                "nonzero": w.nonzero,
                "difference": w.mean_difference,
                "W": w.statistic,
                "p": w.p,
                "mcnemar_pairs": mc.n if on_success else math.nan,
                "only_a": mc.only_a if on_success else math.nan,
                "only_b": mc.only_b if on_success else math.nan,
                "mcnemar_p": mc.p if on_success else math.nan,
            }
        )
    return out


WILCOXON_COLUMNS = ("seeds", "mean_a", "mean_b", "nonzero", "difference", "W", "p")
MCNEMAR_COLUMNS = ("mcnemar_pairs", "only_a", "only_b", "mcnemar_p")
STAT_COLUMNS = ("metric", *WILCOXON_COLUMNS, *MCNEMAR_COLUMNS)
"""What :func:`_paired` gives of each test."""
TEST_COLUMNS = (*CELL, *AXES, "a", "b", *STAT_COLUMNS)


def _success_by_episode(episodes: pd.DataFrame) -> pd.Series:
    return episodes.set_index(["seed", "epoch"]).success


def strategy_tests(nav: pd.DataFrame, contrasts: Sequence[tuple[str, str]] = CONTRASTS) -> pd.DataFrame:
    """Paired Wilcoxon (per-seed success and death rates) and exact McNemar (success
    by seed x episode) for each contrast within each (model, regime, modality, axes);
    Holm adjusts the Wilcoxon p-values over a family: the tests of the paper's regimes
    and the static grid (:data:`POOLED_REGIMES`) are one family, as in the paper, and
    each other regime (MA, a plug-in) is a family of its own, so that adding a regime's
    logs leaves the paper's adjusted p-values as they were."""
    nav = with_axes(nav)
    seeds = per_seed_rates(nav)
    names = [*CELL, *AXES]
    rows = []
    for key, group in seeds.groupby(names):
        cell = dict(zip(names, key, strict=True))
        episodes = matching(nav, cell)
        for a, b in contrasts:
            left = group[group.strategy == a].set_index("seed")
            right = group[group.strategy == b].set_index("seed")
            ea = _success_by_episode(episodes[episodes.strategy == a])
            eb = _success_by_episode(episodes[episodes.strategy == b])
            rows += [{**cell, "a": a, "b": b, **test} for test in _paired(left, right, ea, eb)]
    return adjusted_by_regime(table_of(rows, TEST_COLUMNS))


def adjusted_by_regime(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`adjusted` over each family of ``table``'s tests: those of
    :data:`POOLED_REGIMES` together, each other regime alone."""
    family = [r if r not in POOLED_REGIMES else "" for r in table.regime]
    if len(set(family)) <= 1:
        return adjusted(table)
    parts = [adjusted(part.copy()) for _, part in table.groupby(family, sort=False)]
    return pd.concat(parts).loc[table.index]


AGENT_TEST_COLUMNS = (*CELL, "strategy", *(a for a in AXES if a != AGENT), "agent", *STAT_COLUMNS)


def agent_tests(nav: pd.DataFrame, baseline: str = PROMPT_AGENT) -> pd.DataFrame:
    """Each other navigator against ``baseline`` (the per-step prompt agent), per
    (model, regime, modality, strategy, other axes): paired tests on the seeds both
    ran (A = the other navigator, B = the baseline: ``mean_a`` and ``mean_b`` are their
    mean per-seed rates, ``difference`` = A - B); Holm over the family."""
    nav = with_axes(nav)
    seeds = per_seed_rates(nav)
    names = [*CELL, "strategy", *(a for a in AXES if a != AGENT)]
    rows = []
    for key, group in seeds.groupby(names):
        cell = dict(zip(names, key, strict=True))
        base = group[group[AGENT] == baseline].set_index("seed")
        if base.empty:
            continue
        episodes = matching(nav, cell)
        eb = _success_by_episode(episodes[episodes[AGENT] == baseline])
        for agent in sorted(set(group[AGENT]) - {baseline}):
            other = group[group[AGENT] == agent].set_index("seed")
            ea = _success_by_episode(episodes[episodes[AGENT] == agent])
            rows += [{**cell, "agent": agent, **test} for test in _paired(other, base, ea, eb)]
    return adjusted(table_of(rows, AGENT_TEST_COLUMNS))


UPPER_BOUND_SEEDS = ("seeds", "seeds_at_least", "seeds_more")
UPPER_BOUND_COLUMNS = (*CELL, "value", "nomemory", "best", "best_success", "bounded", *UPPER_BOUND_SEEDS)


def nomemory_bound(nav: pd.DataFrame, axis: str) -> pd.DataFrame:
    """Per (model, regime, modality, value of ``axis``) of ``nav`` (one filter mode and
    agent; the value in the column ``value``):
    NoMemory's success, the memory strategy with the highest success, whether NoMemory is
    still an upper bound (no strategy succeeds more often), and seed by seed on the seeds
    both ran: on how many the best strategy's success is at least NoMemory's, and above it."""
    rows: list[dict[str, object]] = []
    nav = with_axes(nav)
    if nav.empty or "nomemory" not in set(nav.strategy):
        return table_of(rows, UPPER_BOUND_COLUMNS)
    rates = outcome_rates(nav)
    seeds = per_seed_rates(nav)
    names = [*CELL, axis]
    for key, group in rates.groupby(names):
        cell = dict(zip(names, key, strict=True))
        nomemory = group[group.strategy == "nomemory"]
        others = group[group.strategy != "nomemory"]
        if nomemory.empty or others.empty:
            continue
        best = others.loc[others.success.idxmax()]
        base = float(nomemory.success.iloc[0])
        per_seed = matching(seeds, cell)
        left = per_seed[per_seed.strategy == best.strategy].set_index("seed").success
        right = per_seed[per_seed.strategy == "nomemory"].set_index("seed").success
        shared = sorted(set(left.index) & set(right.index))
        rows.append(
            {
                **{k: cell[k] for k in CELL},
                "value": cell[axis],
                "nomemory": base,
                "best": str(best.strategy),
                "best_success": float(best.success),
                "bounded": bool(base >= float(others.success.max())),
                "seeds": len(shared),
                "seeds_at_least": sum(bool(left[s] >= right[s]) for s in shared),
                "seeds_more": sum(bool(left[s] > right[s]) for s in shared),
            }
        )
    return table_of(rows, UPPER_BOUND_COLUMNS)


COST_COLUMNS = (
    *CELL,
    "strategy",
    *AXES,
    "episodes",
    "recorded",
    "audit_calls",
    "audit_calls_low",
    "audit_calls_high",
    "audit_tokens",
    "death",
    "death_low",
    "death_high",
)


def audit_costs(nav: pd.DataFrame) -> pd.DataFrame:
    """What safety costs: per (model, regime, modality, strategy, axes) the mean audit
    model calls and tokens per episode and the death rate, each with the seeded
    bootstrap interval over seeds of :func:`outcome_rates`.

    ``recorded`` counts the episodes whose log recorded the cost (navigation 4 on); the
    cost is the mean over those, NaN (with its interval) when none did, as in a log
    from before it was recorded. The death rate is over every episode of the cell.
    """
    nav = with_axes(nav)
    if "audit_calls" not in nav.columns:
        nav = nav.assign(audit_calls=math.nan, audit_tokens=math.nan)
    rates = outcome_rates(nav)
    names = [*CELL, "strategy", *AXES]
    rows = []
    for key, group in nav.groupby(names):
        cell = dict(zip(names, key, strict=True))
        rate = matching(rates, cell).iloc[0]
        recorded = group[group.audit_calls.notna()]
        per_seed = recorded.groupby("seed").audit_calls.mean()
        low, high = bootstrap_ci(list(per_seed))
        rows.append(
            {
                **cell,
                "episodes": len(group),
                "recorded": len(recorded),
                "audit_calls": float(recorded.audit_calls.mean()) if len(recorded) else math.nan,
                "audit_calls_low": low,
                "audit_calls_high": high,
                "audit_tokens": float(recorded.audit_tokens.mean()) if len(recorded) else math.nan,
                "death": float(rate["death"]),
                "death_low": float(rate["death_low"]),
                "death_high": float(rate["death_high"]),
            }
        )
    return table_of(rows, COST_COLUMNS)
