"""What a flaky endpoint costs a study under its defaults: prints figures, asserts nothing.

Run: ``python benchmarks/bench_faults.py [--n-seeds 3] [--faults non_retryable=0.05 ...]``

Each row is one ``spatialstale study`` of the reference observer behind the fault-injecting
provider (``spatialstale-faults/observer``, docs/models.md), in-process, into a fresh
log directory: first without faults, then with each ``--faults`` mix (comma-separated
``KIND=SHARE``, kinds ``transient``, ``rate_limit``, ``non_retryable``, ``hang``). The
table gives the calls the endpoint received (answered or failed, from the provider's own
count), their ratio to the fault-free study's, the faults met by kind, whether the study
completed, and whether every sample's scores equal the fault-free study's. Backoff
between call retries is 0 s (``-M retry_wait=0``) and a hung call is abandoned after
``--attempt-timeout`` seconds (2; the study's default is 600), so wall time is no figure
here: calls are.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import platform
import shlex
import tempfile
import time
from pathlib import Path
from typing import Any

from inspect_ai.log import list_eval_logs, read_eval_log

from spatialstale.agents import CALLS, FAULTS
from spatialstale.study import main

MODEL = "spatialstale-faults/observer"


def scores(log_dir: Path) -> dict[tuple[str, str, str, int], Any]:
    """Every sample's scores in the successful logs, by (task, arguments, sample id, epoch)."""
    out: dict[tuple[str, str, str, int], Any] = {}
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info)
        if log.status != "success":
            continue
        args = str(sorted(log.eval.task_args_passed.items()))
        for sample in log.samples or []:
            out[(log.eval.task, args, str(sample.id), sample.epoch)] = {
                name: score.value for name, score in (sample.scores or {}).items()
            }
    return out


def run(
    matrix: list[str], mix: dict[str, float], attempt_timeout: int, log_dir: Path
) -> tuple[int, dict[str, int], float]:
    """One study; returns its exit status, the calls by outcome and the seconds it took."""
    model_args = [f"-M{kind}={share}" for kind, share in mix.items()]
    argv = ["study", "--model", MODEL, *matrix, *model_args, "-Mretry_wait=0", "-Mfault_seed=1"]
    argv += ["--attempt-timeout", str(attempt_timeout), "--log-dir", str(log_dir)]
    CALLS.clear()
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        status = main(argv)
    return status, dict(CALLS), time.perf_counter() - started


def parse_mix(text: str) -> dict[str, float]:
    mix = {}
    for item in text.split(","):
        kind, _, share = item.partition("=")
        if kind not in FAULTS or not share:
            raise SystemExit(f"--faults takes KIND=SHARE with KIND among {', '.join(FAULTS)}; got {item!r}")
        mix[kind] = float(share)
    return mix


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-seeds", type=int, default=3)
    parser.add_argument("--episodes", type=int, default=1)
    parser.add_argument("--regimes", default="L1,L2,L3")
    parser.add_argument(
        "--faults", action="append", help="a fault mix, e.g. non_retryable=0.05,hang=0.005 (repeat for several)"
    )
    parser.add_argument("--attempt-timeout", type=int, default=2)
    parser.add_argument(
        "--options",
        default="",
        help="more study options for the studies with faults, e.g. '--retry-on-error 0 --no-continue-on-fail' "
        "(Inspect's own defaults)",
    )
    args = parser.parse_args()
    mixes = [parse_mix(text) for text in args.faults or ["non_retryable=0.02", "non_retryable=0.05,hang=0.002"]]
    matrix = ["--n-seeds", str(args.n_seeds), "--episodes", str(args.episodes), "--regimes", args.regimes]
    options = shlex.split(args.options)
    print(f"{platform.python_implementation()} {platform.python_version()}; study: {' '.join(matrix)} (default matrix)")
    if options:
        print(f"with faults, also: {shlex.join(options)}")
    with tempfile.TemporaryDirectory() as tmp:
        clean_dir = Path(tmp) / "clean"
        status, calls, seconds = run(matrix, {}, args.attempt_timeout, clean_dir)
        clean_calls = sum(calls.values())
        clean = scores(clean_dir)
        print("| faults | calls | x fault-free | faults met | complete | scores equal | seconds |")
        print("|---|---|---|---|---|---|---|")
        print(f"| none | {clean_calls:,} | 1.00 | 0 | {status == 0} | - | {seconds:.0f} |")
        for i, mix in enumerate(mixes):
            log_dir = Path(tmp) / f"faults-{i}"
            status, calls, seconds = run([*matrix, *options], mix, args.attempt_timeout, log_dir)
            total = sum(calls.values())
            met = ", ".join(f"{kind} {calls[kind]:,}" for kind in FAULTS if calls.get(kind))
            same = scores(log_dir) == clean
            name = ", ".join(f"{kind} {share:g}" for kind, share in mix.items())
            print(
                f"| {name} | {total:,} | {total / clean_calls:.2f} | {met or 0} | {status == 0} | {same} | "
                f"{seconds:.0f} |"
            )


if __name__ == "__main__":
    main_()
