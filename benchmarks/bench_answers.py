"""How fast the answer readers read large and hostile answers: prints figures, asserts nothing.

Run: ``python benchmarks/bench_answers.py [--repeats 5] [--size 1000000]``

Each answer is ``--size`` characters (1 MB by default) of one shape: ordinary prose,
a valid verdict array, JSON Lines, Python literals, deep nesting, unclosed strings,
random printable text, and so on. Every reader (audit with a batch of 10, SelfVerify
over a 64-entry store, navigation) reads each answer; the table shows the median
milliseconds of ``--repeats`` runs, and the answer's reading.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import string
import time
from collections.abc import Callable

from spatialstale.protocol import read_action, read_audit, read_selfverify

BATCH = [f"mem_{i:03d}" for i in range(10)]
STORE = [f"mem_{i:03d}" for i in range(64)]


def _fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def shapes(size: int) -> dict[str, str]:
    rng = random.Random(0)
    verdict = json.dumps({"memory_id": "mem_001", "is_stale": True, "reason": "(0,1) is H now"})
    return {
        "prose": _fill("The agent should consider the grid carefully before it moves. ", size),
        "verdict array": "[" + _fill(verdict + ", ", size - 2) + "]",
        "JSON Lines": _fill(verdict + "\n", size),
        "Python literals": _fill("{'memory_id': 'mem_001', 'is_stale': True, 'reason': \"it's H\"},\n", size),
        "deep [": "[" * size,
        "deep [{": _fill("[{", size),
        "deep [1,": _fill("[1,", size),
        "closers": "]}" * (size // 2),
        "unclosed strings": _fill('{"a": "unterminated\n', size),
        "quotes": _fill("'\"", size),
        "ids and colons": _fill("mem_001: stale\n", size),
        "directions": _fill("Not LEFT, maybe UP, avoid DOWN, RIGHT is a hole. ", size),
        "random printable": "".join(rng.choice(string.printable) for _ in range(size)),
        "think, then answer": "<think>" + _fill("hmm ", size - 40) + "</think>" + '{"action": "UP"}',
    }


def median_ms(work: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--size", type=int, default=1_000_000, help="characters per answer")
    args = parser.parse_args()
    print(f"Python {platform.python_version()} on {platform.machine()}; {args.size:,} characters per answer")
    print(f"{'answer':<20} {'audit ms':>9} {'selfverify ms':>14} {'action ms':>10}  reading (audit / action)")
    worst = 0.0
    for name, text in shapes(args.size).items():
        audit = median_ms(lambda text=text: read_audit(text, BATCH), args.repeats)
        check = median_ms(lambda text=text: read_selfverify(text, STORE), args.repeats)
        act = median_ms(lambda text=text: read_action(text), args.repeats)
        worst = max(worst, audit, check, act)
        parsed = read_audit(text, BATCH)
        reading = f"{len(parsed.verdicts)} verdict(s){', ' + '; '.join(parsed.notes) if parsed.notes else ''}"
        print(f"{name:<20} {audit:>9.1f} {check:>14.1f} {act:>10.1f}  {reading} / {read_action(text).status}")
    print(f"slowest median: {worst:.1f} ms")


if __name__ == "__main__":
    main()
