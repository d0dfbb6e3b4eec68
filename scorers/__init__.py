"""Scorers and metrics: stale-entry F1, episode outcomes and perception accuracy."""

from ._metrics import (
    death_rate,
    death_steps,
    f1_mean,
    f1_std,
    limit_rate,
    mean_of,
    micro_f1,
    micro_precision,
    micro_recall,
    pooled_ratio,
    success_rate,
    success_steps,
    timeout_rate,
    timeout_steps,
)
from ._probe import cell_class, implied_detection, perception_accuracy, perception_breakdown, perception_scores
from ._pure import Confusion, confusion, detection_breakdown, pooled, prf1
from ._scorers import DETECTION_METRICS, DISTRACTOR_METRICS, EDIT_METRICS, claims_from_g0, episode_outcome, stale_f1

__all__ = [
    "DETECTION_METRICS",
    "DISTRACTOR_METRICS",
    "EDIT_METRICS",
    "Confusion",
    "cell_class",
    "claims_from_g0",
    "confusion",
    "death_rate",
    "death_steps",
    "detection_breakdown",
    "episode_outcome",
    "f1_mean",
    "f1_std",
    "implied_detection",
    "limit_rate",
    "mean_of",
    "micro_f1",
    "micro_precision",
    "micro_recall",
    "perception_accuracy",
    "perception_breakdown",
    "perception_scores",
    "pooled",
    "pooled_ratio",
    "prf1",
    "stale_f1",
    "success_rate",
    "success_steps",
    "timeout_rate",
    "timeout_steps",
]
