"""How fast the world is built and observed: prints figures, asserts nothing.

Run: ``python benchmarks/bench_env.py [--repeats 7]``

Generation is timed cold: the instance cache is cleared before every repetition, so
each figure includes the grid draw, the memory walks and the regime's changes.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from functools import partial

from spatialstale.env import clear_instance_cache, default_seeds, make_instance, render_png, text_observation

REGIMES = ("L1", "L2", "L3")


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def generation(seeds: Sequence[int], size: int, repeats: int) -> tuple[float, float]:
    """Median total seconds for all seeds x regimes, and median seconds per instance."""
    totals: list[float] = []
    each: list[float] = []
    for _ in range(repeats):
        clear_instance_cache()
        total = 0.0
        for regime in REGIMES:
            for seed in seeds:
                elapsed = timed(partial(make_instance, seed, regime, size))
                each.append(elapsed)
                total += elapsed
        totals.append(total)
    clear_instance_cache()
    return statistics.median(totals), statistics.median(each)


def observation(seeds: Sequence[int], repeats: int) -> tuple[float, float]:
    """Median seconds per instance for the PNG and for the text of its start grid."""
    grids = [make_instance(seed, regime).initial_grid for regime in REGIMES for seed in seeds]
    png = [timed(partial(render_png, grid, (0, 0))) for _ in range(repeats) for grid in grids]
    text = [timed(partial(text_observation, grid, (0, 0))) for _ in range(repeats) for grid in grids]
    return statistics.median(png), statistics.median(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=7, help="repetitions; medians are reported")
    args = parser.parse_args(argv)
    repeats: int = args.repeats
    seeds = default_seeds()
    print(f"Python {platform.python_version()} on {platform.machine()}; medians over {repeats} repetitions")

    total, each = generation(seeds, 8, repeats)
    count = len(seeds) * len(REGIMES)
    print(f"size 8, {count} default instances (50 seeds x L1/L2/L3), cold:")
    print(f"  all {count}: {total * 1e3:8.1f} ms   (target < 500 ms)")
    print(f"  per instance: {each * 1e3:8.3f} ms")
    png, text = observation(seeds, repeats)
    print(f"  PNG render of the start grid: {png * 1e3:8.3f} ms per instance")
    print(f"  text observation:             {text * 1e3:8.3f} ms per instance")

    for size in (16, 32):
        few = seeds[:10]
        total, each = generation(few, size, repeats)
        print(f"size {size}, {len(few) * len(REGIMES)} instances (10 seeds x L1/L2/L3), cold:")
        print(f"  all: {total * 1e3:8.1f} ms   per instance: {each * 1e3:8.3f} ms")


if __name__ == "__main__":
    main()
