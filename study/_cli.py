"""The ``spatialstale`` command: ``study``, ``demo`` and ``report``.

Only the chosen command's options are built, and each command imports what it needs
when it runs: ``spatialstale --help`` imports neither Inspect nor the suite's packages
(``tests/study/test_cli_startup.py``).
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spatialstale.protocol import Axis, DetectionSettings, NavigationSettings

    from ._matrix import Study
    from ._run import Accounting

DEMO_OBSERVER = "spatialstale/observer"
DEMO_CREDULOUS = "spatialstale/credulous"
DEMO_MODELS = (DEMO_OBSERVER, DEMO_CREDULOUS)
DEMO_SEEDS = 5
DEMO_EPISODES = 1
DEMO_HELP = "a small offline study on the reference agents, printing the outcome table"
DEMO_TIME = "It takes about 40 seconds on two cores."
DEMO_NEXT_MODEL = "openai/gpt-4o"
"""The model the demo's closing hint names for a study of one's own (the paper's)."""


def _names(value: str) -> list[str]:
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list; got {value!r}")
    return items


def _read(axis: Axis, items: Sequence[str]) -> list[Any]:
    """A study option's values, each read as the task reads its ``-T`` value."""
    out: list[Any] = []
    for item in items:
        value = axis.read(item, axis.name)
        for one in value if isinstance(value, tuple) else (value,):
            if one not in out:
                out.append(one)
    return out


def _axis(settings: type[DetectionSettings] | type[NavigationSettings], name: str) -> Axis:
    from spatialstale.protocol import axes_of

    return next(a for a in axes_of(settings) if a.name == name)


def _beyond_paper() -> dict[str, Axis]:
    """Every axis beyond the paper's protocol, by name (the study runs each value given)."""
    from ._matrix import beyond_paper

    return {a.name: a for kind in ("detection", "navigation") for a in beyond_paper(kind)}


def _number(kind: Callable[[str], float], valid: Callable[[float], bool], expected: str) -> Callable[[str], Any]:
    """An option's number: ``kind`` of the text, refused unless ``valid``."""

    def parse(value: str) -> Any:
        try:
            number = kind(value)
        except ValueError:
            number = None
        if number is None or not valid(number):
            raise argparse.ArgumentTypeError(f"expected {expected}; got {value!r}")
        return number

    return parse


_positive = _number(int, lambda n: n >= 1, "a positive integer")
_count_of = _number(int, lambda n: n >= 0, "a whole number of 0 or more")
_dollars = _number(float, lambda n: 0 < n < float("inf"), "an amount of US dollars above 0 (e.g. 50)")


def _seeds(value: str) -> list[int]:
    try:
        return [int(v) for v in _names(value)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"seeds must be integers; got {value!r}") from None


def _sizes(items: Sequence[str] | None) -> list[int] | None:
    """``--sizes``: grid sides from 4 to the study's largest (ValueError, one line, otherwise)."""
    from ._matrix import MAX_STUDY_SIZE

    valid = f"--sizes must be integers from 4 to {MAX_STUDY_SIZE}, comma-separated (e.g. 8,16,32)"
    for item in items or ():
        if not item.lstrip("-").isdigit() or not 4 <= int(item) <= MAX_STUDY_SIZE:
            raise ValueError(f"{valid}; got {int(item) if item.lstrip('-').isdigit() else repr(item)}")
    return None if items is None else [int(item) for item in items]


COMMANDS = ("study", "demo", "report")


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser, with the options of ``command`` only (each imports what
    its options need); without one, every command's name and help and no options."""
    parser = argparse.ArgumentParser(
        prog="spatialstale", description="Run the SpatialSTALE study and report it (paper tables and figures)."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    study = commands.add_parser(
        "study",
        allow_abbrev=False,  # --seed is Inspect's, not short for --seeds
        help="run (or resume) the paper's matrix as an Inspect eval set",
        description="Detection over regimes x modalities and navigation over regimes x strategies x episodes, "
        "for each model, as one Inspect eval set. Re-running the same command completes only what is missing.",
    )
    demo = commands.add_parser(
        "demo",
        help=DEMO_HELP,
        description=f"Runs detection and navigation (L1-L3, every strategy) on {DEMO_OBSERVER} and "
        f"{DEMO_CREDULOUS} on {DEMO_SEEDS} seeds x {DEMO_EPISODES} episode, then prints the outcome and "
        f"detection tables. {DEMO_TIME}",
    )
    report = commands.add_parser(
        "report",
        help="write report.md and report.html with the paper's tables and figures from a log directory",
    )
    if command == "study":
        _study_options(study)
    elif command == "demo":
        _demo_options(demo)
    elif command == "report":
        _report_options(report)
    return parser


def _study_options(study: argparse.ArgumentParser) -> None:
    from spatialstale.env import CHANGE_REGIMES, MASTER_SEED, N_DEFAULT_SEEDS
    from spatialstale.protocol import DETECTION, NAVIGATION

    from ._matrix import MAX_STUDY_SIZE, STUDY_MODALITIES

    study.add_argument("--model", action="append", required=True, help="a model to study (repeat for several)")
    study.add_argument(
        "--log-dir", default="logs/study", help="eval set log directory, local or s3://bucket/prefix (logs/study)"
    )
    study.add_argument(
        "--regimes",
        type=_names,
        default=list(CHANGE_REGIMES),
        help="default: L1,L2,L3; also MA, module:Class or an installed plug-in's name",
    )
    study.add_argument(
        "--modalities", type=_names, default=list(STUDY_MODALITIES), help="detection modalities (text,vision)"
    )
    study.add_argument(
        "--navigation-modality", default=NAVIGATION.modality, help=f"navigation observation ({NAVIGATION.modality})"
    )
    study.add_argument(
        "--strategies",
        type=_names,
        default=list(NAVIGATION.strategies),
        help="navigation strategies (default: the paper's five); also localverify, module:Class "
        "or an installed plug-in's name",
    )
    seeds = study.add_mutually_exclusive_group()
    seeds.add_argument("--n-seeds", type=_positive, default=N_DEFAULT_SEEDS, help="seeds from the master seed (50)")
    seeds.add_argument("--seeds", type=_seeds, help="explicit instance seeds, comma-separated")
    study.add_argument("--master-seed", type=int, default=MASTER_SEED, help=f"default: {MASTER_SEED}")
    study.add_argument("--episodes", type=_positive, default=NAVIGATION.episodes, help="navigation epochs per sample")
    study.add_argument("--batch-size", type=_positive, default=DETECTION.batch_size, help="audit batch size (10)")
    study.add_argument(
        "--batch-sweep",
        action="store_true",
        help="add detection L1 text at B = 1, 5, 10, 20 and, for each grid side n, at B = n²/64 x (5, 10, 20) "
        "(the same 13, 7, 4 calls an audit as at n = 8): n=16 adds 40, 80; n=32 adds 80, 160, 320",
    )
    study.add_argument("--max-steps", type=_positive, default=NAVIGATION.max_steps, help="navigation step budget")
    grids = study.add_mutually_exclusive_group()
    grids.add_argument("--size", type=_positive, default=DETECTION.size, help="grid side (8)")
    grids.add_argument(
        "--sizes",
        type=_names,
        help=f"several grid sides, comma-separated (e.g. 8,16,32; each from 4 to {MAX_STUDY_SIZE}): the whole "
        "matrix, and the batch sweep, once per side (default: --size)",
    )
    study.add_argument("--auditor", help="model for the auditor role (default: each model audits itself)")
    study.add_argument("--no-detection", action="store_true", help="skip the detection tasks")
    study.add_argument("--no-navigation", action="store_true", help="skip the navigation tasks")
    for axis in _beyond_paper().values():
        assert axis.flag is not None
        values = f" ({', '.join(axis.values)})" if axis.values else ""
        study.add_argument(
            *dict.fromkeys((axis.flag, "--" + axis.name.replace("_", "-"))),  # --view-radii, --view-radius
            dest=axis.name,
            type=_names,
            default=[axis.show(axis.value)],
            help=f"run once per value{values}: {axis.help} (default: {axis.show(axis.value)}, the paper)",
        )
    study.add_argument(
        "--shard", help="K/N: run shard K of N (every task on every N-th seed), into a log dir all shards share"
    )
    study.add_argument(
        "--display",
        default="none",
        choices=["full", "rich", "plain", "log", "none"],
        help="Inspect's display (default none: the study's own lines, one per finished or failed task and "
        "a count of the samples done from time to time)",
    )
    study.add_argument(
        "--dry-run", action="store_true", help="print samples, calls, token and cost estimates; run nothing"
    )
    study.add_argument(
        "--max-cost",
        type=_dollars,
        metavar="USD",
        help="a budget for the whole study: it stops, exit 1, once its calls cost this many dollars at the prices "
        "the dry run uses (--model-cost-config, Inspect's model data, built-in list prices); a model without a "
        "price is refused",
    )
    study.add_argument(
        "--max-reruns",
        type=_count_of,
        metavar="N",
        help="stop, exit 1, once more than N sample attempts have failed (default: 10 a sample of the study, "
        "at least 100)",
    )
    study.add_argument(
        "--latency",
        type=float,
        metavar="SECONDS",
        help="seconds a model call takes, for the wall-time estimate (default: 2.0 for API models, "
        "0 for spatialstale/ reference agents)",
    )
    inspect = study.add_argument_group(
        "Inspect's options",
        "Every option of `inspect eval-set` is passed on to the eval set, read as Inspect reads it (see "
        "`inspect eval-set --help`): -M KEY=VALUE, --model-config, --model-base-url, --model-role ROLE=MODEL, "
        "--generate-config, --temperature, --max-tokens, --seed, --reasoning-effort, --max-connections, "
        "--max-retries, --timeout, --attempt-timeout (study default: 600), --max-samples, --max-tasks, "
        "--token-limit, --message-limit, --time-limit, --cost-limit, --model-cost-config, --retry-on-error [N] "
        "(study default: 10), --retry-attempts, --fail-on-error, --no-fail-on-error, --continue-on-fail (study "
        "default), --log-dir-allow-dirty, --no-log-realtime, ... Not those that set the tasks, samples or epochs "
        "(-T, --solver, --epochs, --limit, --sample-id): the options above set them.",
    )
    inspect.add_argument(
        "--no-continue-on-fail", action="store_true", help="stop a task at its first sample that errors for good"
    )


def _demo_options(demo: argparse.ArgumentParser) -> None:
    demo.add_argument("--log-dir", default="logs/demo", help="default: logs/demo")
    demo.add_argument("--n-seeds", type=_positive, default=DEMO_SEEDS, help=f"default: {DEMO_SEEDS}")
    demo.add_argument("--episodes", type=_positive, default=DEMO_EPISODES, help=f"default: {DEMO_EPISODES}")
    demo.add_argument("--display", default="none", choices=["full", "rich", "plain", "log", "none"])


def _report_options(report: argparse.ArgumentParser) -> None:
    report.add_argument("log_dir", help="directory of Inspect logs (e.g. logs/study)")
    report.add_argument("--out", help="output directory (default: LOG_DIR/report)")
    report.add_argument(
        "--bundle", action="store_true", help="also write Inspect's log viewer with every log into OUT/viewer"
    )
    report.add_argument(
        "--exclude-limited",
        action="store_true",
        help="leave out the samples a sample limit (token, message, time, ...) cut short; the appendix lists them",
    )


def _study_from(args: argparse.Namespace) -> Study:
    from spatialstale.env import REGIMES, STATIC
    from spatialstale.protocol import DetectionSettings, NavigationSettings

    from ._matrix import Shard, Study, study_matrix, study_seeds
    from ._options import eval_set_options

    chosen = _read(_axis(NavigationSettings, "regime"), args.regimes)
    if STATIC in chosen:
        raise ValueError(f"regimes must be among {', '.join(r for r in REGIMES if r != STATIC)}; got 'none'")
    seeds = study_seeds(args.seeds, args.n_seeds, args.master_seed)
    shard = Shard.parse(args.shard) if args.shard else None
    if shard is not None:
        seeds = shard.seeds(seeds)
    matrix = study_matrix(
        seeds=seeds,
        regimes=chosen,
        modalities=_read(_axis(DetectionSettings, "modality"), args.modalities),
        strategies=_read(_axis(NavigationSettings, "strategies"), args.strategies),
        navigation_modality=_axis(NavigationSettings, "modality").read(args.navigation_modality, "navigation modality"),
        episodes=args.episodes,
        max_steps=args.max_steps,
        batch_size=args.batch_size,
        batch_sweep=args.batch_sweep,
        size=args.size,
        sizes=_sizes(args.sizes),
        detection_on=not args.no_detection,
        navigation_on=not args.no_navigation,
        axes={name: _read(axis, getattr(args, name)) for name, axis in _beyond_paper().items()},
    )
    if not matrix.tasks:
        raise ValueError("nothing to run: both detection and navigation are off")
    for spec in matrix.tasks:  # a plug-in regime's every draw, before any model call
        spec.settings.check_draws()
    options = eval_set_options(args.inspect)
    if args.no_continue_on_fail:
        if options.get("continue_on_fail"):
            raise ValueError("--continue-on-fail and --no-continue-on-fail contradict each other")
        options["continue_on_fail"] = False
    roles = dict(options.pop("model_roles", None) or {})
    if args.auditor is not None:
        if "auditor" in roles:
            raise ValueError("the auditor is bound twice: use --auditor M or --model-role auditor=M, not both")
        roles["auditor"] = args.auditor
    # a plain model name for the auditor is the Study's auditor (the dry run names it)
    auditor = roles.pop("auditor") if isinstance(roles.get("auditor"), str) else None
    return Study(
        tuple(dict.fromkeys(args.model)),
        matrix.tasks,
        auditor=auditor,
        log_dir=args.log_dir.rstrip("/") or args.log_dir,
        options=options,
        model_roles=roles or None,
        shard=shard,
        skipped=matrix.skipped,
    )


MISSING_SHOWN = 20
CAUSES_SHOWN = 10


def _study(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from ._estimate import budget_line, check_models, format_plan, plan, read_prices, register_prices, study_prices
    from ._options import one_line
    from ._run import (
        DEFAULT_RERUNS_PER_SAMPLE,
        MIN_DEFAULT_RERUNS,
        SIGNAL_EXIT,
        Limits,
        StudyStopped,
        account,
        default_reruns,
        interrupts_as_keyboard,
        retry_summary,
        run_options,
        run_study,
    )

    study = _study_from(args)
    prices = read_prices(study.options["model_cost_config"]) if "model_cost_config" in study.options else {}
    # every price before any call: a budget that cannot be counted is refused
    limits = Limits(
        max_cost=args.max_cost,
        prices=study_prices(study, prices) if args.max_cost is not None else {},
        max_reruns=args.max_reruns,
    )
    if args.dry_run:
        check_models([*study.models, *([study.auditor] if study.auditor else [])])
    rows = plan(study)
    print(format_plan(study, rows, prices, latency=args.latency))
    print(retry_summary(run_options(study)))
    records = sum(cell.spec.records for cell in study.cells)
    reruns, default = args.max_reruns, ""
    if reruns is None:
        reruns = default_reruns(records)
        default = f" ({DEFAULT_RERUNS_PER_SAMPLE} a sample record, at least {MIN_DEFAULT_RERUNS}; --max-reruns N)"
    print(f"Reruns: the study stops once more than {reruns:,} sample attempts have failed{default}.")
    if args.max_cost is not None:
        print(budget_line(args.max_cost, rows, prices))
    if args.dry_run:
        return 0
    print()
    register_prices(prices)
    resume = f"{_command()} {shlex.join(argv)}"
    # said first, for a study that stops without a last word (kill -9, a reboot)
    print(f"study: if it stops, this command resumes it: {resume}", flush=True)
    stopped: StudyStopped | None = None
    with interrupts_as_keyboard() as received:
        try:
            run_study(study, display=args.display, resume=resume, limits=limits)
        except StudyStopped as error:
            stopped = error
        except KeyboardInterrupt:  # Ctrl-C that Inspect passed on (SIGTERM/SIGHUP are in received)
            if not received:
                received.append(signal.SIGINT)
        except Exception as error:
            # Inspect's own prerequisite errors (no API key, a bad option) carry a
            # ``message`` meant for the terminal: shown on one line. Anything else is a bug.
            message = getattr(error, "message", None)
            if not isinstance(message, str):
                raise
            raise ValueError(one_line(message)) from None
    interrupted = received[0] if received else None
    # eval_set's own verdict is not trusted: what counts is a successful log per cell.
    accounting = account(study)
    where = study.log_dir + (f" (shard {study.shard})" if study.shard else "")
    n = accounting.superseded
    superseded = f"; {n} superseded log(s) of earlier attempts ignored" if n else ""
    # a budget reached by the last calls leaves nothing missing: the study is complete
    for line in cut_short(study, accounting):
        print(line)
    if accounting.complete and interrupted is None:
        print(f"report: {_executable('spatialstale')} report {shlex.quote(study.log_dir)}")
        print(f"study complete: {len(accounting.done)} of {len(study.cells)} task logs in {where}{superseded}")
        return 0
    for missing in accounting.missing[:MISSING_SHOWN]:
        print(f"  missing: {missing.cell.name} ({missing.state})")
    if len(accounting.missing) > MISSING_SHOWN:
        print(f"  ... and {len(accounting.missing) - MISSING_SHOWN} more")
    # Inspect's eval set absorbs Ctrl-C and leaves the running tasks' logs cancelled
    if interrupted is None and stopped is None and any(missing.state == "cancelled" for missing in accounting.missing):
        interrupted = signal.SIGINT
    # a study that stopped cancelled what was running: the true cause is those cells'
    because = {"gave up": "the study gave up", "budget": "the budget ran out", "reruns": "the reruns ran out"}
    if stopped is not None:
        reason = f"{because[stopped.kind]}: {stopped}"
    else:
        reason = f"cancelled: the study was interrupted ({interrupted.name})" if interrupted is not None else ""
    cause_of = {"cancelled": reason} if reason else {}
    causes = Counter(cause_of.get(missing.state, missing.cause) for missing in accounting.missing).most_common()
    for cause, n in causes[:CAUSES_SHOWN]:
        print(f"  {_count(n, 'cell')} missing: {cause}")
    if len(causes) > CAUSES_SHOWN:
        print(f"  ... and {len(causes) - CAUSES_SHOWN} other causes")
    what = f"interrupted ({interrupted.name})" if interrupted is not None else "stopped" if stopped else "incomplete"
    if stopped is not None and stopped.kind == "budget" and interrupted is None:
        larger = 2 * float(args.max_cost)
        command = f"{_command()} {shlex.join(_with_option(argv, '--max-cost', f'{larger:g}'))}"
        print(
            f"study stopped at its budget: {stopped}; {len(accounting.missing)} of {len(study.cells)} task logs "
            f"missing in {where}; resume with a larger one (a resume spends from $0 and reruns only what is "
            f"missing): {command}"
        )
        return 1
    print(
        f"study {what}: {len(accounting.missing)} of {len(study.cells)} task logs missing in {where}; "
        f"resume with: {resume}"
    )
    if interrupted is not None:
        return SIGNAL_EXIT[interrupted]
    return 1


def _with_option(argv: Sequence[str], flag: str, value: str) -> list[str]:
    """``argv`` with ``flag``'s value (``--flag V`` or ``--flag=V``) set to ``value``."""
    out = list(argv)
    while flag in out:
        del out[out.index(flag) : out.index(flag) + 2]
    return [*(item for item in out if not item.startswith(flag + "=")), flag, value]


def cut_short(study: Study, accounting: Accounting) -> list[str]:
    """The closing lines on the samples a sample limit cut short in the study's done
    cells (the newest successful log of each, as the report reads them), per task kind,
    and what to do about them; none when no sample was cut."""
    from spatialstale.report import cut_parts

    from ._run import sample_summaries

    totals: Counter[str] = Counter()
    limits: dict[str, Counter[str]] = {}
    for cell in accounting.done:
        for summary in sample_summaries(accounting.succeeded[cell.key]):
            totals[cell.spec.kind] += 1
            if summary.limit:
                limits.setdefault(cell.spec.kind, Counter())[str(summary.limit)] += 1
    parts = cut_parts(limits, totals)
    if not parts:
        return []
    folder = shlex.quote(study.log_dir)
    return [
        f"study: {'; '.join(parts)}: a sample limit ended them before their work was done, and their scores count "
        "only what ran before it (the report marks every cell that includes them).",
        f"  the figures without them: {_executable('spatialstale')} report {folder} --exclude-limited",
        "  to finish them, run this study again with a higher limit (--token-limit, --message-limit, --time-limit) "
        f"and --log-dir inside {folder} (e.g. {shlex.quote(study.log_dir.rstrip('/') + '/rerun')}): the report reads "
        "both, the newer sample wins; `inspect eval-retry` does not rerun a sample that ended on a limit.",
    ]


def _demo(args: argparse.Namespace) -> int:
    from spatialstale.report import demo_tables, read_logs

    from ._matrix import Study, study_seeds, study_tasks
    from ._run import run_study

    started = time.perf_counter()
    seeds = study_seeds(None, args.n_seeds)
    tasks = study_tasks(seeds=seeds, episodes=args.episodes)
    # Each model audits itself; then the credulous navigator with the observer as its
    # auditor, where OMCD should match Oracle. Separate eval sets, one folder each.
    studies = [
        Study(DEMO_MODELS, tasks, log_dir=str(Path(args.log_dir) / "self-audit")),
        Study(
            (DEMO_CREDULOUS,),
            study_tasks(seeds=seeds, episodes=args.episodes, detection_on=False),
            auditor=DEMO_OBSERVER,
            log_dir=str(Path(args.log_dir) / "observer-audit"),
        ),
    ]
    print(
        f"SpatialSTALE demo: {', '.join(DEMO_MODELS)} (each auditing itself), and {DEMO_CREDULOUS} audited by "
        f"{DEMO_OBSERVER}; detection text+vision and navigation (every strategy) on L1-L3, "
        f"{_count(len(seeds), 'seed')} ({', '.join(map(str, seeds))}) x {_count(args.episodes, 'episode')}"
    )
    # the demo's own output is its tables: no progress lines
    ok = all(run_study(study, display=args.display, progress=False)[0] for study in studies)
    if not ok:
        print(f"the demo's eval set did not complete; run it again to resume ({args.log_dir})", file=sys.stderr)
        return 1
    print()
    print(demo_tables(read_logs(args.log_dir)))
    print(f"\n{time.perf_counter() - started:.0f} s. Logs: {args.log_dir}")
    print(f"Transcripts: {_executable('inspect')} view --log-dir {shlex.quote(args.log_dir)}")
    print(f"Full report: {_executable('spatialstale')} report {shlex.quote(args.log_dir)}")
    print(f"Your model, its cost first: {_executable('spatialstale')} study --model {DEMO_NEXT_MODEL} --dry-run")
    return 0


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _executable(name: str) -> str:
    """How to call the console script ``name`` of this interpreter's environment without
    an activated venv: its path beside ``sys.executable`` (relative when it is under the
    working directory, e.g. ``.venv/bin/inspect``), else the bare name."""
    path = Path(sys.executable).parent / name
    if not path.exists():
        return name
    try:
        shown = str(path.absolute().relative_to(Path.cwd()))
    except ValueError:
        shown = str(path)
    return shlex.quote(shown)


def _command() -> str:
    """This command as any shell runs it, activated venv or not: the absolute path of
    the ``spatialstale`` script that is running (``sys.argv[0]``), else of the one beside
    this interpreter, else this interpreter running the module; quoted for a shell."""
    for script in (Path(sys.argv[0]), Path(sys.executable).parent / "spatialstale"):
        if script.name == "spatialstale" and script.is_file():
            return shlex.quote(str(script.absolute()))
    return shlex.join([sys.executable, "-m", "spatialstale.study._cli"])


def _report(args: argparse.Namespace) -> int:
    from spatialstale.report import read_logs, write_report

    if not args.out and "://" in args.log_dir:
        raise ValueError(f"give --out DIR (a local folder) for the report of {args.log_dir}")
    out = Path(args.out) if args.out else Path(args.log_dir) / "report"
    results = read_logs(args.log_dir)
    if args.exclude_limited:
        results = results.without_cut()
    paths = write_report(results, out, source=args.log_dir, bundle=args.bundle)
    for path in paths:
        print(path)
    return 0


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    """The command line read; ``inspect``: the options ``study`` leaves to Inspect."""
    parser = _parser(argv[0] if argv and argv[0] in COMMANDS else None)
    args, rest = parser.parse_known_args(argv)
    if rest and args.command != "study":
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.inspect = rest
    return args


def study_from_args(argv: Sequence[str]) -> Study:
    """The study that ``spatialstale study`` runs for ``argv`` (its arguments after
    ``study``), checked as the command checks it; nothing is run.

    Raises:
        ValueError: for a value the command refuses, in one line.
    """
    return _study_from(_parse(["study", *argv]))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``spatialstale`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parse(argv)
    try:
        if args.command == "study":
            return _study(args, argv)
        if args.command == "demo":
            return _demo(args)
        return _report(args)
    except BrokenPipeError:
        # the reader of the output went away (``| head``): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as error:
        from spatialstale.report import LogError

        if not isinstance(error, (LogError, ValueError)):
            raise
        if not getattr(error, "reported", False):  # a bad -T value or agent name prints itself
            print(f"spatialstale {args.command}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
