"""How long ``spatialstale study --dry-run`` takes: prints figures, asserts nothing.

Run: ``python benchmarks/bench_dry_run.py``

Each configuration is timed twice, each in a fresh process (so no cache is warm): the
estimate alone (``plan`` of the study the command line describes) and the whole command
as a user runs it (Python and Inspect imports included).
"""

from __future__ import annotations

import argparse
import platform
import shutil
import subprocess
import sys
import time

ESTIMATE = """
import sys, time
from spatialstale.study import plan, study_from_args
study = study_from_args(sys.argv[1:])
start = time.perf_counter()
plan(study)
print(time.perf_counter() - start)
"""

CONFIGS = (
    (),
    ("--size", "64"),
    ("--n-seeds", "10000"),
    ("--size", "64", "--n-seeds", "10000", "--modalities", "text,vision,both", "--navigation-modality", "both"),
)


def estimate_seconds(options: tuple[str, ...]) -> float:
    argv = ["--model", "openai/gpt-4o", "--dry-run", *options]
    done = subprocess.run([sys.executable, "-c", ESTIMATE, *argv], check=True, capture_output=True, text=True)
    return float(done.stdout.split()[-1])


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
