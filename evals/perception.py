"""The perception probe: can the model read the current grid at all?"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample

from spatialstale.env import DEFAULT_SIZE, MASTER_SEED, N_DEFAULT_SEEDS
from spatialstale.evals._dataset import detection_samples
from spatialstale.evals._params import grid_task_params
from spatialstale.scorers import perception_accuracy
from spatialstale.solvers import DEFAULT_PROMPT_SET
from spatialstale.solvers._probe import perception_probe
from spatialstale.solvers._prompts import DEFAULT_PERCEPTION_PROMPT


def perception_samples(
    regimes: list[str], seeds: list[int], size: int, modality: str, batch_size: int, observation: str = "full"
) -> list[Sample]:
    """One sample per (regime, seed), with the detection task's ids and metadata, so a
    seed's perception and detection rows pair up."""
    return detection_samples(regimes, seeds, size, modality, batch_size, observation, task="Read the grid of")


@task
def perception(
    regime: str | list[str] = "L2",
    modality: str = "text",
    batch_size: int = 10,
    seeds: str | list[int] | None = None,
    n_seeds: int = N_DEFAULT_SEEDS,
    master_seed: int = MASTER_SEED,
    size: int = DEFAULT_SIZE,
    perception_prompt: str = DEFAULT_PERCEPTION_PROMPT,
    structured: bool = False,
    observation: str = "full",
    prompt_set: str = DEFAULT_PROMPT_SET,
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
        regime: L1, L2 or L3, or several (``L1,L2,L3``); metrics are grouped by regime.
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

    Example:
        inspect eval spatialstale/perception --model spatialstale/observer -T modality=vision -T n_seeds=5
    """
    params = grid_task_params(
        regime=regime,
        modality=modality,
        batch_size=batch_size,
        seeds=seeds,
        n_seeds=n_seeds,
        master_seed=master_seed,
        size=size,
        prompt_set=prompt_set,
        prompts={"perception": (perception_prompt, DEFAULT_PERCEPTION_PROMPT)},
        structured=structured,
        observation=observation,
    )
    samples = perception_samples(
        params.regimes, params.seeds, params.size, params.modality, params.batch_size, params.observation
    )
    return Task(
        dataset=MemoryDataset(params.recorded(samples), name="spatialstale-perception"),
        solver=perception_probe(
            modality=params.modality,
            batch_size=params.batch_size,
            perception_prompt=params.prompts["perception"],
            structured=params.structured,
            observation=params.observation,
        ),
        scorer=perception_accuracy(),
        version=1,
        metadata=params.task_metadata,
    )
