"""The SpatialSTALE reproduction report: logs into the paper's tables and figures.

``spatialstale report LOGDIR`` reads a log directory (:func:`read_logs`) and writes
``report.md``, ``report.html`` and the figures (:func:`write_report`), with paired
statistics; :func:`demo_tables` is the terminal printout of ``spatialstale demo``, and
:func:`cut_parts` counts the samples a limit cut as the report's warning does.
"""

from ._headline import cut_parts
from ._load import LogError, Results, read_logs
from ._report import write_report
from ._stats import ALPHA, bootstrap_ci, correlations, holm, mcnemar, paired_wilcoxon
from ._text import demo_tables

__all__ = [
    "ALPHA",
    "LogError",
    "Results",
    "bootstrap_ci",
    "correlations",
    "cut_parts",
    "demo_tables",
    "holm",
    "mcnemar",
    "paired_wilcoxon",
    "read_logs",
    "write_report",
]
