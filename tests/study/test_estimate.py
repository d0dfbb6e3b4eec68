"""The dry run's money and time: cached input only where the provider's minimum is
reached, built-in list prices, the cost that applies named first, wall time, and model
names that cannot be resolved refused before any estimate."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from inspect_ai.model import ModelUsage, compute_model_cost

from spatialstale.env import make_instance
from spatialstale.protocol import NAVIGATION
from spatialstale.solvers import StepsPlan
from spatialstale.study import Calls, Study, study_seeds, study_tasks
from spatialstale.study._calls import (
    ANY_PREFIX,
    NAVIGATE_ANSWER,
    CacheRule,
    Meter,
    chain,
    episode_plan_of,
    prompt_parts,
)
from spatialstale.study._cli import main
from spatialstale.study._estimate import cache_rule, cost, plan, price_of, wall_time
from spatialstale.study._prices import BUILT_IN_PRICES, built_in_price

SMALL = ["--n-seeds", "2", "--regimes", "L1", "--modalities", "text", "--episodes", "1"]


def _dry_run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["study", *argv, *SMALL, "--dry-run"]) == 0
    return capsys.readouterr().out


def _block(out: str, model: str) -> list[str]:
    """The per-model lines of ``model`` in a dry run's printout."""
    lines = out.split(f"\n  {model}: ", 1)[1].splitlines()
    return list(itertools.takewhile(lambda line: line.startswith("    "), lines[1:]))


def test_a_cache_rule_caches_nothing_below_its_minimum_and_whole_steps_above() -> None:
    openai = CacheRule(1024, 128)
    assert [openai.cached(n) for n in (0, 1023, 1024, 1151, 1152, 2000)] == [0, 0, 1024, 1024, 1152, 1920]
    anthropic = CacheRule(4096)
    assert [anthropic.cached(n) for n in (4095, 4096, 4097)] == [0, 4096, 4097]
    assert ANY_PREFIX.cached(1) == 1 and ANY_PREFIX.cached(0) == 0


def test_an_episode_counts_a_shared_prefix_as_cached_only_from_the_minimum() -> None:
    instance = make_instance(study_seeds(None, 1)[0], "L1", 8)
    steps = 6
    navigator = episode_plan_of(replace(NAVIGATION, max_steps=steps), instance, "nofilter").navigator
    assert isinstance(navigator, StepsPlan) and navigator.turns == steps

    def step_at(step: int) -> tuple[list, str]:
        return navigator.messages(step), NAVIGATE_ANSWER

    prompts = [prompt_parts(step_at(i)[0]) for i in range(steps)]
    shared = [Meter().shared(a, b) for a, b in itertools.pairwise(prompts)]
    assert len(set(shared)) == 1  # the agent stays at S: every step shares the same prefix
    prefix = shared[0]
    everything = chain(step_at, steps, Meter(cache=ANY_PREFIX))
    assert everything.cached_tokens == prefix * (steps - 1) and everything.cached_calls == steps - 1
    reached = chain(step_at, steps, Meter(cache=CacheRule(prefix)))
    assert reached == everything
    missed = chain(step_at, steps, Meter(cache=CacheRule(prefix + 1)))
    assert (missed.cached_tokens, missed.cache_write_tokens, missed.cached_calls) == (0, 0, 0)
    assert (missed.calls, missed.prompt_tokens, missed.rounds) == (everything.calls, everything.prompt_tokens, steps)
    assert chain(step_at, steps, Meter(cache=None)).cached_tokens == 0


def test_each_provider_gets_its_own_minimum_and_cache_prompt_false_turns_off_only_a_switch() -> None:
    assert cache_rule("openai/gpt-4o") == CacheRule(1024, 128)
    assert cache_rule("anthropic/claude-sonnet-4-5") == CacheRule(1024)
    assert cache_rule("anthropic/claude-3-5-haiku-20241022") == CacheRule(2048)
    assert cache_rule("anthropic/claude-haiku-4-5") == CacheRule(4096)
    assert cache_rule("anthropic/claude-opus-4-5") == CacheRule(4096)
    assert cache_rule("google/gemini-2.5-pro") == CacheRule(2048)
    assert cache_rule("google/gemini-2.5-flash") == CacheRule(1024)
    for model in ("openai-api/together/x", "vllm/Qwen/Qwen2-VL", "ollama/llava", "spatialstale/observer"):
        assert cache_rule(model) is None, model
    assert cache_rule("anthropic/claude-sonnet-4-5", False) is None
    assert cache_rule("openai/gpt-4o", False) == CacheRule(1024, 128)  # automatic: not Inspect's switch


def test_a_studys_cached_tokens_differ_per_minimum() -> None:
    tasks = study_tasks(
        seeds=study_seeds(None, 2), regimes=["L1"], modalities=["text"], strategies=["nofilter"], episodes=1
    )
    models = ("openai/gpt-4o", "anthropic/claude-haiku-4-5", "openai-api/local/x")
    rows = {(r.model, r.estimate.spec.kind): r.estimate.total for r in plan(Study(models, tasks))}
    gpt, haiku, local = (rows[(m, "navigation")] for m in models)
    assert gpt.prompt_tokens == haiku.prompt_tokens == local.prompt_tokens
    assert gpt.cached_tokens > 0  # navigation prompts share more than 1,024 tokens at n=8
    assert haiku.cached_tokens == 0 and local.cached_tokens == 0  # not 4,096; no discount assumed
    assert rows[("openai/gpt-4o", "detection")].cached_tokens == 0  # an audit's prefix is about 340 tokens


def test_built_in_prices_match_dated_names_and_never_a_longer_models() -> None:
    gpt4o = BUILT_IN_PRICES["openai/gpt-4o"]
    assert built_in_price("openai/gpt-4o-2024-08-06") == gpt4o
    assert built_in_price("openai/gpt-4o-mini-2024-07-18") == BUILT_IN_PRICES["openai/gpt-4o-mini"]
    assert built_in_price("anthropic/claude-opus-4-1-20250805") == BUILT_IN_PRICES["anthropic/claude-opus-4-1"]
    assert built_in_price("anthropic/claude-3-5-haiku-latest") == BUILT_IN_PRICES["anthropic/claude-3-5-haiku"]
    assert built_in_price("anthropic/claude-opus-4-5") != BUILT_IN_PRICES["anthropic/claude-opus-4"]
    for unknown in ("anthropic/claude-opus-4-7", "openai/gpt-4o-audio-preview", "openai-api/x/gpt-4o", "openai/gpt"):
        assert built_in_price(unknown) is None, unknown
    required = (
        "openai/gpt-4o openai/gpt-4o-mini openai/gpt-4.1 openai/gpt-4.1-mini openai/gpt-4.1-nano openai/o3 "
        "openai/o4-mini openai/gpt-5 openai/gpt-5-mini anthropic/claude-sonnet-4 anthropic/claude-sonnet-4-5 "
        "anthropic/claude-sonnet-4-6 anthropic/claude-opus-4 anthropic/claude-opus-4-1 anthropic/claude-opus-4-5 "
        "anthropic/claude-haiku-4-5 anthropic/claude-3-5-haiku google/gemini-2.5-pro google/gemini-2.5-flash"
    )
    assert set(required.split()) <= BUILT_IN_PRICES.keys()
    for price in BUILT_IN_PRICES.values():
        assert price.input_cache_read < price.input < price.output and price.input_cache_write >= price.input


def test_the_price_file_wins_over_the_built_in_table_and_inspect_prices_both() -> None:
    mine = BUILT_IN_PRICES["openai/gpt-4o-mini"]
    assert price_of("openai/gpt-4o", {"openai/gpt-4o": mine}) == (mine, "--model-cost-config")
    found = price_of("openai/gpt-4o-2024-08-06", {})
    assert found is not None and found[0] == BUILT_IN_PRICES["openai/gpt-4o"] and "as of 2025" in found[1]
    assert price_of("openai-api/local/x", {}) is None
    calls = Calls(3, 3000, 300, 2000, 1000)
    usage = ModelUsage(input_tokens=0, output_tokens=300, input_tokens_cache_read=2000, input_tokens_cache_write=1000)
    assert cost(calls, mine) == compute_model_cost(mine, usage)
    assert cost(calls, mine, cache=False) == pytest.approx((3000 * 0.15 + 300 * 0.60) / 1e6)


def test_the_dry_run_leads_with_the_cost_that_applies(capsys: pytest.CaptureFixture[str]) -> None:
    out = _dry_run(capsys, "--model", "openai/gpt-4o", "--model", "anthropic/claude-haiku-4-5")
    gpt, haiku = _block(out, "openai/gpt-4o"), _block(out, "anthropic/claude-haiku-4-5")
    assert gpt[0].startswith("    cost: ~$") and " with caching (" in gpt[0] and "1,024+ tokens" in gpt[0]
    assert "% of calls share" in gpt[0] and "% of prompt tokens cached" in gpt[0] and gpt[0].endswith(" without")
    assert "built-in list price as of 2025; --model-cost-config FILE overrides it" in gpt[1]
    assert haiku[0].startswith("    cost: ~$") and " without caching (no call shares 4,096+ tokens" in haiku[0]
    assert " with caching (" not in haiku[0]
    # every column is explained under the table, the token count included
    legend = out.split("\nColumns:\n", 1)[1].split("\n\n", 1)[0]
    header = out.splitlines()[0]
    for column in ("samples", "epochs", "nav calls", "prompt tok", "cached tok", "completion tok", "cost $", "counts"):
        assert column in header and f"  {column}" in legend, column
    assert "ceil(characters/4)" in legend and "255 a 384x384 image" in legend
    assert "Prices: --model-cost-config FILE, else Inspect's model data, else built-in list prices as of 2025" in out


def test_cache_prompt_false_prices_anthropic_without_caching(capsys: pytest.CaptureFixture[str]) -> None:
    out = _dry_run(capsys, "--model", "anthropic/claude-sonnet-4-5", "--size", "16", "--no-detection")
    assert " with caching (" in _block(out, "anthropic/claude-sonnet-4-5")[0]
    off = _dry_run(
        capsys, "--model", "anthropic/claude-sonnet-4-5", "--size", "16", "--no-detection", "--cache-prompt", "false"
    )
    assert "without caching (--cache-prompt false turns off Anthropic's prompt caching)" in off


def test_wall_time_follows_latency_connections_and_the_episodes_steps(capsys: pytest.CaptureFixture[str]) -> None:
    tasks = study_tasks(
        seeds=study_seeds(None, 1), regimes=["L1"], modalities=["text"], strategies=["nofilter"], episodes=1
    )
    rows = plan(Study(("openai/gpt-4o",), tasks))
    calls = sum(r.estimate.total.calls for r in rows)
    steps = NAVIGATION.max_steps
    # few connections: the calls spread over them
    slow = wall_time(rows, "openai/gpt-4o", latency=2.0, connections=1)
    assert slow.seconds == pytest.approx(calls * 2.0) and slow.bound == "1 connections"
    # many: one episode's steps still go one after another
    wide = wall_time(rows, "openai/gpt-4o", latency=2.0, connections=1000)
    assert wide.seconds == pytest.approx(steps * 2.0) and "one after another" in wide.bound
    # no latency: the harness's CPU
    assert "CPU" in wall_time(rows, "openai/gpt-4o", latency=0.0, connections=10).bound
    out = _dry_run(capsys, "--model", "openai/gpt-4o", "--max-connections", "5", "--latency", "4")
    assert "wall time: ~" in out and "at 4 s a call (--latency) with --max-connections 5" in out
    out = _dry_run(capsys, "--model", "openai/gpt-4o", "--model", "spatialstale/observer")
    assert "at 2 s a call (default) with Inspect's adaptive connections, starting at 20" in out
    assert "at 0 s a call (default)" in "\n".join(_block(out, "spatialstale/observer"))
    assert "wall time, all: ~" in out


@pytest.mark.parametrize(
    ("model", "error"),
    [
        ("opneai/gpt-4o", "spatialstale study: error: Model API opneai of model 'opneai/gpt-4o' not recognized."),
        (
            "gpt-4o",
            "spatialstale study: error: Model name 'gpt-4o' should be in the format of <api_name>/<model_name>.",
        ),
        (
            "spatialstale/nobody",
            "spatialstale model must be one of observer, credulous, random, colourblind; got 'nobody'",
        ),
    ],
)
def test_a_model_name_that_cannot_be_resolved_fails_the_dry_run(
    model: str, error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["study", "--model", model, *SMALL, "--dry-run"]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines()[-1] == error and "samples" not in captured.out


def test_a_missing_api_key_is_no_error_in_a_dry_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AZUREAI_OPENAI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    out = _dry_run(capsys, "--model", "openai/gpt-4o", "--auditor", "anthropic/claude-sonnet-4-5")
    assert "anthropic/claude-sonnet-4-5" in out and "cost: ~$" in out


@pytest.mark.parametrize(
    ("argv", "detection", "navigation"),
    [(("--no-navigation",), True, False), (("--no-detection",), False, True), ((), True, True)],
)
def test_the_dry_runs_method_speaks_of_the_tasks_the_study_runs(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], detection: bool, navigation: bool
) -> None:
    [method] = [
        line for line in _dry_run(capsys, "--model", "openai/gpt-4o", *argv).splitlines() if line.startswith("Samples:")
    ]
    assert ("Detection calls are exact" in method) is detection
    assert ("navigation one per (seed, strategy)" in method) is navigation
    assert ("Navigation figures are an upper bound" in method) is navigation
