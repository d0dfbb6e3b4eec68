"""The registry of navigators (``-T agent``, ``_seams.Navigator``): the only place that
names them. Apart from ``_extensions`` because the prompts' call kinds derive from it
(``_prompts`` imports this module, which imports no prompt)."""

from __future__ import annotations

from ._seams import PROMPT_NAVIGATOR, Navigator
from ._tool_navigator import TOOL_NAVIGATOR

NAVIGATORS: tuple[Navigator, ...] = (PROMPT_NAVIGATOR, TOOL_NAVIGATOR)
"""The built-in navigators, the paper's first (the default of ``-T agent``)."""

NAVIGATOR_NAMES = tuple(n.name for n in NAVIGATORS)
"""The values of ``-T agent``."""


def navigator(name: str) -> Navigator:
    """The navigator called ``name``.

    Raises:
        ValueError: no navigator is called ``name`` (one line).
    """
    for n in NAVIGATORS:
        if n.name == name:
            return n
    raise ValueError(f"agent must be one of {', '.join(NAVIGATOR_NAMES)}; got {name!r}")
