"""Inspect entry point: importing this registers the suite's tasks and model API."""

from spatialstale.agents import *  # noqa: F403
from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.evals.perception import perception

__all__ = ["detection", "navigation", "perception"]
