"""Built-in list prices and prompt-caching rules of common models, for the dry run.

Prices are the providers' published list prices as of 2025, in US dollars per million
tokens (standard tier, prompts under any long-context threshold, Anthropic's 5-minute
cache writes), held as Inspect :class:`~inspect_ai.model.ModelCost` so that Inspect's
:func:`~inspect_ai.model.compute_model_cost` prices them. Providers change prices:
``--model-cost-config FILE`` overrides this table, and Inspect's own model data wins
over it when that data carries a cost. Where a provider charges nothing extra to write
its cache (OpenAI, Google's implicit caching) the cache-write price is the input price.

A dated or tagged model name is priced as its base name (``gpt-4o-2024-08-06`` as
``gpt-4o``, ``claude-3-5-haiku-latest`` as ``claude-3-5-haiku``); the longest listed
name wins, and a name that goes on with anything else (``gpt-4o-mini`` is not
``gpt-4o``, ``claude-opus-4-6`` is not ``claude-opus-4``) has no built-in price.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from inspect_ai.model import ModelCost

from ._calls import CacheRule

PRICES_AS_OF = "2025"


def _cost(input: float, output: float, read: float, write: float | None = None) -> ModelCost:
    return ModelCost(
        input=input, output=output, input_cache_read=read, input_cache_write=input if write is None else write
    )


# USD per million tokens: input, output, cached input read[, cache write]. Sources: the
# providers' pricing pages (openai.com/api/pricing, docs.anthropic.com "Pricing",
# ai.google.dev "Gemini API pricing"), as of 2025.
BUILT_IN_PRICES: dict[str, ModelCost] = {
    "openai/gpt-4o": _cost(2.50, 10.00, 1.25),
    "openai/gpt-4o-mini": _cost(0.15, 0.60, 0.075),
    "openai/gpt-4.1": _cost(2.00, 8.00, 0.50),
    "openai/gpt-4.1-mini": _cost(0.40, 1.60, 0.10),
    "openai/gpt-4.1-nano": _cost(0.10, 0.40, 0.025),
    "openai/o3": _cost(2.00, 8.00, 0.50),
    "openai/o4-mini": _cost(1.10, 4.40, 0.275),
    "openai/gpt-5": _cost(1.25, 10.00, 0.125),
    "openai/gpt-5-mini": _cost(0.25, 2.00, 0.025),
    "openai/gpt-5-nano": _cost(0.05, 0.40, 0.005),
    # Anthropic: cache reads at 0.1x input, 5-minute cache writes at 1.25x input
    "anthropic/claude-sonnet-4": _cost(3.00, 15.00, 0.30, 3.75),
    "anthropic/claude-sonnet-4-5": _cost(3.00, 15.00, 0.30, 3.75),
    "anthropic/claude-sonnet-4-6": _cost(3.00, 15.00, 0.30, 3.75),
    "anthropic/claude-opus-4": _cost(15.00, 75.00, 1.50, 18.75),
    "anthropic/claude-opus-4-1": _cost(15.00, 75.00, 1.50, 18.75),
    "anthropic/claude-opus-4-5": _cost(5.00, 25.00, 0.50, 6.25),
    "anthropic/claude-haiku-4-5": _cost(1.00, 5.00, 0.10, 1.25),
    "anthropic/claude-3-5-haiku": _cost(0.80, 4.00, 0.08, 1.00),
    # Google: prompts up to 200k tokens; implicit cache hits at 25% of input (the 75%
    # discount announced with implicit caching, May 2025), no write charge
    "google/gemini-2.5-pro": _cost(1.25, 10.00, 0.3125),
    "google/gemini-2.5-flash": _cost(0.30, 2.50, 0.075),
}

# A suffix that names a dated snapshot or an alias of the same model.
_SNAPSHOT = re.compile(r"-(\d{4}-?\d{2}-?\d{2}|latest)(\b.*)?$")


def _base_match(name: str, listed: str) -> bool:
    return name == listed or (name.startswith(listed) and _SNAPSHOT.fullmatch(name[len(listed) :]) is not None)


def built_in_price(model: str) -> ModelCost | None:
    """The built-in list price of ``model`` (``provider/name``), matched by the longest
    listed name it is, or is a dated snapshot of; None for any other model."""
    found = [listed for listed in BUILT_IN_PRICES if _base_match(model, listed)]
    return BUILT_IN_PRICES[max(found, key=len)] if found else None


@dataclass(frozen=True)
class Caching:
    """How a provider caches prompt prefixes. ``switch``: whether Inspect's
    ``cache_prompt`` turns it on and off (Anthropic's cache control); OpenAI's and
    Google's caching is automatic and not turned off by it."""

    provider: str
    model_prefix: str
    rule: CacheRule
    switch: bool
    source: str


# Minimum cacheable prefix by provider and model-name prefix (the longest wins). Sources,
# the providers' docs as of 2025: OpenAI "Prompt caching" (prompts of 1,024 tokens or
# more, cache hits in increments of 128 tokens); Anthropic "Prompt caching" (minimum
# cacheable prompt 1,024 tokens; 2,048 for Claude Haiku 3 and 3.5; 4,096 for Claude
# Opus 4.5 and Haiku 4.5); Google "Context caching" (implicit caching from 1,024 tokens
# on Gemini 2.5 Flash, 2,048 on 2.5 Pro). Other providers (openai-api, vllm, ollama, the
# reference agents, ...): no provider price discount for cached input is assumed.
_ANTHROPIC = "Anthropic's prompt caching"
CACHING: tuple[Caching, ...] = (
    Caching("openai", "", CacheRule(1024, 128), False, "OpenAI's automatic prompt caching"),
    Caching("anthropic", "", CacheRule(1024), True, _ANTHROPIC),
    Caching("anthropic", "claude-3-haiku", CacheRule(2048), True, _ANTHROPIC),
    Caching("anthropic", "claude-3-5-haiku", CacheRule(2048), True, _ANTHROPIC),
    Caching("anthropic", "claude-haiku-4-5", CacheRule(4096), True, _ANTHROPIC),
    Caching("anthropic", "claude-opus-4-5", CacheRule(4096), True, _ANTHROPIC),
    Caching("google", "", CacheRule(1024), False, "Google's implicit caching"),
    Caching("google", "gemini-2.5-pro", CacheRule(2048), False, "Google's implicit caching"),
)


def caching_of(model: str) -> Caching | None:
    """The prompt caching ``model`` (``provider/name``) gets, or None when no discount
    for cached input is assumed."""
    provider, _, name = model.partition("/")
    found = [c for c in CACHING if c.provider == provider and name.startswith(c.model_prefix)]
    return max(found, key=lambda c: len(c.model_prefix)) if found else None
