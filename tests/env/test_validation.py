"""Bad input is refused up front with a ValueError that names the valid choices."""

from __future__ import annotations

import re
from typing import Any

import gymnasium
import pytest

from spatialstale.env import ENV_ID, DynamicFrozenLakeEnv, make_instance, validate_regime, validate_seed, validate_size

BAD = [
    ({"regime": "L4"}, "one of L1, L2, L3, MA"),
    ({"regime": ""}, "one of L1, L2, L3, MA"),
    ({"regime": 2}, "one of L1, L2, L3, MA"),
    ({"size": 2}, "at least 4"),
    ({"size": 3}, "at least 4"),
    ({"size": 8.0}, "at least 4"),
    ({"size": True}, "at least 4"),
    ({"seed": -1}, "non-negative integer"),
    ({"seed": 1.5}, "non-negative integer"),
    ({"seed": "abc"}, "non-negative integer"),
    ({"seed": "7"}, "non-negative integer"),
    ({"seed": True}, "non-negative integer"),
    ({"seed": None}, "non-negative integer"),
]


@pytest.mark.parametrize(("bad", "names"), BAD)
def test_make_instance_refuses(bad: dict[str, object], names: str) -> None:
    kwargs: dict[str, Any] = {"seed": 1, "regime": "L2", "size": 8, **bad}
    with pytest.raises(ValueError, match=names):
        make_instance(**kwargs)


@pytest.mark.parametrize(("bad", "names"), BAD)
def test_gymnasium_make_refuses(bad: dict[str, object], names: str) -> None:
    kwargs: dict[str, Any] = {"instance_seed" if key == "seed" else key: value for key, value in bad.items()}
    with pytest.raises(ValueError, match=names):
        gymnasium.make(ENV_ID, **kwargs)


def test_message_quotes_the_bad_value() -> None:
    expected = "regime must be one of L1, L2, L3, MA (or none), an installed plug-in's name or module:Class; got 'L4'"
    with pytest.raises(ValueError, match=re.escape(expected)):
        make_instance(1, "L4")


def test_validators_accept_good_values() -> None:
    assert validate_regime("l2") == "L2"
    assert validate_regime(" None ") == "none"
    assert validate_size(4) == 4
    assert validate_size(32) == 32
    assert validate_seed(0) == 0
    assert validate_seed(10**9) == 10**9
    assert make_instance(1, "l3") == make_instance(1, "L3")


@pytest.mark.parametrize(
    ("kwargs", "names"),
    [
        ({"render_mode": "human"}, "ansi, rgb_array"),
        ({"max_steps": 0}, "positive integer"),
        ({"max_steps": 2.5}, "positive integer"),
    ],
)
def test_env_arguments_refused(kwargs: dict[str, Any], names: str) -> None:
    # Directly: gymnasium.make turns render_mode="human" into an rgb_array env wrapped
    # for display, which is Gymnasium's business.
    with pytest.raises(ValueError, match=names):
        DynamicFrozenLakeEnv(**kwargs)
