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
from ._batches import batches_of, n_batches
from ._detection import DETECTION_STORE_KEY, detect
from ._edits import EDIT_JUDGMENTS, edit_claim, edit_counts, judge_edit
from ._episode import OUTCOMES, Episode, StepRecord
from ._errors import TaskParameterError
from ._heap import freeze_startup_heap
from ._navigation import EPISODE_STORE_KEY, navigate, run_episode
from ._plugins import ENTRY_POINT_GROUP, installed_plugins, make_strategy, resolve_strategy
from ._probe import perception_probe
from ._prompt_sets import DEFAULT_PROMPT_SET, DEFAULT_PROMPTS, PROMPT_SETS, PromptSet, prompt_hash, prompt_set_metadata
from ._prompts import (
    DEFAULT_AUDIT_PROMPT,
    DEFAULT_NAVIGATE_PROMPT,
    DEFAULT_SELFVERIFY_PROMPT,
    EDITS_REQUEST,
    MEMORIES,
    MODALITIES,
    OBSERVATIONS,
    Pictures,
    Sight,
)
from ._sample import AUDITOR_ROLE
from ._settings import (
    DETECTION,
    GRID,
    NAVIGATION,
    PERCEPTION,
    SETTINGS,
    Axis,
    DetectionSettings,
    GridSettings,
    NavigationSettings,
    PerceptionSettings,
    axes_of,
)
from ._strategies import (
    DEFAULT_STRATEGIES,
    FILTERING,
    FILTERS,
    STRATEGIES,
    LocalVerify,
    MemoryStrategy,
    StrategyContext,
    UnknownEntry,
)
from ._tools import DEFAULT_TOOLS_PROMPT, NAVIGATORS, TOOLS_STORE_KEY, ToolEpisode, run_tool_episode
from ._windows import detection_windows

__all__ = [
    "AUDITOR_ROLE",
    "DEFAULT_AUDIT_PROMPT",
    "DEFAULT_NAVIGATE_PROMPT",
    "DEFAULT_PROMPTS",
    "DEFAULT_PROMPT_SET",
    "DEFAULT_SELFVERIFY_PROMPT",
    "DEFAULT_STRATEGIES",
    "DEFAULT_TOOLS_PROMPT",
    "DETECTION",
    "DETECTION_STORE_KEY",
    "EDITS_REQUEST",
    "EDIT_JUDGMENTS",
    "ENTRY_POINT_GROUP",
    "EPISODE_STORE_KEY",
    "FILTERING",
    "FILTERS",
    "GRID",
    "MEMORIES",
    "MODALITIES",
    "NAVIGATION",
    "NAVIGATORS",
    "OBSERVATIONS",
    "OUTCOMES",
    "PERCEPTION",
    "PROMPT_SETS",
    "SETTINGS",
    "STRATEGIES",
    "TOOLS_STORE_KEY",
    "ActionParse",
    "AuditParse",
    "AuditResult",
    "Axis",
    "DetectionSettings",
    "Episode",
    "GridSettings",
    "LocalVerify",
    "MemoryStrategy",
    "NavigationSettings",
    "PerceptionSettings",
    "Pictures",
    "PromptSet",
    "SelfVerifyParse",
    "Sight",
    "StepRecord",
    "StrategyContext",
    "TaskParameterError",
    "ToolEpisode",
    "UnknownEntry",
    "axes_of",
    "batched_audit",
    "batches_of",
    "detect",
    "detection_windows",
    "edit_claim",
    "edit_counts",
    "freeze_startup_heap",
    "installed_plugins",
    "judge_edit",
    "make_strategy",
    "n_batches",
    "navigate",
    "parse_action",
    "parse_audit",
    "parse_selfverify",
    "perception_probe",
    "prompt_hash",
    "prompt_set_metadata",
    "read_action",
    "read_audit",
    "read_selfverify",
    "resolve_strategy",
    "run_episode",
    "run_tool_episode",
    "selfverify_audit",
]
