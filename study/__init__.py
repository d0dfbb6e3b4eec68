"""The SpatialSTALE study runner: the paper's matrix as one Inspect eval set.

``spatialstale study`` runs the matrix for one or more models (with a dry run that
counts samples, calls, tokens and money first), ``spatialstale demo`` runs a small
offline study on the reference agents, and ``spatialstale report`` hands a log
directory to :mod:`spatialstale.report`.

The names below are imported on first use (PEP 562), so that the ``spatialstale``
command, whose module lives in this package, starts without importing Inspect.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._calls import IMAGE_TOKENS, Calls, Meter, prompt_parts
    from ._cli import main, study_from_args
    from ._estimate import TaskEstimate, estimate_task, plan
    from ._matrix import Cell, Matrix, Shard, Skipped, Study, TaskSpec, study_matrix, study_seeds, study_tasks
    from ._run import account, run_study

_SOURCES = {
    "IMAGE_TOKENS": "_calls",
    "Calls": "_calls",
    "Meter": "_calls",
    "prompt_parts": "_calls",
    "main": "_cli",
    "study_from_args": "_cli",
    "TaskEstimate": "_estimate",
    "estimate_task": "_estimate",
    "plan": "_estimate",
    "Cell": "_matrix",
    "Matrix": "_matrix",
    "Skipped": "_matrix",
    "study_matrix": "_matrix",
    "Shard": "_matrix",
    "Study": "_matrix",
    "TaskSpec": "_matrix",
    "study_seeds": "_matrix",
    "study_tasks": "_matrix",
    "account": "_run",
    "run_study": "_run",
}

__all__ = [
    "IMAGE_TOKENS",
    "Calls",
    "Cell",
    "Matrix",
    "Meter",
    "Shard",
    "Skipped",
    "Study",
    "TaskEstimate",
    "TaskSpec",
    "account",
    "estimate_task",
    "main",
    "plan",
    "prompt_parts",
    "run_study",
    "study_from_args",
    "study_matrix",
    "study_seeds",
    "study_tasks",
]


def __getattr__(name: str) -> Any:
    if name not in _SOURCES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_SOURCES[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
