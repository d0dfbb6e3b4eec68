"""The protocol: what every task asks, shows and reads, apart from the loops that run it.

- the settings of each task kind, one field an axis (``_settings``): the ``-T``
  vocabulary the tasks, the study and the report derive from;
- the prompts and response schemas of every call kind, the observation and the memory
  as shown (``_prompts``), and the named prompt sets (``_prompt_sets``);
- the answer readers (``_answers``, ``_cells``, ``_edits`` over the grammar of
  ``_scan``) and the edit judgments;
- the seams (``_seams``): the pipeline's stages an extension plugs into, and the
  registry of the extensions (``_extensions``; fog, ``_fog``, is the first);
- the records a solver hands its scorer, and the sample-store models that carry them
  (``_records``);
- the errors a user sees as one line (``_errors``) and the strategy names a task reads,
  plug-ins included (``_plugins``).

The agent loops that run it (the audit, the navigators, the probe and the memory
strategies) are ``spatialstale.solvers``; the scorers and the reference agents read
only what is here.
"""

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
from ._axes import Axis, axes_of
from ._cells import PerceptionParse, read_perception
from ._edits import EDIT_JUDGMENTS, edit_counts, judge_edit
from ._errors import QuietExit, TaskParameterError
from ._extensions import EXTENSIONS, dry_run_notes, extension_values, extension_view
from ._navigators import NAVIGATOR_NAMES, NAVIGATORS, navigator
from ._plugins import (
    BUILTIN_STRATEGIES,
    DEFAULT_STRATEGIES,
    plugin_strategy,
)
from ._prompt_sets import (
    DEFAULT_PROMPT_SET,
    DEFAULT_PROMPTS,
    PROMPT_KINDS,
    PROMPT_SETS,
    PromptSet,
    prompt_hash,
)
from ._prompts import (
    CALL_KIND_KEY,
    CALL_KINDS,
    DEFAULT_AUDIT_PROMPT,
    DEFAULT_NAVIGATE_PROMPT,
    DEFAULT_PERCEPTION_PROMPT,
    DEFAULT_SELFVERIFY_PROMPT,
    EDITS_REQUEST,
    FILTERS,
    MODALITIES,
    NAVIGATE_SCHEMA,
    SIZE_PLACEHOLDER,
    Pictures,
    Sight,
    all_cells,
    answer_config,
    audit_messages,
    audit_schema,
    call_kind,
    cell_label,
    crops_prompt,
    fill_prompt,
    navigate_messages,
    perception_messages,
    perception_schema,
    position_line,
    selfverify_messages,
    selfverify_schema,
    system_message,
    user_message,
)
from ._records import (
    OUTCOMES,
    AuditResult,
    CallCost,
    DetectionRecord,
    DetectionWindow,
    Episode,
    NavigationRecord,
    PerceptionRecord,
    PerceptionWindow,
    StepRecord,
)
from ._seams import PROMPT_NAVIGATOR, WHOLE_GRID, Extension, Navigator, View
from ._settings import (
    DETECTION,
    GRID,
    NAVIGATION,
    PERCEPTION,
    SETTINGS,
    DetectionSettings,
    GridSettings,
    NavigationSettings,
    PerceptionSettings,
)
from ._tool_navigator import (
    DEFAULT_TOOLS_PROMPT,
    EPISODE_OVER,
    MOVE_NAME,
    NAVIGATE_TOOLS,
    NO_MEMORY_ANSWER,
    RECALL_NAME,
    TOOL_NAVIGATOR,
    no_entry_answer,
)

__all__ = [
    "BUILTIN_STRATEGIES",
    "CALL_KINDS",
    "CALL_KIND_KEY",
    "DEFAULT_AUDIT_PROMPT",
    "DEFAULT_NAVIGATE_PROMPT",
    "DEFAULT_PERCEPTION_PROMPT",
    "DEFAULT_PROMPTS",
    "DEFAULT_PROMPT_SET",
    "DEFAULT_SELFVERIFY_PROMPT",
    "DEFAULT_STRATEGIES",
    "DEFAULT_TOOLS_PROMPT",
    "DETECTION",
    "EDITS_REQUEST",
    "EDIT_JUDGMENTS",
    "EPISODE_OVER",
    "EXTENSIONS",
    "FILTERS",
    "GRID",
    "MODALITIES",
    "MOVE_NAME",
    "NAVIGATE_SCHEMA",
    "NAVIGATE_TOOLS",
    "NAVIGATION",
    "NAVIGATORS",
    "NAVIGATOR_NAMES",
    "NO_MEMORY_ANSWER",
    "OUTCOMES",
    "PERCEPTION",
    "PROMPT_KINDS",
    "PROMPT_NAVIGATOR",
    "PROMPT_SETS",
    "RECALL_NAME",
    "SETTINGS",
    "SIZE_PLACEHOLDER",
    "TOOL_NAVIGATOR",
    "WHOLE_GRID",
    "ActionParse",
    "AuditParse",
    "AuditResult",
    "Axis",
    "CallCost",
    "DetectionRecord",
    "DetectionSettings",
    "DetectionWindow",
    "Episode",
    "Extension",
    "GridSettings",
    "NavigationRecord",
    "NavigationSettings",
    "Navigator",
    "PerceptionParse",
    "PerceptionRecord",
    "PerceptionSettings",
    "PerceptionWindow",
    "Pictures",
    "PromptSet",
    "QuietExit",
    "SelfVerifyParse",
    "Sight",
    "StepRecord",
    "TaskParameterError",
    "View",
    "all_cells",
    "answer_config",
    "audit_messages",
    "audit_schema",
    "axes_of",
    "call_kind",
    "cell_label",
    "crops_prompt",
    "dry_run_notes",
    "edit_counts",
    "extension_values",
    "extension_view",
    "fill_prompt",
    "judge_edit",
    "navigate_messages",
    "navigator",
    "no_entry_answer",
    "parse_action",
    "parse_audit",
    "parse_selfverify",
    "perception_messages",
    "perception_schema",
    "plugin_strategy",
    "position_line",
    "prompt_hash",
    "read_action",
    "read_audit",
    "read_perception",
    "read_selfverify",
    "selfverify_messages",
    "selfverify_schema",
    "system_message",
    "user_message",
]
