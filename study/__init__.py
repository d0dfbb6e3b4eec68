"""The SpatialSTALE study runner: the paper's matrix as one Inspect eval set.

``spatialstale study`` runs the matrix for one or more models (with a dry run that
counts samples, calls, tokens and money first), ``spatialstale demo`` runs a small
offline study on the reference agents, and ``spatialstale report`` hands a log
directory to :mod:`spatialstale.report`.
"""

from ._calls import IMAGE_TOKENS, Calls
from ._estimate import TaskEstimate, estimate_task, plan
from ._matrix import Cell, Shard, Study, TaskSpec, study_seeds, study_tasks
from ._run import account, run_study

__all__ = [
    "IMAGE_TOKENS",
    "Calls",
    "Cell",
    "Shard",
    "Study",
    "TaskEstimate",
    "TaskSpec",
    "account",
    "estimate_task",
    "plan",
    "run_study",
    "study_seeds",
    "study_tasks",
]
