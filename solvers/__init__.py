"""Memory strategies as agent loops against the SpatialSTALE world."""

from ._answers import (
    ActionParse,
    AuditParse,
    SelfVerifyParse,
    parse_action,
    parse_audit,
    parse_selfverify,
    read_action,
    read_audit,
    read_selfverify,
)
from ._audit import AuditResult, batched_audit, selfverify_audit
from ._batches import n_batches
from ._detection import DETECTION_STORE_KEY, detect
from ._episode import Episode, StepRecord
from ._navigation import EPISODE_STORE_KEY, navigate, run_episode
from ._prompt_sets import DEFAULT_PROMPT_SET, PROMPT_SETS, PromptSet, prompt_hash, prompt_set_metadata
from ._prompts import (
    DEFAULT_AUDIT_PROMPT,
    DEFAULT_NAVIGATE_PROMPT,
    DEFAULT_SELFVERIFY_PROMPT,
    MODALITIES,
    OBSERVATIONS,
)
from ._strategies import (
    DEFAULT_FILTER,
    FILTERS,
    STRATEGIES,
    MemoryStrategy,
    StrategyContext,
    UnknownEntry,
    make_strategy,
)
from ._tools import DEFAULT_NAVIGATOR, DEFAULT_TOOLS_PROMPT, NAVIGATORS, TOOLS_STORE_KEY, ToolEpisode, run_tool_episode
from ._windows import detection_windows

__all__ = [
    "DEFAULT_AUDIT_PROMPT",
    "DEFAULT_FILTER",
    "DEFAULT_NAVIGATE_PROMPT",
    "DEFAULT_NAVIGATOR",
    "DEFAULT_PROMPT_SET",
    "DEFAULT_SELFVERIFY_PROMPT",
    "DEFAULT_TOOLS_PROMPT",
    "DETECTION_STORE_KEY",
    "EPISODE_STORE_KEY",
    "FILTERS",
    "MODALITIES",
    "NAVIGATORS",
    "OBSERVATIONS",
    "PROMPT_SETS",
    "STRATEGIES",
    "TOOLS_STORE_KEY",
    "ActionParse",
    "AuditParse",
    "AuditResult",
    "Episode",
    "MemoryStrategy",
    "PromptSet",
    "SelfVerifyParse",
    "StepRecord",
    "StrategyContext",
    "ToolEpisode",
    "UnknownEntry",
    "batched_audit",
    "detect",
    "detection_windows",
    "make_strategy",
    "n_batches",
    "navigate",
    "parse_action",
    "parse_audit",
    "parse_selfverify",
    "prompt_hash",
    "prompt_set_metadata",
    "read_action",
    "read_audit",
    "read_selfverify",
    "run_episode",
    "run_tool_episode",
    "selfverify_audit",
]
