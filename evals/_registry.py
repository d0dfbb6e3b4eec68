"""Inspect entry point: importing this registers the suite's tasks and model API."""

from spatialstale.agents import *  # noqa: F403
