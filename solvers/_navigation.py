"""The per-step navigator (SPEC §7) and the navigation solver."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, cast

from inspect_ai.log import transcript
from inspect_ai.model import ChatMessage, Model, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import span

from spatialstale.env import (
    Action,
    DynamicFrozenLakeEnv,
    Grid,
    Instance,
    MemoryEntry,
    Pos,
    greedy_action,
    make_instance,
)
from spatialstale.protocol import (
    DEFAULT_AUDIT_PROMPT,
    DEFAULT_NAVIGATE_PROMPT,
    DEFAULT_SELFVERIFY_PROMPT,
    NAVIGATE_SCHEMA,
    NAVIGATION,
    ActionParse,
    CallCost,
    Episode,
    NavigationRecord,
    NavigationSettings,
    Sight,
    StepRecord,
    answer_config,
    filter_named,
    navigate_messages,
    navigator,
    read_action,
)

from ._agents import AgentRun, check_agent, conversation_plan, play_agent
from ._cost import counting, record_call
from ._episode import ConversationPlan, step_table, take_step
from ._sample import AUDITOR_ROLE, auditor_model, instance_of, limit_errors, limit_reason
from ._strategies import STRATEGIES, MemoryStrategy, Planned, PlanningContext, StrategyContext, make_strategy


def step_messages(
    view: tuple[MemoryEntry, ...] | None,
    grid: Grid,
    agent: Pos,
    goal: Pos,
    steps_left: int,
    *,
    sight: Sight,
    prompt: str,
) -> list[ChatMessage]:
    """The prompt of one navigation step: what ``sight`` shows of the live ``grid``
    from ``agent`` (``Sight.seen``), with the memory ``view``."""
    return navigate_messages(view, sight.seen(grid, agent), agent, goal, steps_left, sight, prompt)


async def choose_action(
    navigator: Model,
    view: tuple[MemoryEntry, ...] | None,
    env: DynamicFrozenLakeEnv,
    *,
    sight: Sight,
    prompt: str,
    structured: bool = False,
) -> tuple[Action, ActionParse, str]:
    """One navigator call. An answer without one readable action falls back to a greedy step.

    The navigator sees what ``sight`` shows of the grid (``Sight.seen``).
    """
    instance = env.instance
    messages = step_messages(
        view, env.grid, env.agent, instance.goal, env.max_steps - env.steps, sight=sight, prompt=prompt
    )
    output = await navigator.generate(messages, config=answer_config(NAVIGATE_SCHEMA, structured, navigator))
    record_call("navigation", output)
    reading = read_action(output.completion)
    if reading.action is None:
        return greedy_action(env.agent, instance.goal), reading, output.completion
    return reading.action, reading, output.completion


async def run_episode(
    env: DynamicFrozenLakeEnv,
    strategy: MemoryStrategy,
    navigator: Model,
    *,
    sight: Sight,
    prompt: str,
    structured: bool = False,
    records: list[StepRecord] | None = None,
) -> Episode:
    """Step the agent until it dies, reaches the goal or runs out of steps.

    Each step is appended to ``records`` (a new list when None) as it is taken, so a
    caller keeps the steps of an episode that a sample limit interrupts. Each step
    shows what ``sight`` shows of the grid (``Sight.seen``).
    """
    env.reset()
    records = [] if records is None else records
    reward = 0.0
    terminated = truncated = False
    view: tuple[MemoryEntry, ...] | None = None
    while not (terminated or truncated):
        step = env.steps + 1
        async with span(f"step {step}", type="step"):
            view = await strategy.view(env.steps, env.grid, env.agent)
            action, reading, answer = await choose_action(
                navigator,
                view,
                env,
                sight=sight,
                prompt=prompt,
                structured=structured,
            )
            taken = take_step(
                env, view, action, parsed=reading.action is not None, reading=reading.status, answer=answer
            )
            reward, terminated, truncated = taken.reward, taken.terminated, taken.truncated
            records.append(taken.record)
            transcript().info(step_table(taken.record, sight.view), source="navigation")
    return Episode.finished(env, strategy.audits, records, view, reward, sight.view.record())


@dataclass(frozen=True)
class StepsPlan:
    """The per-step navigator's calls of one episode at most, as :func:`run_episode`
    makes them, with the agent at S: one a step, one after another, each built when
    asked for (``messages(step)``, ``step`` actions taken)."""

    turns: int
    messages: Callable[[int], list[ChatMessage]]


@dataclass(frozen=True)
class EpisodePlan:
    """The most one episode asks (an upper bound: every step taken, the agent at S):
    the navigator's calls and the strategy's audits, as the loops make them."""

    navigator: StepsPlan | ConversationPlan
    audits: list[Planned]


def _store(state: TaskState, episode: Episode, cost: CallCost) -> None:
    # the cost is counted at the model calls, not by the strategy (``_cost``)
    record = state.store_as(NavigationRecord)
    record.episode = episode
    record.cost = cost
    state.output.completion = f"{episode.outcome} after {episode.steps} steps" + (
        f" ({episode.limit})" if episode.limit else ""
    )


@solver
def navigate(
    *,
    modality: str = NAVIGATION.modality,
    batch_size: int = NAVIGATION.batch_size,
    max_steps: int = NAVIGATION.max_steps,
    navigate_prompt: str = DEFAULT_NAVIGATE_PROMPT,
    audit_prompt: str = DEFAULT_AUDIT_PROMPT,
    selfverify_prompt: str = DEFAULT_SELFVERIFY_PROMPT,
    audit_model_role: str = AUDITOR_ROLE,
    structured: bool = NAVIGATION.structured,
    filter_mode: str = NAVIGATION.filter,
    agent: str = NAVIGATION.agent,
    verify_radius: int = NAVIGATION.verify_radius,
    **extensions: object,
) -> Solver:
    """Play one episode with the sample's memory strategy (``metadata["strategy"]``).

    The defaults are the navigation task's (``NavigationSettings``): the paper's protocol.

    Args:
        modality: ``text``, ``vision`` or ``both``: how the live grid is shown.
        batch_size: entries per audit call (OMCD).
        max_steps: the step budget; the episode times out after it.
        navigate_prompt: system prompt of every navigation step.
        audit_prompt: system prompt of every audit batch (OMCD).
        selfverify_prompt: system prompt of SelfVerify's single check.
        audit_model_role: model role of the audits; the navigator's model when unbound.
        structured: send a response schema with every audit, SelfVerify and navigation call.
        filter_mode: how SelfVerify, OMCD and Oracle apply their flags, the name of
            one of ``spatialstale.protocol``'s ``FILTER_MODES`` (the memory seam):
            ``delete`` (the paper) removes a flagged entry from the view; another
            may keep it without its claim. NoMemory and NoFilter ignore it.
        agent: the navigator (``spatialstale.protocol``'s ``navigator``): ``prompt``
            (one call per step, the memory view in the prompt: the paper), a built-in
            agent (``tools``, ``memory``) or a user's (``module:function``), each an
            Inspect agent run once an episode (``_agents``). ``navigate_prompt`` is the
            system prompt of the paper's navigator and the built-in agents.
        verify_radius: LocalVerify's reach (Chebyshev distance from the agent).
        **extensions: the navigation extensions' axes by name (``spatialstale.protocol``'s
            ``EXTENSIONS``), each at its default when not given: what of the grid every
            navigation step and every audit of the episode shows, and how its text lists
            it (the observation seam). An unknown name or a bad value raises ValueError.
    """
    args = dict(locals())  # by name, for the strategy context (as :func:`episode_plan`'s)
    filter_named(filter_mode)  # a bad name fails here, before any model call
    chosen = navigator(agent)
    sight = Sight.of("navigation", modality, extensions)
    # a user's function that raises or returns no agent fails here too
    check_agent(chosen, make_instance(2024, "none", 4), sight)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        instance = instance_of(state)
        context = strategy_context(StrategyContext, instance, auditor_model(audit_model_role), sight, args)
        strategy = make_strategy(str(state.metadata["strategy"]), context)
        env = DynamicFrozenLakeEnv(instance=instance, max_steps=max_steps)
        with counting() as cost:
            await _play(state, env, strategy, cost)
        return state

    async def _play(state: TaskState, env: DynamicFrozenLakeEnv, strategy: MemoryStrategy, cost: CallCost) -> None:
        shown = sight.for_instance(env.instance)  # MA: the other agent's route in every observation
        # kept as they grow, so an episode a sample limit ends is recorded as far as it went
        records: list[StepRecord] = []
        runs: list[AgentRun] = []  # the agent's run, kept to record an episode a limit ends
        try:
            if chosen.channel != "prompt":
                episode = await play_agent(
                    state,
                    env,
                    strategy,
                    chosen,
                    sight=shown,
                    prompt=navigate_prompt,
                    records=records,
                    run_holder=runs,
                    cost=cost,
                )
            else:
                episode = await run_episode(
                    env,
                    strategy,
                    get_model(),
                    sight=shown,
                    prompt=navigate_prompt,
                    structured=structured,
                    records=records,
                )
        except limit_errors() as ex:
            # A sample limit ends the episode early: it is scored as outcome "limit".
            navigated = None
            if runs:
                runs[0].snapshot("end")
                navigated = runs[0].navigated(chosen.name)
            episode = Episode.interrupted(
                env, strategy.audits, records, limit_reason(ex), sight.view.record(), navigated
            )
            _store(state, episode, cost)
            raise
        _store(state, episode, cost)

    return solve


def navigation_args(settings: NavigationSettings) -> dict[str, Any]:
    """The arguments of :func:`navigate` (and :func:`episode_plan`) for a task's settings."""
    return {
        "modality": settings.modality,
        "batch_size": settings.batch_size,
        "max_steps": settings.max_steps,
        "navigate_prompt": settings.prompt("navigate"),
        "audit_prompt": settings.prompt("audit"),
        "selfverify_prompt": settings.prompt("selfverify"),
        "structured": settings.structured,
        "filter_mode": settings.filter,
        "agent": settings.agent,
        "verify_radius": settings.verify_radius,
        **settings.extension_args(),
    }


def strategy_context(
    cls: type[StrategyContext], instance: Instance, auditor: Model, sight: Sight, args: Mapping[str, Any]
) -> StrategyContext:
    """The strategy context of an episode of ``instance``: its fields other than the
    instance, auditor and sight are :func:`navigate`'s arguments of the same names."""
    named = {f.name: args[f.name] for f in fields(StrategyContext) if f.name in args}
    return cls(instance=instance, auditor=auditor, **{**named, "sight": sight.for_instance(instance)})


_NAVIGATE = inspect.signature(navigate)


def episode_plan(
    instance: Instance, strategy: str, *, image: Callable[[Grid, Pos | None], str] | None = None, **args: Any
) -> EpisodePlan:
    """The calls of one episode of ``strategy`` at most, as :func:`navigate` with the
    keyword arguments ``args`` (:func:`navigation_args` gives a task's) makes them:
    every step taken with the agent at S, and the audits of the built-in strategy's own
    view run on a stand-in auditor (``MemoryStrategy.plan``); a plug-in strategy's
    audits are not known before it runs (none), its view taken as the whole store.
    ``image`` draws the grid's pictures when given (the dry run's stand-in names them);
    ``structured`` goes with a call, not in its prompt, and changes no call."""
    bound = _NAVIGATE.bind(**args)
    bound.apply_defaults()
    given = bound.arguments
    sight = Sight.of("navigation", given["modality"], given["extensions"], image)
    shown = sight.for_instance(instance)
    view: tuple[MemoryEntry, ...] | None = instance.memory
    audits: list[Planned] = []
    if strategy in STRATEGIES:
        planning = strategy_context(PlanningContext, instance, cast(Model, None), sight, given)  # calls no model
        view, audits = STRATEGIES[strategy](planning).plan(given["max_steps"])
    chosen, prompt, max_steps = navigator(given["agent"]), given["navigate_prompt"], given["max_steps"]
    if chosen.channel != "prompt":
        return EpisodePlan(conversation_plan(chosen, instance, sight=shown, prompt=prompt, max_steps=max_steps), audits)
    goal = instance.goal

    def messages(step: int) -> list[ChatMessage]:
        grid = instance.grid_after(step)
        return step_messages(view, grid, instance.start, goal, max_steps - step, sight=shown, prompt=prompt)

    return EpisodePlan(StepsPlan(max_steps, messages), audits)
