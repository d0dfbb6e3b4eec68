"""Inspect logs into two tidy tables (``inspect_ai.analysis`` into pandas).

- ``detection``: one row per (model, regime, modality, batch size, seed) with the
  score values (precision, recall, f1, confusion counts, calls, ...) and, from the
  score metadata, the thaw/freeze counts and the flag counts by claim x truth.
- ``navigation``: one row per (model, regime, modality, strategy, seed, epoch) with
  the outcome, steps, reward, fallbacks and ``died_on_stale``, and the cell's prompt
  set, filter mode, view radius (``full`` without fog) and agent (``prompt`` or
  ``tools``); a log from before an axis existed ran the paper's value of it.

The model of a row is the log's model, with `` (auditor X)`` appended when an
``auditor`` role bound a different model. When several logs hold the same row
(a task run twice outside an eval set), the newest log wins. A log that did not
finish is *superseded* when a complete log of the same cell (task, model, roles and
task arguments) sits beside it, as a resumed eval set leaves it; its samples are
not read. ``log_dir`` may be a local folder or a URL Inspect reads (``s3://...``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from inspect_ai.analysis import ColumnError, EvalColumn, SampleColumn, evals_df, samples_df
from inspect_ai.log import EvalLog, EvalSample, EvalSampleSummary, list_eval_logs, read_eval_log

DETECTION_SCORER = "stale_f1"
NAVIGATION_SCORER = "episode_outcome"
FLAG_CELLS = ("SAFE_safe", "SAFE_hole", "DANGER_hole", "DANGER_safe")
"""Claim x current truth: SAFE_hole is a thaw (deadly stale), DANGER_safe a freeze."""
OUTCOMES = ("success", "death", "timeout")

DETECTION_KEYS = ("model", "regime", "modality", "batch_size", "seed")
NAVIGATION_KEYS = ("model", "regime", "modality", "strategy", "seed", "epoch")
PROMPT_SET_KEY = "prompt_set"
"""Runs of one cell under different prompt sets are different rows, not reruns."""
FILTER_KEY = "filter"
"""Navigation runs under different filter modes (``-T filter``) are different rows, not reruns."""
VIEW_KEY = "view_radius"
"""Navigation runs under fog (``-T view_radius``) are different rows: the radius as text,
``full`` for the paper's full view."""
AGENT_KEY = "agent"
"""Navigation runs of the tool-calling navigator (``-T agent=tools``) are different rows."""
FULL_VIEW = "full"
PROMPT_AGENT = "prompt"


class LogError(Exception):
    """The log directory holds no readable SpatialSTALE log."""


@dataclass
class Results:
    """Everything the report reads, plus what could not be read."""

    detection: pd.DataFrame
    navigation: pd.DataFrame
    logs: pd.DataFrame
    """One row per log: path, task, model, status, samples expected and completed,
    ``superseded``, and the model usage as JSON."""
    problems: list[str] = field(default_factory=list)
    log_dir: str = ""
    """Where the logs were read from, as given."""
    perception: pd.DataFrame = field(default_factory=pd.DataFrame)
    """The perception probe's rows (``analysis._probe.read_perception_logs``), if any."""


def model_label(model: str, roles: object) -> str:
    """``model``, or ``model (auditor X)`` when the auditor role is another model."""
    auditor = None
    if isinstance(roles, str) and roles.strip():
        try:
            roles = json.loads(roles)
        except json.JSONDecodeError:
            roles = None
    if isinstance(roles, Mapping):
        entry = roles.get("auditor")
        if isinstance(entry, Mapping):
            auditor = entry.get("model")
        elif isinstance(entry, str):
            auditor = entry
        elif entry is not None:
            auditor = getattr(entry, "model", None)
    return model if not auditor or auditor == model else f"{model} (auditor {auditor})"


def _score_part(scorer: str, part: str) -> Callable[[Any], Any]:
    def extract(sample: EvalSample | EvalSampleSummary) -> Any:
        score = (sample.scores or {}).get(scorer)
        if score is None:
            return None
        return json.dumps(getattr(score, part), default=str)

    return extract


_LOG_COLUMNS = [
    EvalColumn("eval_id", path="eval.eval_id", required=True),
    EvalColumn("log", path=lambda log: log.location, required=True),
    EvalColumn("created", path="eval.created", required=True),
    EvalColumn("task_name", path="eval.task", required=True),
    EvalColumn("model", path="eval.model", required=True),
    EvalColumn("model_roles", path=lambda log: _roles_json(log)),
    EvalColumn("status", path="status", required=True),
    EvalColumn("total_samples", path="eval.dataset.samples"),
    EvalColumn("epochs", path="eval.config.epochs"),
    EvalColumn("completed_samples", path="results.completed_samples"),
    EvalColumn("task_args", path=lambda log: json.dumps(log.eval.task_args_passed, sort_keys=True, default=str)),
    EvalColumn("model_usage", path=lambda log: _usage_json(log)),
]
CELL_COLUMNS = ["task_name", "model", "model_roles", "task_args"]
"""What makes two logs the same cell of a study: a resumed cell has a new log."""


def _usage_json(log: EvalLog) -> str | None:
    usage = log.stats.model_usage if log.stats else None
    if not usage:
        return None
    return json.dumps({model: u.model_dump(exclude_none=True) for model, u in usage.items()})


def _roles_json(log: EvalLog) -> str | None:
    roles = log.eval.model_roles
    if not roles:
        return None
    return json.dumps(
        {role: {"model": getattr(config, "model", None) or str(config)} for role, config in roles.items()}
    )


def _sample_columns(scorer: str, full: bool) -> list[SampleColumn]:
    return [
        SampleColumn("id", path="id", required=True),
        SampleColumn("epoch", path="epoch", required=True),
        SampleColumn("metadata_*", path="metadata", full=full),
        SampleColumn("value", path=_score_part(scorer, "value"), full=full),
        SampleColumn("answer", path=_score_part(scorer, "answer"), full=full),
        *([SampleColumn("score_metadata", path=_score_part(scorer, "metadata"), full=True)] if full else []),
        SampleColumn("error", path="error", default=""),
    ]


def _column_problem(error: ColumnError) -> str:
    return f"could not read {error.column} from {error.log.location}: {error.error}"


def _kind(task_name: str) -> str | None:
    name = task_name.rsplit("/", 1)[-1]
    return name if name in ("detection", "navigation", "perception") else None


def read_logs(log_dir: str | Path) -> Results:
    """Read every SpatialSTALE log under ``log_dir`` (a folder or a URL such as
    ``s3://bucket/prefix``).

    Raises:
        LogError: when the directory does not exist, holds no Inspect log, or none of
            its logs can be read as a SpatialSTALE detection or navigation log.
    """
    location = str(log_dir)
    try:
        infos = list_eval_logs(location)
    except FileNotFoundError:
        infos = []
    if not infos:
        if "://" not in location and not Path(location).is_dir():
            raise LogError(f"no log directory at {location}")
        raise LogError(f"no Inspect logs (.eval or .json) in {location}")
    problems: list[str] = []
    by_eval: dict[str, str] = {}
    for info in infos:
        try:
            eval_id = read_eval_log(info.name, header_only=True).eval.eval_id
        except Exception as error:  # any reader failure means the file is not a usable log
            problems.append(f"unreadable log {info.name}: {type(error).__name__}: {str(error)[:200]}")
            continue
        # A copy of a log (as in a viewer bundle written inside the log directory)
        # repeats its eval id; the shallowest path is the original.
        known = by_eval.get(eval_id)
        if known is None or info.name.count("/") < known.count("/"):
            by_eval[eval_id] = info.name
    readable = sorted(by_eval.values())
    if not readable:
        raise LogError(f"none of the {len(infos)} log file(s) in {location} could be read")
    logs, errors = evals_df(readable, columns=_LOG_COLUMNS, strict=False, quiet=True)
    problems += [_column_problem(e) for e in errors]
    logs["kind"] = logs["task_name"].map(lambda t: _kind(str(t)))
    logs = logs[logs["kind"].notna()].copy()
    if logs.empty:
        raise LogError(f"no SpatialSTALE detection, navigation or perception log in {location}")
    logs["superseded"] = _superseded(logs)
    logs["model_label"] = [model_label(str(m), r) for m, r in zip(logs["model"], logs["model_roles"], strict=True)]
    current = logs[~logs["superseded"]]
    detection = _read_samples(current[current["kind"] == "detection"], DETECTION_SCORER, full=True, problems=problems)
    navigation = _read_samples(
        current[current["kind"] == "navigation"], NAVIGATION_SCORER, full=False, problems=problems
    )
    perception = pd.DataFrame()
    if (current["kind"] == "perception").any():
        from ._probe import read_perception_logs  # it builds on this module

        perception, probe_problems = read_perception_logs(location)
        problems += probe_problems
    if detection.empty and navigation.empty and perception.empty:
        raise LogError(f"the logs in {location} hold no scored SpatialSTALE sample")
    return Results(
        _detection_table(detection),
        _navigation_table(navigation),
        logs.reset_index(drop=True),
        problems,
        location,
        perception,
    )


def _superseded(logs: pd.DataFrame) -> pd.Series:
    """True for a log that did not finish while a complete log of its cell exists."""
    keys = pd.Series([json.dumps(row, default=str) for row in logs[CELL_COLUMNS].values.tolist()], index=logs.index)
    complete = set(keys[logs["status"] == "success"])
    return (logs["status"] != "success") & keys.isin(complete)


def _read_samples(logs: pd.DataFrame, scorer: str, *, full: bool, problems: list[str]) -> pd.DataFrame:
    if logs.empty:
        return pd.DataFrame()
    exclude = {"events", "messages", "attachments", "store"} if full else None
    frame, errors = samples_df(
        list(logs["log"]),
        columns=_sample_columns(scorer, full),
        full=full,
        strict=False,
        quiet=True,
        exclude_fields=exclude,
    )
    problems += [_column_problem(e) for e in errors]
    if frame.empty:
        return frame
    meta = logs[["eval_id", "model_label", "created", "task_args"]]
    frame = frame.merge(meta, on="eval_id", how="left")
    failed = frame["value"].isna() | (frame["error"].fillna("") != "")
    if failed.any():
        problems.append(f"{int(failed.sum())} {scorer} sample record(s) errored or unscored; left out")
    return frame[~failed].copy()


def _loads(text: object) -> Any:
    return json.loads(text) if isinstance(text, str) and text else None


def _number(value: object) -> float:
    if value is None:
        return math.nan
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


def _prompt_set(record: Mapping[str, Any]) -> str:
    """The sample's prompt set; logs written before prompt sets used the default prompts."""
    name = record.get("metadata_prompt_set")
    return name if isinstance(name, str) and name else "default"


def _setting(record: Mapping[str, Any], key: str) -> Any:
    """A task setting of a sample: its metadata, else the task arguments of its log."""
    value = record.get(f"metadata_{key}")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        args = _loads(record.get("task_args")) or {}
        value = args.get(key) if isinstance(args, dict) else None
    return value


def view_label(value: object) -> str:
    """A sample's view radius as the tables show it: ``full`` when the log has none
    (the paper's full view, or a log from before fog), else the radius as text."""
    if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
        return FULL_VIEW
    if isinstance(value, str) and value.strip().lower() in (FULL_VIEW, "none"):
        return FULL_VIEW
    try:
        return str(int(float(value)))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(value)


def _latest(frame: pd.DataFrame, keys: tuple[str, ...]) -> pd.DataFrame:
    frame = frame.sort_values("created")
    return frame.drop_duplicates(list(keys), keep="last").reset_index(drop=True)


DETECTION_COLUMNS = [
    *DETECTION_KEYS,
    "precision",
    "recall",
    "f1",
    "tp",
    "fp",
    "fn",
    "tn",
    "calls",
    "windows",
    "unparseable",
    "unanswered",
    "unknown_ids",
    "thaw_detected",
    "thaw_total",
    "freeze_detected",
    "freeze_total",
    *(f"{cell}_{part}" for cell in FLAG_CELLS for part in ("flagged", "total")),
    "stale_ratio",
    "n_stale",
    "size",
    "log",
    PROMPT_SET_KEY,
]


def _detection_table(frame: pd.DataFrame) -> pd.DataFrame:
    if frame.empty:
        return pd.DataFrame(columns=DETECTION_COLUMNS)
    rows = []
    for record in frame.to_dict("records"):
        value = _loads(record["value"]) or {}
        meta = _loads(record.get("score_metadata")) or {}
        row: dict[str, Any] = {
            "model": record["model_label"],
            "regime": record["metadata_regime"],
            "modality": record["metadata_modality"],
            "batch_size": int(record["metadata_batch_size"]),
            "seed": int(record["metadata_seed"]),
            "stale_ratio": _number(record.get("metadata_stale_ratio")),
            "n_stale": _number(record.get("metadata_n_stale")),
            "size": int(record.get("metadata_size") or 8),
            "log": record["log"],
            PROMPT_SET_KEY: _prompt_set(record),
            "created": record["created"],
        }
        for key in ("precision", "recall", "f1", "tp", "fp", "fn", "tn", "calls", "windows"):
            row[key] = _number(value.get(key))
        for key in ("unparseable", "unanswered", "unknown_ids"):
            row[key] = _number(value.get(key))
        for kind in ("thaw", "freeze"):
            counts = meta.get(kind) or {}
            row[f"{kind}_detected"] = _number(counts.get("detected"))
            row[f"{kind}_total"] = _number(counts.get("total"))
        flags = meta.get("flags") or {}
        for cell in FLAG_CELLS:
            counts = flags.get(cell) or {}
            row[f"{cell}_flagged"] = _number(counts.get("flagged"))
            row[f"{cell}_total"] = _number(counts.get("total"))
        rows.append(row)
    table = _latest(pd.DataFrame(rows), (*DETECTION_KEYS, PROMPT_SET_KEY))
    return table[DETECTION_COLUMNS]


NAVIGATION_COLUMNS = [
    *NAVIGATION_KEYS,
    "outcome",
    "success",
    "death",
    "timeout",
    "steps",
    "reward",
    "fallbacks",
    "died_on_stale",
    "batch_size",
    "log",
    PROMPT_SET_KEY,
    FILTER_KEY,
    VIEW_KEY,
    AGENT_KEY,
]


def _navigation_table(frame: pd.DataFrame) -> pd.DataFrame:
    if frame.empty:
        return pd.DataFrame(columns=NAVIGATION_COLUMNS)
    rows = []
    for record in frame.to_dict("records"):
        value = _loads(record["value"]) or {}
        outcome = _loads(record["answer"])
        row: dict[str, Any] = {
            "model": record["model_label"],
            "regime": record["metadata_regime"],
            "modality": record["metadata_modality"],
            "strategy": record["metadata_strategy"],
            "seed": int(record["metadata_seed"]),
            "epoch": int(record["epoch"]),
            "batch_size": int(record["metadata_batch_size"]),
            "log": record["log"],
            PROMPT_SET_KEY: _prompt_set(record),
            # logs written before filter modes deleted flagged entries, as the paper does
            FILTER_KEY: str(record.get("metadata_filter") or "delete"),
            VIEW_KEY: view_label(_setting(record, VIEW_KEY)),
            AGENT_KEY: str(_setting(record, AGENT_KEY) or PROMPT_AGENT),
            "created": record["created"],
        }
        for key in ("success", "death", "timeout", "steps", "reward", "fallbacks", "died_on_stale"):
            row[key] = _number(value.get(key))
        row["outcome"] = outcome if outcome in OUTCOMES else next((o for o in OUTCOMES if row[o] == 1), "unknown")
        rows.append(row)
    table = _latest(pd.DataFrame(rows), (*NAVIGATION_KEYS, PROMPT_SET_KEY, FILTER_KEY, VIEW_KEY, AGENT_KEY))
    return table[NAVIGATION_COLUMNS]
