"""Same command, same log: a matrix of tasks over every option, run on the reference
agents, and a value-for-value comparison of two runs' logs.

A refactor that must not change what the suite measures runs the matrix before and
after (each in its own checkout, same seeds) and compares the two folders:

    python -m tests.equivalence run BEFORE            # in the old checkout
    python -m tests.equivalence run AFTER             # in the new one
    python -m tests.equivalence compare BEFORE AFTER  # exit 1 on any difference

``run --only NAME ...`` runs some entries of :data:`MATRIX` (``list`` names them all).
The comparison reads every log of one folder beside the log of the same entry in the
other and compares everything a log says about the evaluation: the header (task,
version, arguments, task metadata, tags, solver plan, scorers and metrics), every
metric's value, the model usage, and for each sample its id, epoch, metadata, messages,
output, every score's value, answer, explanation and metadata, and every transcript
event (model calls with their input, config and output; info tables; spans; tool calls;
limits; errors). It leaves out what differs from run to run whatever the code: ids,
times, the checkout's revision and the package versions. The sample store, and its
changes in the transcript (store events, a state event's ``/store`` changes), are
compared only with ``--store`` (a change of the store's layout is counted and reported,
not failed, otherwise).

Events of concurrent calls (the batches of an audit) may reach the transcript in
either order, so each span's children are compared as a sorted list; the spans of the
batches carry their number in their name, so their order is still checked.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REFERENCE = "spatialstale/"


@dataclass(frozen=True)
class Entry:
    """One ``inspect eval`` of the matrix: a task with its ``-T`` values, a reference
    agent, optional model roles and Inspect options (limits, epochs)."""

    name: str
    task: str
    args: Mapping[str, Any]
    model: str = "observer"
    roles: Mapping[str, str] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)


SEEDS = [4810, 1734]
"""Two of the default seeds (``spatialstale.env.default_seeds``)."""
ONE = SEEDS[:1]
ALL_STRATEGIES = "nomemory,nofilter,selfverify,omcd,oracle,localverify"


def _maker(task: str, **fixed: Any) -> Callable[..., Entry]:
    """Entries of ``task``: one seed (and ``fixed``) unless the entry's own values say otherwise."""

    def make(
        name: str,
        model: str = "observer",
        roles: Mapping[str, str] | None = None,
        options: Mapping[str, Any] | None = None,
        **args: Any,
    ) -> Entry:
        return Entry(name, task, {"seeds": ONE, **fixed, **args}, model, roles or {}, options or {})

    return make


det = _maker("detection")
per = _maker("perception")
nav = _maker("navigation", episodes=1)


CUSTOM_PROMPT = 'Audit the {size}x{size} grid. JSON: [{"memory_id": "mem_000"}]'

MATRIX: tuple[Entry, ...] = (
    # detection: regimes, modalities, batch sizes, listings, schemas, prompts, extensions
    det("det-regimes-observer", regime="L1,L2,L3", seeds=SEEDS),
    det("det-regimes-credulous", "credulous", regime="L1,L2,L3", seeds=SEEDS),
    det("det-l3-random", "random", regime="L3", batch_size=7, seeds=SEEDS),
    det("det-vision-colourblind", "colourblind", regime="L3", modality="vision"),
    det("det-both-holes-structured", regime="L2", modality="both", observation="holes", structured=True, batch_size=5),
    det("det-size12", "random", regime="L1", size=12, batch_size=20),
    det("det-distractors-edits", regime="L1,L3", distractors=3, edits=True, seeds=SEEDS),
    det("det-edits-random", "random", regime="L2", edits=True),
    det("det-distractors-credulous", "credulous", regime="L2", distractors=5),
    det("det-crops", regime="L2", modality="vision", memory="crops"),
    det("det-crops-colourblind", "colourblind", regime="L3", modality="both", memory="crops", edits=True),
    det("det-ma", regime="MA", modality="both", seeds=SEEDS),
    det("det-no-rule", regime="L2", prompt_set="no_rule"),
    det("det-minimal", "random", regime="L2", prompt_set="minimal"),
    det("det-custom-prompt", regime="L1", audit_prompt=CUSTOM_PROMPT),
    det("det-auditor-role", "observer", {"auditor": "colourblind"}, regime="L2"),
    det("det-limit", options={"message_limit": 2}, regime="L3"),
    # the perception probe
    per("per-regimes", regime="L1,L3", seeds=SEEDS),
    per("per-vision-colourblind", "colourblind", regime="L2", modality="vision"),
    per("per-both-random", "random", regime="MA", modality="both", structured=True),
    per("per-minimal-holes", regime="L2", prompt_set="minimal", observation="holes"),
    per("per-limit", options={"message_limit": 2}, regime="L2"),
    # navigation: every strategy under every regime, then each option
    nav("nav-strategies", regime="L1,L2,L3", strategies=ALL_STRATEGIES, seeds=SEEDS),
    nav("nav-strategies-credulous", "credulous", regime="L2,L3", strategies=ALL_STRATEGIES),
    nav("nav-random-epochs", "random", regime="L3", strategies="nofilter,omcd,localverify", episodes=2),
    nav("nav-unknown-fog", regime="L3", strategies=ALL_STRATEGIES, filter="unknown", view_radius=1),
    nav("nav-vision-fog", "colourblind", regime="L2", strategies="nofilter,omcd", modality="vision", view_radius=2),
    nav("nav-tools", regime="L2,L3", strategies=ALL_STRATEGIES, agent="tools"),
    nav(
        "nav-tools-credulous",
        "credulous",
        {"auditor": "observer"},
        regime="L1,L3",
        strategies=ALL_STRATEGIES,
        agent="tools",
        seeds=SEEDS,
    ),
    nav(
        "nav-memory-credulous",
        "credulous",
        {"auditor": "observer"},
        regime="L1,L2",
        strategies="nofilter,omcd",
        agent="memory",
    ),
    nav("nav-memory-observer", regime="L3", strategies="nomemory,nofilter,selfverify", agent="memory", seeds=SEEDS),
    nav("nav-tools-unknown-random", "random", regime="L3", strategies="omcd,nomemory", agent="tools", filter="unknown"),
    nav("nav-tools-limit", options={"message_limit": 12}, regime="L2", strategies="nofilter,omcd", agent="tools"),
    nav(
        "nav-distractors-structured-holes",
        regime="L3",
        strategies="selfverify,omcd,localverify",
        distractors=2,
        structured=True,
        observation="holes",
        verify_radius=2,
        batch_size=16,
    ),
    nav("nav-ma-both", regime="MA", strategies="nofilter,selfverify,omcd", modality="both", seeds=SEEDS),
    nav("nav-warned", "credulous", regime="L2", strategies="nofilter,omcd", prompt_set="warned"),
    nav("nav-auditor-role", "observer", {"auditor": "random"}, regime="L3", strategies="selfverify,omcd"),
    nav(
        "nav-steps-limit",
        "random",
        options={"token_limit": 2500},
        regime="L3",
        strategies="nomemory,nofilter",
        max_steps=6,
    ),
)
"""Every option of every task at least once, on the four reference agents."""


def run(log_dir: Path, only: Sequence[str] = ()) -> None:
    """Run the entries of :data:`MATRIX` (those named in ``only``, or all), each into
    its own folder of ``log_dir``, with ``--seed 7`` (the random agent's answers)."""
    from inspect_ai import eval

    unknown = set(only) - {e.name for e in MATRIX}
    if unknown:
        raise SystemExit(f"no such entries: {', '.join(sorted(unknown))}")
    for entry in MATRIX:
        if only and entry.name not in only:
            continue
        [log] = eval(
            f"spatialstale/{entry.task}",
            model=REFERENCE + entry.model,
            model_roles={role: REFERENCE + model for role, model in entry.roles.items()} or None,
            task_args=dict(entry.args),
            log_dir=str(log_dir / entry.name),
            display="none",
            seed=7,
            **entry.options,
        )
        print(f"{entry.name}: {log.status}, {len(log.samples or [])} samples", flush=True)
        if log.status != "success":
            raise SystemExit(f"{entry.name} did not succeed: {log.error}")


# --- the comparison -----------------------------------------------------------------

VOLATILE = frozenset(
    {
        "eval_id", "run_id", "task_id", "created", "revision", "packages", "started_at", "completed_at",
        "timestamp", "working_start", "working_time", "total_time", "uuid", "span_id", "parent_id",
        "eval_set_id", "location", "pending", "retries", "time", "completed", "message_id",
    }
)  # fmt: skip
"""Keys whose values differ from run to run whatever the code (ids, times, versions)."""

RANDOM_IDS = ("role", "function")
"""A dict with one of these keys is a message or a tool call, whose ``id`` is random."""


def _strip(value: Any) -> Any:
    """``value`` (a log as JSON) without its volatile keys, floats made comparable."""
    if isinstance(value, dict):
        # a message's or a tool call's id is random, and so is a state change setting one
        random_id = any(key in value for key in RANDOM_IDS) or str(value.get("path", "")).endswith("/id")
        if "op" in value and random_id:
            return {k: v for k, v in value.items() if k in ("op", "path")}
        return {k: _strip(v) for k, v in value.items() if k not in VOLATILE and not (random_id and k == "id")}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return value


def _event_tree(events: list[dict[str, Any]]) -> list[Any]:
    """The transcript as a tree of spans, each span's children in a canonical order."""
    children: dict[str | None, list[dict[str, Any]]] = {}
    for event in events:
        # a span's begin event carries its own id as span_id, and its parent's as parent_id
        parent = event.get("parent_id") if event["event"] == "span_begin" else event.get("span_id")
        children.setdefault(parent, []).append(event)

    def build(span: str | None) -> list[Any]:
        out = []
        for event in children.get(span, []):
            if event["event"] == "span_end":
                continue
            node = _strip({k: v for k, v in event.items() if k != "id"})
            if event["event"] == "span_begin":
                node["children"] = build(event["id"])
            out.append(node)
        return sorted(out, key=lambda n: json.dumps(n, sort_keys=True, default=str))

    return build(None)


def _log_view(path: Path) -> dict[str, Any]:
    """What a log says about the evaluation, volatile keys left out."""
    from inspect_ai.log import read_eval_log, resolve_sample_attachments

    log = read_eval_log(str(path))
    data = log.model_dump(mode="json", exclude_none=True)
    samples = [resolve_sample_attachments(s).model_dump(mode="json", exclude_none=True) for s in log.samples or []]
    for sample in samples:
        sample["events"] = _event_tree(sample.get("events", []))
        sample.pop("attachments", None)
    eval_spec = data["eval"]
    # Inspect merges a task's tags with --tags as a set: their order is not the log's
    eval_spec["tags"] = sorted(eval_spec.get("tags") or [])
    return {
        "eval": _strip(
            {
                k: eval_spec.get(k)
                for k in (
                    "task",
                    "task_version",
                    "task_args",
                    "model",
                    "model_roles",
                    "config",
                    "metadata",
                    "tags",
                    "scorers",
                    "metrics",
                    "task_registry_name",
                    "solver",
                    "solver_args",
                )
            }
        ),
        "plan": _strip(data.get("plan")),
        "results": _strip(data.get("results")),
        "model_usage": _strip(data.get("stats", {}).get("model_usage")),
        "samples": {f"{s['id']}@{s['epoch']}": _strip(s) for s in samples},
    }


def _store_part(view: dict[str, Any]) -> dict[str, Any]:
    """Take the store, and the store events, out of ``view``; return them."""
    out: dict[str, Any] = {}

    def drop_store_events(nodes: list[Any]) -> tuple[list[Any], list[Any]]:
        kept, dropped = [], []
        for node in nodes:
            if node.get("event") == "store":
                dropped.append(node)
                continue
            if node.get("event") == "state":
                # a state change holds the store's changes beside the output's
                changes = node.get("changes", [])
                dropped += [c for c in changes if str(c.get("path", "")).startswith("/store")]
                node["changes"] = [c for c in changes if not str(c.get("path", "")).startswith("/store")]
            if "children" in node:
                node["children"], inner = drop_store_events(node["children"])
                dropped += inner
            kept.append(node)
        return kept, dropped

    for key, sample in view["samples"].items():
        sample["events"], events = drop_store_events(sample.get("events", []))
        out[key] = {"store": sample.pop("store", None), "events": events}
    return out


def differences(a: Any, b: Any, where: str = "") -> Iterator[str]:
    """Each place where ``a`` and ``b`` (JSON values) differ, as ``path: a != b``."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if key not in a:
                yield f"{where}.{key}: only in the second"
            elif key not in b:
                yield f"{where}.{key}: only in the first"
            else:
                yield from differences(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield f"{where}: {len(a)} items != {len(b)} items"
        for index, (x, y) in enumerate(zip(a, b, strict=False)):
            yield from differences(x, y, f"{where}[{index}]")
    elif a != b or type(a) is not type(b):
        yield f"{where}: {_short(a)} != {_short(b)}"


def _short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _logs(folder: Path) -> dict[str, Path]:
    """Each entry's log in ``folder``: ``entry/<log>.eval`` (one log a subfolder)."""
    out: dict[str, Path] = {}
    for path in sorted(folder.glob("*/*.eval")) + sorted(folder.glob("*/*.json")):
        if path.parent.name in out:
            raise SystemExit(f"{path.parent}: more than one log")
        out[path.parent.name] = path
    return out


@dataclass
class Comparison:
    """The outcome of :func:`compare`: the differences found, by entry, and the store
    differences (counted apart unless the store is compared)."""

    differences: dict[str, list[str]] = field(default_factory=dict)
    store: dict[str, int] = field(default_factory=dict)
    entries: int = 0

    @property
    def same(self) -> bool:
        return not any(self.differences.values())


def compare(first: Path, second: Path, *, store: bool = False) -> Comparison:
    """Compare every log of ``first`` with the log of the same entry in ``second``."""
    a, b = _logs(first), _logs(second)
    result = Comparison(entries=len(set(a) | set(b)))
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            result.differences[name] = [f"log only in {'the second' if name not in a else 'the first'} folder"]
            continue
        view_a, view_b = _log_view(a[name]), _log_view(b[name])
        if not store:
            stores = list(differences(_store_part(view_a), _store_part(view_b)))
            if stores:
                result.store[name] = len(stores)
        result.differences[name] = list(differences(view_a, view_b))
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.equivalence", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run_cmd = commands.add_parser("run", help="run the matrix into a folder")
    run_cmd.add_argument("log_dir", type=Path)
    run_cmd.add_argument("--only", nargs="+", default=[], metavar="NAME")
    commands.add_parser("list", help="name the matrix's entries")
    compare_cmd = commands.add_parser("compare", help="compare two folders of the matrix's logs")
    compare_cmd.add_argument("first", type=Path)
    compare_cmd.add_argument("second", type=Path)
    compare_cmd.add_argument("--store", action="store_true", help="compare the sample store and its events too")
    compare_cmd.add_argument("--max", type=int, default=20, help="differences shown per entry")
    args = parser.parse_args(argv)
    if args.command == "list":
        print("\n".join(e.name for e in MATRIX))
        return 0
    if args.command == "run":
        run(args.log_dir, args.only)
        return 0
    outcome = compare(args.first, args.second, store=args.store)
    for name, found in outcome.differences.items():
        for line in found[: args.max]:
            print(f"{name}: {line}")
        if len(found) > args.max:
            print(f"{name}: ... and {len(found) - args.max} more")
    for name, count in outcome.store.items():
        print(f"{name}: the sample store differs in {count} place(s) (not compared; --store compares it)")
    print(
        f"{outcome.entries} entries: "
        + ("the same" if outcome.same else f"{sum(bool(d) for d in outcome.differences.values())} differ")
    )
    return 0 if outcome.same else 1


if __name__ == "__main__":
    sys.exit(main())
