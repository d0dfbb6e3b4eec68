"""The agent loops: the batched audit, the detection windows, the perception probe, the
navigators and the memory strategies they ask for a view; and beside each loop, the
plan of the calls it makes (``detection_plan``, ``episode_plan``), which the dry run
measures.

What the loops ask, show and read (the settings, the prompts, the answer readers, the
records they hand the scorers) is the protocol, ``spatialstale.protocol``.
"""

from ._audit import AuditPlan, SelfVerifyPlan, batched_audit, selfverify_audit
from ._batches import batches_of, n_batches
from ._detection import detect, detection_args, detection_plan
from ._episode import ConversationPlan
from ._heap import freeze_startup_heap
from ._navigation import EpisodePlan, StepsPlan, episode_plan, navigate, navigation_args, run_episode
from ._navigators import NavigatorLoop, navigator_loop
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
    "AuditPlan",
    "ConversationPlan",
    "EpisodePlan",
    "LocalVerify",
    "MemoryStrategy",
    "NavigatorLoop",
    "SelfVerifyPlan",
    "StepsPlan",
    "StrategyContext",
    "batched_audit",
    "batches_of",
    "detect",
    "detection_args",
    "detection_plan",
    "detection_windows",
    "episode_plan",
    "freeze_startup_heap",
    "make_strategy",
    "n_batches",
    "navigate",
    "navigation_args",
    "navigator_loop",
    "perception_probe",
    "run_episode",
    "selfverify_audit",
]
