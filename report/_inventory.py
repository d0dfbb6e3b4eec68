"""The appendix's inventory of the logs: each log with the axes it ran.

The columns are the axes the task kinds declare (``axes_of`` of each settings class, in
declaration order), read from the log header (its task arguments, defaults included,
over its task metadata): a column for every axis whose value differs between logs, and
one sentence for the axes every log ran alike. Nothing here is a hand-written list of
axes: a new axis appears in the inventory by being declared.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import pandas as pd

from spatialstale.protocol import SETTINGS, Axis, axes_of

from ._document import Links, Table, as_int, esc, link
from ._navigation_stats import POOLED_REGIMES
from ._sections_k import APP_K

ALIASES = {"regime": "regimes"}
"""Where the task metadata names an axis differently from its ``-T`` parameter."""


def inventory_axes() -> tuple[Axis, ...]:
    """Every kind's axes, each once, in declaration order (shared axes first)."""
    seen: dict[str, Axis] = {}
    for kind in SETTINGS.values():
        for axis in axes_of(kind):
            seen.setdefault(axis.name, axis)
    return tuple(seen.values())


def _title(axis: Axis) -> str:
    return axis.title or axis.name.replace("_", " ")


def axis_value(axis: Axis, settings: Mapping[str, Any]) -> str:
    """A log's value of ``axis`` as the study shows it; empty when the task has no such axis."""
    value = settings.get(axis.name, settings.get(ALIASES.get(axis.name, ""), None))
    if axis.name not in settings and ALIASES.get(axis.name) not in settings:
        return ""
    try:
        read = axis.read(value, axis.name)
    except (ValueError, TypeError):
        return str(value)
    return ",".join(str(v) for v in read) if isinstance(read, tuple | list) else axis.show(read)


def _settings(text: object) -> dict[str, Any]:
    if not isinstance(text, str) or not text:
        return {}
    loaded = json.loads(text)
    return loaded if isinstance(loaded, dict) else {}


def inventory(logs: pd.DataFrame, links: Links) -> tuple[Table, str]:
    """The table of the logs (task, model, the axes that vary, run status, samples, log)
    and the sentence naming the axes every log ran alike."""
    ordered = logs.sort_values(["kind", "model_label", "created"])
    settings = [_settings(text) for text in ordered.get("task_settings", pd.Series([""] * len(ordered)))]
    axes = inventory_axes()
    values = {a.name: [axis_value(a, s) for s in settings] for a in axes}
    varying = [a for a in axes if len({v for v in values[a.name] if v}) > 1]
    constant = [a for a in axes if a not in varying and any(values[a.name])]
    keyed = []
    for k, (_, log) in enumerate(ordered.iterrows()):
        expected = as_int(log.total_samples) * max(1, as_int(log.epochs))
        keyed.append(
            [
                str(log.kind),
                esc(str(log.model_label)),
                *(esc(values[a.name][k]) or "n/a" for a in varying),
                str(log.status) + (" (superseded)" if log.superseded else ""),
                f"{as_int(log.completed_samples)} / {expected}",
                link(esc(os.path.basename(str(log.log))), links.href(log.log)),
            ]
        )
    rows = sorted(keyed, key=lambda row: row[: 2 + len(varying)])  # stable: ties keep their creation order
    header = ["task", "model", *(_title(a) for a in varying), "run status", "samples done / expected", "log"]
    alike = "; ".join(f"{_title(a)} {esc(next(v for v in values[a.name] if v))}" for a in constant)
    note = f"Every log whose task has the setting ran with: {alike}." if alike else ""
    return Table(header, rows), note


CORE_AXES = ("size", "batch_size")
"""Axes of the paper's own protocol that its tables hold at one value (n = 8, B = 10) but
for the sweeps of Table 5 and App. E."""


def away_from_paper(settings: Mapping[str, Any], kind: str) -> list[str]:
    """The settings of a log away from the paper's protocol, as ``title value``: the axes
    beyond the paper, the grid side and the batch size, and another agent's regime."""
    out = []
    for axis in inventory_axes():
        if not (axis.beyond_paper or axis.name in CORE_AXES):
            continue
        value = axis_value(axis, settings)
        if value and value != axis.show(axis.value):
            out.append(f"{_title(axis)} {value}")
    regime = axis_value(next(a for a in inventory_axes() if a.name == "regime"), settings)
    if regime and any(r not in POOLED_REGIMES for r in regime.split(",")):
        out.append(f"regime {regime}")
    return out


def untabulated(results_logs: pd.DataFrame, tables: Mapping[str, pd.DataFrame], shown: set[Any], links: Links) -> Table:
    """The runs the report read and no table shows, a row per log: its task, model, what
    sets it apart from the paper's protocol, its samples left untabulated out of those
    read, its main figure over them, and why no table holds them.

    ``shown`` holds the samples behind the report's cells (``_document.shown_samples``);
    every other sample read is untabulated."""
    rows = []
    ordered = results_logs[~results_logs.superseded].sort_values(["kind", "model_label", "created"])
    for _, log in ordered.iterrows():
        frame = tables.get(str(log.kind), pd.DataFrame())
        if frame.empty:
            continue
        # the log list names a local log by its file:// URL, the samples by its path
        read = frame[frame["log"].astype(str).str.removeprefix("file://") == str(log.log).removeprefix("file://")]
        if read.empty:
            continue
        keys = read[["log", "sample_id"]].astype(str).apply(tuple, axis=1)
        epochs = [as_int(e) or 1 for e in (read["epoch"] if "epoch" in read.columns else [1] * len(read))]
        left = read[[(*k, e) not in shown for k, e in zip(keys, epochs, strict=True)]]
        if left.empty:
            continue
        apart = away_from_paper(_settings(log.get("task_settings")), str(log.kind))
        rows.append(
            [
                str(log.kind),
                esc(str(log.model_label)),
                ",".join(sorted({str(r) for r in left.regime})),
                ",".join(sorted({str(m) for m in left.modality})),
                esc("; ".join(apart)) or "the paper's",
                f"{len(left)} / {len(read)}",
                _figure(str(log.kind), left),
                _why(apart),
                link(esc(os.path.basename(str(log.log))), links.href(log.log)),
            ]
        )
    header = ["task", "model", "regime", "obs", "settings away from the paper", "samples untabulated / read", "figure"]
    header.append("why")
    return Table([*header, "log"], rows)


def _figure(kind: str, rows: pd.DataFrame) -> str:
    """The main figure of untabulated rows: mean F1, success / death, or accuracy."""
    if kind == "detection":
        f1 = rows["f1"].dropna()
        return f"F1 {f1.mean():.3f} over {len(f1)} seeds" if len(f1) else "F1 undefined"
    if kind == "navigation":
        return f"success {100 * rows.success.mean():.1f}% / death {100 * rows.death.mean():.1f}% ({len(rows)} episodes)"
    return f"accuracy {rows.accuracy.mean():.3f}" if "accuracy" in rows.columns else ""


def _why(apart: list[str]) -> str:
    k = [s for s in apart if s.split(" ", 1)[0] in APP_K]
    if len(k) > 1:
        return "App. K's tables vary one of its settings at a time, the others at the paper's value"
    if not apart:
        return "no table shows this run's cells"
    return f"no table shows {', '.join(apart)} with the other settings of this run"
