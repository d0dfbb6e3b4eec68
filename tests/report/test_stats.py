"""The report's statistics against scipy (and Holm against a hand computation)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from spatialstale.report import bootstrap_ci, correlations, holm, mcnemar, paired_wilcoxon

A = [0.8, 0.6, 1.0, 0.4, 0.6, 0.2, 1.0, 0.8, 0.6, 0.4, 0.9, 0.3]
B = [0.2, 0.4, 0.6, 0.4, 0.0, 0.2, 0.8, 0.2, 0.4, 0.0, 0.1, 0.5]


def test_wilcoxon_equals_scipy() -> None:
    w = paired_wilcoxon(A, B)
    expected = stats.wilcoxon(A, B)
    assert w.p == pytest.approx(expected.pvalue)
    assert w.statistic == pytest.approx(expected.statistic)
    assert w.n == len(A) and w.nonzero == sum(a != b for a, b in zip(A, B, strict=True))
    assert w.mean_difference == pytest.approx(float(np.mean(np.subtract(A, B))))


def test_wilcoxon_all_zero_differences_is_p_one() -> None:
    w = paired_wilcoxon([0.5, 1.0], [0.5, 1.0])
    assert (w.nonzero, w.p) == (0, 1.0)


def test_holm_by_hand() -> None:
    # sorted: 0.01*4=0.04, 0.02*3=0.06, 0.03*2=0.06 (monotone), 0.5*1=0.5
    assert holm([0.03, 0.01, 0.5, 0.02]) == pytest.approx([0.06, 0.04, 0.5, 0.06])
    adjusted = holm([0.2, float("nan"), 0.9])
    assert adjusted[0] == pytest.approx(0.4) and math.isnan(adjusted[1]) and adjusted[2] == pytest.approx(0.9)


def test_mcnemar_is_exact_binomial_on_discordant_pairs() -> None:
    a = [1, 1, 1, 1, 1, 0, 0, 1, 0, 1]
    b = [0, 0, 0, 0, 1, 0, 1, 1, 0, 0]
    m = mcnemar(a, b)
    assert (m.only_a, m.only_b) == (5, 1)
    assert m.p == pytest.approx(stats.binomtest(5, 6, 0.5).pvalue)


def test_correlations_equal_scipy_and_constant_input_is_nan() -> None:
    c = correlations(A, B)
    assert c.pearson_r == pytest.approx(stats.pearsonr(A, B).statistic)
    assert c.pearson_p == pytest.approx(stats.pearsonr(A, B).pvalue)
    assert c.spearman_rho == pytest.approx(stats.spearmanr(A, B).statistic)
    assert c.spearman_p == pytest.approx(stats.spearmanr(A, B).pvalue)
    assert math.isnan(correlations([1.0, 1.0, 1.0], [0.0, 1.0, 0.5]).pearson_r)


def test_bootstrap_is_seeded_and_equals_scipy_percentile() -> None:
    low, high = bootstrap_ci(A)
    assert (low, high) == bootstrap_ci(A)
    expected = stats.bootstrap(
        (np.asarray(A),), np.mean, n_resamples=2000, method="percentile", rng=np.random.default_rng(2024)
    ).confidence_interval
    assert (low, high) == pytest.approx((expected.low, expected.high))
    assert low < float(np.mean(A)) < high
    assert bootstrap_ci([1.0, 1.0]) == (1.0, 1.0)
    assert all(math.isnan(x) for x in bootstrap_ci([0.5]))
