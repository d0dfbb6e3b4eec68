"""The SpatialSTALE reproduction report: logs into the paper's tables and figures.

``spatialstale report LOGDIR`` reads a log directory (:func:`read_logs`) and writes
``report.md``, ``report.html`` and the figures (:func:`write_report`), with paired
statistics (the tests, the bootstrap and its limits); :func:`demo_tables` is the
terminal printout of ``spatialstale demo``, and :func:`cut_parts` counts the samples a
limit cut as the report's warning does.
"""

from ._headline import cut_parts
from ._load import LogError, Results, read_logs
from ._report import write_report
from ._stats import (
    ALPHA,
    EXACT_PERMUTATIONS_UP_TO,
    MIN_BOOTSTRAP_UNITS,
    bootstrap_ci,
    correlations,
    expanded_confidence,
    holm,
    mcnemar,
    paired_wilcoxon,
)
from ._text import demo_tables

__all__ = [
    "ALPHA",
    "EXACT_PERMUTATIONS_UP_TO",
    "MIN_BOOTSTRAP_UNITS",
    "LogError",
    "Results",
    "bootstrap_ci",
    "correlations",
    "cut_parts",
    "demo_tables",
    "expanded_confidence",
    "holm",
    "mcnemar",
    "paired_wilcoxon",
    "read_logs",
    "write_report",
]
