"""Inspect entry point: importing this registers the suite's tasks and model API."""
