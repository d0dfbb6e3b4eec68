"""The dry run: samples, model calls, tokens and money before anything is spent.

The calls and tokens of each task come from ``_calls`` (the solvers' own prompt
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
from dataclasses import dataclass

from inspect_ai.model import ModelCost, ModelUsage, compute_model_cost, get_model_info

from spatialstale.env import CELL_PX, make_instance
from spatialstale.solvers import NavigationSettings

from ._calls import CHAIN_PAIRS, IMAGE_TOKENS, Asked, Calls, TokenCount, chars_over_four
from ._matrix import Study, TaskSpec, beyond_paper
from ._options import read_config_file

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


def estimate_task(spec: TaskSpec, count: TokenCount = chars_over_four) -> TaskEstimate:
    """The dry-run figures of one task (the same for every model), with its settings'
    prompts, observation and fog."""
    measured = seed_sample(spec.settings.seeds, spec.settings.size)
    asked = Asked.of(spec.settings, count)
    navigator = auditor = Calls()
    for seed in measured:
        instance = make_instance(seed, spec.regime, spec.settings.size)
        if not isinstance(spec.settings, NavigationSettings):
            auditor += asked.detection_sample(instance)
            continue
        for strategy in spec.strategies:
            nav, aud = asked.episode(instance, strategy, spec.settings)
            navigator += nav * spec.episodes
            auditor += aud * spec.episodes
    sampled = len(measured) < len(spec.settings.seeds)
    if sampled:
        factor = len(spec.settings.seeds) / len(measured)
        navigator, auditor = navigator.scaled(factor), auditor.scaled(factor)
    exact = spec.kind == "detection" and not sampled
    return TaskEstimate(spec, spec.samples, navigator, auditor, exact, len(measured))


@dataclass(frozen=True)
class PlanRow:
    """A line of the dry-run table: one task run by one model."""

    model: str
    auditor: str
    estimate: TaskEstimate


def plan(study: Study, count: TokenCount = chars_over_four) -> list[PlanRow]:
    """Every (model, task) of the study with its estimate; audits go to the auditor."""
    estimates = [estimate_task(spec, count) for spec in study.tasks]
    return [PlanRow(model, study.auditor or model, e) for model in study.models for e in estimates]


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
    """The model's price and where it came from: the table, else Inspect's model data."""
    if model in prices:
        return prices[model], "price table"
    try:
        info = get_model_info(model)
    except Exception:  # an unknown provider or name: no price, not an error
        return None
    if info is None or info.cost is None:
        return None
    return info.cost, "Inspect's model data"


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
    if getattr(estimate.spec.settings, "agent", None) == "tools":
        return "estimate (a turn a step)"  # recall turns come on top; early ends come off
    return "exact" if estimate.exact else "upper bound"


def _table(lines: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    out = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths).rstrip())
    return out


def format_plan(study: Study, rows: Sequence[PlanRow], prices: Prices | None = None) -> str:
    """The dry-run printout: a table per (model, task), totals and cost per model, the method."""
    prices = prices or {}
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
    out.append("Per model (every call it would serve):")
    for model, (calls, exact) in per_model(rows).items():
        bound = "" if exact else " (upper bound: navigation included)"
        out.append(
            f"  {model}: {calls.calls:,} calls, ~{calls.prompt_tokens:,} prompt tokens (~{calls.cached_tokens:,} "
            f"a cacheable shared prefix) + ~{calls.completion_tokens:,} completion tokens{bound}"
        )
        found = price_of(model, prices)
        if found is None:
            out.append("    cost: no price (give one with --model-cost-config FILE)")
            continue
        price, source = found
        out.append(
            f"    cost: ~${cost(calls, price):,.2f} with prefix caching, ~${cost(calls, price, cache=False):,.2f} "
            f"without (per million tokens: ${price.input:g} in, ${price.output:g} out, "
            f"${price.input_cache_read:g} cached read, ${price.input_cache_write:g} cache write; {source})"
        )
    samples = sum(r.estimate.samples for r in rows)
    records = sum(r.estimate.spec.records for r in rows)
    out.append(
        f"  all: {len(rows)} task logs, {samples:,} samples ({records:,} sample records with the navigation "
        f"epochs), into {study.log_dir}"
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
    out.append(
        "Samples: detection one per seed, navigation one per (seed, strategy), each run for every epoch "
        "(--episodes). Detection calls are exact (windows x ceil(n^2/B) a seed). Navigation figures are an "
        "upper bound: every episode runs max_steps steps, OMCD re-audits after every scheduled L3 event, "
        "SelfVerify makes 1 call, Oracle none, and every memory view holds the whole store. Tokens: "
        f"ceil(chars/4) a message part, {IMAGE_TOKENS} a {8 * CELL_PX}x{8 * CELL_PX} image; completions as "
        "the requested answer format; cached = the prefix shared with the previous prompt of the same kind "
        f"(providers cache only prefixes of ~1,024+ tokens). Method: {how}; chains of more than "
        f"{2 * CHAIN_PAIRS} calls measured on {CHAIN_PAIRS} pairs of consecutive calls and scaled; L3 audit "
        f"schedules on their first and last windows. Cost with caching counts cached tokens at the cached-read "
        "price and each newly shared prefix once at the cache-write price."
    )
    specs = [r.estimate.spec for r in rows if r.estimate.spec.kind == "navigation"]
    if any(getattr(spec.settings, "view_radius", None) is not None for spec in specs):
        out.append(
            "View radius k (fog): every observation of the episode, its audits' too, is the square of radius k "
            "around S that the agent sees there."
        )
    if any(getattr(spec.settings, "agent", None) == "tools" for spec in specs):
        out.append(
            "Agent tools: one conversation an episode, a turn a step (each a move call); every turn resends the "
            "conversation so far (tool definitions, system prompt, opening observation, one exchange per earlier "
            "move), so its prompt grows a step at a time and all but the newest exchange is cacheable. Recall "
            "calls add turns on top, episodes that end early take turns off: an estimate, not a bound."
        )
    return "\n".join(out)
