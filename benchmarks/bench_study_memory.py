"""A study's peak memory and wall time as it grows: prints figures, asserts nothing.

Run: ``python benchmarks/bench_study_memory.py --b-checkout DIR`` (the figures of
docs/performance.md, "A study's memory"; hours on two shared cores), or
``python benchmarks/bench_study_memory.py --seeds 2 --models 1 --repeat 1`` for a look.

Each run is ``spatialstale study`` on the default matrix (detection L1-L3 in text and
vision, navigation L1-L3 with the paper's five strategies, 5 episodes) in a fresh
process, into a temporary log directory. Its figures are the child's peak resident
memory (``ru_maxrss`` as ``wait4`` returns it, which is what ``/usr/bin/time -f %M``
prints) and its wall time.

Two variants run in turn, A B A B ..., ``--repeat`` times a case, and each figure is
the median, each ratio the median of the pairs' ratios A/B (pairing keeps a ratio
meaningful on a loaded machine, where absolute times are not):

- A: this checkout at its defaults, plus ``--a OPTIONS``;
- B: ``--b OPTIONS`` (e.g. Inspect's own concurrency, ``--max-tasks 10``) and/or
  ``--b-checkout DIR``, another checkout's packages put first on the import path
  (``git archive REV | tar -x -C DIR`` makes one); ``--a-checkout DIR`` likewise for A
  (a snapshot, so that editing this checkout while the benchmark runs changes nothing).

The models are the reference agents, in process (``spatialstale/observer``, then
``spatialstale/credulous``): a model as fast as the harness's CPU, so every sample
limit is reached. With ``--latency S`` each model is served instead by the
latency-injecting OpenAI-compatible server of ``bench_harness.py`` (answering as the
observer after S seconds), with ``--connections C`` each: a real provider's shape,
whose wall time says whether a bound on the samples in flight slows it.
Beside A's peak the table prints the peak that A's dry run expects.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

REFERENCE_MODELS = ("spatialstale/observer", "spatialstale/credulous")
PACKAGES = ("env", "protocol", "solvers", "scorers", "evals", "agents", "study", "report")
"""The checkout's folders, installed as ``spatialstale.<name>``."""
EXPECTED = re.compile(r"peak memory: ~([\d,]+) MB")


@dataclass(frozen=True)
class Variant:
    name: str
    options: tuple[str, ...]
    pythonpath: str | None = None
    env: tuple[str, ...] = ()
    """``NAME=VALUE`` settings of its environment (``SPATIALSTALE_GC_FREEZE=0``)."""


@dataclass(frozen=True)
class Measured:
    peak_mb: float
    wall: float


def package_tree(checkout: Path, into: Path) -> str:
    """A folder holding ``spatialstale/<package>`` links to ``checkout``'s folders (the
    installed layout, as ``.ci/typecheck`` builds it), for ``PYTHONPATH``."""
    tree = into / "spatialstale"
    tree.mkdir(parents=True)
    for package in PACKAGES:
        if not (checkout / package).is_dir():
            raise SystemExit(f"--b-checkout {checkout}: no {package}/ folder; give a checkout of this repository")
        (tree / package).symlink_to((checkout / package).resolve())
    return str(into)


def study_command(models: Sequence[str], seeds: int, log_dir: Path, options: Sequence[str]) -> list[str]:
    # the console script, as a user runs it (a variant's PYTHONPATH decides which checkout it imports)
    command = [str(Path(sys.executable).parent / "spatialstale"), "study", "--n-seeds", str(seeds)]
    for model in models:
        command += ["--model", model]
    return [*command, "--log-dir", str(log_dir), "--display", "none", *options]


def environment(variant: Variant) -> dict[str, str]:
    env = dict(os.environ) | dict(item.partition("=")[::2] for item in variant.env)
    if variant.pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (variant.pythonpath, env.get("PYTHONPATH"))))
    return env


def measure(command: list[str], env: dict[str, str], scratch: Path) -> Measured:
    """Run ``command``; its peak resident memory (the child's own ``ru_maxrss``) and wall time."""
    output = scratch / "output.txt"
    with output.open("w") as out:
        start = time.perf_counter()
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    text = output.read_text()
    if process.returncode != 0 or "study complete" not in text:
        raise SystemExit(f"the study did not complete (exit {process.returncode}):\n{text[-3000:]}")
    kilobytes = usage.ru_maxrss / (1024 if sys.platform == "darwin" else 1)  # bytes on macOS
    return Measured(kilobytes / 1024, wall)


def expected_peak(command: list[str], env: dict[str, str]) -> str:
    """The peak the dry run of ``command`` states, or ``-`` when it states none."""
    result = subprocess.run([*command, "--dry-run"], env=env, capture_output=True, text=True, check=True)
    found = EXPECTED.search(result.stdout)
    return found.group(1) if found else "-"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="5,10,20", help="seed counts of the cases (default 5,10,20)")
    parser.add_argument("--models", default="1,2", help="model counts of the cases (default 1,2)")
    parser.add_argument("--repeat", type=int, default=3, help="pairs of runs a case; medians printed (default 3)")
    parser.add_argument("--a", default="", metavar="OPTIONS", help="study options of variant A (default none)")
    parser.add_argument("--b", default="", metavar="OPTIONS", help="study options of variant B")
    parser.add_argument("--a-checkout", type=Path, metavar="DIR", help="run variant A with DIR's packages")
    parser.add_argument("--b-checkout", type=Path, metavar="DIR", help="run variant B with DIR's packages")
    parser.add_argument("--a-env", action="append", default=[], metavar="NAME=VALUE", help="variant A's environment")
    parser.add_argument("--b-env", action="append", default=[], metavar="NAME=VALUE", help="variant B's environment")
    parser.add_argument("--latency", type=float, help="serve each model from the latency-injecting server")
    parser.add_argument("--connections", type=int, default=20, help="--max-connections with --latency (20)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1; got {args.repeat}")
    seeds = [int(n) for n in args.seeds.split(",")]
    counts = [int(n) for n in args.models.split(",")]
    if max(counts) > len(REFERENCE_MODELS) and args.latency is None:
        parser.error(f"--models: at most {len(REFERENCE_MODELS)} reference agents")
    if not args.b and args.b_checkout is None and not args.b_env:
        parser.error("give variant B: --b OPTIONS, --b-checkout DIR and/or --b-env NAME=VALUE")
    for item in (*args.a_env, *args.b_env):
        if "=" not in item:
            parser.error(f"--a-env and --b-env take NAME=VALUE; got {item!r}")

    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        extra: list[str] = []
        server = None
        if args.latency is not None:
            from bench_harness import SERVICE, Server

            server = Server()
            os.environ.setdefault(f"{SERVICE.upper()}_API_KEY", "unused")
            models = tuple(f"openai-api/{SERVICE}/model{k}-latency-{args.latency:g}" for k in range(max(counts)))
            extra = ["--model-base-url", server.url, "--max-connections", str(args.connections)]
        else:
            models = REFERENCE_MODELS
        a_path = package_tree(args.a_checkout, scratch / "a-packages") if args.a_checkout else None
        b_path = package_tree(args.b_checkout, scratch / "b-packages") if args.b_checkout else None
        a = Variant("A", (*extra, *shlex.split(args.a)), a_path, tuple(args.a_env))
        b = Variant("B", (*extra, *shlex.split(args.b)), b_path, tuple(args.b_env))
        serving = (
            f"each model served at {args.latency:g} s a call, --max-connections {args.connections}"
            if args.latency is not None
            else "reference agents in process"
        )
        print(f"## A study's peak memory and wall time ({serving}; medians of {args.repeat} pairs)\n")
        for variant, checkout in ((a, args.a_checkout), (b, args.b_checkout)):
            settings = " ".join((*variant.env, *variant.options)) or "(defaults)"
            print(f"{variant.name}: {checkout or 'this checkout'} {settings}")
        print()
        print("| seeds | models | A peak MB | A expected MB | B peak MB | peak A/B | A wall s | B wall s | wall A/B |")
        print("|---|---|---|---|---|---|---|---|---|")
        try:
            for n in seeds:
                for count in counts:
                    chosen = models[:count]
                    runs: dict[str, list[Measured]] = {"A": [], "B": []}
                    expected = expected_peak(study_command(chosen, n, scratch / "dry", a.options), environment(a))
                    for attempt in range(args.repeat):
                        for variant in (a, b):
                            log_dir = scratch / f"{variant.name}-{n}-{count}-{attempt}"
                            command = study_command(chosen, n, log_dir, variant.options)
                            runs[variant.name].append(measure(command, environment(variant), scratch))
                            shutil.rmtree(log_dir, ignore_errors=True)
                    peak_a, peak_b = (statistics.median(m.peak_mb for m in runs[v]) for v in "AB")
                    wall_a, wall_b = (statistics.median(m.wall for m in runs[v]) for v in "AB")
                    peak_ratio = statistics.median(
                        x.peak_mb / y.peak_mb for x, y in zip(runs["A"], runs["B"], strict=True)
                    )
                    wall_ratio = statistics.median(x.wall / y.wall for x, y in zip(runs["A"], runs["B"], strict=True))
                    print(
                        f"| {n} | {count} | {peak_a:,.0f} | {expected} | {peak_b:,.0f} | {peak_ratio:.2f} | "
                        f"{wall_a:.0f} | {wall_b:.0f} | {wall_ratio:.2f} |",
                        flush=True,
                    )
        finally:
            if server is not None:
                server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
