"""Reference agents for SpatialSTALE, served as the Inspect model provider ``spatialstale``.

Importing this package registers the provider, so ``--model spatialstale/observer``
(or ``credulous``, ``random``, ``colourblind``) works in ``inspect eval``; and, beside
it, ``spatialstale-faults/<agent>``, the same agents behind a flaky endpoint that fails
a seeded share of calls (``_faults``).
"""

from ._faults import CALLS, FAULTS, FaultyAgentAPI
from ._provider import ReferenceAgentAPI

__all__ = ["CALLS", "FAULTS", "FaultyAgentAPI", "ReferenceAgentAPI"]
