"""The Inspect tasks: ``spatialstale/detection``, ``spatialstale/navigation`` and ``spatialstale/perception``."""
