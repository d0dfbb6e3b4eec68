"""Every change regime by name: the built-ins, and plug-ins named ``module:Class`` or by
an installed package in the ``spatialstale.regimes`` entry-point group.

``-T regime=L2,my_regimes:Seasonal`` runs a regime written outside the suite; a package
that declares

.. code-block:: toml

    [project.entry-points."spatialstale.regimes"]
    Seasonal = "my_regimes:Seasonal"

makes ``-T regime=Seasonal`` work too. The class subclasses
:class:`~spatialstale.env.ChangeRegime` and is constructed with no arguments. Its
``name`` is the instance's regime everywhere a built-in's is: sample ids, metadata,
metrics, the study and the report; its draws come from a stream keyed by that name
(:meth:`~spatialstale.env._rng.Stream.named`).

A plug-in is resolved when a task reads its ``-T`` values (or the study its options),
before any model call; one that cannot be imported, is not a ``ChangeRegime``, leaves
``draw`` abstract, has no usable ``name`` or takes a built-in's name fails there with one
line. The regimes resolved are kept by name in this process, so an instance is rebuilt
from its regime's name (``make_instance(seed, "Seasonal")``).
"""

from __future__ import annotations

import inspect
import pkgutil
import re
from collections.abc import Callable
from importlib.metadata import entry_points

from ._regime import ChangeRegime, RegimeError
from ._regimes import STATIC, Cluster, Online, Spot, Static
from ._rng import PURPOSES, Stream
from ._tracks import OtherAgent

BUILTIN_REGIMES: dict[str, type[ChangeRegime]] = {r.name: r for r in (Static, Spot, Cluster, Online, OtherAgent)}
"""Every built-in regime by name: ``none``, the paper's L1, L2, L3, then MA."""
REGIMES = tuple(BUILTIN_REGIMES)
"""The built-in regimes' names, in order."""

ENTRY_POINT_GROUP = "spatialstale.regimes"
"""The entry-point group a package declares its regimes in."""

NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
"""A regime's name: it becomes part of sample ids (``Seasonal-s4810``) and metric names
(``f1_mean_Seasonal``), so letters, digits and underscores, starting with a letter."""

_BUILTIN = {name: cls() for name, cls in BUILTIN_REGIMES.items()}
_RESOLVED: dict[str, ChangeRegime] = {}
"""Every plug-in resolved in this process, by its regime name."""


def installed_plugins(group: str) -> dict[str, str]:
    """Each plug-in installed packages declare in entry-point ``group``: name -> ``module:attribute``.
    The one reader of every group the suite takes (regimes, strategies, navigators, extensions)."""
    return {ep.name: ep.value for ep in entry_points(group=group)}


def load_plugin(spec: str, fail: Callable[[str], Exception]) -> object:
    """The object ``module:attribute`` names (``pkgutil.resolve_name``): the loader of
    every plug-in the suite takes. Raises ``fail(why)``, a one-line reason, when ``spec``
    is not written ``module:attribute``, its module cannot be imported (any error there is
    the plug-in's) or has no such attribute."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise fail("must be written module:Class")
    try:
        return pkgutil.resolve_name(spec)
    except AttributeError:
        raise fail(f"not found: module {module_name!r} has no {attribute!r}") from None
    except Exception as error:  # any error importing user code is the plug-in's
        raise fail(f"cannot be imported: {type(error).__name__}: {_one_line(error)}") from None


def _load(spec: str) -> object:
    return load_plugin(spec, lambda why: _fail(spec, why))


def _fail(spec: str, why: str) -> RegimeError:
    return RegimeError(f"regime: plug-in {spec!r} {why}")


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


def _known(name: str) -> ChangeRegime | None:
    """The regime of ``name`` (any case) among the built-ins and the plug-ins resolved."""
    for regimes in (_BUILTIN, _RESOLVED):
        found = next((r for n, r in regimes.items() if n.lower() == name.lower()), None)
        if found is not None:
            return found
    return None


def check_regime_class(target: object, spec: str, *, entry_point: str | None = None) -> ChangeRegime:
    """An instance of ``target`` if it is a usable regime class, else a one-line RegimeError."""
    if not inspect.isclass(target):
        raise _fail(spec, f"is not a class; got {type(target).__name__}")
    if not issubclass(target, ChangeRegime):
        raise _fail(spec, "is not a change regime: subclass spatialstale.env.ChangeRegime")
    if inspect.isabstract(target):
        raise _fail(spec, "does not implement draw(self, g0, rng)")
    name = getattr(target, "name", None)
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise _fail(
            spec, f"needs a class attribute name of letters, digits and underscores, a letter first; got {name!r}"
        )
    known = _known(name)
    if name.lower() in (n.lower() for n in BUILTIN_REGIMES) and type(known) is not target:
        raise _fail(spec, f"is named {name!r}, a built-in regime's name; give it another name")
    if known is not None and type(known) is not target:
        theirs = f"{type(known).__module__}:{type(known).__qualname__}"
        raise _fail(spec, f"is named {name!r}, as the regime {theirs} is; give it another name")
    if entry_point is not None and name != entry_point:
        raise _fail(spec, f"is declared as {entry_point!r} but its class is named {name!r}; make them the same")
    try:
        regime: ChangeRegime = target()
    except Exception as error:
        raise _fail(
            spec, f"cannot be constructed with no arguments: {type(error).__name__}: {_one_line(error)}"
        ) from None
    return regime


def resolve_regime(item: object) -> str:
    """The canonical name of one regime: a built-in name (any case), a ``module:Class``
    plug-in, a plug-in resolved before (any case) or an installed plug-in's entry-point
    name. Raises RegimeError (a ValueError), one line."""
    text = item.strip() if isinstance(item, str) else ""
    known = _known(text) if text else None
    if known is not None:
        return known.name
    if ":" in text:
        regime = check_regime_class(_load(text), text)
    else:
        declared = {name.lower(): (name, spec) for name, spec in installed_plugins(ENTRY_POINT_GROUP).items()}
        if not text or text.lower() not in declared:
            plugins = f" (installed: {', '.join(sorted(n for n, _ in declared.values()))})" if declared else ""
            builtin = f"{', '.join(r for r in REGIMES if r != STATIC)} (or {STATIC})"
            raise RegimeError(
                f"regime must be one of {builtin}, an installed plug-in's name{plugins} or module:Class; got {item!r}"
            )
        name, spec = declared[text.lower()]
        regime = check_regime_class(_load(spec), spec, entry_point=name)
    _RESOLVED.setdefault(regime.name, regime)
    return regime.name


def regime_of(name: str) -> ChangeRegime:
    """The regime of ``name``: a built-in, a plug-in resolved in this process or an
    installed plug-in's entry-point name (resolved now)."""
    return _BUILTIN.get(name) or _RESOLVED.get(name) or _RESOLVED[resolve_regime(name)]


def regime_source(name: str) -> str | None:
    """Where a plug-in regime's class lives, ``module:Class`` (what a log records to say
    which code drew its instances); None for a built-in."""
    if is_builtin(name):
        return None
    cls = type(regime_of(name))
    return f"{cls.__module__}:{cls.__qualname__}"


def is_builtin(name: str) -> bool:
    """Whether ``name`` is a built-in regime's (``none``, L1, L2, L3, MA)."""
    return name in BUILTIN_REGIMES


def regime_stream(seed: int, size: int, name: str) -> Stream:
    """The stream regime ``name`` draws from: a built-in's own purpose (L1, L2, L3, MA;
    ``none`` draws nothing), else the stream of its name (:meth:`Stream.named`)."""
    if is_builtin(name) and name in PURPOSES:
        return Stream(seed, size, name)
    return Stream.named(seed, size, name)
