"""The Inspect tasks: ``spatialstale/detection`` and ``spatialstale/navigation``."""
