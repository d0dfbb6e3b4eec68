"""The navigation task: reach the goal with raw, filtered, self-verified, oracle or no memory."""

from __future__ import annotations

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset

from spatialstale.env import DEFAULT_SIZE, MASTER_SEED, MAX_STEPS, N_DEFAULT_SEEDS
from spatialstale.evals._dataset import navigation_samples
from spatialstale.evals._params import (
    TaskParameterError,
    boolean,
    choice,
    choices,
    integer,
    prompt_set_prompts,
    regimes,
    reported,
    seed_list,
)
from spatialstale.scorers import episode_outcome
from spatialstale.solvers import (
    DEFAULT_AUDIT_PROMPT,
    DEFAULT_FILTER,
    DEFAULT_NAVIGATE_PROMPT,
    DEFAULT_NAVIGATOR,
    DEFAULT_PROMPT_SET,
    DEFAULT_SELFVERIFY_PROMPT,
    DEFAULT_TOOLS_PROMPT,
    FILTERS,
    MODALITIES,
    NAVIGATORS,
    OBSERVATIONS,
    STRATEGIES,
    navigate,
    prompt_set_metadata,
)

EPISODES = 5


VERSION = 3
"""The task version in each log header; CHANGELOG.md says what each version changed."""

FULL_VIEW = "full"
"""The ``view_radius`` of the paper's protocol: the whole grid at every step."""


def view_radius_value(value: object) -> int | None:
    """``-T view_radius``: ``full`` (or None, the default) or an integer of at least 0."""
    if value is None or (isinstance(value, str) and value.strip().lower() == FULL_VIEW):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TaskParameterError(f"view_radius must be {FULL_VIEW} or an integer of at least 0; got {value!r}")
    return value


@task
def navigation(
    regime: str | list[str] = "L2",
    modality: str = "text",
    strategies: str | list[str] = tuple(STRATEGIES),  # type: ignore[assignment]
    batch_size: int = 10,
    seeds: str | list[int] | None = None,
    n_seeds: int = N_DEFAULT_SEEDS,
    master_seed: int = MASTER_SEED,
    size: int = DEFAULT_SIZE,
    max_steps: int = MAX_STEPS,
    episodes: int = EPISODES,
    navigate_prompt: str = DEFAULT_NAVIGATE_PROMPT,
    audit_prompt: str = DEFAULT_AUDIT_PROMPT,
    selfverify_prompt: str = DEFAULT_SELFVERIFY_PROMPT,
    structured: bool = False,
    observation: str = "full",
    prompt_set: str = DEFAULT_PROMPT_SET,
    filter: str = DEFAULT_FILTER,
    view_radius: int | str | None = None,
    agent: str = DEFAULT_NAVIGATOR,
) -> Task:
    """Navigation under stale memory (SPEC §7): one sample per (seed, strategy).

    Every strategy uses the same per-step navigator (one call a step: observation,
    position, goal, remaining budget and the strategy's memory view); they differ
    only in the view. One log holds the paired comparison over shared seeds; each
    sample runs ``episodes`` epochs (the paper's 5 episodes per seed). Audits
    (SelfVerify, OMCD) use the ``auditor`` model role when given, else the model.

    Args:
        regime: L1, L2 or L3, or several (``L1,L2,L3``).
        modality: ``text``, ``vision`` or ``both``.
        strategies: any of nomemory, nofilter, selfverify, omcd, oracle (default all).
        batch_size: entries per OMCD audit call.
        seeds: explicit instance seeds; overrides n_seeds.
        n_seeds: how many seeds to derive from ``master_seed`` (default 50).
        master_seed: the master seed of the derivation (2024).
        size: grid side n (8; 16 and 32 work).
        max_steps: the step budget of an episode (50).
        episodes: epochs per sample (5); ``--epochs`` overrides it.
        navigate_prompt: system prompt of each navigation step. In every prompt
            ``{size}`` is filled in and other braces are literal (JSON examples as
            they are); pass long prompts with ``--task-config FILE`` (YAML).
        audit_prompt: system prompt of each OMCD audit call.
        selfverify_prompt: system prompt of SelfVerify's check.
        structured: send a JSON response schema with every audit, SelfVerify and
            navigation call (structured output); off by default, as in the paper.
        observation: ``full`` (the paper's listing of every cell) or ``holes`` (only
            S, G and the holes, every other cell stated to be F: the same grid in
            O(holes) text, for large grids). Text listing only; the PNG is unchanged.
        prompt_set: the named set of system prompts (``default``, ``no_rule``,
            ``warned``, ``minimal``; see ``spatialstale.solvers.PROMPT_SETS``). An
            explicit ``navigate_prompt``, ``audit_prompt`` or ``selfverify_prompt``
            overrides the set's prompt of that kind; the log records the set's name,
            version and the hash of the prompts sent.
        filter: how SelfVerify, OMCD and Oracle apply their flags: ``delete`` (the
            paper) removes a flagged entry from the memory view; ``unknown`` keeps it,
            listed as ``UNKNOWN (flagged stale at step t)`` so the navigator knows it
            lacks information there. Recorded for NoMemory and NoFilter but changes
            nothing for them (they flag nothing). Sample ids name ``unknown``.
        view_radius: fog (partial observability): ``full`` (the default, the paper)
            shows the whole grid; an integer k >= 0 shows only the Chebyshev square
            of radius k around the agent (k=0: its own cell) at every navigation step
            and every audit of the episode (OMCD, SelfVerify); the rest is unknown
            (``(r,c)=?`` in the listing, grey in the image, with a line stating the
            rule). Oracle still knows the truth. Sample ids name the radius
            (``L2-omcd-r1-s4810``); task and sample metadata record it (None = full).
        agent: the navigator. ``prompt`` (the paper): one call per step with the memory
            view in the prompt. ``tools``: one conversation per episode in which the
            model calls ``move(direction)`` and ``recall(row, col)`` (memory is read
            only through ``recall``, from the strategy's current view); same step
            budget and scoring. Its system prompt is ``DEFAULT_TOOLS_PROMPT`` (a
            prompt set's navigation prompt is for ``prompt``); ``navigate_prompt``
            overrides it. Sample ids name ``tools`` (``L2-omcd-tools-s4810``).

    Example:
        inspect eval spatialstale/navigation --model spatialstale/credulous -T regime=L2 -T strategies=nofilter,omcd
    """
    with reported():
        regime_list = regimes(regime)
        modality = choice(modality, MODALITIES, "modality")
        strategy_list = choices(strategies, tuple(STRATEGIES), "strategies")
        batch_size = integer(batch_size, "batch_size", 1)
        size = integer(size, "size", 4)
        max_steps = integer(max_steps, "max_steps", 1)
        episodes = integer(episodes, "episodes", 1)
        seed_values = seed_list(seeds, n_seeds, master_seed)
        chosen, prompts = prompt_set_prompts(
            prompt_set,
            {
                "navigate": (navigate_prompt, DEFAULT_NAVIGATE_PROMPT),
                "audit": (audit_prompt, DEFAULT_AUDIT_PROMPT),
                "selfverify": (selfverify_prompt, DEFAULT_SELFVERIFY_PROMPT),
            },
        )
        structured = boolean(structured, "structured")
        observation = choice(observation, OBSERVATIONS, "observation")
        filter_mode = choice(filter, FILTERS, "filter")
        radius = view_radius_value(view_radius)
        navigator = choice(agent, NAVIGATORS, "agent")
    if navigator == "tools" and navigate_prompt is DEFAULT_NAVIGATE_PROMPT:
        prompts["navigate"] = DEFAULT_TOOLS_PROMPT
    recorded = prompt_set_metadata(chosen, prompts)
    samples = navigation_samples(
        regime_list, seed_values, size, modality, batch_size, strategy_list, observation, filter_mode, radius, navigator
    )
    for sample in samples:
        sample.metadata = {**(sample.metadata or {}), **recorded}
    return Task(
        dataset=MemoryDataset(samples, name="spatialstale-navigation"),
        solver=navigate(
            modality=modality,
            batch_size=batch_size,
            max_steps=max_steps,
            navigate_prompt=prompts["navigate"],
            audit_prompt=prompts["audit"],
            selfverify_prompt=prompts["selfverify"],
            structured=structured,
            observation=observation,
            filter_mode=filter_mode,
            view_radius=radius,
            agent=navigator,
        ),
        scorer=episode_outcome(),
        version=VERSION,
        epochs=Epochs(episodes),
        metadata={
            "regimes": regime_list,
            "modality": modality,
            "strategies": strategy_list,
            "batch_size": batch_size,
            "size": size,
            "max_steps": max_steps,
            "structured": structured,
            "observation": observation,
            "filter": filter_mode,
            "view_radius": radius,
            "agent": navigator,
            **recorded,
        },
    )
