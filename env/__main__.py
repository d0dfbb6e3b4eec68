"""``python -m spatialstale.env {stats,export,verify}``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import DISTRACTOR_BANK_DIR, DISTRACTOR_BANK_VERSION, distractor_bank
from ._data import DATA_DIR, DATA_REGIMES, PAPER_STALE_RATIOS, stale_ratio_stats, verify_dataset, write_dataset
from ._instance import DEFAULT_SIZE, MASTER_SEED, N_DEFAULT_SEEDS, default_seeds, validate_regime, validate_size
from ._plugins import REGIMES
from ._regimes import STATIC


def _stats(args: argparse.Namespace) -> int:
    seeds = default_seeds(args.master_seed, args.n_seeds)
    size = validate_size(args.size)
    if args.regimes:
        chosen = list(dict.fromkeys(validate_regime(r) for r in args.regimes.split(",") if r.strip()))
    else:  # the paper's, then every other built-in that changes the world
        chosen = [*DATA_REGIMES, *(r for r in REGIMES if r not in (*DATA_REGIMES, STATIC))]
    print(
        f"Stale ratio over {len(seeds)} seeds (master seed {args.master_seed}, {size}x{size}); L3 after its last event"
    )
    w = max(7, *(len(r) for r in chosen))  # a plug-in's name may be longer than the built-ins'
    print(f"{'regime':<{w}} {'ours mean ± std':<17} {'ours range':<17} {'paper mean ± std':<17} {'paper range'}")
    for regime in chosen:
        s = stale_ratio_stats(regime, seeds, size)
        ours = f"{regime:<{w}} {s.mean:.3f} ± {s.std:.3f}    [{s.low:.3f}, {s.high:.3f}]    "
        if regime not in PAPER_STALE_RATIOS:  # beyond the paper: no figures of its own to set beside
            print(f"{ours}(not in the paper)")
            continue
        pm, ps, plo, phi = PAPER_STALE_RATIOS[regime]
        print(f"{ours}{pm:.3f} ± {ps:.3f}    [{plo:.3f}, {phi:.3f}]")
    return 0


def _export(args: argparse.Namespace) -> int:
    for path in write_dataset(Path(args.out)):
        print(path)
    return 0


def _verify(args: argparse.Namespace) -> int:
    problems = verify_dataset(Path(args.dir))
    if not problems:
        print(f"{args.dir}: every file matches its SHA-256 and the regenerated instances")
    # the bank of entries about no cell (App. K), read as a task reads it
    distractor_bank.cache_clear()
    try:
        bank = distractor_bank(DISTRACTOR_BANK_VERSION)
    except (OSError, RuntimeError, ValueError) as error:
        problems.append(f"distractor bank {DISTRACTOR_BANK_VERSION}: {error}")
    else:
        print(f"{DISTRACTOR_BANK_DIR}: {DISTRACTOR_BANK_VERSION}.jsonl matches its SHA-256 ({len(bank)} entries)")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spatialstale.env", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    stats = commands.add_parser("stats", help="stale-ratio statistics beside the paper's")
    stats.add_argument("--master-seed", type=int, default=MASTER_SEED)
    stats.add_argument("--n-seeds", type=int, default=N_DEFAULT_SEEDS)
    stats.add_argument("--size", type=int, default=DEFAULT_SIZE)
    stats.add_argument(
        "--regimes", help="comma-separated; a plug-in as module:Class (default: L1, L2, L3, then MA)", default=""
    )
    stats.set_defaults(run=_stats)
    export = commands.add_parser("export", help="write the default instances as JSON Lines with a manifest")
    export.add_argument("--out", default=str(DATA_DIR))
    export.set_defaults(run=_export)
    verify = commands.add_parser("verify", help="check data files against their manifest and regeneration")
    verify.add_argument("--dir", default=str(DATA_DIR))
    verify.set_defaults(run=_verify)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except ValueError as error:
        # A bad value, not bad syntax: one line, without argparse's usage block.
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
