"""The dry run: samples, model calls, tokens and money before anything is spent.

The calls and tokens of each task come from ``_calls`` (the protocol's own prompt
builders on the study's real instances; see there what is measured and what is
assumed); prices from ``--model-cost-config`` or Inspect's model data, turned into
dollars by Inspect's :func:`~inspect_ai.model.compute_model_cost`.

Speed: a task whose seeds x cells exceed ``EXACT_CELLS`` is measured on an evenly
spaced sample of its seeds and scaled to all of them (its call counts are then
estimates too), so a dry run takes seconds at any size and seed count
(``python benchmarks/bench_dry_run.py``). The printout says which.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from inspect_ai.model import ModelCost, ModelInfo, ModelUsage, compute_model_cost, get_model_info, set_model_info

from spatialstale.env import CELL_PX, make_instance
from spatialstale.protocol import NavigationSettings, dry_run_notes, extension_instance, navigator

from ._calls import (
    ANY_PREFIX,
    CHAIN_PAIRS,
    IMAGE_TOKENS,
    STAND_INS,
    CacheRule,
    Calls,
    TokenCount,
    chars_over_four,
    picture_tokens,
    sample_calls,
)
from ._concurrency import ADAPTIVE_CONNECTIONS, memory_line, tasks_at_once
from ._matrix import Study, TaskSpec, beyond_paper, skipped_lines
from ._options import read_config_file
from ._prices import PRICES_AS_OF, Caching, built_in_price, caching_of

EXACT_CELLS = 8_192
"""Seeds x grid cells up to which a task is measured on every seed (128 seeds at 8x8)."""
MIN_SAMPLED_SEEDS = 4


def seed_sample(seeds: Sequence[int], size: int) -> tuple[int, ...]:
    """Every seed when seeds x cells <= ``EXACT_CELLS``, else evenly spaced ones."""
    if len(seeds) * size * size <= EXACT_CELLS:
        return tuple(seeds)
    k = min(len(seeds), max(MIN_SAMPLED_SEEDS, EXACT_CELLS // (size * size)))
    return tuple(seeds[round(i * (len(seeds) - 1) / (k - 1))] for i in range(k)) if k > 1 else (seeds[0],)


@dataclass(frozen=True)
class TaskEstimate:
    """One task's dry-run figures. ``exact``: the call counts are exact (detection,
    every seed measured); navigation's are an upper bound. ``measured_seeds`` of the
    task's seeds were built; with fewer than all, counts and tokens are scaled."""

    spec: TaskSpec
    samples: int
    navigator: Calls
    auditor: Calls
    exact: bool
    measured_seeds: int = 0

    @property
    def total(self) -> Calls:
        return self.navigator + self.auditor

    @property
    def sampled(self) -> bool:
        return self.measured_seeds < len(self.spec.settings.seeds)


def estimate_task(
    spec: TaskSpec, count: TokenCount = chars_over_four, cache: CacheRule | None = ANY_PREFIX
) -> TaskEstimate:
    """The dry-run figures of one task, with its settings' prompts, observation and fog,
    and cached input as far as ``cache`` (the provider's rule; None: no caching) reaches."""
    settings = spec.settings
    measured = seed_sample(settings.seeds, settings.size)
    navigator = auditor = Calls()
    for seed in measured:
        instance = extension_instance(make_instance(seed, spec.regime, settings.size), settings.values())
        for strategy in spec.strategies or ("",):
            nav, aud = sample_calls(settings, instance, strategy, count, cache)
            navigator += nav * spec.episodes
            auditor += aud * spec.episodes
    sampled = len(measured) < len(settings.seeds)
    if sampled:
        factor = len(settings.seeds) / len(measured)
        navigator, auditor = navigator.scaled(factor), auditor.scaled(factor)
    exact = spec.kind == "detection" and not sampled
    return TaskEstimate(spec, spec.samples, navigator, auditor, exact, len(measured))


# providers whose model object loads weights or starts a server when it is made
_HEAVY_PROVIDERS = ("hf", "vllm", "sglang", "llama-cpp-python", "transformer_lens", "mlx")


def check_models(models: Sequence[str]) -> None:
    """Fail on a model name the study could not resolve, before any estimate.

    Each name goes to Inspect's :func:`~inspect_ai.model.get_model` (which makes a
    client and sends nothing): an unknown provider, a name not in ``provider/model``
    form or an unknown reference agent raises ``ValueError``; a missing API key or
    optional package (Inspect's ``PrerequisiteError``) is not an error in a dry run.
    For providers that load weights or start a server when made, only the form is
    checked.

    Raises:
        ValueError: naming the first model that cannot be resolved.
    """
    from inspect_ai.model import get_model

    for name in dict.fromkeys(models):
        provider, _, rest = name.partition("/")
        if provider in _HEAVY_PROVIDERS:
            if not rest:
                raise ValueError(f"Model name {name!r} should be in the format of <api_name>/<model_name>.")
            continue
        try:
            get_model(name, memoize=False)  # inspect-evals-lint: ignore[get_model_location] -- a name check
        except ValueError:
            raise
        except Exception:  # a missing key or package: the dry run needs neither
            continue


@dataclass(frozen=True)
class PlanRow:
    """A line of the dry-run table: one task run by one model."""

    model: str
    auditor: str
    estimate: TaskEstimate


def cache_rule(model: str, cache_prompt: object = None) -> CacheRule | None:
    """What ``model``'s provider caches (``_prices.CACHING``); None when no discount for
    cached input is assumed, or when ``cache_prompt`` is false and it is what turns the
    provider's caching on (Anthropic)."""
    caching = caching_of(model)
    if caching is None or (cache_prompt is False and caching.switch):
        return None
    return caching.rule


def plan(study: Study, count: TokenCount = chars_over_four) -> list[PlanRow]:
    """Every (model, task) of the study with its estimate; audits go to the auditor.
    Cached input follows each model's caching rule: the tasks are measured once per
    distinct rule among the study's models."""
    cache_prompt = study.options.get("cache_prompt")
    auditor = study.auditor
    rules = {m: cache_rule(m, cache_prompt) for m in (*study.models, *([auditor] if auditor else []))}
    by_rule = {
        rule: [estimate_task(spec, count, rule) for spec in study.tasks] for rule in dict.fromkeys(rules.values())
    }
    rows = []
    for model in study.models:
        audits = by_rule[rules[auditor or model]]
        for own, other in zip(by_rule[rules[model]], audits, strict=True):
            rows.append(PlanRow(model, auditor or model, replace(own, auditor=other.auditor)))
    return rows


def per_model(rows: Sequence[PlanRow]) -> dict[str, tuple[Calls, bool]]:
    """Calls and tokens each model would serve (navigation and audits), and whether exact."""
    totals: dict[str, tuple[Calls, bool]] = {}
    for row in rows:
        for model, calls in ((row.model, row.estimate.navigator), (row.auditor, row.estimate.auditor)):
            before, exact = totals.get(model, (Calls(), True))
            totals[model] = (before + calls, exact and (row.estimate.exact or calls.calls == 0))
    return totals


Prices = Mapping[str, ModelCost]


def read_prices(path: str) -> dict[str, ModelCost]:
    """A price table in Inspect's ``--model-cost-config`` format: a YAML or JSON
    mapping of model name to ``input``, ``output``, ``input_cache_write`` and
    ``input_cache_read``, each in dollars per million tokens.

    Raises:
        ValueError: for a missing or malformed file (one line, naming the fields).
    """
    data = read_config_file(path, "--model-cost-config")
    prices = {}
    for model, cost in data.items():
        try:
            prices[str(model)] = ModelCost(**cost)
        except Exception:  # pydantic's message spans many lines
            fields = "input, output, input_cache_write, input_cache_read"
            raise ValueError(
                f"--model-cost-config: {model!r} needs {fields} ($ per million tokens); got {cost!r}"
            ) from None
    return prices


def price_of(model: str, prices: Prices) -> tuple[ModelCost, str] | None:
    """The model's price and where it came from: ``--model-cost-config``, else Inspect's
    model data when it has a cost, else the built-in list prices (``_prices``)."""
    if model in prices:
        return prices[model], "--model-cost-config"
    try:
        info = get_model_info(model)
    except Exception:  # an unknown provider or name: no price, not an error
        info = None
    if info is not None and info.cost is not None:
        return info.cost, "Inspect's model data"
    built_in = built_in_price(model)
    if built_in is not None:
        return built_in, f"built-in list price as of {PRICES_AS_OF}; --model-cost-config FILE overrides it"
    return None


def cost(calls: Calls, price: ModelCost, *, cache: bool = True) -> float:
    """Dollars for ``calls`` (Inspect's :func:`compute_model_cost`); with ``cache`` the
    shared prefixes are cache reads and writes at their prices, else every prompt token
    is plain input."""
    if not cache:
        return compute_model_cost(
            price, ModelUsage(input_tokens=calls.prompt_tokens, output_tokens=calls.completion_tokens)
        )
    plain = max(calls.prompt_tokens - calls.cached_tokens - calls.cache_write_tokens, 0)
    usage = ModelUsage(
        input_tokens=plain,
        output_tokens=calls.completion_tokens,
        input_tokens_cache_read=calls.cached_tokens,
        input_tokens_cache_write=calls.cache_write_tokens,
    )
    return compute_model_cost(price, usage)


def _row_cost(row: PlanRow, prices: Prices) -> float | None:
    total = 0.0
    for model, calls in ((row.model, row.estimate.navigator), (row.auditor, row.estimate.auditor)):
        if calls.calls == 0:
            continue
        found = price_of(model, prices)
        if found is None:
            return None
        total += cost(calls, found[0])
    return total


def _counts(estimate: TaskEstimate) -> str:
    if estimate.sampled:
        return f"estimate ({estimate.measured_seeds} of {len(estimate.spec.settings.seeds)} seeds)"
    agent = getattr(estimate.spec.settings, "agent", None)
    counts = navigator(agent).dry_run_counts() if agent is not None else None
    if counts is not None:
        return counts
    return "exact" if estimate.exact else "upper bound"


def _table(lines: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    out = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths).rstrip())
    return out


DEFAULT_LATENCY = 2.0
"""Seconds an API model call takes end to end, unless ``--latency`` says otherwise."""
REFERENCE_PROVIDER = "spatialstale"
"""The reference agents' provider: they answer in-process (latency 0)."""
HARNESS_SECONDS_PER_CALL = 0.008
"""The suite's CPU a call in its one process (docs/performance.md, "CPU per call"):
a floor on wall time whatever the latency and connections."""
NEAR_MINIMUM = 1.15
"""Cached prefixes averaging under this many times the minimum are flagged: characters/4
is not the model's tokenizer, so they may not reach it."""


def latency_of(model: str, latency: float | None) -> float:
    """Seconds a call of ``model`` is assumed to take: ``latency``, else 2.0 for an API
    model and 0 for a reference agent."""
    if latency is not None:
        return latency
    return 0.0 if model.split("/", 1)[0] == REFERENCE_PROVIDER else DEFAULT_LATENCY


@dataclass(frozen=True)
class WallTime:
    """Estimated wall time of one model's share of a study, and what bounds it."""

    seconds: float
    bound: str


def wall_time(
    rows: Sequence[PlanRow],
    model: str,
    *,
    latency: float,
    connections: int,
    max_samples: int | None = None,
    max_tasks: int | None = None,
) -> WallTime:
    """Seconds ``model`` takes to serve its calls of the study, the largest of four
    bounds: its calls spread over ``connections``; its tasks' sequential round trips
    (an episode's steps go one after another, an audit's batches together) spread over
    the samples in flight (``max_samples`` a task, else as many as connections, on
    ``max_tasks`` of its tasks at once, else all); one sample's round trips end to end;
    the harness's CPU a call."""
    served = per_model(rows).get(model, (Calls(), True))[0]
    own = [r.estimate for r in rows if r.model == model]
    records = sum(e.spec.records for e in own)
    rounds = sum(e.total.rounds for e in own)
    tasks = min(len(own), max_tasks or len(own))
    in_flight = max(1, min(records, tasks * (max_samples or connections)))
    longest = max((e.total.rounds / e.spec.records for e in own if e.spec.records), default=0.0)
    bounds = {
        f"{connections} connections": served.calls * latency / connections,
        f"{in_flight:,} samples in flight, each call after the previous": rounds * latency / in_flight,
        "one sample's calls one after another": longest * latency,
        f"the harness's CPU, ~{HARNESS_SECONDS_PER_CALL * 1000:g} ms a call": served.calls * HARNESS_SECONDS_PER_CALL,
    }
    bound = max(bounds, key=lambda b: bounds[b])
    return WallTime(bounds[bound], bound)


def duration(seconds: float) -> str:
    """``seconds`` as a person reads it: s, min, h or days."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "0%"


def _caching(model: str, calls: Calls, cache_prompt: object) -> tuple[str, bool, str]:
    """What the model's provider caches of these calls: a clause for the cost line,
    whether caching lowers the cost, and a note (or "")."""
    caching: Caching | None = caching_of(model)
    if caching is None:
        provider = model.split("/", 1)[0]
        return f"no provider discount for cached input is assumed for {provider}/ models", False, ""
    rule = caching.rule
    minimum = f"{rule.minimum:,}+ tokens with the previous call, the minimum of {caching.source} for this model"
    if cache_prompt is False and caching.switch:
        return f"--cache-prompt false turns off {caching.source}", False, ""
    note = f"--cache-prompt false does not turn off {caching.source}" if cache_prompt is False else ""
    if calls.cached_tokens == 0:
        return f"no call shares {minimum}; with caching the same", False, note
    steps = f", then {rule.increment}-token steps" if rule.increment > 1 else ""
    mean = calls.cached_tokens / max(calls.cached_calls, 1)
    if mean < NEAR_MINIMUM * rule.minimum:
        near = (
            f"the cached prefixes average ~{mean:,.0f} tokens, near the minimum: counted by the model's own "
            "tokenizer some may fall short, moving the cost toward the figure without caching"
        )
        note = f"{note}; {near}" if note else near
    clause = (
        f"{_share(calls.cached_calls, calls.calls)} of calls share {minimum}{steps}; "
        f"{_share(calls.cached_tokens, calls.prompt_tokens)} of prompt tokens cached"
    )
    return clause, True, note


def _cost_lines(calls: Calls, found: tuple[ModelCost, str] | None, caching: tuple[str, bool, str]) -> list[str]:
    """The cost that applies first, with why, then the alternative, the price and a note."""
    clause, cached, note = caching
    if found is None:
        lines = [f"cost: no price (give one with --model-cost-config FILE); caching: {clause}"]
    else:
        price, source = found
        plain = cost(calls, price, cache=False)
        headline = (
            f"cost: ~${cost(calls, price):,.2f} with caching ({clause}); ~${plain:,.2f} without"
            if cached
            else f"cost: ~${plain:,.2f} without caching ({clause})"
        )
        lines = [
            headline,
            f"price: ${price.input:g} in, ${price.output:g} out, ${price.input_cache_read:g} cached read, "
            f"${price.input_cache_write:g} cache write per million tokens ({source})",
        ]
    return lines + ([f"note: {note}"] if note else [])


def _legend() -> list[str]:
    side = 8 * CELL_PX
    others = "".join(f" and {picture_tokens(s.width, s.height)} {s.legend}" for s in STAND_INS)
    image = f"{IMAGE_TOKENS} a {side}x{side} image{others} (OpenAI's high-detail count)"
    return [
        "Columns:",
        "  samples         Inspect samples: detection one per seed, navigation one per (seed, strategy)",
        "  epochs          runs of each sample (--episodes for navigation)",
        "  nav calls       the navigator's model calls; audit calls: the auditor's (its model in brackets when it is "
        "another)",
        f"  prompt tok      input tokens of all calls: ceil(characters/4) a message part, {image}",
        "  cached tok      the part of prompt tok the row's model's provider would read from its prompt cache: the "
        "prefix a call shares with the previous call of its audit or episode, counted only where it reaches the "
        "provider's minimum (0 where no caching is assumed)",
        "  completion tok  output tokens: the answer in the format the prompt asks for (reasoning models' hidden "
        "reasoning tokens, billed as output, are not included)",
        "  cost $          the cost that applies: prompt tok at the input price, but cached tok at the cached-read "
        "price and each newly cached prefix once at the cache-write price; n/a without a price",
        "  counts          exact, an upper bound (every episode runs max_steps) or an estimate (see below)",
    ]


def format_plan(
    study: Study, rows: Sequence[PlanRow], prices: Prices | None = None, latency: float | None = None
) -> str:
    """The dry-run printout: a table per (model, task) with a legend, then per model its
    calls, tokens, caching, cost and wall time, then the method.

    Args:
        study: the study.
        rows: its :func:`plan`.
        prices: ``--model-cost-config`` prices, by model name.
        latency: seconds a call takes (``--latency``); None: each model's default.
    """
    if latency is not None and not latency >= 0:
        raise ValueError(f"--latency must be 0 or more seconds; got {latency}")
    prices = prices or {}
    cache_prompt = study.options.get("cache_prompt")
    # a study beyond the paper's protocol names each cell's axes in columns of their own
    # every axis beyond the paper's protocol, with its paper value, by column title
    defaults = {a.title: a.show(a.value) for kind in ("detection", "navigation") for a in beyond_paper(kind) if a.title}
    varied = [axis for axis in defaults if any(axis in row.estimate.spec.axes() for row in rows)]
    header = (
        "model",
        "task",
        *varied,
        "samples",
        "epochs",
        "nav calls",
        "audit calls",
        "prompt tok",
        "cached tok",
        "completion tok",
        "cost $",
        "counts",
    )
    lines: list[tuple[str, ...]] = [header]
    for row in rows:
        e = row.estimate
        row_cost = _row_cost(row, prices)
        axes = e.spec.axes()
        lines.append(
            (
                row.model,
                e.spec.base_name if varied else e.spec.name,
                *(axes.get(axis, defaults[axis]) for axis in varied),
                f"{e.samples:,}",
                str(e.spec.episodes if e.spec.kind == "navigation" else 1),
                f"{e.navigator.calls:,}",
                f"{e.auditor.calls:,}" + ("" if row.auditor == row.model else f" ({row.auditor})"),
                f"{e.total.prompt_tokens:,}",
                f"{e.total.cached_tokens:,}",
                f"{e.total.completion_tokens:,}",
                "n/a" if row_cost is None else f"{row_cost:,.2f}",
                _counts(e),
            )
        )
    out = _table(lines)
    out.append("")
    out.extend(_legend())
    out.append("")
    out.append("Per model (every call it would serve):")
    connections = study.options.get("max_connections")
    walls: list[float] = []
    for model, (calls, exact) in per_model(rows).items():
        bound = "" if exact else " (upper bound: navigation included)"
        out.append(
            f"  {model}: {calls.calls:,} calls, ~{calls.prompt_tokens:,} prompt tokens, "
            f"~{calls.completion_tokens:,} completion tokens{bound}"
        )
        found = price_of(model, prices)
        out.extend("    " + line for line in _cost_lines(calls, found, _caching(model, calls, cache_prompt)))
        seconds = latency_of(model, latency)
        # the eval set's tasks at once are shared among the models
        limits = {
            "max_samples": study.options.get("max_samples"),
            "max_tasks": max(1, tasks_at_once(study) // len(study.models)),
        }
        if connections:
            wall = wall_time(rows, model, latency=seconds, connections=connections, **limits)
            how = f"--max-connections {connections}"
        else:
            low, start, high = (
                wall_time(rows, model, latency=seconds, connections=c, **limits) for c in ADAPTIVE_CONNECTIONS
            )
            wall = start
            spread = (
                f"from ~{duration(low.seconds)} at {ADAPTIVE_CONNECTIONS[0]} to ~{duration(high.seconds)} at "
                f"{ADAPTIVE_CONNECTIONS[2]}; "
                if duration(low.seconds) != duration(high.seconds)
                else ""
            )
            how = (
                f"Inspect's adaptive connections, starting at {ADAPTIVE_CONNECTIONS[1]} ({spread}--max-connections "
                "fixes them)"
            )
        walls.append(wall.seconds)
        given = "--latency" if latency is not None else "default"
        out.append(
            f"    wall time: ~{duration(wall.seconds)} at {seconds:g} s a call ({given}) with {how}; bound by "
            f"{wall.bound}"
        )
    samples = sum(r.estimate.samples for r in rows)
    records = sum(r.estimate.spec.records for r in rows)
    out.append(
        f"  all: {len(rows)} task logs, {samples:,} samples ({records:,} sample records with the navigation "
        f"epochs), into {study.log_dir}"
    )
    out.append(f"  {memory_line(study)}")
    out.extend("  " + line for line in skipped_lines(study.skipped))
    total_calls = sum(calls.calls for calls, _ in per_model(rows).values())
    total = max([*walls, total_calls * HARNESS_SECONDS_PER_CALL])
    if len(walls) > 1:
        out.append(
            f"  wall time, all: ~{duration(total)} with the models side by side (each on its own connections; "
            f"~{duration(sum(walls))} one after another)"
        )
    out.append("")
    measured = [r.estimate for r in rows]
    sampled = [e for e in measured if e.sampled]
    how = (
        f"tokens measured on {min(e.measured_seeds for e in sampled)}+ evenly spaced seeds of large tasks and "
        "scaled (their calls too)"
        if sampled
        else "every seed built"
    )
    kinds = {r.estimate.spec.kind for r in rows}
    samples_note = {
        "detection": "Samples: detection one per seed. Detection calls are exact (windows x ceil(n^2/B) a seed).",
        "navigation": "Samples: navigation one per (seed, strategy), each run for every epoch (--episodes).",
    }.get(
        next(iter(kinds)) if len(kinds) == 1 else "",
        "Samples: detection one per seed, navigation one per (seed, strategy), each run for every epoch "
        "(--episodes). Detection calls are exact (windows x ceil(n^2/B) a seed).",
    )
    upper = (
        " Navigation figures are an upper bound: every episode runs max_steps steps, OMCD re-audits after every "
        "scheduled L3 event, SelfVerify makes 1 call, Oracle none, and every memory view holds the whole store."
        if "navigation" in kinds
        else ""
    )
    out.append(
        f"{samples_note}{upper} Tokens: "
        f"ceil(chars/4) a message part, {IMAGE_TOKENS} a {8 * CELL_PX}x{8 * CELL_PX} image; completions as "
        "the requested answer format. Method: "
        f"{how}; chains of more than {2 * CHAIN_PAIRS} calls measured on {CHAIN_PAIRS} pairs of consecutive "
        "calls and scaled; L3 audit schedules on their first and last windows."
    )
    out.append(
        "Caching: a prefix counts as cached only where it reaches the provider's minimum (provider docs, as of "
        "2025): OpenAI 1,024 tokens, then 128-token steps; Anthropic 1,024, 2,048 for Claude Haiku 3/3.5, 4,096 for "
        "Claude Opus 4.5 and Haiku 4.5 (Inspect sends cache_control unless --cache-prompt false); Google 1,024 "
        "(2.5 Flash) and 2,048 (2.5 Pro). Other providers (openai-api, vllm, ollama, the reference agents): no "
        "price discount assumed. Providers cache on a best-effort basis, so the cost with caching is a floor."
    )
    out.append(
        f"Prices: --model-cost-config FILE, else Inspect's model data, else built-in list prices as of "
        f"{PRICES_AS_OF} (study/_prices.py); providers change them, so check before a large run. Wall time: "
        f"--latency SECONDS a call (default {DEFAULT_LATENCY:g} s for API models, 0 for spatialstale/ agents), "
        "calls spread over the model's connections, an episode's calls one after another, and the tasks at once "
        "of the memory line shared among the models; rate limits and retries come on top. Memory: a sample in "
        "flight holds its transcript, so the peak follows the samples in flight, not the study's size."
    )
    specs = [r.estimate.spec for r in rows if r.estimate.spec.kind == "navigation"]
    # each extension's note once, however many of the tasks it applies to
    out += dict.fromkeys(note for spec in specs for note in dry_run_notes(spec.kind, spec.settings.values()))
    agents = dict.fromkeys(spec.settings.agent for spec in specs if isinstance(spec.settings, NavigationSettings))
    out += [note for agent in agents if (note := navigator(agent).dry_run_note()) is not None]
    return "\n".join(out)


def study_prices(study: Study, prices: Prices) -> dict[str, ModelCost]:
    """The price of every model the study calls (its models, the auditor, the models
    of ``--model-role``), as the dry run finds them (:func:`price_of`), by the name its
    calls report.

    Raises:
        ValueError: for a model without a price, in one line (a budget it could not count).
    """
    names = [*study.models, *([study.auditor] if study.auditor else [])]
    for role in (study.model_roles or {}).values():
        names += [str(model) for model in (role if isinstance(role, list) else [role])]
    found: dict[str, ModelCost] = {}
    for name in dict.fromkeys(names):
        price = price_of(name, prices)
        if price is None:
            raise ValueError(
                f"--max-cost: no price is known for {name}, so its calls could not be counted against the budget; "
                "give one with --model-cost-config FILE ($ per million tokens)"
            )
        found[name] = price[0]
    return found


def budget_line(budget: float, rows: Sequence[PlanRow], prices: Prices) -> str:
    """The dry run's line on ``--max-cost``: the budget against the estimate."""
    costs = [_row_cost(row, prices) for row in rows]
    estimate = sum(cost or 0.0 for cost in costs)
    unpriced = "" if all(cost is not None for cost in costs) else " (rows without a price not counted)"
    if estimate > budget:
        verdict = f"the study would stop at ~{100 * budget / estimate:.0f}% of its calls; resume with a larger budget"
    else:
        verdict = f"{100 * estimate / budget:.0f}% of it: reruns and longer answers have the rest"
    return (
        f"Budget: ${budget:,.2f} (--max-cost) against an estimate of ~${estimate:,.2f}{unpriced}: {verdict}. "
        "Past the budget no sample starts and those in flight are cancelled (docs/study.md, Budget)."
    )


def register_prices(prices: Prices) -> None:
    """Give Inspect the ``--model-cost-config`` price of each model its database does
    not know (a local server, a plug-in provider): Inspect's own reading of the file
    (``set_model_cost``) accepts only models it knows, and refuses the run otherwise."""
    for model, price in prices.items():
        try:
            known = get_model_info(model) is not None
        except Exception:  # an unknown provider: not in the database either
            known = False
        if not known:
            set_model_info(model, ModelInfo(cost=price))
