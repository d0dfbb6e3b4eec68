"""The settings of each task kind, one field an axis: the suite's vocabulary, declared once.

Every axis of an experiment (regime, modality, batch size, prompt set, filter mode,
fog, navigator, ...) is a field of :class:`GridSettings` (what the tasks that show a
grid share) or of a task kind's settings (:class:`DetectionSettings`,
:class:`PerceptionSettings`, :class:`NavigationSettings`), declared with :func:`axis`:
its ``-T`` name (the field's name), its default (the paper's protocol), its valid
values, its help text and, for an axis beyond the paper's protocol, the column that
names it. Everything else derives from these fields:

- the tasks read their ``-T`` values through :meth:`GridSettings.read` (one-line errors
  before any model call) and record :meth:`GridSettings.task_metadata` and
  :meth:`GridSettings.sample_metadata` in the log;
- the solvers take their keyword defaults from :data:`GRID`, :data:`NAVIGATION`, ...;
- the study's options, its matrix and its dry run, and the report's columns read the
  axes with :func:`axes_of` (``spatialstale.study``, ``spatialstale.report``).

A new axis is one field here (and its use where it changes behaviour).
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, fields
from types import SimpleNamespace
from typing import Any, ClassVar, Self, cast

from spatialstale.env import (
    DEFAULT_SIZE,
    MASTER_SEED,
    MAX_STEPS,
    N_DEFAULT_SEEDS,
    REGIMES,
    STATIC,
    RegimeError,
    make_instance,
    regime_source,
    validate_regime,
)
from spatialstale.env import default_seeds as derive_seeds

from ._axes import (
    Axis,
    as_list,
    at_least,
    axes_of,
    axis,
    boolean,
    integer,
    shown,
)
from ._errors import TaskParameterError, reported
from ._extensions import FILTER_MODES, FILTERS, check_extensions, extension_axes, extension_prompt
from ._navigators import NAVIGATOR_NAMES, NAVIGATORS, AgentNavigator, agent_name, navigator
from ._plugins import BUILTIN_STRATEGIES, DEFAULT_STRATEGIES, resolve_strategy
from ._prompt_sets import DEFAULT_PROMPT_SET, DEFAULT_PROMPTS, PROMPT_SETS, PromptSet, prompt_set_metadata
from ._prompts import (
    MODALITIES,
)

logger = logging.getLogger(__name__)

# --- readers: a -T value (or a study option's item) into its canonical value -----------


def regimes(value: object, name: str) -> tuple[str, ...]:
    """One or several change regimes: built-in names (``L1,L2,L3``, ``MA``, any case;
    ``none`` for a static grid), ``module:Class`` plug-ins or an installed plug-in's
    name (``spatialstale.env._plugins``), each resolved now, before any model call; the
    regimes' names, no duplicates."""
    chosen: list[str] = []
    for item in as_list(value, name):
        try:
            regime = validate_regime(item)
        except RegimeError as error:
            raise TaskParameterError(str(error)) from None
        if regime not in chosen:
            chosen.append(regime)
    return tuple(chosen)


def strategy_names(value: object, name: str) -> tuple[str, ...]:
    """Memory strategies: built-in names (any case), ``module:Class`` plug-ins or an
    installed plug-in's entry-point name (``_plugins``), each resolved now, before any
    model call; the strategies' names, no duplicates."""
    chosen: dict[str, type | None] = {}
    for item in as_list(value, name):
        strategy, cls = resolve_strategy(item)
        if chosen.get(strategy, cls) is not cls:
            raise TaskParameterError(f"{name}: {item!r} is named {strategy!r}, as another entry is")
        chosen[strategy] = cls
    return tuple(chosen)


UNKNOWN = "unknown"
"""The name of a task's ``**unknown`` parameter, which collects ``-T`` names it lacks."""


def with_axes_given(args: Mapping[str, object], names: Collection[str]) -> dict[str, object]:
    """The task's ``locals()`` with each of ``names`` passed through its ``**`` parameter
    (:data:`UNKNOWN`) taken as a parameter: an extension's axis that the task's signature
    does not name (one added to the registry since) is read like the others."""
    given = cast(Mapping[str, object], args.get(UNKNOWN) or {})
    out = {**args, **{name: value for name, value in given.items() if name in names}}
    out[UNKNOWN] = {name: value for name, value in given.items() if name not in names}
    return out


def unknown_names(args: Mapping[str, object], sibling_names: Collection[str] = (), names: Collection[str] = ()) -> None:
    """Fail on a ``-T`` name no task of the suite has, naming the valid ones and the closest.

    ``args`` is the task's ``locals()``: its parameters, and under :data:`UNKNOWN` the
    names it does not declare (Inspect passes every ``-T`` value to a task with a
    ``**`` parameter; to one without, it drops an unknown name with a warning). A name
    that another task of the suite has (``sibling_names``: a ``--task-config`` file
    shared by detection and navigation holds ``navigate_prompt``) is dropped with
    Inspect's warning instead: it is not a typo. ``names``: the task's names beyond its
    signature's (:func:`with_axes_given`), named among the valid ones.
    """
    unknown = args.get(UNKNOWN) or {}
    assert isinstance(unknown, Mapping)
    valid = sorted({name for name in args if name != UNKNOWN} | set(names))
    named = []
    for name in map(str, unknown):
        if name in sibling_names:
            logger.warning(f"param '{name}' not used by this task (it is a parameter of another spatialstale task)")
            continue
        close = difflib.get_close_matches(name, valid, n=1)
        named.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    if named:
        plural = "s" if len(named) > 1 else ""
        raise TaskParameterError(f"unknown task parameter{plural} {', '.join(named)}; valid: {', '.join(valid)}")


SEED_PARAMETERS = ("seeds", "n_seeds", "master_seed")
"""The ``-T`` names that choose the instances (:func:`seed_list`)."""


def seed_list(seeds: object, n_seeds: object, master_seed: object) -> tuple[int, ...]:
    """Explicit ``seeds`` when given, else the first ``n_seeds`` derived from ``master_seed``."""
    if seeds is None or seeds == "" or seeds == []:
        return derive_seeds(integer(master_seed, "master_seed", 0), integer(n_seeds, "n_seeds", 1))
    out: list[int] = []
    for item in as_list(seeds, "seeds"):
        seed = integer(item, "seeds", 0)
        if seed in out:
            raise TaskParameterError(f"seeds must be distinct; {seed} appears twice")
        out.append(seed)
    return tuple(out)


def prompt_text(value: object, name: str) -> str:
    """A custom system prompt: non-empty text, passed on unchanged. Only ``{size}`` is
    filled in; every other brace is literal, so JSON examples need no escaping.

    ``inspect eval`` splits a ``-T`` value at its commas (quoted or not), so a list of
    strings is joined back with the commas it was split at.
    """
    if isinstance(value, list) and value and all(isinstance(part, str) for part in value):
        value = ",".join(value)
    if isinstance(value, dict):
        raise TaskParameterError(
            f"{name} must be text; -T read it as a YAML mapping (it holds ': '): "
            "wrap the prompt in single quotes inside the -T value or pass it in a --task-config file"
        )
    if value is not None and not isinstance(value, str):
        raise TaskParameterError(f"{name} must be text; got {shown(value)}")
    if value is None or not value.strip():
        raise TaskParameterError(f"{name} must not be empty; got {value or ''!r}")
    return value


def named(value: object) -> str:
    """A value's part of a sample id: ``-unknown``."""
    return f"-{value}"


def agent_id(value: object) -> str:
    """A navigator's part of a sample id: ``-tools``; a user's agent by its function's
    name (``-scout`` for ``my_agents:scout``)."""
    chosen = navigator(str(value))
    return f"-{getattr(chosen, 'id_part', chosen.name)}"


REAUDITING = ("omcd", "oracle", "localverify")
"""The built-in strategies whose view changes during an episode (re-audits after a change
of the world, or audits near the agent at every step)."""


def tag_regimes(value: tuple[str, ...]) -> str:
    """``L2``, ``L1,L2,L3``; the static grid as ``regime=none`` (a bare ``none`` reads as nothing)."""
    return ",".join(value) if STATIC not in value else "regime=" + ",".join(value)


def tag_strategies(value: tuple[str, ...]) -> str:
    """``omcd``, ``nofilter+omcd``; the paper's five as ``5 strategies``."""
    return f"{len(value)} strategies" if set(value) == set(DEFAULT_STRATEGIES) else "+".join(value)


def tag_value(value: object, show: Callable[[Any], str] = str) -> str:
    """A value as a tag writes it after ``name=``: ``true``, ``1``, ``unknown``."""
    return str(value).lower() if isinstance(value, bool) else show(value)


def extension_values_given(cls: type[GridSettings], values: dict[str, Any]) -> dict[str, Any]:
    """The extension axes' values taken out of ``values`` (every axis's, by name), those
    away from their defaults kept: a settings' ``extensions``."""
    taken = {a: values.pop(a.name) for a in cls.extension_axes() if a.name in values}
    return {a.name: value for a, value in taken.items() if value != a.value}


# --- the settings of each task kind -------------------------------------------------------


@dataclass(frozen=True)
class GridSettings:
    """What every task that shows the grid of a detection window (or of a navigation
    step) shares. Construct it from ``-T`` values with :meth:`read`."""

    kind: ClassVar[str] = "grid"
    prompt_kinds: ClassVar[tuple[str, ...]] = ()
    """The call kinds whose system prompt the task sends, each a ``-T KIND_prompt``."""

    regime: tuple[str, ...] = axis(
        "L2",
        "L1, L2 or L3, or several (L1,L2,L3); MA (another agent's changes); a plug-in (module:Class, or an "
        "installed plug-in's name); metrics are grouped by regime",
        read=regimes,
        values=tuple(r for r in REGIMES if r != STATIC),
        tag=tag_regimes,
    )
    modality: str = axis(
        "text",
        "how the current grid is shown: text (a coordinate listing), vision (a PNG) or both",
        values=MODALITIES,
        recorded=True,
        tag=str,
    )
    batch_size: int = axis(
        10, "entries per audit call: ⌈n²/B⌉ calls per audit", read=at_least(1), recorded=True, tag=lambda b: f"B={b}"
    )
    size: int = axis(DEFAULT_SIZE, "grid side n (8; 16 and 32 work)", read=at_least(4))
    structured: bool = axis(
        False, "send a JSON response schema with every call (structured output); off in the paper", read=boolean
    )
    prompt_set: str = axis(
        DEFAULT_PROMPT_SET,
        "the named set of system prompts; an explicit -T KIND_prompt overrides the set's prompt of that kind",
        values=tuple(PROMPT_SETS),
        title="prompt set",
        flag="--prompt-sets",
    )
    seeds: tuple[int, ...] = derive_seeds(MASTER_SEED, N_DEFAULT_SEEDS)
    """The instance seeds: ``-T seeds``, else ``n_seeds`` derived from ``master_seed``."""
    prompts: Mapping[str, str] = field(default_factory=dict, hash=False)
    """The system prompt of each call kind the task sends (the set's, or a -T override)."""
    order: tuple[str, ...] = field(default=(), compare=False, repr=False)
    """The axes in the order the task's signature gives them, which its records follow."""
    extensions: Mapping[str, Any] = field(default_factory=dict, hash=False)
    """The extensions' axes given away from their defaults, by name (``_extensions``);
    read as attributes, as the task's own axes are."""

    def __post_init__(self) -> None:
        # a combination of values an extension cannot run: one line, before any model call
        # (the paper's protocol, every extension at its default, always runs)
        if self.extensions:
            check_extensions(self.kind, self.values())

    @classmethod
    def read(cls, args: Mapping[str, object]) -> Self:
        """The settings of a task's ``-T`` values (its keyword arguments), each checked.

        A bad value raises TaskParameterError, printed as one line (:func:`reported`).
        A ``KIND_prompt`` left at its default (the very object ``DEFAULT_PROMPTS[KIND]``,
        the task signature's default: ``-T`` and config files always pass new text) takes
        the prompt set's prompt; any other value overrides the set's prompt of that kind.

        Args:
            args: the task's parameters as given (``locals()`` at its start); one that
                is missing takes its default.
        """
        with reported():
            args = with_axes_given(args, cls.parameter_names())
            unknown_names(args, task_parameter_names(), cls.parameter_names())
            values = {a.name: a.read(args.get(a.name, a.default), a.name) for a in axes_of(cls)}
            values["order"] = tuple(name for name in args if name in values)
            values["seeds"] = seed_list(
                args.get("seeds"), args.get("n_seeds", N_DEFAULT_SEEDS), args.get("master_seed", MASTER_SEED)
            )
            chosen = PROMPT_SETS[values["prompt_set"]]
            given = {kind: args.get(f"{kind}_prompt", DEFAULT_PROMPTS[kind]) for kind in cls.prompt_kinds}
            values["prompts"] = {
                kind: cls.set_prompt(chosen, kind, values)
                if text is DEFAULT_PROMPTS[kind]
                else prompt_text(text, f"{kind}_prompt")
                for kind, text in given.items()
            }
            values["extensions"] = extension_values_given(cls, values)
            settings = cls(**values)
            settings.check_draws()
            return settings

    def check_draws(self) -> None:
        """Draw every instance of each plug-in regime now (the task draws them again from
        the cache): a draw that fails or breaks the rules every regime keeps is a bad
        ``-T regime`` (TaskParameterError, one line), found before any model call. The
        built-in regimes' draws are tested (``tests/env``)."""
        for regime in self.regime:
            if regime in REGIMES:
                continue
            for seed in self.seeds:
                try:
                    make_instance(seed, regime, self.size)
                except RegimeError as error:
                    raise TaskParameterError(str(error)) from None

    @classmethod
    def parameter_names(cls) -> tuple[str, ...]:
        """The ``-T`` names of this kind's task: its axes, its seeds and its prompts."""
        return (
            *(a.name for a in axes_of(cls)),
            *SEED_PARAMETERS,
            *(f"{kind}_prompt" for kind in cls.prompt_kinds),
        )

    @classmethod
    def defaults(cls) -> Any:
        """Each axis's default as a task signature gives it (``D.regime`` is ``"L2"``)."""
        return SimpleNamespace(**{a.name: a.default for a in axes_of(cls)})

    @classmethod
    def set_prompt(cls, prompt_set: PromptSet, kind: str, values: Mapping[str, Any]) -> str:
        """The prompt set's prompt of ``kind`` for these settings (``_extensions``' hooks applied)."""
        return extension_prompt(cls.kind, kind, values, prompt_set.prompt(kind))

    def prompt(self, kind: str) -> str:
        """The system prompt of ``kind`` the task sends: the one read from its ``-T``
        values, else (settings made in code) its prompt set's, made for these settings."""
        if kind in self.prompts:
            return self.prompts[kind]
        values = {a.name: getattr(self, a.name) for a in axes_of(self)}
        return self.set_prompt(PROMPT_SETS[self.prompt_set], kind, values)

    @property
    def prompt_record(self) -> dict[str, str | int]:
        """The prompt set's name and version and the hash of the prompts sent."""
        return prompt_set_metadata(PROMPT_SETS[self.prompt_set], self.prompts)

    def axes(self) -> list[Axis]:
        """The axes of these settings, in the task signature's order (else declared)."""
        declared = axes_of(self)
        rank = {name: i for i, name in enumerate(self.order)}
        return sorted(declared, key=lambda a: rank.get(a.name, len(rank) + declared.index(a)))

    def task_metadata(self) -> dict[str, object]:
        """What the task's log header records of its settings."""
        out: dict[str, object] = {}
        for a in self.axes():
            if a.task_meta and a.name != "prompt_set":  # the set is recorded last
                value = getattr(self, a.name)
                out["regimes" if a.name == "regime" else a.name] = list(value) if isinstance(value, tuple) else value
        return {**out, **self.plugin_record(), **self.prompt_record}

    def plugin_record(self) -> dict[str, object]:
        """``regime_sources``: each plug-in regime's class (``module:Class``), the code
        that drew its instances; nothing when every regime is built in."""
        sources = {r: regime_source(r) for r in self.regime if r not in REGIMES}
        return {"regime_sources": sources} if sources else {}

    def sample_metadata(self) -> dict[str, object]:
        """What every sample's metadata records of the settings (beside its instance)."""
        return {a.name: getattr(self, a.name) for a in self.axes() if a.recorded}

    def tags(self) -> list[str]:
        """The log's tags, one per axis, for the viewer's Tags column: the paper's axes
        always (``L2``, ``text``, ``B=10``, ``omcd`` / ``5 strategies``), every other axis
        only away from its default (``size=16``, ``prompt_set=minimal``),
        and ``KIND_prompt=custom`` for a system prompt given by ``-T``
        in place of the prompt set's.

        Each tag reads alone: Inspect merges them with ``--tags`` as a set, so the log
        need not keep this order.
        """
        out: list[str] = []
        for a in self.axes():
            value = getattr(self, a.name)
            if a.tag is not None:
                out.append(a.tag(value))
            elif a.task_meta and value != a.value:
                out.append(f"{a.name}={tag_value(value, a.show)}")
        values = self.values()
        chosen = PROMPT_SETS[self.prompt_set]
        out += [
            f"{kind}_prompt=custom"
            for kind in self.prompt_kinds
            if kind in self.prompts and self.prompts[kind] != self.set_prompt(chosen, kind, values)
        ]
        return out

    def values(self) -> dict[str, Any]:
        """Every axis's value, by name: what an extension's hooks read (``_seams``)."""
        return {a.name: getattr(self, a.name) for a in axes_of(self)}

    def extension_args(self) -> dict[str, Any]:
        """What the task passes its solver of this kind's extension axes, by name."""
        return {a.name: getattr(self, a.name) for a in self.extension_axes()}

    def replace(self, **values: Any) -> Self:
        """These settings with ``values`` (canonical, by axis name, an extension's axes
        too) in place of theirs: ``dataclasses.replace`` for settings whose extensions'
        axes are read at run time."""
        own = {f.name for f in fields(self)}
        extensions = {**self.extensions, **{n: v for n, v in values.items() if n not in own}}
        unknown = sorted(set(extensions) - {a.name for a in self.extension_axes()})
        if unknown:
            raise TypeError(f"{type(self).__name__} has no axis {', '.join(unknown)}")
        changed = {n: v for n, v in values.items() if n in own}
        everything = {**self.values(), **changed, **extensions}
        return dataclasses.replace(self, **changed, extensions=extension_values_given(type(self), everything))

    @classmethod
    def extension_axes(cls) -> tuple[Axis, ...]:
        """The axes of this kind's extensions, as the registry holds them now: the
        settings read them at run time, so an installed package's axes are read, checked
        and recorded as the built-ins' (``_extensions``)."""
        return extension_axes(cls.kind)

    def __getattr__(self, name: str) -> Any:
        # an extension's axis: its value as given, else its default (read when asked, so
        # the registry is read once every module, an installed extension's too, is loaded)
        given = self.__dict__.get("extensions", {})
        if name in given:
            return given[name]
        axis = next((a for a in type(self).extension_axes() if a.name == name), None) if name[0] != "_" else None
        if axis is None:
            raise AttributeError(f"{type(self).__name__!r} has no attribute {name!r}")
        return axis.value

    def id_suffix(self) -> str:
        """The sample id's part naming every axis set away from its default (``-unknown-r1``)."""
        return "".join(
            a.in_id(getattr(self, a.name)) for a in self.axes() if a.in_id and getattr(self, a.name) != a.value
        )


@dataclass(frozen=True)
class DetectionSettings(GridSettings):
    """The detection task's settings (``spatialstale/detection``)."""

    kind: ClassVar[str] = "detection"
    prompt_kinds: ClassVar[tuple[str, ...]] = ("audit",)


@dataclass(frozen=True)
class PerceptionSettings(GridSettings):
    """The perception probe's settings (``spatialstale/perception``)."""

    kind: ClassVar[str] = "perception"
    prompt_kinds: ClassVar[tuple[str, ...]] = ("perception",)


@dataclass(frozen=True)
class NavigationSettings(GridSettings):
    """The navigation task's settings (``spatialstale/navigation``)."""

    kind: ClassVar[str] = "navigation"
    prompt_kinds: ClassVar[tuple[str, ...]] = ("navigate", "audit", "selfverify")

    strategies: tuple[str, ...] = axis(
        DEFAULT_STRATEGIES,
        "the memory strategies, one sample each per seed: the paper's five by default; localverify, "
        "or a plug-in (module:Class, or an installed plug-in's name)",
        read=strategy_names,
        values=BUILTIN_STRATEGIES,
        tag=tag_strategies,
    )
    max_steps: int = axis(MAX_STEPS, "the step budget of an episode", read=at_least(1))
    episodes: int = axis(
        5,
        "epochs per sample (the paper's 5 episodes); --epochs overrides it",
        read=at_least(1),
        task_meta=False,  # Inspect records it as the log's epochs
    )
    filter: str = axis(
        FILTER_MODES[0].name,
        "how SelfVerify, OMCD and Oracle apply their flags: " + ", ".join(m.help for m in FILTER_MODES),
        values=FILTERS,
        title="filter",
        flag="--filters",
        in_id=named,
        recorded=True,
    )
    agent: str = axis(
        NAVIGATORS[0].name,
        "the navigator: " + " or ".join(n.help for n in NAVIGATORS),
        read=agent_name,
        values=NAVIGATOR_NAMES,
        title="agent",
        flag="--agents",
        in_id=agent_id,
        recorded=True,
    )
    verify_radius: int = axis(
        1,
        "LocalVerify: audit the memory entries within this Chebyshev distance of the agent",
        read=at_least(0),
        task_meta=False,  # only LocalVerify's samples record it: the paper's logs stay as they were
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        self.check_agent_memory()

    def check_agent_memory(self) -> None:
        """An agent that keeps its memory is seeded with the strategy's view once, at the
        start: a strategy whose view changes during an episode (a re-audit after the world
        changes, LocalVerify's audit at every step) would overwrite what the agent wrote,
        so it is refused with a regime that changes the world during the episode (one
        line, before any model call; the study skips the combination)."""
        chosen = navigator(self.agent)
        if isinstance(chosen, AgentNavigator) and self.prompts.get("navigate"):
            raise TaskParameterError(
                f"navigate_prompt: agent {self.agent} brings its own prompt (its function builds the agent); "
                "write the prompt there"
            )
        if chosen.channel != "files":
            return
        changing = [s for s in self.strategies if s in REAUDITING]
        if "localverify" in changing:
            raise TaskParameterError(
                f"strategies: localverify audits at every step, which would overwrite the memory agent {self.agent} "
                "keeps; choose nomemory, nofilter, selfverify, omcd or oracle"
            )
        online = [r for r in self.regime if self._changes_during(r)]
        if changing and online:
            raise TaskParameterError(
                f"strategies: {', '.join(changing)} re-audit(s) when the world changes during the episode "
                f"({', '.join(online)}), which would overwrite the memory agent {self.agent} keeps; "
                "run them with a regime that changes the world before the episode (L1, L2), or choose nomemory, "
                "nofilter or selfverify"
            )

    def _changes_during(self, regime: str) -> bool:
        try:
            return any(make_instance(seed, regime, self.size).schedule for seed in self.seeds)
        except RegimeError:
            return False  # check_draws reports the regime's own error

    @classmethod
    def set_prompt(cls, prompt_set: PromptSet, kind: str, values: Mapping[str, Any]) -> str:
        # a prompt set's navigation prompt is for the paper's navigator; another has its own
        own = navigator(values["agent"]).system_prompt() if kind == "navigate" else None
        return super().set_prompt(prompt_set, kind, values) if own is None else own


GRID = GridSettings()
DETECTION = DetectionSettings()
PERCEPTION = PerceptionSettings()
NAVIGATION = NavigationSettings()
"""The defaults of each task kind: the paper's protocol."""

SETTINGS: dict[str, type[GridSettings]] = {
    s.kind: s for s in (DetectionSettings, NavigationSettings, PerceptionSettings)
}
"""Each task kind's settings, by task name."""


def task_parameter_names() -> frozenset[str]:
    """Every ``-T`` name some task of the suite has."""
    return frozenset(name for kind in SETTINGS.values() for name in kind.parameter_names())
