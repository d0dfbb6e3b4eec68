"""The navigation task: reach the goal with raw, filtered, self-verified, oracle or no memory."""

from __future__ import annotations

from inspect_ai import Epochs, Task, task
from inspect_ai.log import HeadlineMetric

from spatialstale.env import MASTER_SEED, N_DEFAULT_SEEDS
from spatialstale.evals._dataset import navigation_samples
from spatialstale.protocol import DEFAULT_PROMPTS, NavigationSettings, navigator
from spatialstale.scorers import NAVIGATION_METRICS, episode_outcome, extension_metrics
from spatialstale.solvers import freeze_startup_heap, navigate, navigation_args

VERSION = 6
"""The task version in each log header; CHANGELOG.md says what each version changed."""

N = NavigationSettings.defaults()

HEADLINE_ORDER = ("omcd", "selfverify", "nofilter", "nomemory", "oracle")
"""Whose success rate a log with several strategies shows as its score, first present first."""


def headline(strategies: tuple[str, ...]) -> HeadlineMetric:
    """The metric Inspect's log list shows as a navigation log's score.

    One strategy: its ``success`` (the task's first metric). Several: the success rate
    of one of them, named for it (``success_omcd``), never the overall ``success``, which
    averages NoMemory and Oracle (the controls) with NoFilter (the harm) into a number
    nobody should quote.

    OMCD first: its success is what the paper proposes and what a researcher quotes of a
    model (Table 3's row for the method): the model audits its own memory and navigates
    with what it kept, so the number moves with both of its skills. A success rate reads
    the same way up as detection's F1 and perception's accuracy, which a death rate
    (NoFilter's, the harm of stale memory) would not; NoFilter's death rate stays one
    click away (``death_nofilter``). Without OMCD: SelfVerify (the model's own check),
    then NoFilter (raw memory), then the controls. With several regimes the metric pools
    them with equal weight (every regime runs the same seeds); the per-regime values are
    ``success_L2_omcd`` and so on.
    """
    if len(strategies) == 1:
        return HeadlineMetric(metric="success")
    # a log of LocalVerify and plug-ins only: the first strategy given
    first = next((name for name in HEADLINE_ORDER if name in strategies), strategies[0])
    return HeadlineMetric(metric=f"success_{first}")


@task
def navigation(
    regime: str | list[str] = N.regime,
    modality: str = N.modality,
    strategies: str | list[str] = N.strategies,
    batch_size: int = N.batch_size,
    seeds: str | list[int] | None = None,
    n_seeds: int = N_DEFAULT_SEEDS,
    master_seed: int = MASTER_SEED,
    size: int = N.size,
    max_steps: int = N.max_steps,
    episodes: int = N.episodes,
    navigate_prompt: str = DEFAULT_PROMPTS["navigate"],
    audit_prompt: str = DEFAULT_PROMPTS["audit"],
    selfverify_prompt: str = DEFAULT_PROMPTS["selfverify"],
    structured: bool = N.structured,
    observation: str = N.observation,
    prompt_set: str = N.prompt_set,
    filter: str = N.filter,
    view_radius: int | str | None = N.view_radius,
    agent: str = N.agent,
    verify_radius: int = N.verify_radius,
    distractors: int = N.distractors,
    **unknown: object,
) -> Task:
    """Navigation under stale memory (SPEC §7): one sample per (seed, strategy).

    Every strategy uses the same per-step navigator (one call a step: observation,
    position, goal, remaining budget and the strategy's memory view); they differ
    only in the view. One log holds the paired comparison over shared seeds; each
    sample runs ``episodes`` epochs (the paper's 5 episodes per seed). Audits
    (SelfVerify, OMCD) use the ``auditor`` model role when given, else the model.
    Every parameter's default and valid values are declared in ``NavigationSettings``.

    Args:
        regime: L1, L2 or L3, or several (``L1,L2,L3``); MA, another agent's changes
            (docs/multi-agent.md); a plug-in, ``module:Class`` or an installed plug-in's
            name (docs/regimes.md).
        modality: ``text``, ``vision`` or ``both``.
        strategies: any of nomemory, nofilter, selfverify, omcd, oracle (default: these
            five, the paper's), localverify, a plug-in as ``module:Class`` or an
            installed plug-in's name (the ``spatialstale.strategies`` entry points;
            see docs/strategies.md).
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
            ``warned``, ``minimal``; see ``spatialstale.protocol.PROMPT_SETS``). An
            explicit ``navigate_prompt``, ``audit_prompt`` or ``selfverify_prompt``
            overrides the set's prompt of that kind; the log records the set's name,
            version and the hash of the prompts sent.
        filter: how SelfVerify, OMCD and Oracle apply their flags (a filter mode,
            ``spatialstale.protocol``'s ``FILTER_MODES``): ``delete`` (the paper)
            removes a flagged entry from the memory view; ``unknown`` keeps it
            without its claim, so the navigator knows it lacks information there
            (docs/filter-modes.md). Recorded for NoMemory and NoFilter but changes
            nothing for them (they flag nothing). Sample ids name a mode other than
            the paper's.
        view_radius: fog (partial observability): ``full`` (the default, the paper)
            shows the whole grid; an integer k >= 0 shows only the Chebyshev square
            of radius k around the agent (k=0: its own cell) at every navigation step
            and every audit of the episode (OMCD, SelfVerify); the rest is unknown
            (``(r,c)=?`` in the listing, grey in the image, with a line stating the
            rule). Oracle still knows the truth. Sample ids name the radius
            (``L2-omcd-r1-s4810``); task and sample metadata record it (None = full).
        agent: the navigator. ``prompt`` (the paper): one call per step with the memory
            view in the prompt; ``tools``: a ``react()`` agent with ``move`` and
            ``recall`` tools (docs/tool-navigator.md); ``memory``: a ``react()`` agent
            with Inspect's memory tool, seeded with the view, its lies kept and repaired
            scored; ``module:function`` (or an installed short name): your function of
            the episode's tools returning an Inspect agent (docs/agents.md). Same step
            budget and scoring. The built-in agents have their own system prompt
            (``navigate_prompt`` overrides it). Sample ids name the navigator
            (``L2-omcd-tools-s4810``).
        verify_radius: LocalVerify's reach: before each step it audits the entries
            within this Chebyshev distance of the agent not yet checked against the
            current grid (integer >= 0, default 1). Other strategies ignore it.
        distractors: K entries about no cell (rules, past episodes, the agent itself)
            added to the store from a versioned bank, ids shuffled among the cells'
            (0, the paper's protocol). They sit in the memory view; OMCD and
            SelfVerify audit them like any entry (⌈(n² + K)/B⌉ calls per OMCD audit);
            LocalVerify, whose reach is a set of cells, never audits them.
        **unknown: any other ``-T`` name fails before any model call, naming the
            valid ones (Inspect would otherwise only warn and run without it).

    Example:
        inspect eval spatialstale/navigation --model spatialstale/credulous -T regime=L2 -T strategies=nofilter,omcd
    """
    settings = NavigationSettings.read(locals())
    freeze_startup_heap()  # before any sample starts (solvers/_heap.py)
    return Task(
        dataset=navigation_samples(settings),
        solver=navigate(**navigation_args(settings)),
        scorer=episode_outcome(),
        # an agent that keeps its memory adds the memory's rates (after the others)
        metrics=[*NAVIGATION_METRICS, *extension_metrics("navigation", "strategy", ["memory"])]
        if navigator(settings.agent).channel == "files"
        else None,
        version=VERSION,
        epochs=Epochs(settings.episodes),
        metadata=settings.task_metadata(),
        tags=settings.tags(),
        headline_metric=headline(settings.strategies),
    )
