"""The report's statistics, as pure functions over arrays (scipy underneath).

- :func:`paired_wilcoxon`: two-sided Wilcoxon signed-rank test over paired per-seed
  rates (scipy's default ``zero_method="wilcox"``: zero differences are dropped).
  When every difference is zero the test is undefined; it is reported with p = 1.
- :func:`wilcoxon_min_p`: the smallest p-value that test can give with n pairs.
- :func:`holm`: Holm's step-down adjustment of a family of p-values.
- :func:`mcnemar`: the exact (binomial) McNemar test on paired binary outcomes.
- :func:`bootstrap_ci`: a seeded percentile bootstrap of the mean.
- :func:`correlations`: Pearson and Spearman, NaN when an input is constant.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

ALPHA = 0.001
"""The paper's significance level (SPEC §8)."""
BOOTSTRAP_SEED = 2024
BOOTSTRAP_RESAMPLES = 2000
CONFIDENCE = 0.95


def _paired(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Two paired samples as float arrays (paired by position)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired samples differ in length: {x.size} vs {y.size}")
    return x, y


@dataclass(frozen=True)
class Wilcoxon:
    n: int
    """Pairs (seeds) compared."""
    nonzero: int
    """Pairs whose difference is not zero (the ones the test ranks)."""
    mean_difference: float
    statistic: float
    p: float


def paired_wilcoxon(a: Sequence[float], b: Sequence[float]) -> Wilcoxon:
    """Wilcoxon signed-rank test of ``a - b`` (paired by position), two-sided."""
    x, y = _paired(a, b)
    d = x - y
    nonzero = int(np.count_nonzero(d))
    mean = float(d.mean()) if d.size else math.nan
    if d.size == 0:
        return Wilcoxon(0, 0, mean, math.nan, math.nan)
    if nonzero == 0:
        return Wilcoxon(int(d.size), 0, mean, 0.0, 1.0)
    result = stats.wilcoxon(x, y)
    return Wilcoxon(int(d.size), nonzero, mean, float(result.statistic), float(result.pvalue))


def wilcoxon_min_p(n: int) -> float:
    """The smallest two-sided p-value :func:`paired_wilcoxon` can return with ``n`` pairs.

    Every difference of one sign gives the exact p = 2 / 2**n; with ties scipy falls
    back to the normal approximation, whose extreme can be smaller, so the smaller
    of the two is the bound. With no pairs the test gives no p-value (NaN).
    """
    if n < 1:
        return math.nan
    exact = min(1.0, 2.0 / 2.0**n)
    z = (n * (n + 1) / 4) / math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    return min(exact, float(2 * stats.norm.sf(z)))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the input order; NaN stays NaN and is not counted.

    The i-th smallest of m p-values is multiplied by (m - i), running maxima
    enforce monotonicity, and results are capped at 1.
    """
    indexed = [(p, i) for i, p in enumerate(pvalues) if not math.isnan(p)]
    indexed.sort()
    m = len(indexed)
    adjusted = [math.nan] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(indexed):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True)
class McNemar:
    n: int
    """Pairs compared."""
    only_a: int
    """Pairs where only the first outcome is 1."""
    only_b: int
    p: float


def mcnemar(a: Sequence[int | bool | float], b: Sequence[int | bool | float]) -> McNemar:
    """Exact McNemar test: a two-sided binomial test of the discordant pairs at 1/2."""
    x = np.asarray(a, dtype=bool)
    y = np.asarray(b, dtype=bool)
    if x.shape != y.shape:
        raise ValueError(f"paired samples differ in length: {x.size} vs {y.size}")
    only_a = int(np.sum(x & ~y))
    only_b = int(np.sum(~x & y))
    discordant = only_a + only_b
    p = 1.0 if discordant == 0 else float(stats.binomtest(only_a, discordant, 0.5).pvalue)
    return McNemar(int(x.size), only_a, only_b, p)


def bootstrap_ci(
    values: Sequence[float],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """A percentile bootstrap interval of the mean (resampling the given units,
    e.g. seeds); (nan, nan) with fewer than two values, the point when all are equal."""
    x = np.asarray([v for v in values if not math.isnan(v)], dtype=float)
    if x.size < 2:
        return (math.nan, math.nan)
    if np.all(x == x[0]):
        return (float(x[0]), float(x[0]))
    result = stats.bootstrap(
        (x,),
        np.mean,
        confidence_level=confidence,
        n_resamples=resamples,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return (float(result.confidence_interval.low), float(result.confidence_interval.high))


@dataclass(frozen=True)
class Correlation:
    n: int
    pearson_r: float
    pearson_p: float
    spearman_rho: float
    spearman_p: float


def correlations(x: Sequence[float], y: Sequence[float]) -> Correlation:
    """Pearson and Spearman of paired values; NaN when fewer than 3 pairs or a side is constant."""
    a, b = _paired(x, y)
    nan = math.nan
    if a.size < 3 or np.all(a == a[0]) or np.all(b == b[0]):
        return Correlation(int(a.size), nan, nan, nan, nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        pearson = stats.pearsonr(a, b)
        spearman = stats.spearmanr(a, b)
    return Correlation(
        int(a.size),
        float(pearson.statistic),
        float(pearson.pvalue),
        float(spearman.statistic),
        float(spearman.pvalue),
    )


def adjusted(table: pd.DataFrame, pairs: str = "seeds") -> pd.DataFrame:
    """A family of tests (a ``p`` column, and the pairs of each in ``pairs``) with
    Holm's adjusted p (``p_holm``), ``significant`` at :data:`ALPHA`, the smallest p
    each test could reach (``p_min``) and whether even that would pass Holm's
    adjustment over the family (``reachable``): Holm's adjusted p-values only grow with
    any input p, so adjusting every test's smallest attainable p gives each its best case."""
    table["p_holm"] = holm(list(table.p))
    table["significant"] = table.p_holm < ALPHA
    table["p_min"] = [wilcoxon_min_p(int(n)) for n in table[pairs]]
    table["reachable"] = [p <= ALPHA for p in holm(list(table.p_min))]
    return table
