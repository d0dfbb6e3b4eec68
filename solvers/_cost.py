"""What an episode cost: the model calls and tokens of its audits and of its navigator.

The navigation solver opens a :class:`CallCost` for each episode (:func:`counting`);
the audit helpers (every batch of :func:`~._audit.batched_audit`, SelfVerify's check)
and both navigators record each model call they make into it. Strategies never count
for themselves, so a strategy that audits through ``StrategyContext.audit`` or
``selfverify`` (a plug-in's as much as OMCD's) is counted the same way, and one that
makes no call (NoMemory, NoFilter, Oracle) records none. Outside an episode (the
detection task, the perception probe) nothing is recorded.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass

from inspect_ai.model import ModelOutput

COST_KEYS = ("audit_calls", "audit_tokens", "navigation_calls", "navigation_tokens")
"""The counts of an episode's ``cost`` record (its score metadata)."""


@dataclass
class CallCost:
    """The model calls of one episode and their tokens (input + output, as each
    output's usage reports them; a call without usage adds no tokens)."""

    audit_calls: int = 0
    audit_tokens: int = 0
    navigation_calls: int = 0
    navigation_tokens: int = 0

    def add(self, role: str, output: ModelOutput) -> None:
        """Count one call of ``role`` (``audit`` or ``navigation``) and its tokens."""
        usage = output.usage
        tokens = usage.input_tokens + usage.output_tokens if usage is not None else 0
        if role == "audit":
            self.audit_calls += 1
            self.audit_tokens += tokens
        elif role == "navigation":
            self.navigation_calls += 1
            self.navigation_tokens += tokens
        else:
            raise ValueError(f"role must be audit or navigation; got {role!r}")

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


# A context variable, not the sample store: the concurrent batch calls of an audit run
# in child tasks, which see the same (mutable) record through their copied context.
_CURRENT: ContextVar[CallCost | None] = ContextVar("spatialstale_call_cost", default=None)


@contextmanager
def counting() -> Iterator[CallCost]:
    """Record the model calls made inside the block (one episode) into a new :class:`CallCost`."""
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
