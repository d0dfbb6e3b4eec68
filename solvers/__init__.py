"""The agent loops: the batched audit, the detection windows, the perception probe, the
navigators and the memory strategies they ask for a view.

What the loops ask, show and read (the settings, the prompts, the answer readers, the
records they hand the scorers) is the protocol, ``spatialstale.protocol``.
"""

from ._audit import batched_audit, selfverify_audit
from ._batches import batches_of, n_batches
from ._detection import detect
from ._heap import freeze_startup_heap
from ._navigation import navigate, run_episode
from ._navigators import NavigatorLoop, Planner, navigator_loop, navigator_plan
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
    "LocalVerify",
    "MemoryStrategy",
    "NavigatorLoop",
    "Planner",
    "StrategyContext",
    "batched_audit",
    "batches_of",
    "detect",
    "detection_windows",
    "freeze_startup_heap",
    "make_strategy",
    "n_batches",
    "navigate",
    "navigator_loop",
    "navigator_plan",
    "perception_probe",
    "run_episode",
    "selfverify_audit",
]
