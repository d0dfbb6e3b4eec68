"""Inspect's ``eval-set`` options, passed through to :func:`inspect_ai.eval_set`.

``spatialstale study`` takes every option of ``inspect eval-set`` (``-M``,
``--model-role``, ``--generate-config``, ``--temperature``, ``--max-connections``,
``--token-limit``, ``--retry-on-error``, ...) beside its own, and hands them to
``eval_set`` read exactly as ``inspect eval-set`` reads them. Why this route: Inspect
turns its command line into ``eval_set``'s keyword arguments in the body of its own
click command (the options' types and callbacks, then ``eval_exec``), and no public
function does it; a copy of that reading (this module once mirrored 35 flags by hand)
lags every Inspect release and reads some values differently. So the options the
study does not know go to that very command, run with ``eval_set`` stood in for by a
function that keeps its keyword arguments; the study keeps those the options changed
(against the same command given none). Inspect's own errors (a misspelt flag, a bad
value, an unreadable config file) come back as one line before any model call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from contextlib import suppress
from typing import Any
from unittest.mock import patch

import click
import fsspec
import yaml
from click.core import ParameterSource

# Inspect's eval-set command, whose body reads its options (no public handle; see above)
from inspect_ai._cli import eval as inspect_cli  # inspect-evals-lint: ignore[private_api_imports] -- see above

NOT_PASSED = {
    "tasks": "a task",
    "t": "-T",
    "task_config": "--task-config",
    "solver": "--solver",
    "s": "-S",
    "solver_config": "--solver-config",
    "epochs": "--epochs (the study's is --episodes)",
    "epochs_reducer": "--epochs-reducer",
    "no_epochs_reducer": "--no-epochs-reducer",
    "limit": "--limit (the study's is --n-seeds)",
    "sample_id": "--sample-id (the study's is --seeds)",
    "sample_shuffle": "--sample-shuffle",
    "model_spec": "--model-spec",
    "run_config": "--run-config",
    "json_output": "--json",
    "detach": "--detach",
}
"""Inspect's options that would change the study's tasks, samples or epochs (the
study's own options set them: its cells are what it accounts for), or its output."""
COMMANDLINE = ParameterSource.COMMANDLINE
AT_LEAST_ONE = ("max_connections", "max_samples", "max_tasks", "timeout", "attempt_timeout")
"""Counts and seconds that 0 (or less) would make meaningless: no connection, no time."""


_MARKUP = re.compile(r"\[/?(?:bold|blue|red|yellow|green|italic)[^\]]*\]")


def one_line(message: str) -> str:
    """A message of Inspect's for the terminal (rich markup, several lines) as one plain line."""
    return " ".join(_MARKUP.sub("", message).split()).removeprefix("ERROR: ")


def _read(argv: Sequence[str]) -> tuple[dict[str, Any], set[str]]:
    """``eval_set``'s keyword arguments as ``inspect eval-set`` makes them of ``argv``,
    and the names of the options ``argv`` gave."""
    command, kept = inspect_cli.eval_set_command, {}

    def keep(**params: Any) -> tuple[bool, list[Any]]:
        kept.update(params)
        return True, []

    try:
        ctx = command.make_context("spatialstale study", list(argv))
    except click.ClickException as error:
        raise ValueError(one_line(error.format_message())) from None
    given = {p.name for p in command.params if p.name and ctx.get_parameter_source(p.name) is COMMANDLINE}
    refused = [flag for name, flag in NOT_PASSED.items() if name in given]
    if refused:
        raise ValueError(f"not passed to Inspect, the study sets it: {', '.join(refused)}")
    ctx.params.update(detach=False, json_output=False)  # nor from the environment
    try:
        with ctx, patch.object(inspect_cli, "eval_set", keep), suppress(click.exceptions.Exit):
            command.invoke(ctx)
    except Exception as error:  # Inspect's reading of a value or a file
        raise ValueError(one_line(str(getattr(error, "message", None) or error) or type(error).__name__)) from None
    return kept, given


def eval_set_options(argv: Sequence[str]) -> dict[str, Any]:
    """The :func:`inspect_ai.eval_set` keyword arguments that the ``inspect eval-set``
    options in ``argv`` set (``model_roles`` among them).

    Raises:
        ValueError: in one line, for an option Inspect does not know or a value it refuses.
    """
    options, given = _read(argv)
    default, _ = _read([])
    options = {key: value for key, value in options.items() if key not in default or default[key] != value}
    if "retry_on_error" in given:  # Inspect reads 0 as no value; over the study's default, 0 means none
        options.setdefault("retry_on_error", 0)
    for key in AT_LEAST_ONE:
        if key in options and options[key] < 1:
            raise ValueError(f"--{key.replace('_', '-')} must be a whole number of at least 1; got {options[key]}")
    if "cost_limit" in options and "model_cost_config" not in options:
        raise ValueError("--cost-limit needs --model-cost-config (the prices the cost is counted from)")
    return options


def read_config_file(path: str, what: str) -> dict[str, Any]:
    """A YAML or JSON mapping read from a file (local, or any URL fsspec opens).

    Raises:
        ValueError: for a missing or unreadable file, in one line naming ``what``.
    """
    try:
        with fsspec.open(path, "r", encoding="utf-8") as handle:
            text = handle.read()
        data = json.loads(text) if text.strip().startswith("{") else yaml.safe_load(text)
    except FileNotFoundError:
        raise ValueError(f"{what} {path!r} could not be read: the file does not exist") from None
    except Exception as error:  # YAML, JSON and fsspec errors alike
        first = (str(error).splitlines() or [type(error).__name__])[0]
        raise ValueError(f"{what} {path!r} could not be read: {first}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{what} {path!r} could not be read: it holds no mapping")
    return dict(data)
