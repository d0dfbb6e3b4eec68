"""The report's statistics, as pure functions over arrays; every p-value is exact or a
stated permutation estimate, never a normal or t approximation.

- :func:`paired_wilcoxon`: two-sided Wilcoxon signed-rank test over paired per-seed
  rates, exact: the permutation distribution of the statistic given the observed
  mid-ranks (ties kept), zero differences dropped (Wilcoxon's method). When every
  difference is zero the test is undefined; it is reported with p = 1.
- :func:`wilcoxon_min_p`: the smallest p-value that test can give with n pairs.
- :func:`holm`: Holm's step-down adjustment of a family of p-values.
- :func:`mcnemar`: the exact (binomial) McNemar test on paired binary outcomes.
- :func:`bootstrap_ci`: a seeded expanded percentile bootstrap of the mean, none
  below :data:`MIN_BOOTSTRAP_UNITS` units or when every unit is alike.
- :func:`correlations`: Pearson and Spearman with permutation p-values (every
  pairing up to :data:`EXACT_PERMUTATIONS_UP_TO` pairs, else seeded random pairings).

Two-sided p-values are one definition throughout: twice the smaller tail of the null
distribution at the observed statistic, tails included, capped at 1.
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
BOOTSTRAP_RESAMPLES = 10_000
CONFIDENCE = 0.95
MIN_BOOTSTRAP_UNITS = 5
"""Fewer units (seeds) give no interval. A bootstrap never reaches past the values it
resamples, and below 5 units the expanded level asks for a tail beyond the most extreme
resample (n^-n), so the interval would be the range of the values: it covers the mean of
2 or 3 normal values in about 51 % and 75 % of samples, not 95 %
(``benchmarks/bench_stats.py``)."""
PERMUTATION_RESAMPLES = 9_999
PERMUTATION_SEED = 2024
EXACT_PERMUTATIONS_UP_TO = 8
"""Correlations on at most this many pairs enumerate all n! pairings (8! = 40,320)."""
DECIMALS = 12
"""Paired differences are rounded to this many decimals before they are ranked, so that
rates equal but for floating-point error (0.8 - 0.6 and 0.4 - 0.2) tie, and cancel."""

WILCOXON_METHOD = "Wilcoxon signed-rank, two-sided, exact (permutation distribution with ties), zeros dropped"
MCNEMAR_METHOD = "McNemar, exact binomial"
HOLM_METHOD = "Holm step-down"
BOOTSTRAP_METHOD = (
    f"95 % expanded percentile bootstrap of the mean over seeds ({BOOTSTRAP_RESAMPLES:,} resamples, "
    f"seed {BOOTSTRAP_SEED}; none below {MIN_BOOTSTRAP_UNITS} seeds or when every seed is alike)"
)
CORRELATION_METHOD = (
    f"permutation test, every pairing up to {EXACT_PERMUTATIONS_UP_TO} seeds, else "
    f"{PERMUTATION_RESAMPLES:,} random pairings (seed {PERMUTATION_SEED})"
)


def _paired(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
    """min(R+, R-): the smaller sum of the mid-ranks of |difference| by sign."""
    p: float


def signed_rank_p(differences: Sequence[float]) -> tuple[float, float]:
    """The two-sided exact signed-rank test of non-zero ``differences``: (min(R+, R-), p).

    Under the null each difference's sign is + or - with probability 1/2, its rank
    fixed: the mid-rank of |d| among the m differences, ties sharing the mean of
    their ranks. Doubled mid-ranks are integers, so the null distribution of S = twice
    the rank sum of the positive differences is a convolution, one tie group (k
    differences at doubled rank r) at a time with Binomial(k, 1/2) placed at multiples
    of r. S is symmetric about its mean (every sign flipped maps S to its total minus
    S), so p = min(1, 2 P(S <= min(s, total - s))), computed on the lower tail alone.

    Probabilities are multiples of 2^-m kept in float64: the result is exact (every
    step an integer below 2^53 times a power of two) up to m = 53 differences, and
    correct to rounding beyond; a tie group costs one pass per sign count that fits
    under the tail, so hundreds of pairs take milliseconds
    (``benchmarks/bench_stats.py``).
    """
    d = np.asarray(differences, dtype=float)
    if d.size == 0 or np.any(d == 0):
        raise ValueError("the signed-rank test ranks non-zero differences only")
    doubled = np.rint(2 * stats.rankdata(np.abs(d))).astype(np.int64)
    total = int(doubled.sum())
    s = int(doubled[d > 0].sum())
    tail = min(s, total - s)
    lower = np.zeros(tail + 1)
    lower[0] = 1.0
    ranks, sizes = np.unique(doubled, return_counts=True)
    for rank, size in zip(ranks.tolist(), sizes.tolist(), strict=True):
        spread = np.zeros_like(lower)
        for positives in range(min(size, tail // rank) + 1):
            shift = positives * rank
            spread[shift:] += (math.comb(size, positives) / 2**size) * lower[: tail + 1 - shift]
        lower = spread
    return min(s, total - s) / 2, min(1.0, 2 * float(lower.sum()))


def paired_wilcoxon(a: Sequence[float], b: Sequence[float]) -> Wilcoxon:
    """Wilcoxon signed-rank test of ``a - b`` (paired by position), two-sided, exact
    (:func:`signed_rank_p` on the differences that are not zero)."""
    x, y = _paired(a, b)
    d = x - y
    mean = float(d.mean()) if d.size else math.nan
    if d.size == 0:
        return Wilcoxon(0, 0, mean, math.nan, math.nan)
    rounded = np.round(d, DECIMALS)
    nonzero = rounded[rounded != 0]
    if nonzero.size == 0:
        return Wilcoxon(int(d.size), 0, mean, 0.0, 1.0)
    statistic, p = signed_rank_p(nonzero)
    return Wilcoxon(int(d.size), int(nonzero.size), mean, statistic, p)


def wilcoxon_min_p(n: int) -> float:
    """The smallest two-sided p-value :func:`paired_wilcoxon` can return with ``n`` pairs.

    With m non-zero differences the largest statistic (every difference of one sign)
    is reached by that sign pattern alone, whatever the ties, so the smallest p is
    2 / 2**m; with n pairs it is 2 / 2**n (no difference zero), capped at 1. With no
    pairs the test gives no p-value (NaN). :func:`adjusted` asks whether even this
    best case passes Holm's adjustment.
    """
    if n < 1:
        return math.nan
    return min(1.0, 2.0 / 2.0**n)


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


def expanded_confidence(n: int, confidence: float = CONFIDENCE) -> float:
    """The percentile level of the expanded percentile bootstrap on ``n`` units
    (Hesterberg 2015, "What teachers should know about the bootstrap", §4.5): the tail
    alpha' / 2 = Phi(-sqrt(n / (n - 1)) t_{n-1}(1 - alpha / 2)), which widens the
    percentile interval by the factors a t interval has and a bootstrap lacks at
    small n (the t quantile and the n - 1 of the sample variance)."""
    t = float(stats.t.ppf(1 - (1 - confidence) / 2, n - 1))
    return 1 - 2 * float(stats.norm.sf(math.sqrt(n / (n - 1)) * t))


def bootstrap_ci(
    values: Sequence[float],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """A seeded expanded percentile bootstrap interval of the mean, resampling the
    given units (e.g. seeds; NaN values left out): the percentile interval at
    :func:`expanded_confidence`. (nan, nan) with fewer than
    :data:`MIN_BOOTSTRAP_UNITS` units, and when every unit is alike (the bootstrap
    has no spread to show, and a zero-width interval would claim certainty)."""
    x = np.asarray([v for v in values if not math.isnan(v)], dtype=float)
    if x.size < MIN_BOOTSTRAP_UNITS or np.all(x == x[0]):
        return (math.nan, math.nan)
    result = stats.bootstrap(
        (x,),
        np.mean,
        confidence_level=expanded_confidence(int(x.size), confidence),
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
    exact: bool = False
    """Whether the p-values enumerate every pairing (else seeded random pairings)."""


def _pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson's r of each row of ``x`` (the last axis) with ``y``."""
    dx = x - x.mean(axis=-1, keepdims=True)
    dy = y - y.mean()
    return np.asarray((dx * dy).sum(axis=-1) / np.sqrt((dx * dx).sum(axis=-1) * (dy * dy).sum()))


def permutation_p(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Two-sided permutation p of Pearson's r between paired ``x`` and ``y``: the null
    pairs ``x`` with ``y`` in every order (all n! when n <= :data:`EXACT_PERMUTATIONS_UP_TO`,
    else :data:`PERMUTATION_RESAMPLES` seeded random orders, counting the observed one,
    so p >= 1 / (resamples + 1)). Spearman's is this on mid-ranks."""
    a, b = _paired(x, y)
    exact = a.size <= EXACT_PERMUTATIONS_UP_TO
    result = stats.permutation_test(
        (a,),
        lambda perm, axis=-1: _pearson(perm, b),
        permutation_type="pairings",
        vectorized=True,
        n_resamples=math.factorial(a.size) if exact else PERMUTATION_RESAMPLES,
        alternative="two-sided",
        rng=np.random.default_rng(PERMUTATION_SEED),
    )
    return min(1.0, float(result.pvalue))


def correlations(x: Sequence[float], y: Sequence[float]) -> Correlation:
    """Pearson and Spearman of paired values with permutation p-values
    (:func:`permutation_p`); NaN when fewer than 3 pairs or a side is constant."""
    a, b = _paired(x, y)
    nan = math.nan
    if a.size < 3 or np.all(a == a[0]) or np.all(b == b[0]):
        return Correlation(int(a.size), nan, nan, nan, nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        pearson = float(stats.pearsonr(a, b).statistic)
        spearman = float(stats.spearmanr(a, b).statistic)
    ranks_a, ranks_b = stats.rankdata(a), stats.rankdata(b)
    return Correlation(
        int(a.size),
        pearson,
        permutation_p(a, b),
        spearman,
        permutation_p(ranks_a, ranks_b),
        exact=a.size <= EXACT_PERMUTATIONS_UP_TO,
    )


def adjusted(table: pd.DataFrame, pairs: str = "seeds") -> pd.DataFrame:
    """A family of tests (a ``p`` column, and the pairs of each in ``pairs``) with
    Holm's adjusted p (``p_holm``), ``significant`` at :data:`ALPHA`, the smallest p
    each test could reach with its pairs (``p_min``, :func:`wilcoxon_min_p`) and
    whether even that would pass Holm's adjustment over the family (``reachable``):
    Holm's adjusted p-values only grow with any input p, so adjusting every test's
    smallest attainable p gives each its best case."""
    table["p_holm"] = holm(list(table.p))
    table["significant"] = table.p_holm < ALPHA
    table["p_min"] = [wilcoxon_min_p(int(n)) for n in table[pairs]]
    table["reachable"] = [p <= ALPHA for p in holm(list(table.p_min))]
    return table
