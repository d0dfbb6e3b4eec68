"""The navigators (``-T agent``): the paper's per-step navigator, the built-in agents,
and any Inspect agent a user names.

``-T agent`` takes a built-in's name (``prompt``, ``tools``, ``memory``), a function
written ``module:function``, or a short name an installed package declares in the
entry-point group :data:`ENTRY_POINT_GROUP`:

.. code-block:: toml

    [project.entry-points."spatialstale.navigators"]
    scout = "my_agents:scout"

The function takes the episode's tools and returns an Inspect ``Agent``
(``def scout(tools): return react(prompt="...", tools=tools)``); one that also takes a
``memory`` parameter is given Inspect's ``memory()`` tool there, seeded with the
strategy's view, and its memory is judged as the memory navigator's is
(``_agent_memory``). A name that cannot be resolved, or names no function, fails here,
before any model call, in one line; the solver then builds the agent with the episode's
tools and refuses one that is not an agent, still before any model call.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass

from spatialstale.env import installed_plugins, load_plugin

from ._agent_memory import MEMORY_NAVIGATOR
from ._errors import TaskParameterError
from ._seams import PROMPT_NAVIGATOR, Navigator
from ._tool_navigator import NAVIGATE_TOOLS, TOOL_NAVIGATOR

NAVIGATORS: tuple[Navigator, ...] = (PROMPT_NAVIGATOR, TOOL_NAVIGATOR, MEMORY_NAVIGATOR)
"""The built-in navigators, the paper's first (the default of ``-T agent``)."""

NAVIGATOR_NAMES = tuple(n.name for n in NAVIGATORS)
"""The built-in values of ``-T agent``."""

ENTRY_POINT_GROUP = "spatialstale.navigators"
"""The entry-point group a package declares its navigators in."""

MEMORY_PARAMETER = "memory"
"""The parameter of a navigator function that asks for the memory tool."""

_NAME = re.compile(r"[^a-z0-9_]+")


@dataclass(frozen=True)
class AgentNavigator:
    """A user's agent as a navigator (``_seams.Navigator``): ``spec`` as ``-T agent`` names
    it, and the function that builds the agent from the episode's tools."""

    name: str
    factory: Callable[..., object]
    call_kind: str = NAVIGATE_TOOLS

    @property
    def help(self) -> str:
        return f"{self.name} (a user's agent)"

    @property
    def channel(self) -> str:
        """``files`` when the function asks for the memory tool, else ``recall``."""
        return "files" if MEMORY_PARAMETER in inspect.signature(self.factory).parameters else "recall"

    @property
    def id_part(self) -> str:
        """How a sample id names it: the function's name, lower-case."""
        return _NAME.sub("_", self.name.rpartition(":")[2].rpartition(".")[2].lower()).strip("_") or "agent"

    def system_prompt(self) -> str | None:
        return ""  # the agent brings its own: the suite sends none

    def dry_run_note(self) -> str | None:
        return (
            f"Agent {self.name}: one conversation an episode; its calls are bounded by the steps times the calls "
            "allowed between two moves (or the message limit), an upper bound, not an estimate."
        )

    def dry_run_counts(self) -> str | None:
        return "upper bound"


_RESOLVED: dict[str, AgentNavigator] = {}


def _fail(spec: str, why: str) -> TaskParameterError:
    return TaskParameterError(f"agent: {spec!r} {why}")


def _resolve(spec: str) -> AgentNavigator:
    if spec in _RESOLVED:
        return _RESOLVED[spec]
    installed = installed_plugins(ENTRY_POINT_GROUP)
    target_spec = installed.get(spec, spec)
    if ":" not in target_spec:
        names = ", ".join([*NAVIGATOR_NAMES, *sorted(installed)])
        raise TaskParameterError(f"agent must be one of {names}, or module:function; got {spec!r}")
    target = load_plugin(target_spec, lambda why: _fail(spec, why.replace("module:Class", "module:function")))
    if not callable(target) or inspect.isclass(target):
        raise _fail(spec, f"is not a function; got {type(target).__name__}")
    try:
        parameters = inspect.signature(target).parameters
    except (TypeError, ValueError):
        raise _fail(spec, "has no signature to call it with the episode's tools") from None
    required = [
        p.name
        for p in parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    if not parameters or any(name not in ("tools", MEMORY_PARAMETER) for name in required[1:]):
        raise _fail(spec, "must take the episode's tools (def f(tools) -> Agent, or def f(tools, memory) -> Agent)")
    resolved = AgentNavigator(spec, target)
    _RESOLVED[spec] = resolved
    return resolved


def navigator(name: str) -> Navigator:
    """The navigator ``-T agent`` names: a built-in (any case), an installed package's
    short name, or ``module:function``.

    Raises:
        TaskParameterError: (a ValueError) the name resolves to no usable function (one line).
    """
    for n in NAVIGATORS:
        if n.name == name.lower():
            return n
    return _resolve(name)


def agent_name(value: object, name: str) -> str:
    """The ``-T agent`` reader: a built-in's canonical name, or a user's agent as given
    (resolved now, so a bad one fails before any model call)."""
    if not isinstance(value, str) or not value.strip() or "," in value:
        raise TaskParameterError(
            f"{name} must be one of {', '.join(NAVIGATOR_NAMES)}, or module:function; got {value!r}"
        )
    return navigator(value.strip()).name
