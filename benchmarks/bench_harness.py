"""What the harness costs per model call, and how well it keeps a server busy.

Run: ``python benchmarks/bench_harness.py`` (the figures of the README, several
minutes) or ``python benchmarks/bench_harness.py --quick`` (a small size, seconds).

The script starts a local OpenAI-compatible server on 127.0.0.1 in its own process
(stopped on exit). The server answers every audit, SelfVerify and navigation call as
the ``observer`` reference agent would, after sleeping an injected latency. The tasks
run against it through Inspect's ``openai-api`` provider. Right after each run, two
bare-Inspect baselines make the same calls (the same messages and config, read back
from the run's log) through the same provider: the calls alone (``get_model(...)
.generate``, no task), and a bare task (one sample per recorded sample, whose solver
makes that sample's calls and nothing else: what any Inspect task pays per call for
its log, transcript and realtime buffer). It prints:

- **harness CPU per call** as a ratio to each baseline's (this process only; the
  server has its own), text and vision, with the **transcript events per call** of
  the run and of the bare task (Inspect writes each event to its realtime sample
  buffer); ``--repeat N`` runs each case N times and prints the medians (each ratio
  is measured within its run);
- **concurrency efficiency**, calls x latency / connections / wall time, at each
  connection limit, for detection and for an L3 navigation run with OMCD; and the
  same over the span of the model calls alone (first call's start to last call's
  end), which leaves out Inspect's start-up and final log write;
- **round trips** of one detection sample at B=10 (its wall time / latency);
- **prefix shared** by consecutive prompts of a call kind: the share of a call's
  prompt (text at 4 characters a token, an image at 255 tokens) that equals the start
  of the previous call of that kind in the same sample, which is what API prompt
  caches bill or compute again; SelfVerify makes one call per episode, so its
  previous call is the SelfVerify of the sample before;
- **log bytes per sample** of each run.

Each measured run (task or baseline) starts after a full garbage collection, so none
pays for an earlier run's garbage. The suite's first task freezes the interpreter's
start-up heap out of the cycle collector when it is made, before any sample
(``spatialstale.solvers._heap``); run with ``SPATIALSTALE_GC_FREEZE=0`` to measure
without that.

It asserts nothing: these are figures to read, not a timed test.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SERVICE = "bench"
"""``openai-api/bench/...``: the provider reads ``BENCH_API_KEY`` and ``BENCH_BASE_URL``."""

CHARS_PER_TOKEN = 4


# --- the server (runs in its own process) -------------------------------------------


def _latency(model: str) -> float:
    """The injected latency in seconds, carried in the model name (``latency-0.3``)."""
    _, _, value = model.rpartition("latency-")
    try:
        return float(value)
    except ValueError:
        return 0.0


def serve(port: int) -> None:
    """Answer /v1/chat/completions as the observer agent, after the injected latency."""
    from aiohttp import web
    from inspect_ai.model import (
        ChatMessage,
        ChatMessageSystem,
        ChatMessageUser,
        Content,
        ContentImage,
        ContentText,
        GenerateConfig,
    )

    from spatialstale.agents import ReferenceAgentAPI

    observer = ReferenceAgentAPI("observer")

    def messages_of(body: dict[str, Any]) -> list[ChatMessage]:
        out: list[ChatMessage] = []
        for message in body["messages"]:
            content = message["content"]
            if isinstance(content, list):
                parts: list[Content] = []
                for part in content:
                    if part.get("type") == "image_url":
                        parts.append(ContentImage(image=part["image_url"]["url"]))
                    elif part.get("type") == "text":
                        parts.append(ContentText(text=part["text"]))
                content = parts
            kind = ChatMessageSystem if message["role"] in ("system", "developer") else ChatMessageUser
            out.append(kind(content=content))
        return out

    async def completions(request: web.Request) -> web.Response:
        body = await request.json()
        messages = messages_of(body)
        answer = (await observer.generate(messages, [], "none", GenerateConfig())).completion
        await asyncio.sleep(_latency(str(body.get("model", ""))))
        prompt_tokens = sum(len(m.text) for m in messages) // CHARS_PER_TOKEN
        completion_tokens = len(answer) // CHARS_PER_TOKEN + 1
        return web.json_response(
            {
                "id": "bench",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "bench"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            }
        )

    async def main() -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", completions)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", port, backlog=1024)
        await site.start()
        sockets = site._server.sockets if site._server else []  # type: ignore[union-attr]
        print(sockets[0].getsockname()[1], flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


class Server:
    """The server in a child process: started on a free port, stopped on exit."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve"],
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.strip().isdigit():
            self.stop()
            raise RuntimeError(f"the benchmark server did not start (it printed {line!r})")
        self.url = f"http://127.0.0.1:{int(line)}/v1"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# --- harness runs and the bare-Inspect baseline ---------------------------------------


@dataclass
class Run:
    """One task run against the server: its log and what it cost this process."""

    name: str
    log_path: str
    samples: int
    calls: int
    cpu: float
    wall: float
    latency: float
    connections: int
    sample_times: list[float]
    events: int
    """Transcript events of all samples."""
    calls_span: float
    """Seconds from the first model call's start to the last one's end: the run
    without Inspect's start-up and final log write."""

    @property
    def efficiency(self) -> float:
        return self.calls * self.latency / self.connections / self.wall if self.wall else float("nan")

    @property
    def busy_efficiency(self) -> float:
        """:attr:`efficiency` over the span of the model calls alone."""
        return self.calls * self.latency / self.connections / self.calls_span if self.calls_span else float("nan")

    @property
    def events_per_call(self) -> float:
        return self.events / max(self.calls, 1)

    @property
    def log_bytes_per_sample(self) -> float:
        return os.path.getsize(self.log_path) / max(self.samples, 1)


def model_name(latency: float) -> str:
    return f"openai-api/{SERVICE}/latency-{latency:g}"


REALTIME = {"log_realtime": True}
"""Inspect's realtime sample buffer (its default); ``--no-realtime`` turns it off."""


def settle() -> None:
    """Collect the garbage of earlier runs, so no measured run pays for another's."""
    gc.collect()


def run_task(name: str, task: Any, url: str, log_dir: Path, *, latency: float, connections: int) -> Run:
    """Run ``task`` against the server and measure this process's CPU and wall time."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.event import ModelEvent

    settle()
    cpu, wall = time.process_time(), time.perf_counter()
    [log] = inspect_eval(
        task,
        model=model_name(latency),
        model_base_url=url,
        max_connections=connections,
        max_samples=10_000,
        log_dir=str(log_dir / name),
        display="none",
        log_format="eval",
        score_display=False,
        log_realtime=REALTIME["log_realtime"],
    )
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if log.status != "success":
        raise RuntimeError(f"{name}: the run did not succeed: {log.error}")
    samples = log.samples or []
    model_events = [e for s in samples for e in s.events if isinstance(e, ModelEvent)]
    calls = len(model_events)
    starts = [e.timestamp for e in model_events]
    ends = [e.completed for e in model_events if e.completed is not None]
    calls_span = (max(ends) - min(starts)).total_seconds() if starts and ends else 0.0
    return Run(
        name=name,
        log_path=log.location,
        samples=len(samples),
        calls=calls,
        cpu=cpu,
        wall=wall,
        latency=latency,
        connections=connections,
        sample_times=[s.total_time or 0.0 for s in samples],
        events=sum(len(s.events) for s in samples),
        calls_span=calls_span,
    )


def recorded_samples(log_path: str) -> list[list[tuple[list[Any], Any]]]:
    """The model calls of each sample of a log, in order: input messages and config."""
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import read_eval_log, resolve_sample_attachments

    return [
        [(e.input, e.config) for e in resolve_sample_attachments(sample).events if isinstance(e, ModelEvent)]
        for sample in read_eval_log(log_path).samples or []
    ]


async def make_calls(model: Any, calls: list[tuple[list[Any], Any]]) -> None:
    """Issue ``calls`` (messages, config) through ``model`` all at once; its
    connection limit bounds how many are in flight. (Not ``inspect_ai.util.collect``,
    whose span around each call is work the bare baseline must not do.)"""
    import anyio

    async with anyio.create_task_group() as group:
        for messages, config in calls:
            group.start_soon(lambda m=messages, c=config: model.generate(m, config=c))


def replay_task(samples: list[list[tuple[list[Any], Any]]]) -> Any:
    """A bare Inspect task that makes the recorded calls: one sample per recorded sample,
    whose solver issues that sample's calls at once through the task's model, with no
    span, table, prompt building, answer reading or scorer of the suite's."""
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import get_model
    from inspect_ai.solver import Generate, Solver, TaskState, solver

    @solver
    def replay() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            model = get_model()
            await make_calls(model, samples[int(str(state.sample_id)) - 1])
            return state

        return solve

    dataset = MemoryDataset([Sample(input="replay", id=i + 1) for i in range(len(samples))])
    return Task(dataset=dataset, solver=replay(), name="bare-task")


def baseline(calls: list[tuple[list[Any], Any]], url: str, *, latency: float, connections: int) -> tuple[float, float]:
    """CPU and wall seconds of making ``calls`` with bare Inspect: ``get_model`` and
    ``generate``, all issued at once and bounded by the same connection limit."""
    import anyio
    from inspect_ai.model import GenerateConfig, get_model

    model = get_model(
        model_name(latency), base_url=url, config=GenerateConfig(max_connections=connections), memoize=False
    )

    async def replay() -> None:
        await make_calls(model, calls)

    settle()
    cpu, wall = time.process_time(), time.perf_counter()
    anyio.run(replay)
    return time.process_time() - cpu, time.perf_counter() - wall


# --- prefix sharing --------------------------------------------------------------------


def shared_prefix(previous: Sequence[Any], current: Sequence[Any]) -> float:
    """The share of ``current`` (in tokens) that equals the start of ``previous``,
    measured as the dry run measures it (``spatialstale.study._calls``)."""
    from spatialstale.study import Meter, prompt_parts

    meter = Meter()
    before, now = prompt_parts(previous), prompt_parts(current)
    total = sum(meter.part(p) for p in now)
    return meter.shared(before, now) / total if total else 0.0


def prefix_by_kind(log_path: str) -> dict[str, float]:
    """Mean shared prefix of consecutive calls of each kind (audit, selfverify, navigate)."""
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import read_eval_log, resolve_sample_attachments

    from spatialstale.protocol import call_kind

    fractions: dict[str, list[float]] = {}
    last_selfverify: list[Any] | None = None
    for sample in read_eval_log(log_path).samples or []:
        previous: dict[str, list[Any]] = {}
        for event in resolve_sample_attachments(sample).events:
            if not isinstance(event, ModelEvent):
                continue
            kind = str(call_kind(event.input))
            before = last_selfverify if kind == "selfverify" else previous.get(kind)
            if before is not None:
                fractions.setdefault(kind, []).append(shared_prefix(before, event.input))
            previous[kind] = event.input
            if kind == "selfverify":
                last_selfverify = event.input
    return {kind: sum(values) / len(values) for kind, values in fractions.items()}


# --- the benchmark ---------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    latency: float
    connections: tuple[int, ...]
    per_connection: int
    cpu_samples: int
    large: int
    navigation_steps: int


FULL = Plan(latency=1.0, connections=(1, 8, 32), per_connection=4, cpu_samples=32, large=32, navigation_steps=50)
QUICK = Plan(latency=0.05, connections=(1, 4), per_connection=2, cpu_samples=4, large=0, navigation_steps=12)


def _detection(seeds: int, *, modality: str = "text", size: int = 8, regime: str = "L2") -> Any:
    from spatialstale.evals.detection import detection

    return detection(regime=regime, modality=modality, n_seeds=seeds, size=size, batch_size=10)


def _navigation(seeds: int, strategies: str, *, modality: str = "text", max_steps: int = 50) -> Any:
    from spatialstale.evals.navigation import navigation

    return navigation(
        regime="L3", modality=modality, strategies=strategies, n_seeds=seeds, episodes=1, max_steps=max_steps
    )


@dataclass(frozen=True)
class Baselines:
    """CPU per call of the same calls made by bare Inspect, two ways."""

    call: float
    """``get_model(...).generate`` with no task."""
    task: float
    """A bare Inspect task making each sample's calls (:func:`replay_task`)."""
    task_events: float
    """Transcript events per call of that task."""


def side_by_side(run: Run, url: str, logs: Path) -> Baselines:
    """The run's calls replayed right after it: bare calls, then a bare task."""
    samples = recorded_samples(run.log_path)
    calls = [call for sample in samples for call in sample]
    cpu, _ = baseline(calls, url, latency=run.latency, connections=run.connections)
    task = run_task(
        f"{Path(run.log_path).parent.name}-bare-task",
        replay_task(samples),
        url,
        logs,
        latency=run.latency,
        connections=run.connections,
    )
    if task.calls != len(calls):
        raise RuntimeError(f"the bare task made {task.calls} calls, not the run's {len(calls)}")
    return Baselines(
        call=cpu / max(len(calls), 1), task=task.cpu / max(task.calls, 1), task_events=task.events_per_call
    )


CPU_CONNECTIONS = 32
STRATEGIES = "nofilter,selfverify,omcd"

SECTIONS = ("cost", "efficiency", "trips", "agents")
"""``cost`` prints the CPU ratios, the shared prefixes and the log sizes; ``agents`` an
agent navigator's harness CPU per call beside the hand-written tool loop it replaced
(``bench_agents.py``; not among the default sections)."""
DEFAULT_SECTIONS = SECTIONS[:3]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a small size (seconds), e.g. for CI")
    parser.add_argument("--latency", type=float, help="injected latency in seconds for the efficiency runs")
    parser.add_argument("--connections", help="connection limits of the efficiency runs, e.g. 1,8,32")
    parser.add_argument(
        "--sections",
        default=",".join(DEFAULT_SECTIONS),
        help=f"which figures to print, any of {', '.join(SECTIONS)} (default {', '.join(DEFAULT_SECTIONS)})",
    )
    parser.add_argument(
        "--no-realtime",
        action="store_true",
        help="run the tasks with Inspect's realtime sample buffer off (log_realtime=False)",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of each cost case; the medians are printed (default 1)"
    )
    parser.add_argument("--cases", help="only the cost cases whose name holds one of these words, e.g. 'n=8,vision'")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(0)
        return 0

    sections = [part.strip() for part in args.sections.split(",") if part.strip()]
    unknown = [part for part in sections if part not in SECTIONS]
    if unknown:
        parser.error(f"--sections must name any of {', '.join(SECTIONS)}; got {', '.join(unknown)}")
    if args.repeat < 1:
        parser.error(f"--repeat must be a whole number of at least 1; got {args.repeat}")
    plan = QUICK if args.quick else FULL
    REALTIME["log_realtime"] = not args.no_realtime
    latency = args.latency if args.latency is not None else plan.latency
    connections = tuple(int(c) for c in args.connections.split(",")) if args.connections else plan.connections
    os.environ.setdefault(f"{SERVICE.upper()}_API_KEY", "unused")

    if "agents" in sections:
        from bench_agents import compare  # beside this script: run as a script, its folder is on the path

        compare(max(args.repeat, 3) if not args.quick else 1)
        sections.remove("agents")
        if not sections:
            return 0
    with Server() as server, tempfile.TemporaryDirectory() as scratch:
        logs = Path(scratch)
        # imports, registries and the first connection are paid once, outside the figures
        run_task("warmup", _detection(1), server.url, logs, latency=0.0, connections=8)

        if "cost" in sections:
            cost(plan, server.url, logs, args.repeat, args.cases)
        if "efficiency" in sections:
            efficiency(plan, server.url, logs, latency, connections)
        if "trips" in sections:
            trips(server.url, logs, 0.3 if not args.quick else latency)
    return 0


def cost(plan: Plan, url: str, logs: Path, repeat: int = 1, only: str | None = None) -> None:
    """Harness CPU per call against the bare-Inspect replay, events per call, shared
    prefixes, log sizes; with ``repeat`` > 1, the median of that many runs of each case."""
    steps = plan.navigation_steps
    navigators = max(plan.cpu_samples // 4, 2)
    cases = [
        ("detection text n=8", lambda: _detection(plan.cpu_samples)),
        ("detection vision n=8", lambda: _detection(plan.cpu_samples, modality="vision")),
        ("navigation text n=8", lambda: _navigation(navigators, STRATEGIES, max_steps=steps)),
        ("navigation vision n=8", lambda: _navigation(navigators, STRATEGIES, modality="vision", max_steps=steps)),
    ]
    if plan.large:
        cases.append((f"detection text n={plan.large}", lambda: _detection(1, size=plan.large)))
        cases.append((f"detection vision n={plan.large}", lambda: _detection(1, modality="vision", size=plan.large)))
    if only:
        words = [word.strip() for word in only.split(",") if word.strip()]
        cases = [(name, make) for name, make in cases if any(word in name for word in words)]
    realtime = "on" if REALTIME["log_realtime"] else "off"
    runs_of = f", median of {repeat} runs" if repeat > 1 else ""
    print(
        f"## Harness cost per call against bare Inspect "
        f"(CPU of this process, {CPU_CONNECTIONS} connections, realtime buffer {realtime}{runs_of})\n"
    )
    print(
        "| run | samples | calls | events/call (bare task) | harness ms/call | bare call ms/call | ratio "
        "| bare task ms/call | ratio | log KB/sample |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    runs: dict[str, Run] = {}
    for name, make in cases:
        measured = []
        for attempt in range(repeat):
            run = run_task(
                f"{name.replace(' ', '-')}-{attempt}", make(), url, logs, latency=0.0, connections=CPU_CONNECTIONS
            )
            runs[name] = run
            harness = run.cpu / max(run.calls, 1)
            base = side_by_side(run, url, logs)
            measured.append((harness, base.call, harness / base.call, base.task, harness / base.task))
            task_events = base.task_events
        harness, call, call_ratio, task, task_ratio = (
            statistics.median(values) for values in zip(*measured, strict=True)
        )
        print(
            f"| {name} | {run.samples} | {run.calls} | {run.events_per_call:.2f} ({task_events:.2f}) | "
            f"{1000 * harness:.2f} | "
            f"{1000 * call:.2f} | {call_ratio:.2f}x | {1000 * task:.2f} | {task_ratio:.2f}x | "
            f"{run.log_bytes_per_sample / 1000:.1f} |",
            flush=True,
        )
    print("\n## Prefix shared by consecutive prompts of a kind\n")
    print("| run | audit | selfverify | navigate |")
    print("|---|---|---|---|")
    for name, run in runs.items():
        shares = prefix_by_kind(run.log_path)
        cells = [f"{shares[k]:.2f}" if k in shares else "-" for k in ("audit", "selfverify", "navigate")]
        print(f"| {name} | {' | '.join(cells)} |", flush=True)
    print()


def efficiency(plan: Plan, url: str, logs: Path, latency: float, connections: Sequence[int]) -> None:
    """calls x latency / connections / wall time of detection and L3 OMCD navigation."""
    print(f"## Concurrency efficiency ({latency:g} s latency, {plan.per_connection}x as many samples as connections)\n")
    print(
        "| run | connections | samples | calls | wall s | efficiency | calls span s | over the span | harness CPU s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for limit in connections:
        samples = plan.per_connection * limit
        for name, task in (
            ("detection L2 text", _detection(samples)),
            ("navigation L3 omcd text", _navigation(samples, "omcd", max_steps=plan.navigation_steps)),
        ):
            run = run_task(f"{name.replace(' ', '-')}-c{limit}", task, url, logs, latency=latency, connections=limit)
            print(
                f"| {name} | {limit} | {run.samples} | {run.calls} | {run.wall:.1f} | "
                f"{run.efficiency:.2f} | {run.calls_span:.1f} | {run.busy_efficiency:.2f} | {run.cpu:.1f} |",
                flush=True,
            )
    print()


def trips(url: str, logs: Path, latency: float) -> None:
    """Wall time of one detection sample at B=10, in round trips of the injected latency."""
    run = run_task("round-trips", _detection(1), url, logs, latency=latency, connections=CPU_CONNECTIONS)
    print(
        f"One detection sample (L2, n=8, B=10, {run.calls} calls) at {latency:g} s latency: "
        f"{run.sample_times[0]:.2f} s = {run.sample_times[0] / latency:.1f} round trips"
    )


if __name__ == "__main__":
    sys.exit(main())
