"""The Inspect tasks: ``spatialstale/detection``, ``spatialstale/navigation`` and ``spatialstale/perception``."""

from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.evals.perception import perception

__all__ = ["detection", "navigation", "perception"]
