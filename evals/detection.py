"""The detection task: audit a stale spatial memory against the current grid."""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset

from spatialstale.env import DEFAULT_SIZE, MASTER_SEED, N_DEFAULT_SEEDS
from spatialstale.evals._dataset import detection_samples
from spatialstale.evals._params import grid_task_params
from spatialstale.scorers import stale_f1
from spatialstale.solvers import DEFAULT_AUDIT_PROMPT, DEFAULT_PROMPT_SET, detect

VERSION = 2
"""The task version in each log header; CHANGELOG.md says what each version changed."""


@task
def detection(
    regime: str | list[str] = "L2",
    modality: str = "text",
    batch_size: int = 10,
    seeds: str | list[int] | None = None,
    n_seeds: int = N_DEFAULT_SEEDS,
    master_seed: int = MASTER_SEED,
    size: int = DEFAULT_SIZE,
    audit_prompt: str = DEFAULT_AUDIT_PROMPT,
    structured: bool = False,
    observation: str = "full",
    prompt_set: str = DEFAULT_PROMPT_SET,
) -> Task:
    """Stale-memory detection (SPEC §6): one sample per seed, scored by stale-entry F1.

    Every memory entry is judged stale or valid against the live grid, in batches of
    ``batch_size`` entries (⌈n²/B⌉ calls per audit). L1/L2: one audit after the
    pre-game changes; L3: one audit after each scheduled event, windows pooled per
    seed. The audits use the ``auditor`` model role when given, else the model.

    Args:
        regime: L1, L2 or L3, or several (``L1,L2,L3``); metrics are grouped by regime.
        modality: ``text`` (coordinate listing), ``vision`` (PNG) or ``both``.
        batch_size: entries per audit call (the paper sweeps 1, 5, 10, 20).
        seeds: explicit instance seeds (``-T seeds=4810,1734``); overrides n_seeds.
        n_seeds: how many seeds to derive from ``master_seed`` (default 50).
        master_seed: the master seed of the derivation (2024).
        size: grid side n (8; 16 and 32 work).
        audit_prompt: system prompt of each audit call (``{size}`` is filled in; other
            braces are literal, so a JSON example needs no escaping; pass a long prompt
            with ``--task-config FILE``).
        structured: send a JSON response schema with every call (structured output:
            OpenAI json_schema, Anthropic, vLLM guided decoding); off by default, as in
            the paper. The answers are read the same way either way.
        observation: ``full`` (the paper's listing of every cell) or ``holes`` (only
            S, G and the holes, every other cell stated to be F: the same grid in
            O(holes) text, for large grids). Text listing only; the PNG is unchanged.
        prompt_set: the named set of system prompts (``default``, ``no_rule``,
            ``warned``, ``minimal``; see ``spatialstale.solvers.PROMPT_SETS``). An
            explicit ``-T audit_prompt`` overrides the set's prompt of that kind; the log
            records the set's name, version and the hash of the prompts sent.

    Example:
        inspect eval spatialstale/detection --model spatialstale/observer -T regime=L2 -T modality=vision -T n_seeds=5
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
        prompts={"audit": (audit_prompt, DEFAULT_AUDIT_PROMPT)},
        structured=structured,
        observation=observation,
    )
    samples = detection_samples(
        params.regimes, params.seeds, params.size, params.modality, params.batch_size, params.observation
    )
    return Task(
        dataset=MemoryDataset(params.recorded(samples), name="spatialstale-detection"),
        solver=detect(
            modality=params.modality,
            batch_size=params.batch_size,
            audit_prompt=params.prompts["audit"],
            structured=params.structured,
            observation=params.observation,
        ),
        scorer=stale_f1(),
        version=VERSION,
        metadata=params.task_metadata,
    )
