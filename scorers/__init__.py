"""Scorers and metrics: stale-entry F1, episode outcomes and perception accuracy.

Every rate and metric is declared once, in ``_rates`` (:data:`METRICS`,
:data:`SCORE_RATES`, :data:`COUNTS`); the scorers and the tasks' metrics are built from it.
"""

from spatialstale.protocol import SAMPLES, Combined, Count, Rate, TaskMetric

from ._metrics import declared
from ._probe import cell_class, implied_detection, perception_accuracy, perception_breakdown
from ._pure import Confusion, confusion, detection_breakdown
from ._rates import COUNTS, METRICS, SCORE_RATES, metrics_markdown
from ._scorers import (
    DETECTION_METRICS,
    NAVIGATION_METRICS,
    claims_from_g0,
    episode_outcome,
    extension_metrics,
    stale_f1,
)

__all__ = [
    "COUNTS",
    "DETECTION_METRICS",
    "METRICS",
    "NAVIGATION_METRICS",
    "SAMPLES",
    "SCORE_RATES",
    "Combined",
    "Confusion",
    "Count",
    "Rate",
    "TaskMetric",
    "cell_class",
    "claims_from_g0",
    "confusion",
    "declared",
    "detection_breakdown",
    "episode_outcome",
    "extension_metrics",
    "implied_detection",
    "metrics_markdown",
    "perception_accuracy",
    "perception_breakdown",
    "stale_f1",
]
