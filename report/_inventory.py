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

from spatialstale.solvers import SETTINGS, Axis, axes_of

from ._document import Links, Table, as_int, esc, link

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
