"""A reference agent behind a flaky endpoint: ``--model spatialstale-faults/<agent>``.

A test double beside the product, for trying how a study behaves on a busy or broken
endpoint, offline: it answers as ``spatialstale/<agent>`` does and fails a seeded
share of its calls, as a provider's endpoint would. Model arguments (``-M``), each a
share of the calls from 0 to 1 (together at most 1):

- ``transient``: HTTP 503 (retried by Inspect, as a server error),
- ``rate_limit``: HTTP 429 (retried, and Inspect's adaptive connections scale down),
- ``non_retryable``: HTTP 400 (not retried: the sample errors, as a rejected request does),
- ``hang``: the call never answers (only ``--attempt-timeout`` frees it),

``fault_seed`` (default 0) fixes the sequence of draws: the n-th call the model
receives in a process fails as the n-th draw says, whatever it asks, as a busy endpoint's faults
fall on whichever request comes (so a retry, or a resume, draws afresh). ``latency`` is
the seconds each call takes (default 0), ``retry_wait`` the seconds Inspect waits before
retrying a 503 or 429 (default: Inspect's exponential backoff, from 3 s).

    spatialstale study --model spatialstale-faults/observer -M non_retryable=0.05 -M fault_seed=3

Every call it receives, answered or failed, is counted in :data:`CALLS` (by outcome).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from typing import Any

import anyio
from inspect_ai.model import ModelAPI, RetryDecision, modelapi
from tenacity.wait import WaitBaseT, wait_fixed

from ._provider import ReferenceAgentAPI, _refused

FAULTS = {
    "transient": (503, "Service Unavailable: the server is overloaded, try again later"),
    "rate_limit": (429, "Too Many Requests: rate limit reached for requests"),
    "non_retryable": (400, "Bad Request: the request was rejected"),
    "hang": (0, ""),
}
"""Each fault kind: the HTTP status it stands for and the provider's message."""

CALLS: Counter[str] = Counter()
"""Calls received in this process, by outcome: ``answered`` or a fault kind."""


class InjectedFault(Exception):
    """A call the flaky endpoint failed, as a provider's HTTP error reads."""

    def __init__(self, kind: str) -> None:
        status, message = FAULTS[kind]
        super().__init__(f"Error code: {status} - {message} (injected {kind} fault)")
        self.kind = kind
        self.status_code = status


class FaultyAgentAPI(ReferenceAgentAPI):
    """A reference agent that fails a seeded share of its calls (module docstring).

    Raises:
        ReferenceAgentError: (a ValueError) for an unknown agent, an unknown model
            argument or a share outside 0..1; its message is also printed on stderr.
    """

    def take_args(self, model_args: dict[str, Any]) -> None:
        known = {*FAULTS, "fault_seed", "latency", "retry_wait"}
        unknown = sorted(set(model_args) - known)
        if unknown:
            raise _refused(
                f"spatialstale-faults takes the model arguments {', '.join(sorted(known))}; got {', '.join(unknown)}"
            )
        self.shares = {kind: _share(kind, model_args.get(kind, 0.0)) for kind in FAULTS}
        if sum(self.shares.values()) > 1:
            raise _refused(f"spatialstale-faults: the fault shares add up to more than 1; got {self.shares}")
        seed = _number("fault_seed", model_args.get("fault_seed", 0))
        if not seed.is_integer():
            raise _refused(f"spatialstale-faults: fault_seed must be an integer; got {model_args['fault_seed']!r}")
        self.draws = random.Random(int(seed))
        self.latency = _number("latency", model_args.get("latency", 0))
        wait = model_args.get("retry_wait")
        self.wait = None if wait is None else _number("retry_wait", wait)

    def fault(self) -> str | None:
        """The fault the next call meets, if any: the next draw of the seeded sequence."""
        draw = self.draws.random()
        for kind, share in self.shares.items():
            if draw < share:
                return kind
            draw -= share
        return None

    async def on_call(self) -> None:
        kind = self.fault()
        CALLS[kind or "answered"] += 1
        await anyio.sleep(self.latency)
        if kind == "hang":
            await anyio.sleep_forever()
        if kind is not None:
            raise InjectedFault(kind)

    def should_retry(self, ex: Exception) -> bool | RetryDecision:
        if isinstance(ex, InjectedFault) and ex.kind == "transient":
            return RetryDecision.transient()
        if isinstance(ex, InjectedFault) and ex.kind == "rate_limit":
            return RetryDecision.rate_limit()
        return RetryDecision.no()

    def retry_wait(self) -> WaitBaseT | None:
        return None if self.wait is None else wait_fixed(self.wait)


def _number(name: str, value: object) -> float:
    """A model argument that is a number >= 0, or the one-line refusal."""
    try:
        number = float(value) if isinstance(value, int | float | str) and not isinstance(value, bool) else math.nan
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number < 0:
        raise _refused(f"spatialstale-faults: {name} must be a number >= 0; got {value!r}")
    return number


def _share(kind: str, value: object) -> float:
    share = _number(kind, value)
    if share > 1:
        raise _refused(f"spatialstale-faults: {kind} is a share of the calls, from 0 to 1; got {value!r}")
    return share


@modelapi(name="spatialstale-faults")
def spatialstale_faults() -> type[ModelAPI]:
    return FaultyAgentAPI
