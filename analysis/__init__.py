"""The SpatialSTALE study runner and reproduction report.

``spatialstale study`` runs the paper's matrix as an Inspect eval set (with a dry
run that counts samples, calls and tokens first), ``spatialstale demo`` runs a small
offline study on the reference agents, and ``spatialstale report`` turns a log
directory into the paper's tables and figures with paired statistics.
"""

from ._estimate import IMAGE_TOKENS, Calls, TaskEstimate, estimate_task, plan, prompt_tokens
from ._load import LogError, Results, read_logs
from ._stats import ALPHA, bootstrap_ci, correlations, holm, mcnemar, paired_wilcoxon
from ._study import Study, TaskSpec, run_study, study_seeds, study_tasks

__all__ = [
    "ALPHA",
    "IMAGE_TOKENS",
    "Calls",
    "LogError",
    "Results",
    "Study",
    "TaskEstimate",
    "TaskSpec",
    "bootstrap_ci",
    "correlations",
    "estimate_task",
    "holm",
    "mcnemar",
    "paired_wilcoxon",
    "plan",
    "prompt_tokens",
    "read_logs",
    "run_study",
    "study_seeds",
    "study_tasks",
]
