"""Model, generation and run options of ``spatialstale study``, as ``inspect eval-set`` takes them.

The study hands these options to :func:`inspect_ai.eval_set`, as keyword arguments,
in the form ``inspect eval-set`` gives them: ``-M`` and ``--model-role`` values are
YAML after ``=`` (a plain comma-separated value becoming a list), config files YAML
or JSON, and ``--token-limit`` is passed as written (``500k``, ``output:1m``) for
Inspect to read. Inspect's own command-line parsers are not public API, so the few
lines that read ``KEY=VALUE`` are ours; ``tests/study/test_study.py`` checks that the
values reach the logs typed as ``inspect eval`` types them.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from typing import Any

import fsspec
import yaml
from inspect_ai.model import GenerateConfig, Model, get_model
from pydantic import ValidationError


def positive(text: str) -> int:
    """A whole number of at least 1 (a count or a number of seconds that 0 would make
    meaningless: no connection, no time for an attempt)."""
    value = int(text) if text.strip().lstrip("+").isdigit() else 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1; got {text!r}")
    return value


_GENERATE: tuple[tuple[str, Callable[[str], Any], str], ...] = (
    ("--temperature", float, "sampling temperature"),
    ("--top-p", float, "nucleus sampling mass"),
    ("--top-k", int, "sample from the k most likely tokens"),
    ("--max-tokens", int, "maximum tokens a completion may use"),
    ("--seed", int, "random seed of the model's sampling (also the auditor's)"),
    ("--frequency-penalty", float, "-2.0..2.0"),
    ("--presence-penalty", float, "-2.0..2.0"),
    ("--reasoning-effort", str, "none, minimal, low, medium, high, xhigh or max"),
    ("--reasoning-tokens", int, "reasoning token budget"),
    ("--reasoning-summary", str, "none, concise, detailed or auto"),
    ("--reasoning-history", str, "none, all, last or auto"),
    ("--effort", str, "low, medium, high, xhigh or max (Anthropic)"),
    ("--verbosity", str, "low, medium or high (OpenAI)"),
    ("--max-connections", positive, "concurrent connections per model"),
    ("--max-retries", int, "retries of a failed request (default: no limit, with backoff)"),
    ("--timeout", positive, "seconds a request may take, retries included"),
    ("--attempt-timeout", positive, "seconds one attempt of a request may take (study default: 600)"),
)
_RUN: tuple[tuple[str, Callable[[str], Any], str], ...] = (
    ("--max-samples", positive, "samples run in parallel per task"),
    ("--max-tasks", positive, "tasks run in parallel"),
    ("--message-limit", int, "messages a sample may hold"),
    ("--token-limit", str, "tokens a sample may use (500000, 500k, output:1m)"),
    ("--turn-limit", int, "model turns a sample may take"),
    ("--time-limit", int, "seconds (clock) a sample may run"),
    ("--working-limit", int, "seconds a sample may work (excluding waits)"),
    ("--cost-limit", float, "dollars a sample may spend (needs --model-cost-config)"),
    ("--model-cost-config", str, "YAML/JSON prices ($ per million tokens) of each model"),
    ("--retry-attempts", int, "eval-set retries of failed tasks (default 10)"),
    ("--retry-wait", float, "seconds before the first eval-set retry"),
    ("--retry-connections", float, "connection share kept on each retry (0..1)"),
    ("--max-subprocesses", int, "subprocesses run in parallel"),
    ("--log-buffer", int, "samples buffered before writing a log"),
)
RUN_KEYS = tuple(flag[2:].replace("-", "_") for flag, _, _ in _RUN)
GENERATE_KEYS = tuple(flag[2:].replace("-", "_") for flag, _, _ in _GENERATE)


def _typed(convert: Callable[[str], Any], flag: str) -> Callable[[str], Any]:
    def parse(value: str) -> Any:
        try:
            return convert(value)
        except ValueError as error:
            raise argparse.ArgumentTypeError(f"{flag}: {error}") from None

    parse.__name__ = getattr(convert, "__name__", "value")
    return parse


def _int_or_bool(value: str) -> int | bool:
    lowered = value.lower()
    if lowered in ("true", "yes"):
        return True
    if lowered in ("false", "no"):
        return False
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected true, false or an integer; got {value!r}") from None


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """The ``inspect eval-set`` options a study forwards, in two argument groups."""
    model = parser.add_argument_group("model and generation (as inspect eval-set)")
    model.add_argument(
        "-M", dest="model_arg", action="append", metavar="KEY=VALUE", help="model argument (YAML value; repeat)"
    )
    model.add_argument("--model-config", help="YAML or JSON file of model arguments (-M wins)")
    model.add_argument("--model-base-url", help="base URL of the model API (e.g. a vLLM server)")
    model.add_argument(
        "--model-role",
        action="append",
        metavar="ROLE=MODEL",
        help="bind a model role, e.g. auditor=openai/gpt-4o or 'auditor={model: vllm/x, temperature: 0}'",
    )
    model.add_argument("--generate-config", help="YAML or JSON file of GenerateConfig (the options below win)")
    for flag, convert, text in _GENERATE:
        model.add_argument(flag, type=_typed(convert, flag), help=text)
    model.add_argument("--stop-seqs", help="comma-separated stop sequences")
    model.add_argument("--cache-prompt", choices=["auto", "true", "false"], help="provider prompt caching")
    run = parser.add_argument_group("running (as inspect eval-set)")
    for flag, convert, text in _RUN:
        run.add_argument(flag, type=_typed(convert, flag), help=text)
    run.add_argument(
        "--retry-on-error",
        nargs="?",
        const="true",
        type=_int_or_bool,
        help="rerun an errored sample (once, or N times; study default: 10, 0 for none)",
    )
    run.add_argument(
        "--fail-on-error",
        type=_typed(float, "--fail-on-error"),
        help="fail a task when this many (>= 1) or this share (< 1) of samples error",
    )
    run.add_argument("--no-fail-on-error", action="store_true", help="never fail a task for errored samples")
    fail = run.add_mutually_exclusive_group()
    fail.add_argument(
        "--continue-on-fail", action="store_true", help="keep running the samples of a failing task (study default)"
    )
    fail.add_argument(
        "--no-continue-on-fail", action="store_true", help="stop a task at its first sample that errors for good"
    )
    run.add_argument(
        "--log-dir-allow-dirty",
        action="store_true",
        help="let the log dir hold logs of other eval sets (another matrix); the study counts only its own",
    )
    run.add_argument(
        "--no-log-realtime",
        action="store_true",
        help="no realtime sample buffer: samples show in inspect view only once done (less CPU per call)",
    )


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


def key_values(items: Sequence[str] | None, what: str) -> dict[str, Any]:
    """``KEY=VALUE`` options as ``inspect eval`` reads ``-M``: the value is YAML, a text
    value with commas a list, and dashes in the key become underscores.

    Raises:
        ValueError: for an item without ``=`` or a value that is not YAML.
    """
    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{what} takes KEY=VALUE; got {item!r}")
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError as error:
            raise ValueError(f"{what} {item!r}: {str(error).splitlines()[0]}") from None
        if isinstance(value, str) and "," in value:
            value = value.split(",")
        out[key.strip().replace("-", "_")] = value
    return out


def generate_config(args: argparse.Namespace) -> GenerateConfig:
    """The GenerateConfig of the command line: ``--generate-config`` overlaid by each option.

    Raises:
        ValueError: for a value GenerateConfig rejects (one line naming the option).
    """
    values: dict[str, Any] = read_config_file(args.generate_config, "--generate-config") if args.generate_config else {}
    for key in GENERATE_KEYS:
        if getattr(args, key) is not None:
            values[key] = getattr(args, key)
    if args.stop_seqs is not None:
        values["stop_seqs"] = [s for s in args.stop_seqs.split(",") if s]
    if args.cache_prompt is not None:
        values["cache_prompt"] = {"true": True, "false": False}.get(args.cache_prompt, args.cache_prompt)
    try:
        return GenerateConfig(**values)
    except ValidationError as error:
        first = error.errors()[0]
        field = "--" + str(first["loc"][0]).replace("_", "-") if first["loc"] else "--generate-config"
        raise ValueError(f"{field}: {first['msg']}") from None


def model_roles(args: argparse.Namespace, auditor: str | None) -> dict[str, Any] | None:
    """``--model-role`` bindings, with ``--auditor M`` as ``auditor=M``: a model name
    stays a name; a mapping (``{model: M, temperature: 0, model_args: {...}}``) becomes
    a model with that generation config and those arguments.

    Raises:
        ValueError: for an unreadable role or the auditor bound twice.
    """
    roles: dict[str, Any] = {}
    for role, value in key_values(args.model_role, "--model-role").items():
        roles[role] = _role_model(role, value)
    if auditor is not None:
        if "auditor" in roles:
            raise ValueError("the auditor is bound twice: use --auditor M or --model-role auditor=M, not both")
        roles["auditor"] = auditor
    return roles or None


def _role_model(role: str, value: object) -> str | Model | list[str | Model]:
    if isinstance(value, list):
        return [_role_model(role, item) for item in value if item != ""]  # type: ignore[misc]
    if isinstance(value, str):
        return value.strip()
    if not isinstance(value, dict) or not isinstance(value.get("model"), str):
        raise ValueError(f"--model-role {role}: give a model name or a mapping with its model; got {value!r}")
    params = dict(value)
    name = params.pop("model")
    model_args = params.pop("model_args", {})
    if not isinstance(model_args, dict):
        raise ValueError(f"--model-role {role}: model_args must be a mapping; got {model_args!r}")
    try:
        config = GenerateConfig(**params)
    except ValidationError as error:
        raise ValueError(f"--model-role {role}: {error.errors()[0]['msg']}") from None
    # one model object per role, so that each role's usage is its own (as Inspect does)
    return get_model(  # inspect-evals-lint: ignore[get_model_location] -- a --model-role value
        name, config=config, memoize=False, **model_args
    )


def eval_set_options(args: argparse.Namespace) -> dict[str, Any]:
    """Every forwarded option the command line set, as :func:`inspect_ai.eval_set` keywords.

    Raises:
        ValueError: for an unreadable file or a value Inspect would reject.
    """
    options: dict[str, Any] = {}
    model_args = key_values(args.model_arg, "-M")
    if args.model_config:
        model_args = read_config_file(args.model_config, "--model-config") | model_args
    if model_args:
        options["model_args"] = model_args
    if args.model_base_url:
        options["model_base_url"] = args.model_base_url
    options.update(generate_config(args).model_dump(exclude_none=True))
    for key in RUN_KEYS:
        if getattr(args, key) is not None:
            options[key] = getattr(args, key)
    if args.fail_on_error is not None and args.no_fail_on_error:
        raise ValueError("--fail-on-error and --no-fail-on-error contradict each other")
    if args.fail_on_error is not None:
        options["fail_on_error"] = args.fail_on_error
    elif args.no_fail_on_error:
        options["fail_on_error"] = False
    if args.continue_on_fail or args.no_continue_on_fail:
        options["continue_on_fail"] = bool(args.continue_on_fail)
    if args.no_log_realtime:
        options["log_realtime"] = False
    if args.log_dir_allow_dirty:
        options["log_dir_allow_dirty"] = True
    if args.retry_on_error is not None:  # true: once; false: never (over the study's default)
        options["retry_on_error"] = int(args.retry_on_error)
    if "cost_limit" in options and "model_cost_config" not in options:
        raise ValueError("--cost-limit needs --model-cost-config (the prices the cost is counted from)")
    return options
