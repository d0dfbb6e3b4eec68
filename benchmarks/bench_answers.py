"""How fast the answer readers read large and hostile answers: prints figures, asserts nothing.

Run: ``python benchmarks/bench_answers.py [--repeats 5] [--size 1000000]``

Each answer is ``--size`` characters (1 MB by default) of one shape: ordinary prose,
a valid verdict array, JSON Lines, Python literals, deep nesting, unclosed strings,
random printable text, and so on. Every reader (audit with a batch of 10, SelfVerify
over a 64-entry store, navigation) reads each answer; the table shows the median
milliseconds of ``--repeats`` runs, and the answer's reading.

``--compare-json-repair`` (needs ``pip install json_repair``, not a dependency) reads a
corpus twice, once with our scanner and once with ``json_repair.loads`` in its place,
and counts, per reader, the answers read the same, read more or less by the library,
read differently, and those on which the library raises or runs over 5 s; with the
median microseconds per answer of each. The corpus: the forms real models write (the
tests' perfect audits), the fuzzing provider's answers (``tests/fuzz.py``) and these
shapes at ``--size`` characters (pass a small one, such as 2000).
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import signal
import statistics
import string
import sys
import time
import timeit
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

from spatialstale.protocol import (
    ActionParse,
    AuditParse,
    Scan,
    SelfVerifyParse,
    read_action,
    read_audit,
    read_selfverify,
    scan,
)

_PROTOCOL = "spatialstale.protocol"

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
    return 1000 * statistics.median(timeit.repeat(work, number=1, repeat=repeats))


def repair_scan(text: str, max_containers: int = 4096) -> Scan:
    """Our scanner's result made from ``json_repair.loads``: every container, innermost first."""
    from json_repair import loads

    found = Scan()
    stack: list[tuple[Any, int, bool]] = [(loads(text), 0, False)] if any(c in text for c in "[{") else []
    while stack:
        node, depth, done = stack.pop()
        if done:
            found.containers.append((node, depth))
        elif isinstance(node, dict | list):
            kids = node.values() if isinstance(node, dict) else node
            stack += [(node, depth, True), *((kid, depth + 1, False) for kid in reversed(list(kids)))]
    found.overlong = len(found.containers) > max_containers
    del found.containers[max_containers:]
    return found


def _readings(parsed: ActionParse | AuditParse | SelfVerifyParse) -> set[object]:
    """What a reader's result says of the entries (an audit's reasons left out), or its action."""
    if isinstance(parsed, ActionParse):
        return {parsed.action} - {None}
    said = (
        {(mid, stale) for mid, (stale, _) in parsed.verdicts.items()}
        if isinstance(parsed, AuditParse)
        else parsed.flagged
    )
    return {*said, *((mid, "conflicting") for mid in parsed.conflicting)}


def _corpus(size: int) -> list[tuple[str, Callable[[str], Any], str]]:
    """The tests' perfect audits, 1,000 fuzzing answers a reader, and the shapes above."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.fuzz import fuzz_answer
    from tests.protocol.test_parsers import BATCH as TEST_BATCH
    from tests.protocol.test_parsers import PERFECT_AUDITS

    readers: dict[str, Callable[[str], Any]] = {
        "audit": lambda text: read_audit(text, BATCH),
        "selfverify": lambda text: read_selfverify(text, STORE),
        "navigate": read_action,
    }
    rng = random.Random(0)
    out = [("audit", lambda text: read_audit(text, TEST_BATCH), text) for text in PERFECT_AUDITS.values()]
    out += [(kind, readers[kind], fuzz_answer(rng, kind, BATCH)) for kind in readers for _ in range(1000)]
    return out + [(kind, reader, text) for kind, reader in readers.items() for text in shapes(size).values()]


def _timeout(*_: object) -> None:
    raise TimeoutError


def _read(reader: Callable[[str], Any], text: str, scanner: Callable[..., Scan]) -> tuple[str, Any, float]:
    """(what went wrong or "", the reading, seconds) of ``reader`` with ``scanner`` in place of ours."""
    signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(5)
    start = time.perf_counter()
    # the readers look the scanner up in their modules: swapped there, for this measurement only
    with mock.patch(f"{_PROTOCOL}._answers.scan", scanner), mock.patch(f"{_PROTOCOL}._cells.scan", scanner):
        try:
            return "", reader(text), time.perf_counter() - start
        except TimeoutError:
            return "hangs", None, 5.0
        except Exception:
            return "raises", None, time.perf_counter() - start
        finally:
            signal.alarm(0)


def compare_json_repair(size: int) -> None:
    """Our scanner beside ``json_repair`` on the corpus (module docstring)."""
    counts: Counter[tuple[str, str]] = Counter()
    times: dict[str, list[float]] = {"ours": [], "json_repair": []}
    for kind, reader, text in _corpus(size):
        _, ours, seconds = _read(reader, text, scan)
        times["ours"].append(seconds)
        failed, lib, seconds = _read(reader, text, repair_scan)
        times["json_repair"].append(seconds)
        a, b = _readings(ours), _readings(lib) if lib is not None else set()
        same = "same" if a == b else "more" if a < b else "less" if b < a else "differ"
        counts[kind, failed or same] += 1
    columns = ("same", "more", "less", "differ", "raises", "hangs")
    print(f"{'reader':<12}" + "".join(f"{c:>8}" for c in columns))
    for kind in ("audit", "selfverify", "navigate"):
        print(f"{kind:<12}" + "".join(f"{counts[kind, c]:>8}" for c in columns))
    print("; ".join(f"{k}: median {1e6 * statistics.median(v):.0f} µs an answer" for k, v in times.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--size", type=int, default=1_000_000, help="characters per answer")
    parser.add_argument("--compare-json-repair", action="store_true", help="our scanner beside json_repair")
    args = parser.parse_args()
    print(f"Python {platform.python_version()} on {platform.machine()}; {args.size:,} characters per answer")
    if args.compare_json_repair:
        compare_json_repair(args.size)
        return
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
