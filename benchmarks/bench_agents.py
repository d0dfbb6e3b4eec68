"""What an agent navigator's harness costs per model call, beside the tool navigator's
hand-written loop it replaced.

Run: ``python benchmarks/bench_agents.py`` (from a git checkout; about a minute), or
``python benchmarks/bench_harness.py --sections agents`` (the same figures), or
``--repeat N`` for more runs, ``--against REV`` to compare with another revision
(default: the last revision with the hand-written loop).

Each run is a fresh process that plays the same navigation task, ``-T agent=tools`` on
the ``observer`` reference agent (audited by itself; L2 and L3, two seeds, NoFilter and
OMCD, one episode), into a temporary log directory, and prints the process CPU time of
the ``eval`` and the model calls it made (the navigator's and the audits', read from the
scores). The revision compared against is exported from git into a temporary folder and
put first on the module path, so the same interpreter and packages run both; the runs
alternate between the two, and the script prints each side's median CPU per call and
their ratio. The figure includes the reference agent's own work (reading the
conversation), the same on both sides. A third side, this checkout's ``-T agent=memory``
with NoFilter and SelfVerify, is printed for reference (its calls differ: a memory view
and a move a step).

It asserts nothing: these are figures to read, not a timed test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OLD_LOOP = "fa426b9"
"""The last revision whose tool navigator ran its own loop (``solvers/_tools.py``)."""
PACKAGES = ("env", "protocol", "solvers", "scorers", "evals", "agents", "study", "report", "llamacpp")

MEASURE = """
import json, sys, tempfile, time
from inspect_ai import eval
from spatialstale.evals.navigation import navigation
agent, strategies = sys.argv[1], sys.argv[2]
task = navigation(regime="L2,L3", seeds="4810,1734", strategies=strategies, episodes=1, agent=agent)
with tempfile.TemporaryDirectory() as logs:
    start = time.process_time()
    [log] = eval(task, model="spatialstale/observer", log_dir=logs, display="none", log_realtime=False)
    cpu = time.process_time() - start
    calls = 0
    for sample in log.samples or []:
        [score] = sample.scores.values()
        calls += int(score.value["navigation_calls"]) + int(score.value["audit_model_calls"])
print(json.dumps({"cpu": cpu, "calls": calls, "status": log.status}))
"""


def export(rev: str, into: Path) -> Path:
    """The packages of revision ``rev`` as ``into/spatialstale/<package>``."""
    target = into / "spatialstale"
    target.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", rev, *PACKAGES], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return into


def run_once(agent: str, path: Path | None, strategies: str = "nofilter,omcd") -> tuple[float, int]:
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = str(path)  # before the editable install's finder on the module path
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, agent, strategies],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["status"] != "success":
        raise SystemExit(f"the {agent} run did not succeed")
    return float(result["cpu"]), int(result["calls"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each side (default 5)")
    parser.add_argument("--against", default=OLD_LOOP, help=f"the revision to compare with (default {OLD_LOOP})")
    args = parser.parse_args()
    compare(args.repeat, args.against)


def compare(repeat: int = 5, against: str = OLD_LOOP) -> None:
    """Run each side ``repeat`` times, alternating, and print the medians and their ratio."""
    with tempfile.TemporaryDirectory() as tmp:
        old = export(against, Path(tmp))
        sides: dict[str, list[tuple[float, int]]] = {"before": [], "now": [], "memory": []}
        for _ in range(repeat):
            sides["before"].append(run_once("tools", old))
            sides["now"].append(run_once("tools", None))
            # OMCD re-audits during L3, which the memory navigator refuses: SelfVerify in its place
            sides["memory"].append(run_once("memory", None, "nofilter,selfverify"))
    per_call = {name: statistics.median(cpu / calls for cpu, calls in runs) for name, runs in sides.items()}
    calls = {name: runs[0][1] for name, runs in sides.items()}
    print(f"harness CPU per model call, median of {repeat} runs each (the observer, L2+L3, 2 seeds, nofilter+omcd)")
    print(f"  -T agent=tools at {against} (its own loop): {1000 * per_call['before']:.2f} ms ({calls['before']} calls)")
    print(f"  -T agent=tools now (react()):            {1000 * per_call['now']:.2f} ms ({calls['now']} calls)")
    print(f"  -T agent=memory now (nofilter+selfverify): {1000 * per_call['memory']:.2f} ms ({calls['memory']} calls)")
    print(f"  ratio now / before: {per_call['now'] / per_call['before']:.2f}")


if __name__ == "__main__":
    main()
