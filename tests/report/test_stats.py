"""The report's statistics against independent computations: hand-computed cases, full
enumeration written here from the definitions (exact rational arithmetic), scipy's
exact method where it is exact (no ties), and the coverage of the bootstrap interval."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from spatialstale.report import bootstrap_ci, correlations, holm, mcnemar, paired_wilcoxon
from spatialstale.report._stats import (
    BOOTSTRAP_RESAMPLES,
    EXACT_PERMUTATIONS_UP_TO,
    MIN_BOOTSTRAP_UNITS,
    PERMUTATION_RESAMPLES,
    expanded_confidence,
    signed_rank_p,
    wilcoxon_min_p,
)

A = [0.8, 0.6, 1.0, 0.4, 0.6, 0.2, 1.0, 0.8, 0.6, 0.4, 0.9, 0.3]
B = [0.2, 0.4, 0.6, 0.4, 0.0, 0.2, 0.8, 0.2, 0.4, 0.0, 0.1, 0.5]


# --- independent references -----------------------------------------------------------


def mid_ranks(values: list[Fraction]) -> list[Fraction]:
    """The rank of each value among ``values`` (1 = smallest), ties sharing their mean rank."""
    order = sorted(values)
    first = {v: order.index(v) + 1 for v in values}
    count = {v: order.count(v) for v in values}
    return [first[v] + Fraction(count[v] - 1, 2) for v in values]


def brute_signed_rank(differences: list[int | Fraction]) -> Fraction:
    """Two-sided signed-rank p by enumerating all 2^m sign flips of the non-zero
    differences (mid-ranks of |d|), twice the smaller tail, capped at 1: exact."""
    d = [Fraction(x) for x in differences if x != 0]
    ranks = mid_ranks([abs(x) for x in d])
    observed = sum((r for r, x in zip(ranks, d, strict=True) if x > 0), Fraction(0))
    below = above = 0
    for signs in itertools.product((False, True), repeat=len(d)):
        s = sum((r for r, positive in zip(ranks, signs, strict=True) if positive), Fraction(0))
        below += s <= observed
        above += s >= observed
    return min(Fraction(1), 2 * Fraction(min(below, above), 2 ** len(d)))


def brute_holm(pvalues: list[float]) -> list[float]:
    """Holm from its definition: p_(i) adjusted = max over j <= i of min(1, (m - j + 1) p_(j))."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    out = [0.0] * m
    for position, i in enumerate(order):
        out[i] = max(min(1.0, (m - j) * pvalues[order[j]]) for j in range(position + 1))
    return out


def brute_permutation_p(x: list[float], y: list[float], rank: bool = False) -> float:
    """Two-sided permutation p of Pearson's r (of mid-ranks when ``rank``) over all n!
    pairings: twice the smaller tail, ties with the observed r counted, capped at 1."""
    if rank:
        x = [float(r) for r in mid_ranks([Fraction(v) for v in x])]
        y = [float(r) for r in mid_ranks([Fraction(v) for v in y])]
    observed = float(np.corrcoef(x, y)[0, 1])
    pairings = np.array(list(itertools.permutations(x)))
    centred, yc = pairings - np.mean(x), np.asarray(y) - np.mean(y)
    null = centred @ yc / np.sqrt((centred**2).sum(axis=1) * (yc**2).sum())
    tolerance = 1e-9
    below, above = np.mean(null <= observed + tolerance), np.mean(null >= observed - tolerance)
    return min(1.0, 2 * float(min(below, above)))


# --- Wilcoxon -------------------------------------------------------------------------


def test_five_equal_differences_give_two_in_two_to_the_five() -> None:
    # all five one sign: only that pattern of 2^5 reaches the statistic, twice for two sides
    w = paired_wilcoxon([1.0] * 5, [0.0] * 5)
    assert (w.n, w.nonzero, w.statistic, w.p) == (5, 5, 0.0, 0.0625)
    # the demo's safety tax: 15 (regime, seed) pairs, 10 of them zero (dropped)
    w = paired_wilcoxon([1.0] * 5 + [0.0] * 10, [0.0] * 15)
    assert (w.n, w.nonzero, w.p) == (15, 5, 0.0625)
    assert paired_wilcoxon([0.0] * 15, [1.0] * 5 + [0.0] * 10).p == 0.0625


def test_mixed_signs_with_tied_magnitudes_by_hand_and_by_enumeration() -> None:
    # |d| = 1, 1, 1, 2, 2, 3 -> mid-ranks 2, 2, 2, 4.5, 4.5, 6; the negatives -1, -2: R- = 6.5.
    # Of the 2^6 = 64 sign patterns, R- <= 6.5 (the upper tail of R+) in 17: no negative (1),
    # one (3 + 2 + 1), two 2s (3), a 2 and a 4.5 (6), three 2s (1); so p = 2 * 17/64
    d = [1, -1, 1, 2, -2, 3]
    assert brute_signed_rank(d) == Fraction(34, 64)
    w = paired_wilcoxon([float(x) for x in d], [0.0] * len(d))
    assert (w.statistic, w.p) == (6.5, 34 / 64)
    assert signed_rank_p(d) == (6.5, 34 / 64)


@pytest.mark.parametrize("n", [1, 2, 5, 9, 14, 25, 40])
def test_without_ties_it_equals_scipys_exact_distribution(n: int) -> None:
    rng = np.random.default_rng(n)
    d = rng.normal(0.4, 1.0, n)
    expected = stats.wilcoxon(d, method="exact")
    w = paired_wilcoxon(list(d), [0.0] * n)
    assert w.p == pytest.approx(float(expected.pvalue), rel=1e-12)
    assert w.statistic == float(expected.statistic)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=-4, max_value=4), min_size=1, max_size=11))
def test_the_exact_test_equals_full_enumeration(d: list[int]) -> None:
    w = paired_wilcoxon([float(x) for x in d], [0.0] * len(d))
    nonzero = sum(x != 0 for x in d)
    assert w.nonzero == nonzero
    if nonzero == 0:
        assert w.p == 1.0
        return
    assert w.p == float(brute_signed_rank(d))  # exact: m <= 53 is exact in float64
    # the two orders of a pair give one p, and no data beat the smallest p the test can give
    assert paired_wilcoxon([0.0] * len(d), [float(x) for x in d]).p == w.p
    assert w.p >= wilcoxon_min_p(len(d))


def test_the_smallest_p_is_one_sign_whatever_the_ties() -> None:
    for n in range(1, 12):
        assert wilcoxon_min_p(n) == min(1.0, float(brute_signed_rank([1] * n)))
        assert wilcoxon_min_p(n) == min(1.0, float(brute_signed_rank(list(range(1, n + 1)))))
    assert math.isnan(wilcoxon_min_p(0))


def test_rates_equal_but_for_floating_point_error_tie() -> None:
    # 0.8 - 0.6 and 0.4 - 0.2 differ in the last bit; as rates of 5 episodes they are both 1/5
    a, b = [0.8, 0.4, 0.6, 1.0, 0.3], [0.6, 0.2, 0.6, 0.4, 0.1]
    assert a[0] - b[0] != a[1] - b[1]
    integers = [round(5 * (x - y)) for x, y in zip(a, b, strict=True)]
    assert paired_wilcoxon(a, b).p == float(brute_signed_rank(integers))
    assert paired_wilcoxon(a, b).nonzero == 4


def test_a_long_run_of_pairs_is_exact_at_the_extremes() -> None:
    # 300 pairs, many tied: one sign throughout is 2/2^300, half and half is 1
    d = [1 + i % 7 for i in range(300)]
    assert paired_wilcoxon(d, [0] * 300).p == 2.0**-299
    assert paired_wilcoxon([x * (-1) ** i for i, x in enumerate(d)], [0] * 300).p == pytest.approx(1.0, abs=0.2)


def test_wilcoxon_all_zero_differences_is_p_one() -> None:
    w = paired_wilcoxon([0.5, 1.0], [0.5, 1.0])
    assert (w.nonzero, w.p) == (0, 1.0)


# --- Holm and McNemar ----------------------------------------------------------------


def test_holm_by_hand() -> None:
    # sorted: 0.01*4=0.04, 0.02*3=0.06, 0.03*2=0.06 (monotone), 0.5*1=0.5
    assert holm([0.03, 0.01, 0.5, 0.02]) == pytest.approx([0.06, 0.04, 0.5, 0.06])
    adjusted = holm([0.2, float("nan"), 0.9])
    assert adjusted[0] == pytest.approx(0.4) and math.isnan(adjusted[1]) and adjusted[2] == pytest.approx(0.9)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=12))
def test_holm_equals_its_definition(pvalues: list[float]) -> None:
    assert holm(pvalues) == pytest.approx(brute_holm(pvalues))


def test_mcnemar_is_exact_binomial_on_discordant_pairs() -> None:
    a = [1, 1, 1, 1, 1, 0, 0, 1, 0, 1]
    b = [0, 0, 0, 0, 1, 0, 1, 1, 0, 0]
    m = mcnemar(a, b)
    assert (m.only_a, m.only_b) == (5, 1)
    # twice the tail P(X >= 5 | n = 6, 1/2) = 2 * (6 + 1) / 64
    assert m.p == pytest.approx(2 * (math.comb(6, 5) + math.comb(6, 6)) / 2**6)
    # the demo's 5/0 discordant episodes: 2 / 2^5
    assert mcnemar([1] * 5 + [0] * 10, [0] * 15).p == 0.0625


# --- correlations ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "y"),
    [
        ([0.9, 0.8, 1.0, 0.7, 0.95], [1.0, 0.6, 0.8, 0.4, 1.0]),  # ties in y
        ([0.5, 0.5, 0.75, 1.0, 0.25, 0.6], [0.0, 0.2, 0.2, 0.6, 0.0, 0.4]),  # ties on both sides
        ([1.0, 2.0, 3.0], [3.0, 1.0, 2.0]),
    ],
)
def test_correlation_p_at_small_n_equals_every_pairing(x: list[float], y: list[float]) -> None:
    c = correlations(x, y)
    assert c.exact and len(x) <= EXACT_PERMUTATIONS_UP_TO
    assert c.pearson_r == pytest.approx(stats.pearsonr(x, y).statistic)
    assert c.spearman_rho == pytest.approx(stats.spearmanr(x, y).statistic)
    assert c.pearson_p == pytest.approx(brute_permutation_p(x, y), abs=1e-12)
    assert c.spearman_p == pytest.approx(brute_permutation_p(x, y, rank=True), abs=1e-12)


def test_correlation_p_above_the_exact_range_estimates_every_pairing() -> None:
    rng = np.random.default_rng(7)
    x = list(rng.normal(size=9))
    y = [v + w for v, w in zip(x, rng.normal(scale=2.0, size=9), strict=True)]
    exact = brute_permutation_p(x, y)
    c = correlations(x, y)
    assert not c.exact and c == correlations(x, y)  # seeded
    # 9,999 random pairings: within 4 standard errors of the full enumeration
    assert abs(c.pearson_p - exact) < 4 * math.sqrt(exact * (1 - exact) / PERMUTATION_RESAMPLES)
    assert c.pearson_p >= 1 / (PERMUTATION_RESAMPLES + 1)


def test_correlation_of_a_constant_side_is_undefined() -> None:
    assert math.isnan(correlations([1.0, 1.0, 1.0], [0.0, 1.0, 0.5]).pearson_r)
    assert math.isnan(correlations([1.0, 2.0], [0.0, 1.0]).pearson_p)


# --- bootstrap ------------------------------------------------------------------------


def test_expanded_level_by_hand() -> None:
    # n = 5: t_4(0.975) = 2.7764, x sqrt(5/4) = 3.1042, Phi(-3.1042) = 0.000954 a tail
    assert expanded_confidence(5) == pytest.approx(1 - 2 * 0.000954, abs=2e-6)
    # large n: the percentile interval itself
    assert expanded_confidence(10_000) == pytest.approx(0.95, abs=1e-3)


def test_bootstrap_is_seeded_and_equals_scipys_percentile_at_the_expanded_level() -> None:
    low, high = bootstrap_ci(A)
    assert (low, high) == bootstrap_ci(A)
    expected = stats.bootstrap(
        (np.asarray(A),),
        np.mean,
        confidence_level=expanded_confidence(len(A)),
        n_resamples=BOOTSTRAP_RESAMPLES,
        method="percentile",
        rng=np.random.default_rng(2024),
    ).confidence_interval
    assert (low, high) == pytest.approx((expected.low, expected.high))
    assert low < float(np.mean(A)) < high


def test_bootstrap_equals_the_ideal_bootstrap_by_enumeration() -> None:
    # every one of the 5^5 resamples of five seeds, equally likely: the exact bootstrap
    # distribution, whose quantiles the seeded resamples estimate
    x = [0.0, 0.2, 0.2, 0.6, 1.0]
    means = np.sort([np.mean(r) for r in itertools.product(x, repeat=len(x))])
    tail = (1 - expanded_confidence(len(x))) / 2

    def quantile(q: float) -> float:
        return float(means[max(0, math.ceil(q * len(means)) - 1)])

    low, high = bootstrap_ci(x)
    assert quantile(tail / 3) <= low <= quantile(3 * tail)
    assert quantile(1 - 3 * tail) <= high <= quantile(1 - tail / 3)


def test_bootstrap_gives_no_interval_below_its_minimum_or_without_spread() -> None:
    assert all(math.isnan(v) for v in bootstrap_ci([0.1, 0.9, 0.5, 0.3][: MIN_BOOTSTRAP_UNITS - 1]))
    assert all(math.isnan(v) for v in bootstrap_ci([1.0] * 20))
    assert all(math.isnan(v) for v in bootstrap_ci([0.5]))
    assert not any(math.isnan(v) for v in bootstrap_ci([0.1, 0.9, 0.5, 0.3, float("nan"), 0.2]))


def test_the_expanded_interval_covers_at_small_n() -> None:
    # 400 seeded samples of six seeds' rates: the plain percentile interval covers the
    # mean in about 86 % of them, the expanded one near its 95 %
    rng = np.random.default_rng(11)
    mean, hits = 0.5, 0
    for _ in range(400):
        low, high = bootstrap_ci(list(rng.normal(mean, 0.2, 6)), resamples=2000)
        hits += low <= mean <= high
    assert hits / 400 >= 0.90
