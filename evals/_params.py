"""Validation of ``-T`` task parameters: one-line errors before any model call."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from inspect_ai.dataset import Sample

from spatialstale.env import REGIMES, default_seeds, validate_regime
from spatialstale.solvers import MODALITIES, OBSERVATIONS, PROMPT_SETS, PromptSet, prompt_set_metadata

try:
    # Inspect's CLI exits 1 on a SilentException without printing anything (no
    # traceback in any display mode); it is not public API, so fall back to a plain
    # exception, which Python shows with a traceback.
    from inspect_ai._util.error import SilentException as _QuietExit
except ImportError:  # pragma: no cover
    _QuietExit = Exception  # type: ignore[misc,assignment]


class TaskParameterError(ValueError, _QuietExit):
    """A bad ``-T`` value: a ValueError whose message :func:`reported` prints as one line.

    Not Inspect's PrerequisiteError: its CLI prints that through the rich console,
    which ``--display none`` makes quiet, so the message would be lost.
    """

    reported = False
    """True once the message is printed, so a caller does not print it again."""

    def __init__(self, message: str) -> None:
        ValueError.__init__(self, message)
        self.message = message

    def __str__(self) -> str:
        return str(self.args[0])


@contextmanager
def reported() -> Iterator[None]:
    """Print a TaskParameterError raised inside as one line on stderr, then re-raise it.

    The task prints the line itself because Inspect's CLI shows nothing for this
    error under ``--display none``; the error stays silent to the CLI otherwise, so
    every display mode shows the same single line on stderr and exits 1.
    """
    try:
        yield
    except TaskParameterError as error:
        print(error, file=sys.stderr, flush=True)
        error.reported = True
        raise


STUDY_REGIMES = tuple(r for r in REGIMES if r != "none")


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


def choices(value: object, valid: Sequence[str], name: str) -> list[str]:
    """Each named value, case-insensitive, canonical spelling, no duplicates."""
    chosen: list[str] = []
    for item in as_list(value, name):
        match = next((v for v in valid if v.lower() == item.lower()), None)
        if match is None:
            raise TaskParameterError(f"{name} must be one of {', '.join(valid)}; got {item!r}")
        if match not in chosen:
            chosen.append(match)
    return chosen


def choice(value: object, valid: Sequence[str], name: str) -> str:
    if not isinstance(value, str) or "," in value:
        raise TaskParameterError(f"{name} must be one of {', '.join(valid)}; got {value!r}")
    return choices(value, valid, name)[0]


def regimes(value: object) -> list[str]:
    chosen = []
    for item in as_list(value, "regime"):
        try:
            regime = validate_regime(item)
        except ValueError:
            raise TaskParameterError(
                f"regime must be one of {', '.join(STUDY_REGIMES)} (or none); got {item!r}"
            ) from None
        if regime not in chosen:
            chosen.append(regime)
    return chosen


def integer(value: object, name: str, minimum: int) -> int:
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise TaskParameterError(f"{name} must be an integer of at least {minimum}; got {value or ''!r}")
    return value


def seed_list(seeds: object, n_seeds: object, master_seed: object) -> list[int]:
    """Explicit ``seeds`` when given, else the first ``n_seeds`` derived from ``master_seed``."""
    if seeds is None or seeds == "" or seeds == []:
        n = integer(n_seeds, "n_seeds", 1)
        return list(default_seeds(integer(master_seed, "master_seed", 0), n))
    out: list[int] = []
    for item in as_list(seeds, "seeds"):
        seed = integer(item, "seeds", 0)
        if seed in out:
            raise TaskParameterError(f"seeds must be distinct; {seed} appears twice")
        out.append(seed)
    return out


_TRUE = ("true", "yes", "1", "on")
_FALSE = ("false", "no", "0", "off")


def boolean(value: object, name: str) -> bool:
    """A flag given as a bool or as true/false, yes/no, 1/0, on/off (any case)."""
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower() if isinstance(value, str | int) else None
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise TaskParameterError(f"{name} must be one of true, false (or yes/no, 1/0, on/off); got {value!r}")


def _shown(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
        raise TaskParameterError(f"{name} must be text; got {_shown(value)}")
    if value is None or not value.strip():
        raise TaskParameterError(f"{name} must not be empty; got {value or ''!r}")
    return value


def prompt_set_prompts(
    prompt_set: object, prompts: Mapping[str, tuple[object, str]]
) -> tuple[PromptSet, dict[str, str]]:
    """The named prompt set and the prompt of each call kind a task sends.

    Args:
        prompt_set: the ``-T prompt_set`` value, one of ``PROMPT_SETS`` (any case).
        prompts: call kind (``audit``, ``navigate``, ...) -> (the ``-T KIND_prompt``
            value, that parameter's default). A parameter left at its default (the
            very default object: ``-T`` and config files always pass new text) takes
            the set's prompt; any other value overrides the set's prompt for that
            kind and is validated by :func:`prompt_text`.
    """
    chosen = PROMPT_SETS[choice(prompt_set, tuple(PROMPT_SETS), "prompt_set")]
    texts = {
        kind: chosen.prompt(kind) if value is default else prompt_text(value, f"{kind}_prompt")
        for kind, (value, default) in prompts.items()
    }
    return chosen, texts


@dataclass(frozen=True)
class GridTaskParams:
    """The validated parameters the tasks that show the grid of each detection window
    share (detection and perception), and what their logs record of them."""

    regimes: list[str]
    modality: str
    batch_size: int
    size: int
    seeds: list[int]
    prompt_set: PromptSet
    prompts: dict[str, str]
    """The system prompt of each call kind the task sends."""
    structured: bool
    observation: str

    @property
    def prompt_record(self) -> dict[str, str | int]:
        """The prompt set's name and version and the hash of the prompts sent."""
        return prompt_set_metadata(self.prompt_set, self.prompts)

    def recorded(self, samples: list[Sample]) -> list[Sample]:
        """``samples``, each with the prompt record added to its metadata."""
        record = self.prompt_record
        for sample in samples:
            sample.metadata = {**(sample.metadata or {}), **record}
        return samples

    @property
    def task_metadata(self) -> dict[str, object]:
        return {
            "regimes": self.regimes,
            "modality": self.modality,
            "batch_size": self.batch_size,
            "size": self.size,
            "structured": self.structured,
            "observation": self.observation,
            **self.prompt_record,
        }


def grid_task_params(
    *,
    regime: object,
    modality: object,
    batch_size: object,
    seeds: object,
    n_seeds: object,
    master_seed: object,
    size: object,
    prompt_set: object,
    prompts: Mapping[str, tuple[object, str]],
    structured: object,
    observation: object,
) -> GridTaskParams:
    """Validate the shared parameters, in the order the task signatures give them, and
    print a bad one as one line (:func:`reported`); ``prompts`` as in
    :func:`prompt_set_prompts`."""
    with reported():
        regime_list = regimes(regime)
        chosen_modality = choice(modality, MODALITIES, "modality")
        batch = integer(batch_size, "batch_size", 1)
        side = integer(size, "size", 4)
        seed_values = seed_list(seeds, n_seeds, master_seed)
        chosen, texts = prompt_set_prompts(prompt_set, prompts)
        return GridTaskParams(
            regimes=regime_list,
            modality=chosen_modality,
            batch_size=batch,
            size=side,
            seeds=seed_values,
            prompt_set=chosen,
            prompts=texts,
            structured=boolean(structured, "structured"),
            observation=choice(observation, OBSERVATIONS, "observation"),
        )
