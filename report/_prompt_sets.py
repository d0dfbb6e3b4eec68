"""Prompt sensitivity: how much of a result is the wording of the prompts.

Pure functions over the tidy tables of :func:`read_logs` (``Results.detection`` and
``Results.navigation``, whose ``prompt_set`` column names each row's set; logs from
before prompt sets read as ``default``). Every comparison pairs the same seeds (and,
for McNemar, the same seed x episode) under two sets of the same (model, regime,
modality):

- :func:`prompt_set_summary`: per model, regime, modality and set, the mean per-seed
  detection F1 and each strategy's success and death rates.
- :func:`sensitivity_table`: that summary with one column per set, the change of each
  set against ``default`` and its Holm-adjusted p beside it.
- :func:`prompt_set_tests`: each set against the baseline set, paired Wilcoxon over
  per-seed F1 / rates, exact McNemar on success by episode, Holm over the family.
- :func:`contrast_robustness`: the paper's strategy contrasts (OMCD vs NoFilter, ...)
  under each set, and whether each holds under every wording.

Units follow ``_navigation_stats`` and ``_detection_stats``: F1 is per seed (L3 pools a seed's windows), a navigation
rate is per seed over its episodes, detection uses the main batch size. Navigation
reads the paper's cells only (``delete`` filter, full view, per-step prompt agent).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from spatialstale.protocol import BUILTIN_STRATEGIES, DEFAULT_PROMPT_SET, PROMPT_SETS

from ._detection_stats import main_detection
from ._document import show
from ._navigation_stats import CONTRASTS, paper_cells
from ._stats import ALPHA, holm, mcnemar, paired_wilcoxon

PROMPT_SET_KEY = "prompt_set"

SET_ORDER = tuple(PROMPT_SETS)
"""Sets in the registry's order (``default`` first); unknown names sort after them."""
CELL = ["model", "regime", "modality"]
DETECTION_MEASURE = "detection"
"""The ``strategy`` value of a detection row: F1 has no memory strategy."""

SUMMARY_COLUMNS = (*CELL, "strategy", "metric", PROMPT_SET_KEY, "seeds", "mean")
TEST_COLUMNS = (
    *CELL,
    "strategy",
    "metric",
    "baseline",
    PROMPT_SET_KEY,
    "seeds",
    "nonzero",
    "difference",
    "W",
    "p",
    "mcnemar_pairs",
    "only_set",
    "only_baseline",
    "mcnemar_p",
    "p_holm",
    "significant",
)
ROBUSTNESS_COLUMNS = (
    *CELL,
    "a",
    "b",
    "metric",
    "sets",
    "same_direction",
    "significant_under",
    "holds_under_every_set",
)
"""Then ``<set> Δ`` and ``<set> p_holm`` for every set of the table, registry order."""


def _set_rank(name: object) -> tuple[int, str]:
    return (SET_ORDER.index(name), "") if name in SET_ORDER else (len(SET_ORDER), str(name))


def _sets(frame: pd.DataFrame) -> list[str]:
    return sorted({str(s) for s in frame[PROMPT_SET_KEY]}, key=_set_rank) if not frame.empty else []


def _frame(rows: list[dict[str, object]], columns: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(columns))


def _per_seed(det: pd.DataFrame, nav: pd.DataFrame) -> pd.DataFrame:
    """One row per (cell, strategy, metric, set, seed): the value a paired test compares."""
    parts = []
    if not det.empty:
        main = show(main_detection(det))
        f1 = main[[*CELL, PROMPT_SET_KEY, "seed", "f1"]].rename(columns={"f1": "value"})
        parts.append(f1.assign(strategy=DETECTION_MEASURE, metric="f1"))
    if not nav.empty:
        nav = show(paper_cells(nav))  # one filter mode, view and agent: the paper's
        keys = [*CELL, "strategy", PROMPT_SET_KEY, "seed"]
        rates = nav.groupby(keys, as_index=False).agg(success=("success", "mean"), death=("death", "mean"))
        parts.append(rates.melt(id_vars=keys, value_vars=["success", "death"], var_name="metric", value_name="value"))
    if not parts:
        return pd.DataFrame(columns=[*CELL, "strategy", "metric", PROMPT_SET_KEY, "seed", "value"])
    return pd.concat(parts, ignore_index=True)


def _order(frame: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Rows by cell, strategies in the suite's order (detection first), then set."""
    strategies = (DETECTION_MEASURE, *BUILTIN_STRATEGIES)

    def key(column: pd.Series) -> pd.Series:
        if column.name == "strategy":
            return column.map(lambda s: strategies.index(s) if s in strategies else len(strategies))
        if column.name == "metric":
            return column.map(lambda m: ("f1", "success", "death").index(m) if m in ("f1", "success", "death") else 3)
        if column.name == PROMPT_SET_KEY:
            return column.map(lambda s: _set_rank(s)[0])
        return column

    return frame.sort_values(list(by), key=key, kind="stable").reset_index(drop=True)


def prompt_set_summary(det: pd.DataFrame, nav: pd.DataFrame) -> pd.DataFrame:
    """Per (model, regime, modality, strategy, metric, set): seeds and mean per-seed
    value. Detection rows have strategy ``detection`` and metric ``f1``; navigation
    rows one ``success`` and one ``death`` row per strategy."""
    values = _per_seed(det, nav)
    if values.empty:
        return _frame([], SUMMARY_COLUMNS)
    keys = [*CELL, "strategy", "metric", PROMPT_SET_KEY]
    table = values.groupby(keys, as_index=False).agg(seeds=("seed", "nunique"), mean=("value", "mean"))
    return _order(table[list(SUMMARY_COLUMNS)], keys)


def prompt_set_tests(det: pd.DataFrame, nav: pd.DataFrame, baseline: str = DEFAULT_PROMPT_SET) -> pd.DataFrame:
    """Every other set against ``baseline`` on the seeds both ran.

    Paired Wilcoxon (set minus baseline) over per-seed F1 or per-seed success/death
    rate; for success also the exact McNemar on seed x episode outcomes. Holm adjusts
    the Wilcoxon p-values over the whole family of this table; ``significant`` is
    ``p_holm`` below the paper's alpha.
    """
    values = _per_seed(det, nav)
    rows: list[dict[str, object]] = []
    for (model, regime, modality, strategy, metric), group in values.groupby([*CELL, "strategy", "metric"]):
        base = group[group[PROMPT_SET_KEY] == baseline].set_index("seed").value
        if base.empty:
            continue
        for name in _sets(group):
            if name == baseline:
                continue
            other = group[group[PROMPT_SET_KEY] == name].set_index("seed").value
            shared = sorted(set(base.index) & set(other.index))
            if not shared:
                continue
            w = paired_wilcoxon([float(other[s]) for s in shared], [float(base[s]) for s in shared])
            row: dict[str, object] = {
                "model": model,
                "regime": regime,
                "modality": modality,
                "strategy": strategy,
                "metric": metric,
                "baseline": baseline,
                PROMPT_SET_KEY: name,
                "seeds": w.n,
                "nonzero": w.nonzero,
                "difference": w.mean_difference,
                "W": w.statistic,
                "p": w.p,
                "mcnemar_pairs": math.nan,
                "only_set": math.nan,
                "only_baseline": math.nan,
                "mcnemar_p": math.nan,
            }
            if metric == "success":
                mc = _episode_mcnemar(nav, (model, regime, modality, strategy), name, baseline)
                row |= {"mcnemar_pairs": mc[0], "only_set": mc[1], "only_baseline": mc[2], "mcnemar_p": mc[3]}
            rows.append(row)
    table = _frame(rows, TEST_COLUMNS[:-2])
    table["p_holm"] = holm([float(p) for p in table.p])
    table["significant"] = table.p_holm < ALPHA
    return _order(table, [*CELL, "strategy", "metric", PROMPT_SET_KEY])


def _episode_mcnemar(
    nav: pd.DataFrame, cell: tuple[object, ...], name: str, baseline: str
) -> tuple[int, int, int, float]:
    model, regime, modality, strategy = cell
    episodes = nav[
        (nav.model == model) & (nav.regime == regime) & (nav.modality == modality) & (nav.strategy == strategy)
    ]
    a = episodes[episodes[PROMPT_SET_KEY] == name].set_index(["seed", "epoch"]).success
    b = episodes[episodes[PROMPT_SET_KEY] == baseline].set_index(["seed", "epoch"]).success
    pairs = sorted(set(a.index) & set(b.index))
    result = mcnemar([a[p] for p in pairs], [b[p] for p in pairs])
    return result.n, result.only_a, result.only_b, result.p


def sensitivity_table(det: pd.DataFrame, nav: pd.DataFrame, baseline: str = DEFAULT_PROMPT_SET) -> pd.DataFrame:
    """The prompt-sensitivity table: one row per (model, regime, modality, strategy,
    metric), the mean under each set in its own column (registry order), and for each
    other set ``<set> Δ`` (its paired mean change against ``baseline``) and
    ``<set> p_holm`` from :func:`prompt_set_tests`. A set a cell did not run is NaN."""
    summary = prompt_set_summary(det, nav)
    keys = [*CELL, "strategy", "metric"]
    if summary.empty:
        return pd.DataFrame(columns=keys)
    sets = _sets(summary)
    wide = summary.pivot_table(index=keys, columns=PROMPT_SET_KEY, values="mean", aggfunc="first", sort=False)
    wide = wide.reindex(columns=sets).reset_index()
    wide.columns.name = None
    tests = prompt_set_tests(det, nav, baseline)
    for name in sets:
        if name == baseline:
            continue
        own = tests[tests[PROMPT_SET_KEY] == name][[*keys, "difference", "p_holm"]]
        own = own.rename(columns={"difference": f"{name} Δ", "p_holm": f"{name} p_holm"})
        wide = wide.merge(own, on=keys, how="left")
    return _order(wide, keys)


def contrast_robustness(
    nav: pd.DataFrame, contrasts: Sequence[tuple[str, str]] = CONTRASTS, metrics: Sequence[str] = ("success", "death")
) -> pd.DataFrame:
    """Does each strategy contrast hold under every wording?

    For each (model, regime, modality), contrast A vs B and metric, the paired mean
    difference A - B over per-seed rates under each set the cell ran (``<set> Δ``) and
    its Wilcoxon p, Holm-adjusted over every test of this table (``<set> p_holm``; NaN
    where the cell did not run the set). ``sets`` lists the sets run;
    ``same_direction``: the difference has one nonzero sign under every set;
    ``significant_under``: the sets where it is significant at the paper's alpha;
    ``holds_under_every_set``: same direction and significant under every set (with a
    single set, nothing is shown to hold across wordings, so False).
    """
    nav = paper_cells(nav) if not nav.empty else nav  # one filter mode, view and agent: the paper's
    if nav.empty:
        return _frame([], ROBUSTNESS_COLUMNS)
    keys = [*CELL, "strategy", PROMPT_SET_KEY, "seed"]
    rates = nav.groupby(keys, as_index=False).agg(success=("success", "mean"), death=("death", "mean"))
    found: list[tuple[tuple[object, ...], str, float, float]] = []
    for (model, regime, modality, name), group in rates.groupby([*CELL, PROMPT_SET_KEY]):
        for a, b in contrasts:
            left = group[group.strategy == a].set_index("seed")
            right = group[group.strategy == b].set_index("seed")
            shared = sorted(set(left.index) & set(right.index))
            if not shared:
                continue
            for metric in metrics:
                w = paired_wilcoxon(list(left.loc[shared, metric]), list(right.loc[shared, metric]))
                found.append(((model, regime, modality, a, b, metric), str(name), w.mean_difference, w.p))
    adjusted = holm([p for *_, p in found])
    by_key: dict[tuple[object, ...], dict[str, tuple[float, float]]] = {}
    for (key, name, difference, _), p_holm in zip(found, adjusted, strict=True):
        by_key.setdefault(key, {})[name] = (difference, p_holm)
    all_sets = sorted({name for _, name, _, _ in found}, key=_set_rank)
    rows = []
    for key, per_set in by_key.items():
        sets = sorted(per_set, key=_set_rank)
        signs = {math.copysign(1.0, per_set[s][0]) if per_set[s][0] != 0 else 0.0 for s in sets}
        same = len(signs) == 1 and 0.0 not in signs
        significant = [s for s in sets if per_set[s][1] < ALPHA]
        model, regime, modality, first, second, measure = key
        row: dict[str, object] = {
            "model": model,
            "regime": regime,
            "modality": modality,
            "a": first,
            "b": second,
            "metric": measure,
            "sets": ",".join(sets),
            "same_direction": same,
            "significant_under": ",".join(significant),
            "holds_under_every_set": same and len(sets) > 1 and len(significant) == len(sets),
        }
        for name in all_sets:
            difference, p_holm = per_set.get(name, (math.nan, math.nan))
            row[f"{name} Δ"] = difference
            row[f"{name} p_holm"] = p_holm
        rows.append(row)
    return _frame(rows, [*ROBUSTNESS_COLUMNS, *(f"{n} {part}" for n in all_sets for part in ("Δ", "p_holm"))])
