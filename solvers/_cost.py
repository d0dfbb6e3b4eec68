"""What an episode cost: the model calls and tokens of its audits and of its navigator.

The navigation solver opens a ``CallCost`` for each episode (:func:`counting`); the
audit helpers (every batch of :meth:`~._audit.AuditPlan.ask`, SelfVerify's check)
and both navigators record each model call they make into it. Strategies never count
for themselves, so a strategy that audits through ``StrategyContext.audit`` or
``selfverify`` (a plug-in's as much as OMCD's) is counted the same way, and one that
makes no call (NoMemory, NoFilter, Oracle) records none. Outside an episode (the
detection task, the perception probe) nothing is recorded.

Not Inspect's per-sample usage by role (``EvalSample.role_usage``): it counts tokens,
not calls, and only for a model bound to a role, where an audit is an audit whichever
model makes it (the task's own model when no ``auditor`` role is bound).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from inspect_ai.model import ModelOutput

from spatialstale.protocol import CallCost

# A context variable, not the sample store: the concurrent batch calls of an audit run
# in child tasks, which see the same (mutable) record through their copied context.
_CURRENT: ContextVar[CallCost | None] = ContextVar("spatialstale_call_cost", default=None)


@contextmanager
def counting() -> Iterator[CallCost]:
    """Record the model calls made inside the block (one episode) into a new ``CallCost``."""
    cost = CallCost()
    token = _CURRENT.set(cost)
    try:
        yield cost
    finally:
        _CURRENT.reset(token)


def record_call(role: str, output: ModelOutput) -> None:
    """Count a model call of ``role`` in the current episode's cost; outside one, nothing."""
    cost = _CURRENT.get()
    if cost is not None:
        cost.add(role, output)
