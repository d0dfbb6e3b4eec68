"""How long ``spatialstale study --dry-run`` takes: prints figures, asserts nothing.

Run: ``python benchmarks/bench_dry_run.py``

Each configuration is timed twice: the estimate alone (``plan`` in this process,
instance and rendering caches cleared first) and the whole command as a user runs it
(a fresh process, so Python and Inspect imports are included).
"""

from __future__ import annotations

import argparse
import platform
import shutil
import subprocess
import sys
import time

from spatialstale.env._instance import _make_instance
from spatialstale.protocol import _prompts
from spatialstale.study import plan
from spatialstale.study._cli import _parser, _study_from

CONFIGS = (
    (),
    ("--size", "64"),
    ("--n-seeds", "10000"),
    ("--size", "64", "--n-seeds", "10000", "--modalities", "text,vision,both", "--navigation-modality", "both"),
)


def estimate_seconds(options: tuple[str, ...]) -> float:
    _make_instance.cache_clear()
    for name in ("png_data_uri", "grid_listing"):  # the prompt builders' observation caches, if any
        cache_clear = getattr(getattr(_prompts, name, None), "cache_clear", None)
        if cache_clear is not None:
            cache_clear()
    args = _parser("study").parse_args(["study", "--model", "openai/gpt-4o", "--dry-run", *options])
    start = time.perf_counter()
    plan(_study_from(args))
    return time.perf_counter() - start


def command_seconds(options: tuple[str, ...]) -> float:
    command = shutil.which("spatialstale") or "spatialstale"
    start = time.perf_counter()
    subprocess.run(
        [command, "study", "--model", "openai/gpt-4o", "--dry-run", *options], check=True, capture_output=True
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-command", action="store_true", help="time the estimate only")
    args = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}, {sys.platform}")
    print(f"{'options':<95} {'estimate s':>10} {'command s':>10}")
    for options in CONFIGS:
        estimate = estimate_seconds(options)
        command = "" if args.no_command else f"{command_seconds(options):10.1f}"
        print(f"{' '.join(options) or '(defaults: 8x8, 50 seeds)':<95} {estimate:10.1f} {command:>10}")


if __name__ == "__main__":
    main()
