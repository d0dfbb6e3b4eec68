"""The report's statistics at small and large n: prints figures, asserts nothing.

Run: ``python benchmarks/bench_stats.py [--reps 400] [--repeats 5]``

1. The exact signed-rank test beside scipy's default ``wilcoxon`` on per-seed rates
   of 5 episodes (ties and zeros: scipy's normal approximation above 13 pairs).
2. Its time in milliseconds (median of ``--repeats``) up to 500 pairs, the slowest
   case (a p near 1) and the common one (rates that tie).
3. How often the report's 95 % interval covers the true mean, against the plain
   percentile bootstrap, over ``--reps`` seeded samples of n seeds from four
   distributions of per-seed values; *none* is the share of samples without spread
   (every seed alike: no interval).
4. The permutation p of a correlation: time at the exact limit and above.
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
import time
from collections.abc import Callable

import numpy as np
from scipy import stats

from spatialstale.report import (
    EXACT_PERMUTATIONS_UP_TO,
    MIN_BOOTSTRAP_UNITS,
    bootstrap_ci,
    correlations,
    expanded_confidence,
    paired_wilcoxon,
)

DISTRIBUTIONS: dict[str, tuple[Callable[[np.random.Generator, int], np.ndarray], float]] = {
    "normal(0.5, 0.2)": (lambda rng, n: rng.normal(0.5, 0.2, n), 0.5),
    "rate of 5 episodes, p = 0.3": (lambda rng, n: rng.binomial(5, 0.3, n) / 5, 0.3),
    "rate of 5 episodes, p = 0.1": (lambda rng, n: rng.binomial(5, 0.1, n) / 5, 0.1),
    "one episode, p = 0.3": (lambda rng, n: rng.binomial(1, 0.3, n).astype(float), 0.3),
}
SIZES = (2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50)


def median_ms(work: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def exact_vs_scipy() -> None:
    print("exact signed-rank p vs scipy.stats.wilcoxon's default (per-seed rates of 5 episodes)")
    print(f"  {'case':<44} {'exact':>10} {'scipy':>10}")
    cases = {
        "5 of 15 pairs +1, 10 zero (the demo's tax)": ([1.0] * 5 + [0.0] * 10, [0.0] * 15),
        "5 pairs +1": ([1.0] * 5, [0.0] * 5),
        "8 of 20 pairs +0.2, 2 -0.2, 10 zero": ([0.2] * 8 + [-0.2] * 2 + [0.0] * 10, [0.0] * 20),
        "50 pairs, 30 +0.2, 10 +0.4, 10 zero": ([0.2] * 30 + [0.4] * 10 + [0.0] * 10, [0.0] * 50),
        "50 pairs, 20 +0.2, 10 -0.2, 20 zero": ([0.2] * 20 + [-0.2] * 10 + [0.0] * 20, [0.0] * 50),
    }
    for name, (a, b) in cases.items():
        print(f"  {name:<44} {paired_wilcoxon(a, b).p:>10.4g} {float(stats.wilcoxon(a, b).pvalue):>10.4g}")


def timings(repeats: int) -> None:
    print("\nexact signed-rank test, median ms")
    print(f"  {'pairs':>6} {'no ties, p near 1':>18} {'no ties, p small':>17} {'rates of 5 episodes':>20}")
    rng = np.random.default_rng(0)
    for n in (10, 50, 150, 300, 500):
        balanced = rng.permutation(np.arange(1, n + 1) * np.where(np.arange(n) % 2, 1.0, -1.0))
        shifted = rng.normal(1.0, 1.0, n)
        rates = rng.integers(-2, 4, n) / 5
        cases = (balanced, shifted, rates)
        row = [median_ms(lambda d=d: paired_wilcoxon(list(d), [0.0] * len(d)), repeats) for d in cases]
        print(f"  {n:>6} {row[0]:>18.1f} {row[1]:>17.1f} {row[2]:>20.1f}")


def percentile_ci(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """A percentile bootstrap interval at ``confidence`` at any n (none without spread)."""
    if np.all(values == values[0]):
        return (math.nan, math.nan)
    ci = stats.bootstrap(
        (values,),
        np.mean,
        confidence_level=confidence,
        n_resamples=10_000,
        method="percentile",
        rng=np.random.default_rng(2024),
    ).confidence_interval
    return float(ci.low), float(ci.high)


def coverage(reps: int) -> None:
    print(f"\n95 % interval coverage of the mean over {reps} samples (among the samples given an interval)")
    print(f"  report: expanded percentile, none below {MIN_BOOTSTRAP_UNITS} seeds (below it, in brackets, the")
    print("  expanded interval it would give); plain: scipy's percentile interval; none: no spread")
    for name, (draw, mean) in DISTRIBUTIONS.items():
        print(f"  {name}")
        print(f"    {'seeds':>5} {'report':>9} {'plain':>7} {'none':>6}")
        for n in SIZES:
            rng = np.random.default_rng(n)
            ours = plain = given = 0
            for _ in range(reps):
                values = draw(rng, n)
                if np.all(values == values[0]):
                    continue
                given += 1
                if n >= MIN_BOOTSTRAP_UNITS:
                    low, high = bootstrap_ci(list(values))
                else:
                    low, high = percentile_ci(values, expanded_confidence(n))
                ours += low <= mean <= high
                p_low, p_high = percentile_ci(values)
                plain += p_low <= mean <= p_high
            shown = f"{ours / given:.3f}" if n >= MIN_BOOTSTRAP_UNITS else f"({ours / given:.3f})"
            print(f"    {n:>5} {shown:>9} {plain / given:>7.3f} {1 - given / reps:>6.2f}")


def correlation_timing(repeats: int) -> None:
    print("\ncorrelations (Pearson and Spearman, permutation p), median ms")
    rng = np.random.default_rng(1)
    for n in (EXACT_PERMUTATIONS_UP_TO, EXACT_PERMUTATIONS_UP_TO + 1, 50):
        x, y = rng.normal(size=n), rng.normal(size=n)
        kind = "every pairing" if n <= EXACT_PERMUTATIONS_UP_TO else "random pairings"
        print(f"  {n:>3} pairs ({kind}): {median_ms(lambda x=x, y=y: correlations(list(x), list(y)), repeats):.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--reps", type=int, default=400, help="samples per coverage cell")
    parser.add_argument("--repeats", type=int, default=5, help="runs per timing")
    args = parser.parse_args()
    print(f"{platform.python_implementation()} {platform.python_version()}, numpy {np.__version__}")
    exact_vs_scipy()
    timings(args.repeats)
    coverage(args.reps)
    correlation_timing(args.repeats)


if __name__ == "__main__":
    main()
