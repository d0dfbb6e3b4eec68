"""The agent loops: the batched audit, the detection windows, the perception probe, the
navigators and the memory strategies they ask for a view; and beside each loop, the
plan of the calls it makes (``detection_plan``, ``episode_plan``), which the dry run
measures. Every navigator but the paper's is an Inspect agent (``_agents``).

What the loops ask, show and read (the settings, the prompts, the answer readers, the
records they hand the scorers) is the protocol, ``spatialstale.protocol``.
"""

from ._agents import AgentRun, Rules, ToolCounts, call_budget, episode_tools, memory_tool, play_agent
from ._audit import AuditPlan, SelfVerifyPlan
from ._batches import batches_of, n_batches
from ._detection import detect, detection_args, detection_plan
from ._episode import ConversationPlan
from ._heap import freeze_startup_heap
from ._navigation import EpisodePlan, StepsPlan, episode_plan, navigate, navigation_args, run_episode
from ._probe import perception_probe
from ._sample import AUDITOR_ROLE
from ._strategies import (
    FILTERING,
    STRATEGIES,
    LocalVerify,
    MemoryStrategy,
    StrategyContext,
    make_strategy,
)
from ._windows import detection_windows

__all__ = [
    "AUDITOR_ROLE",
    "FILTERING",
    "STRATEGIES",
    "AgentRun",
    "AuditPlan",
    "ConversationPlan",
    "EpisodePlan",
    "LocalVerify",
    "MemoryStrategy",
    "Rules",
    "SelfVerifyPlan",
    "StepsPlan",
    "StrategyContext",
    "ToolCounts",
    "batches_of",
    "call_budget",
    "detect",
    "detection_args",
    "detection_plan",
    "detection_windows",
    "episode_plan",
    "episode_tools",
    "freeze_startup_heap",
    "make_strategy",
    "memory_tool",
    "n_batches",
    "navigate",
    "navigation_args",
    "perception_probe",
    "play_agent",
    "run_episode",
]
