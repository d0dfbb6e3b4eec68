"""Memory strategies as plug-ins: a ``module:Class`` entry, or a name an installed
package declares in the ``spatialstale.strategies`` entry-point group.

Here the names are read, as every ``-T`` value is, before any model call; the
strategies themselves, built-in and plug-in, run in ``spatialstale.solvers``
(``make_strategy``), which asks :func:`plugin_strategy` for a plug-in's class.

``-T strategies=nofilter,omcd,my_package.my_module:MyMemory`` runs a strategy written
outside the suite; a package that declares

.. code-block:: toml

    [project.entry-points."spatialstale.strategies"]
    mymemory = "my_package.my_module:MyMemory"

makes ``-T strategies=mymemory`` work too. The class implements
:class:`~spatialstale.solvers.MemoryStrategy` (a class attribute ``name``, an
``audits`` list, ``async def view(step, grid, agent)``) and is constructed with a
:class:`~spatialstale.solvers.StrategyContext`. Its ``name`` is the sample's strategy
everywhere a built-in's is: sample ids, metrics, transcripts, the study and the report.

A plug-in is resolved when the task reads its ``-T`` values, before any model call;
one that cannot be imported, is not a class, lacks ``view``, has no usable ``name`` or
takes a built-in's name fails there with one line. The classes resolved are kept by
name in this process, so the solver builds the sample's strategy from its name.
"""

from __future__ import annotations

import inspect
import re

from spatialstale.env import installed_plugins, load_plugin

from ._errors import TaskParameterError

BUILTIN_STRATEGIES = ("nomemory", "nofilter", "selfverify", "omcd", "oracle", "localverify")
"""The names of the built-in strategies (``spatialstale.solvers.STRATEGIES``): the
paper's five in its order, then LocalVerify."""

DEFAULT_STRATEGIES = BUILTIN_STRATEGIES[:5]
"""The strategies a navigation task runs by default: the paper's five."""

ENTRY_POINT_GROUP = "spatialstale.strategies"
"""The entry-point group a package declares its strategies in."""

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")
"""A strategy name: it becomes part of sample ids (``L2-mymemory-s4810``) and metric
names (``success_mymemory``), so lower-case letters, digits and underscores."""

_RESOLVED: dict[str, type] = {}
"""Every plug-in resolved in this process, by its strategy name."""


def _fail(spec: str, why: str) -> TaskParameterError:
    return TaskParameterError(f"strategies: plug-in {spec!r} {why}")


def _load(spec: str) -> object:
    return load_plugin(spec, lambda why: _fail(spec, why))


def check_strategy_class(target: object, spec: str, *, entry_point: str | None = None) -> type:
    """``target`` if it is a usable strategy class, else a one-line TaskParameterError."""
    if not inspect.isclass(target):
        raise _fail(spec, f"is not a class; got {type(target).__name__}")
    view = getattr(target, "view", None)
    if view is None or not callable(view):
        raise _fail(spec, "has no view(step, grid, agent) method")
    if not inspect.iscoroutinefunction(view):
        raise _fail(spec, "must define view as async def view(self, step, grid, agent)")
    name = getattr(target, "name", None)
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise _fail(spec, f"needs a class attribute name of lower-case letters, digits and underscores; got {name!r}")
    if name in BUILTIN_STRATEGIES:
        raise _fail(spec, f"is named {name!r}, a built-in strategy's name; give it another name")
    if entry_point is not None and name != entry_point:
        raise _fail(spec, f"is declared as {entry_point!r} but its class is named {name!r}; make them the same")
    return target


def resolve_strategy(item: str) -> tuple[str, type | None]:
    """The strategy name of one ``-T strategies`` entry, and a plug-in's class (None for
    a built-in): a built-in name (any case), a ``module:Class`` plug-in or an installed
    plug-in's entry-point name. A plug-in is loaded and checked now."""
    builtin = next((n for n in BUILTIN_STRATEGIES if n.lower() == item.lower()), None)
    if builtin is not None:
        return builtin, None
    if item in _RESOLVED:
        # a plug-in's name once its module:Class is resolved (the study passes names on)
        return item, _RESOLVED[item]
    if ":" in item:
        cls = check_strategy_class(_load(item), item)
    else:
        declared = installed_plugins(ENTRY_POINT_GROUP)
        if item not in declared:
            plugins = f" (installed plug-ins: {', '.join(sorted(declared))})" if declared else ""
            raise TaskParameterError(
                f"strategies must be one of {', '.join(BUILTIN_STRATEGIES)}, an installed plug-in's name{plugins} "
                f"or module:Class; got {item!r}"
            )
        cls = check_strategy_class(_load(declared[item]), declared[item], entry_point=item)
    name: str = getattr(cls, "name")  # noqa: B009
    _RESOLVED[name] = cls
    return name, cls


def plugin_strategy(name: str) -> type:
    """The class of a plug-in strategy: one resolved in this process, or an installed
    plug-in's entry-point name."""
    cls = _RESOLVED.get(name) or resolve_strategy(name)[1]
    if cls is None:
        raise ValueError(f"{name!r} is a built-in strategy, not a plug-in")
    return cls
