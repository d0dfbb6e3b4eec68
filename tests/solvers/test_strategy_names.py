"""The built-in strategies' classes are the names the settings read: the protocol names
them (``BUILTIN_STRATEGIES``, read before any model call), the solvers run them."""

from __future__ import annotations

from spatialstale.protocol import BUILTIN_STRATEGIES, DEFAULT_STRATEGIES, NAVIGATION, NavigationSettings
from spatialstale.solvers import STRATEGIES


def test_each_built_in_strategy_is_named_in_the_protocol_in_order() -> None:
    assert tuple(STRATEGIES) == BUILTIN_STRATEGIES
    assert all(cls.name == name for name, cls in STRATEGIES.items())
    assert NAVIGATION.strategies == DEFAULT_STRATEGIES == BUILTIN_STRATEGIES[:5]


def test_the_settings_read_every_built_in_name_in_any_case() -> None:
    settings = NavigationSettings.read({"strategies": ",".join(n.upper() for n in BUILTIN_STRATEGIES)})
    assert settings.strategies == BUILTIN_STRATEGIES
