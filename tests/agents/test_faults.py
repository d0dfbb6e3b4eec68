"""The flaky endpoint (``spatialstale-faults/<agent>``) through ``get_model``: its seeded
draws, what Inspect retries, and its one-line refusals. The studies that run on it are
in tests/study/test_faults.py."""

from __future__ import annotations

from collections import Counter

import pytest
from inspect_ai.model import RetryDecision, get_model

from spatialstale.agents._faults import FAULTS, FaultyAgentAPI, InjectedFault
from spatialstale.agents._provider import ReferenceAgentError

SHARES = {"transient": 0.1, "rate_limit": 0.05, "non_retryable": 0.03, "hang": 0.02}


def _api(**model_args: object) -> FaultyAgentAPI:
    api = get_model("spatialstale-faults/observer", memoize=False, **model_args).api
    assert isinstance(api, FaultyAgentAPI)
    return api


def test_the_draws_follow_the_seed_and_the_shares() -> None:
    draws = 20_000
    one, again, other = (_api(**SHARES, fault_seed=seed) for seed in (7, 7, 8))
    sequence = [one.fault() for _ in range(draws)]
    assert [again.fault() for _ in range(draws)] == sequence  # each model draws from the seed's start
    assert [other.fault() for _ in range(draws)] != sequence
    met = Counter(sequence)
    for kind, share in SHARES.items():
        # 20,000 draws: within 5 standard deviations of the share
        assert abs(met[kind] / draws - share) < 5 * (share * (1 - share) / draws) ** 0.5, kind
    assert met[None] == draws - sum(met[kind] for kind in SHARES)
    assert {_api(fault_seed=3).fault() for _ in range(1000)} == {None}


def test_inspect_retries_the_503_and_the_429_only() -> None:
    api = _api()
    assert api.should_retry(InjectedFault("transient")) == RetryDecision.transient()
    assert api.should_retry(InjectedFault("rate_limit")) == RetryDecision.rate_limit()
    assert not api.should_retry(InjectedFault("non_retryable"))
    assert not api.should_retry(RuntimeError("anything else"))
    assert str(InjectedFault("non_retryable")) == (
        "Error code: 400 - Bad Request: the request was rejected (injected non_retryable fault)"
    )
    assert {kind: InjectedFault(kind).status_code for kind in FAULTS if kind != "hang"} == {
        "transient": 503,
        "rate_limit": 429,
        "non_retryable": 400,
    }


@pytest.mark.parametrize(
    ("model_args", "message"),
    [
        ({"hang": 2}, "spatialstale-faults: hang is a share of the calls, from 0 to 1; got 2"),
        ({"transient": 0.6, "non_retryable": 0.6}, "spatialstale-faults: the fault shares add up to more than 1"),
        ({"transient": "often"}, "spatialstale-faults: transient must be a number >= 0; got 'often'"),
        ({"fault_seed": 1.5}, "spatialstale-faults: fault_seed must be an integer; got 1.5"),
        ({"seed": 3}, "spatialstale-faults takes the model arguments fault_seed, hang, latency, non_retryable"),
    ],
)
def test_bad_model_arguments_are_one_line(
    model_args: dict[str, object], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ReferenceAgentError):
        _api(**model_args)
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(message)
