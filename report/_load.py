"""Inspect logs into tidy tables (``inspect_ai.analysis`` into pandas).

- ``detection``: one row per (model, regime, modality, batch size, seed) with the
  score values (precision, recall, f1, confusion counts, calls, ...) and, from the
  score metadata, the thaw/freeze counts and the flag counts by claim x truth.
- ``navigation``: one row per (model, regime, modality, strategy, seed, epoch) with
  the outcome, steps, reward, fallbacks, ``died_on_stale`` and the episode's audit
  model calls and tokens (``audit_calls``, ``audit_tokens``; NaN in a log from before
  navigation 4 recorded them).
- ``perception``: one row per (model, regime, modality, batch size, seed) with the
  probe's rates and the F1 an auditor reasoning perfectly on its readings would reach.

Every row also holds its value of each axis beyond the paper's protocol that its task
kind has (``prompt_set``; for navigation ``filter``, ``agent``, the extensions' axes: the
settings fields with a ``title``), as the axis shows it (``full`` for no fog). Runs
that differ in one of them are different rows, not reruns; a log from before an axis
existed ran its paper value.

The model of a row is the log's model, with `` (auditor X)`` appended when an
``auditor`` role bound a different model. When several logs hold the same row (a
task run twice outside an eval set), the newest log wins. A log that did not finish
is *superseded* when a complete log of the same cell (task, model, roles and task
arguments) sits beside it, as a resumed eval set leaves it; its samples are not read.
``log_dir`` may be a local folder or a URL Inspect reads (``s3://...``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd
from inspect_ai.analysis import ColumnError, EvalColumn, SampleColumn, evals_df, samples_df
from inspect_ai.log import EvalLog, EvalSample, EvalSampleLimit, EvalSampleSummary, list_eval_logs, read_eval_log

from spatialstale.env import DEFAULT_SIZE
from spatialstale.protocol import OUTCOMES, SETTINGS, Axis, axes_of, extension_scores
from spatialstale.scorers import implied_detection

SCORERS = {"detection": "stale_f1", "navigation": "episode_outcome", "perception": "perception_accuracy"}
"""The scorer of each task kind, whose values the tables read."""
EXTENSION_COUNTS = tuple(key for scores in extension_scores("detection").values() for key in scores.columns)
"""Detection's counts of the App. K runs (NaN in a run without the extension that adds
them: ``Scores.columns``)."""
FLAG_CELLS = ("SAFE_safe", "SAFE_hole", "DANGER_hole", "DANGER_safe")
"""Claim x current truth: SAFE_hole is a thaw (deadly stale), DANGER_safe a freeze."""


def row_axes(kind: str) -> tuple[Axis, ...]:
    """The axes beyond the paper that tell a task kind's rows apart, in declaration order."""
    return tuple(a for a in axes_of(SETTINGS[kind]) if a.beyond_paper)


def paper_value(name: str) -> str:
    """An axis's value in the paper's protocol, as the tables show it."""
    axis = next(a for kind in SETTINGS for a in row_axes(kind) if a.name == name)
    return axis.show(axis.value)


CUT_COLUMNS = ("limit", "limit_reason")
"""Every table's record of a sample cut short: the type of the sample limit that ended it
(Inspect's ``EvalSample.limit``: ``token``, ``message``, ``turn``, ``time``, ``working``,
``context``, ``cost``, ``operator``, ``custom``), empty for a sample that ran to its end,
and Inspect's reason (``Token limit exceeded. value: 6,579; limit: 6,000``). A cut sample
keeps its score: what ran before the limit."""

KEYS = {
    "detection": ("model", "regime", "modality", "batch_size", "size", "seed"),
    "navigation": ("model", "regime", "modality", "strategy", "size", "seed", "epoch"),
    "perception": ("model", "regime", "modality", "batch_size", "size", "seed"),
}
"""What makes a row one sample: the grid side ``size`` is among them, so a study run at
several sizes (``--sizes``) keeps every size's rows."""
MEMORY_COLUMNS = (
    "memory_seeded",
    "memory_seeded_stale",
    "memory_seeded_valid",
    "memory_lie_kept",
    "memory_repaired",
    "memory_removed",
    "memory_corrupted",
    "memory_conflicted",
    "memory_added",
    "memory_added_false",
)
"""The score values of the memory an agent keeps that the report reads (the memory navigator)."""

DETECTION_VALUES = ("precision", "recall", "f1", "tp", "fp", "fn", "tn", "calls", "windows")
ANSWER_PROBLEMS = ("unparseable", "unanswered", "unknown_ids")
NAVIGATION_VALUES = ("success", "death", "timeout", "steps", "reward", "fallbacks", "died_on_stale")
"""The score values each table copies as they are."""
COLUMNS = {
    "detection": [
        *KEYS["detection"],
        *DETECTION_VALUES,
        *ANSWER_PROBLEMS,
        "thaw_detected",
        "thaw_total",
        "freeze_detected",
        "freeze_total",
        *(f"{cell}_{part}" for cell in FLAG_CELLS for part in ("flagged", "total")),
        "stale_ratio",
        "n_stale",
        *EXTENSION_COUNTS,
        *CUT_COLUMNS,
        "log",
        "sample_id",
    ],
    "navigation": [
        *KEYS["navigation"],
        "outcome",
        *NAVIGATION_VALUES,
        "audit_calls",
        "audit_tokens",
        *MEMORY_COLUMNS,
        "batch_size",
        *CUT_COLUMNS,
        "log",
        "sample_id",
    ],
    "perception": [
        *KEYS["perception"],
        "accuracy",
        "balanced_accuracy",
        "hole_recall",
        "ice_recall",
        "type_accuracy",
        "holes",
        "hole_as_ice",
        "ice_as_hole",
        "cells",
        "unparseable",
        "unanswered",
        "conflicting",
        "calls",
        "implied_f1",
        *CUT_COLUMNS,
        "log",
        "sample_id",
    ],
}
"""The columns of each table (then its axes beyond the paper)."""


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
    """The perception probe's rows, if any."""
    left_out: pd.DataFrame = field(default_factory=pd.DataFrame)
    """The samples cut short that :meth:`without_cut` left out (the rows of :meth:`cut`)."""

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables by task kind."""
        return {"detection": self.detection, "navigation": self.navigation, "perception": self.perception}

    def cut(self) -> pd.DataFrame:
        """Every sample a limit cut short, one row each: its task kind, model, regime,
        modality, seed, strategy and epoch where it has them, the limit and its reason, the
        log and the sample id; the samples :meth:`without_cut` left out are among them."""
        columns = ["kind", "model", "regime", "modality", "strategy", "seed", "epoch", *CUT_COLUMNS, "log", "sample_id"]
        parts = [
            frame[frame["limit"] != ""].assign(kind=kind)
            for kind, frame in self.tables().items()
            if not frame.empty and "limit" in frame.columns
        ]
        if not self.left_out.empty:
            parts.append(self.left_out)
        parts = [part.reindex(columns=columns) for part in parts if not part.empty]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)

    def without_cut(self) -> Results:
        """These results without the samples a limit cut short, which :attr:`left_out`
        then lists (``spatialstale report --exclude-limited``)."""
        kept = {
            kind: frame[frame["limit"] == ""].reset_index(drop=True) if "limit" in frame.columns else frame
            for kind, frame in self.tables().items()
        }
        return replace(
            self,
            detection=kept["detection"],
            navigation=kept["navigation"],
            perception=kept["perception"],
            left_out=self.cut(),
        )


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


def _settings_of(log: EvalLog) -> dict[str, Any]:
    """Every task argument of the log (defaults included), under its task metadata: what
    the log's task ran with, for the report's inventory of the logs."""
    return {**(log.eval.metadata or {}), **(log.eval.task_args or {})}


_LOG_COLUMNS = [
    EvalColumn("eval_id", path="eval.eval_id", required=True),
    EvalColumn("log", path=lambda log: log.location, required=True),
    EvalColumn("created", path="eval.created", required=True),
    EvalColumn("task_name", path="eval.task", required=True),
    EvalColumn("task_version", path="eval.task_version"),
    EvalColumn("model", path="eval.model", required=True),
    EvalColumn("model_roles", path=lambda log: _roles_json(log)),
    EvalColumn("status", path="status", required=True),
    EvalColumn("total_samples", path="eval.dataset.samples"),
    EvalColumn("epochs", path="eval.config.epochs"),
    EvalColumn("completed_samples", path="results.completed_samples"),
    EvalColumn("task_args", path=lambda log: json.dumps(log.eval.task_args_passed, sort_keys=True, default=str)),
    EvalColumn("task_settings", path=lambda log: json.dumps(_settings_of(log), sort_keys=True, default=str)),
    EvalColumn("model_usage", path=lambda log: _usage_json(log)),
]
CELL_COLUMNS = ["task_name", "model", "model_roles", "task_args"]
"""What makes two logs the same cell of a study: a resumed cell has a new log."""


def _limit_type(sample: EvalSample | EvalSampleSummary) -> str:
    limit = sample.limit
    return limit.type if isinstance(limit, EvalSampleLimit) else str(limit or "")


def _limit_reason(sample: EvalSample | EvalSampleSummary) -> str:
    limit = sample.limit
    if isinstance(limit, EvalSampleLimit):
        return limit.reason or ""
    return str(getattr(sample, "limit_reason", None) or "")


def _sample_columns(scorer: str, full: bool) -> list[SampleColumn]:
    return [
        SampleColumn("id", path="id", required=True),
        SampleColumn("epoch", path="epoch", required=True),
        SampleColumn("metadata_*", path="metadata", full=full),
        SampleColumn("value", path=_score_part(scorer, "value"), full=full),
        SampleColumn("answer", path=_score_part(scorer, "answer"), full=full),
        *([SampleColumn("score_metadata", path=_score_part(scorer, "metadata"), full=True)] if full else []),
        SampleColumn("error", path="error", default=""),
        SampleColumn("limit", path=_limit_type, default=""),
        SampleColumn("limit_reason", path=_limit_reason, default=""),
    ]


def _column_problem(error: ColumnError) -> str:
    return f"could not read {error.column} from {error.log.location}: {error.error}"


def _kind(task_name: str) -> str | None:
    name = task_name.rsplit("/", 1)[-1]
    return name if name in SCORERS else None


def read_logs(log_dir: str | Path) -> Results:
    """Read every SpatialSTALE log under ``log_dir`` (a folder or a URL such as
    ``s3://bucket/prefix``).

    Raises:
        LogError: when the directory does not exist, holds no Inspect log, or none of
            its logs can be read as a SpatialSTALE log.
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
    tables = {kind: _table(kind, _read_samples(current[current["kind"] == kind], kind, problems)) for kind in SCORERS}
    if all(table.empty for table in tables.values()):
        raise LogError(f"the logs in {location} hold no scored SpatialSTALE sample")
    return Results(
        tables["detection"],
        tables["navigation"],
        logs.reset_index(drop=True),
        problems,
        location,
        tables["perception"],
    )


def _superseded(logs: pd.DataFrame) -> pd.Series:
    """True for a log that did not finish while a complete log of its cell exists."""
    keys = pd.Series([json.dumps(row, default=str) for row in logs[CELL_COLUMNS].values.tolist()], index=logs.index)
    complete = set(keys[logs["status"] == "success"])
    return (logs["status"] != "success") & keys.isin(complete)


def _read_samples(logs: pd.DataFrame, kind: str, problems: list[str]) -> pd.DataFrame:
    if logs.empty:
        return pd.DataFrame()
    scorer = SCORERS[kind]
    full = kind != "navigation"  # navigation reads no score metadata: its records are large
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


def _missing(value: object) -> bool:
    return value is None or value == "" or (isinstance(value, float) and math.isnan(value))


def _setting(record: Mapping[str, Any], key: str) -> Any:
    """A task setting of a sample: its metadata, else the task arguments of its log."""
    value = record.get(f"metadata_{key}")
    if _missing(value):
        args = _loads(record.get("task_args")) or {}
        value = args.get(key) if isinstance(args, dict) else None
    return value


def axis_label(axis: Axis, value: object) -> str:
    """A sample's value of ``axis`` as the tables show it; a log without the axis (from
    before it existed) ran its paper value."""
    if _missing(value):
        return axis.show(axis.value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # an integer column with gaps reads back as floats
    try:
        return axis.show(axis.read(value, axis.name))
    except ValueError:
        return str(value)


def _table(kind: str, frame: pd.DataFrame) -> pd.DataFrame:
    axes = row_axes(kind)
    columns = [*COLUMNS[kind], *(a.name for a in axes)]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    read = {"detection": _detection_row, "navigation": _navigation_row, "perception": _perception_row}[kind]
    rows = []
    for record in frame.to_dict("records"):
        row: dict[str, Any] = {
            "model": record["model_label"],
            "regime": record["metadata_regime"],
            "modality": record["metadata_modality"],
            "batch_size": int(record["metadata_batch_size"]),
            "size": int(record.get("metadata_size") or DEFAULT_SIZE),
            "seed": int(record["metadata_seed"]),
            "log": record["log"],
            "sample_id": str(record["id"]),
            "created": record["created"],
            "limit": str(record.get("limit") or ""),
            "limit_reason": str(record.get("limit_reason") or ""),
            **{a.name: axis_label(a, _setting(record, a.name)) for a in axes},
        }
        read(record, _loads(record["value"]) or {}, row)
        rows.append(row)
    table = pd.DataFrame(rows).sort_values("created")
    table = table.drop_duplicates([*KEYS[kind], *(a.name for a in axes)], keep="last").reset_index(drop=True)
    return table[columns]


def _detection_row(record: Mapping[str, Any], value: Mapping[str, Any], row: dict[str, Any]) -> None:
    meta = _loads(record.get("score_metadata")) or {}
    row["stale_ratio"] = _number(record.get("metadata_stale_ratio"))
    row["n_stale"] = _number(record.get("metadata_n_stale"))
    for key in DETECTION_VALUES:
        row[key] = _number(value.get(key))
    row.update(undefined_as_nan(row["tp"], row["fp"], row["fn"], row))
    for key in (*ANSWER_PROBLEMS, *EXTENSION_COUNTS):
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


def undefined_as_nan(tp: float, fp: float, fn: float, recorded: Mapping[str, float]) -> dict[str, float]:
    """Precision, recall and F1 with NaN where the denominator is empty: the score records
    0 (or 1 when nothing is stale and nothing flagged) by the scorer's documented rule,
    which the report must not show as a measured 0. Nothing flagged (tp + fp = 0):
    precision undefined; nothing stale (tp + fn = 0): recall undefined; both: F1 undefined."""
    if any(math.isnan(x) for x in (tp, fp, fn)):
        return {key: recorded[key] for key in ("precision", "recall", "f1")}
    return {
        "precision": recorded["precision"] if tp + fp else math.nan,
        "recall": recorded["recall"] if tp + fn else math.nan,
        "f1": recorded["f1"] if tp + fp + fn else math.nan,
    }


ENDS = OUTCOMES[:3]
"""The outcomes of an episode that ran to its end (a sample limit's ``limit`` aside)."""


def _navigation_row(record: Mapping[str, Any], value: Mapping[str, Any], row: dict[str, Any]) -> None:
    outcome = _loads(record["answer"])
    row["strategy"] = record["metadata_strategy"]
    row["epoch"] = int(record["epoch"])
    for key in NAVIGATION_VALUES:
        row[key] = _number(value.get(key))
    row["outcome"] = outcome if outcome in ENDS else next((o for o in ENDS if row[o] == 1), "unknown")
    # what safety cost (navigation 4): NaN in a log from before it was recorded
    row["audit_calls"] = _number(value.get("audit_model_calls"))
    row["audit_tokens"] = _number(value.get("audit_tokens"))
    # the memory an agent kept (its last judgment): NaN for a navigator that keeps none
    for key in MEMORY_COLUMNS:
        row[key] = _number(value.get(key))


def _perception_row(record: Mapping[str, Any], value: Mapping[str, Any], row: dict[str, Any]) -> None:
    meta = _loads(record.get("score_metadata")) or {}
    g0 = record["metadata_g0"]
    g0 = json.loads(g0) if isinstance(g0, str) else g0
    row["implied_f1"] = implied_detection(meta.get("windows", []), g0).f1
    for key in COLUMNS["perception"]:
        if key not in row:
            row[key] = _number(value.get(key))
