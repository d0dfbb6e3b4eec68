"""The detection task: audit a stale spatial memory against the current grid."""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.log import HeadlineMetric

from spatialstale.env import MASTER_SEED, N_DEFAULT_SEEDS
from spatialstale.evals._dataset import grid_samples
from spatialstale.protocol import DEFAULT_PROMPTS, DetectionSettings, active_extensions
from spatialstale.scorers import DETECTION_METRICS, extension_metrics, stale_f1
from spatialstale.solvers import detect, detection_args, freeze_startup_heap

VERSION = 4
"""The task version in each log header; CHANGELOG.md says what each version changed."""

HEADLINE = HeadlineMetric(metric="f1_mean")
"""The score Inspect's log list shows: the mean of per-seed F1, the paper's Fig. 3 (also
the first metric; named so that a new metric listed first cannot take its place)."""

D = DetectionSettings.defaults()


@task
def detection(
    regime: str | list[str] = D.regime,
    modality: str = D.modality,
    batch_size: int = D.batch_size,
    seeds: str | list[int] | None = None,
    n_seeds: int = N_DEFAULT_SEEDS,
    master_seed: int = MASTER_SEED,
    size: int = D.size,
    audit_prompt: str = DEFAULT_PROMPTS["audit"],
    structured: bool = D.structured,
    observation: str = D.observation,
    prompt_set: str = D.prompt_set,
    distractors: int = D.distractors,
    memory: str = D.memory,
    edits: bool = D.edits,
    **unknown: object,
) -> Task:
    """Stale-memory detection (SPEC §6): one sample per seed, scored by stale-entry F1.

    Every memory entry is judged stale or valid against the live grid, in batches of
    ``batch_size`` entries (⌈n²/B⌉ calls per audit). L1/L2: one audit after the
    pre-game changes; L3: one audit after each scheduled event, windows pooled per
    seed. The audits use the ``auditor`` model role when given, else the model. Every
    parameter's default and valid values are declared in ``DetectionSettings``.

    Args:
        regime: L1, L2 or L3, or several (``L1,L2,L3``); MA, another agent's changes
            (docs/multi-agent.md); a plug-in, ``module:Class`` or an installed plug-in's
            name (docs/regimes.md); metrics are grouped by regime.
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
            ``warned``, ``minimal``; see ``spatialstale.protocol.PROMPT_SETS``). An
            explicit ``-T audit_prompt`` overrides the set's prompt of that kind; the log
            records the set's name, version and the hash of the prompts sent.
        distractors: K entries about no cell (rules, past episodes, the agent itself)
            added to the store from a versioned bank, ids shuffled among the cells'
            (0, the paper's protocol; at most the bank's size). They are never stale:
            F1 stays over the cell entries, the audit asks about all n² + K, and the
            metric ``distractor_flag_rate`` (added only when K > 0) is the share of
            distractors flagged.
        memory: ``text`` (each entry's claim, the paper) or ``crops``: each entry is
            shown as its id and a picture of its cell's 3x3 neighbourhood as
            remembered, to compare with the current image (needs ``modality`` vision
            or both, and no distractors). Same batches, answers and scores.
        edits: for each entry judged stale, also ask for the corrected entry (the
            paper's App. K; off by default). The audit prompt gains one request, and
            the metric ``edit_accuracy`` (added only when on) is the share of truly
            stale entries given an edit that states the cell's current type.
        **unknown: any other ``-T`` name fails before any model call, naming the
            valid ones (Inspect would otherwise only warn and run without it).

    Example:
        inspect eval spatialstale/detection --model spatialstale/observer -T regime=L2 -T modality=vision -T n_seeds=5
    """
    settings = DetectionSettings.read(locals())
    on = active_extensions(settings.kind, settings.values())
    freeze_startup_heap()  # before any sample starts (solvers/_heap.py)
    return Task(
        dataset=grid_samples(settings, task="Audit the memory of"),
        solver=detect(**detection_args(settings)),
        scorer=stale_f1(),
        # an extension's metrics only when it is on: the default log keeps its metrics
        metrics=[*DETECTION_METRICS, *extension_metrics("detection", "regime", on)] if on else None,
        version=VERSION,
        metadata=settings.task_metadata(),
        tags=settings.tags(),
        headline_metric=HEADLINE,
    )
