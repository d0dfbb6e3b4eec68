"""The axis language: how a settings field declares one axis of an experiment, and the
readers that turn a ``-T`` value into its canonical value (or a one-line error).

The task kinds' settings (``_settings``) and the extensions (``_seams``) declare their
axes with :func:`axis`; everything that lists the axes reads them with :func:`axes_of`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from functools import cache
from typing import Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError

from ._errors import TaskParameterError


def shown(value: object, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters: an error never echoes a huge value."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def as_list(value: object, name: str) -> list[str]:
    """A list parameter given as a list, a tuple or a comma-separated string."""
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",")]
    elif isinstance(value, list | tuple):
        items = [str(v).strip() for v in value]
    elif isinstance(value, int) and not isinstance(value, bool):
        items = [str(value)]
    else:
        raise TaskParameterError(f"{name} must be a list or a comma-separated string; got {value!r}")
    items = [v for v in items if v]
    if not items:
        raise TaskParameterError(f"{name} must name at least one value; got {value!r}")
    return items


def choices(value: object, valid: Sequence[str], name: str) -> tuple[str, ...]:
    """Each named value, case-insensitive, canonical spelling, no duplicates."""
    chosen: list[str] = []
    for item in as_list(value, name):
        match = next((v for v in valid if v.lower() == item.lower()), None)
        if match is None:
            raise TaskParameterError(f"{name} must be one of {', '.join(valid)}; got {item!r}")
        if match not in chosen:
            chosen.append(match)
    return tuple(chosen)


def choice(value: object, valid: Sequence[str], name: str) -> str:
    """One of ``valid`` (case-insensitive), in its canonical spelling."""
    if not isinstance(value, str) or "," in value:
        raise TaskParameterError(f"{name} must be one of {', '.join(valid)}; got {value!r}")
    return choices(value, valid, name)[0]


@cache
def _adapter(kind: Any) -> TypeAdapter[Any]:
    return TypeAdapter(kind)


def _valid(kind: Any, value: object) -> Any:
    """``value`` as pydantic reads it into ``kind`` (lax mode: ``"3"`` is 3, ``"yes"`` is
    True); None where it cannot."""
    try:
        return _adapter(kind).validate_python(value)
    except ValidationError:
        return None


def integer(value: object, name: str, minimum: int) -> int:
    """An integer of at least ``minimum``, given as a number or as digits (a bool is not one)."""
    read = None if isinstance(value, bool) else _valid(Annotated[int, Field(ge=minimum)], value)
    if read is None:
        raise TaskParameterError(f"{name} must be an integer of at least {minimum}; got {value or ''!r}")
    return int(read)


def boolean(value: object, name: str) -> bool:
    """A flag given as a bool or as true/false, yes/no, 1/0, on/off (any case), as pydantic reads one."""
    read = _valid(bool, value.strip() if isinstance(value, str) else value) if isinstance(value, str | int) else None
    if read is None:
        raise TaskParameterError(f"{name} must be one of true, false (or yes/no, 1/0, on/off); got {value!r}")
    return bool(read)


Reader = Callable[[object, str], Any]


def one_of(valid: Sequence[str]) -> Reader:
    return lambda value, name: choice(value, valid, name)


def some_of(valid: Sequence[str]) -> Reader:
    return lambda value, name: choices(value, valid, name)


def at_least(minimum: int) -> Reader:
    return lambda value, name: integer(value, name, minimum)


@dataclass(frozen=True)
class Axis:
    """One axis of an experiment, declared once as a settings field (see :func:`axis`).

    Attributes:
        name: the ``-T`` parameter, the field and the sample metadata key.
        default: the value without ``-T``, as the task signature gives it.
        read: ``(value, name)`` -> the canonical value; raises TaskParameterError.
        help: what the axis controls, one sentence.
        values: the valid values of a closed vocabulary, in order.
        title: for an axis beyond the paper's protocol, the column naming it in the
            study's dry run and the report (``view radius``); the study then runs its
            matrix once per value of its option ``flag`` and passes it to a task only
            away from its default, and the report sets its values side by side.
        flag: the study option giving several values (``--view-radii``).
        in_id: how a value other than the default is named in sample ids (``-r1``).
        show: the value as the study, the dry run and the report write it.
        recorded: kept in each sample's metadata (besides the task's).
        task_meta: kept in the task's metadata (the log header).
        tag: how the log's tags (the viewer's Tags column) always name the value
            (``B=10``); an axis without it is tagged only away from its default, as
            ``name=value`` (``prompt_set=minimal``), and not at all when the log
            header does not record it (``task_meta`` False).
    """

    name: str
    default: Any
    read: Reader
    help: str
    values: tuple[str, ...] = ()
    title: str | None = None
    flag: str | None = None
    in_id: Callable[[Any], str] | None = None
    show: Callable[[Any], str] = str
    recorded: bool = False
    task_meta: bool = True
    tag: Callable[[Any], str] | None = None

    @property
    def value(self) -> Any:
        """The canonical value of the default: the paper's protocol."""
        return self.read(self.default, self.name)

    @property
    def beyond_paper(self) -> bool:
        return self.title is not None


AXIS = "spatialstale.axis"
"""The field metadata key holding a field's :class:`Axis`."""


def axis(
    default: Any,
    help: str,
    *,
    read: Reader | None = None,
    values: Sequence[str] = (),
    title: str | None = None,
    flag: str | None = None,
    in_id: Callable[[Any], str] | None = None,
    show: Callable[[Any], str] = str,
    recorded: bool = False,
    task_meta: bool = True,
    tag: Callable[[Any], str] | None = None,
) -> Any:
    """A settings field that is an axis; its name is the field's. A closed vocabulary
    (``values``) is read as one of its values unless ``read`` says otherwise."""
    if read is None:
        if not values:
            raise ValueError("an axis needs a reader or its values")
        read = one_of(values)
    spec = {
        "default": default,
        "read": read,
        "help": help,
        "values": tuple(values),
        "title": title,
        "flag": flag,
        "in_id": in_id,
        "show": show,
        "recorded": recorded,
        "task_meta": task_meta,
        "tag": tag,
    }
    return field(default=read(default, "default"), metadata={AXIS: spec})


def axes_of(settings: Any) -> tuple[Axis, ...]:
    """The axes of a settings class (or of its instance; or of an extension's axes
    dataclass): its fields' in declaration order, then, for a task kind's settings, its
    extensions' as the registry holds them now (``GridSettings.extension_axes``)."""
    own = tuple(Axis(name=f.name, **f.metadata[AXIS]) for f in fields(settings) if AXIS in f.metadata)
    more = getattr(settings, "extension_axes", None)
    return own + more() if more is not None else own
