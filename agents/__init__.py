"""Reference agents for SpatialSTALE, served as the Inspect model provider ``spatialstale``.

Importing this package registers the provider, so ``--model spatialstale/observer``
(or ``credulous``, ``random``, ``colourblind``) works in ``inspect eval``.
"""

from ._provider import ReferenceAgentAPI

__all__ = ["ReferenceAgentAPI"]
