"""The perception probe: can the model read the current grid at all?"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.log import HeadlineMetric

from spatialstale.env import MASTER_SEED, N_DEFAULT_SEEDS
from spatialstale.evals._dataset import grid_samples
from spatialstale.protocol import DEFAULT_PROMPTS, PerceptionSettings
from spatialstale.scorers import perception_accuracy
from spatialstale.solvers import freeze_startup_heap, perception_probe

VERSION = 3
"""The task version in each log header; CHANGELOG.md says what each version changed."""

HEADLINE = HeadlineMetric(metric="accuracy")
"""The score Inspect's log list shows: the mean of per-seed accuracy (also the first
metric; named so that a new metric listed first cannot take its place)."""

P = PerceptionSettings.defaults()


@task
def perception(
    regime: str | list[str] = P.regime,
    modality: str = P.modality,
    batch_size: int = P.batch_size,
    seeds: str | list[int] | None = None,
    n_seeds: int = N_DEFAULT_SEEDS,
    master_seed: int = MASTER_SEED,
    size: int = P.size,
    perception_prompt: str = DEFAULT_PROMPTS["perception"],
    structured: bool = P.structured,
    observation: str = P.observation,
    prompt_set: str = P.prompt_set,
    **unknown: object,
) -> Task:
    """Perception probe: one sample per seed, scored by hole vs ice reading accuracy.

    The detection task's observations (the same seeded grids, shown the same way, the
    agent at S) with no memory: each call asks for the type of a batch of
    ``batch_size`` cells (⌈n²/B⌉ calls per observation). L1/L2: the grid after the
    pre-game changes; L3: the grid after each scheduled event, pooled per seed.
    Scored per seed by hole recall, ice recall, balanced accuracy and accuracy
    (unanswered and conflicting cells count as misread); metrics are grouped by
    regime. The calls use the ``auditor`` model role when given, else the model, so
    the probe reads the model that the detection task audits with.

    Args:
        regime: L1, L2 or L3, or several (``L1,L2,L3``); MA or a plug-in (``module:Class``,
            docs/regimes.md) too; metrics are grouped by regime.
        modality: ``text`` (coordinate listing), ``vision`` (PNG) or ``both``.
        batch_size: cells per call (the detection task's batch size: 10).
        seeds: explicit instance seeds (``-T seeds=4810,1734``); overrides n_seeds.
        n_seeds: how many seeds to derive from ``master_seed`` (default 50).
        master_seed: the master seed of the derivation (2024).
        size: grid side n (8; 16 and 32 work).
        perception_prompt: system prompt of each call (``{size}`` is filled in; other
            braces are literal; pass a long prompt with ``--task-config FILE``).
        structured: send a JSON response schema with every call (structured output);
            off by default. The answers are read the same way either way.
        observation: ``full`` (the paper's listing of every cell) or ``holes`` (only S,
            G and the holes, every other cell stated to be F), as in the detection
            task. Text listing only; the PNG is unchanged.
        prompt_set: the named set of system prompts, as in the detection task; a set
            with no perception prompt of its own (all but ``minimal``) uses the
            default one. An explicit ``-T perception_prompt`` overrides the set's; the
            log records the set's name, version and the hash of the prompt sent.
        **unknown: any other ``-T`` name fails before any model call, naming the
            valid ones (Inspect would otherwise only warn and run without it).

    Example:
        inspect eval spatialstale/perception --model spatialstale/observer -T modality=vision -T n_seeds=5
    """
    settings = PerceptionSettings.read(locals())
    freeze_startup_heap()  # before any sample starts (solvers/_heap.py)
    return Task(
        dataset=grid_samples(settings, task="Read the grid of"),
        solver=perception_probe(
            modality=settings.modality,
            batch_size=settings.batch_size,
            perception_prompt=settings.prompts["perception"],
            structured=settings.structured,
            **settings.extension_args(),
        ),
        scorer=perception_accuracy(),
        version=VERSION,
        metadata=settings.task_metadata(),
        tags=settings.tags(),
        headline_metric=HEADLINE,
    )
