"""The perception probe beside detection and navigation: is it memory or is it sight?

Pure functions over the probe's logs and the report's detection and navigation tables
(``Results.detection`` / ``Results.navigation`` from ``read_logs``):

- the loader (``read_logs``) reads the probe's logs into one row per (model, regime,
  modality, batch size, seed), with the F1 an otherwise perfect auditor would reach
  with the model's own readings of the grid (``implied_f1``,
  ``spatialstale.scorers.implied_detection``).
- :func:`probe_table`: per seed, perception accuracy beside detection F1 and OMCD
  success; :func:`probe_summary` averages it per model x regime x modality.
- :func:`perception_gap` and :func:`probe_reading`: how much of the text-vision F1
  gap the readings alone explain.
- :func:`fig_perception_f1`: perception vs detection F1, one point per seed.

**How the gap is split.** A model that reads a cell wrong cannot judge the memory
entry about it, however well it reasons. ``implied_f1`` is the detection F1 of an
auditor that reasons perfectly on the model's own readings (an entry is flagged when
its claim disagrees with the cell as read; an unread cell is not flagged, as an
unanswered entry is not). Its text-vision difference is the part of the F1 gap that
perception alone accounts for; the rest is reasoning over what was seen.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd

from ._detection_stats import main_detection
from ._navigation_stats import per_seed_rates

TABLE_COLUMNS = [
    "model",
    "regime",
    "modality",
    "seed",
    "accuracy",
    "balanced_accuracy",
    "hole_recall",
    "ice_recall",
    "implied_f1",
    "detection_f1",
    "omcd_success",
]
GAP_COLUMNS = [
    "model",
    "regime",
    "seeds",
    "text_f1",
    "vision_f1",
    "gap",
    "text_implied_f1",
    "vision_implied_f1",
    "implied_gap",
    "explained",
    "text_accuracy",
    "vision_accuracy",
]
MIN_GAP = 0.05
"""An F1 gap smaller than this is no gap to explain (``explained`` is NaN): on a few
seeds, chance alone moves a mean F1 by about this much."""
MODALITY_STYLES = {"text": ("#1f77b4", "o"), "vision": ("#ff7f0e", "^"), "both": ("#9467bd", "s")}


def probe_table(perception: pd.DataFrame, detection: pd.DataFrame, navigation: pd.DataFrame) -> pd.DataFrame:
    """Per (model, regime, modality, seed): perception beside detection F1 and OMCD success.

    Perception and detection rows are the main matrix's batch size (B=10 where it was
    run, as the report's detection tables); OMCD success is the seed's mean over its
    episodes, from navigation run in the same modality. A model, regime or seed that
    the detection or navigation logs lack reads NaN there.
    """
    if perception.empty:
        return pd.DataFrame(columns=TABLE_COLUMNS)
    keys = ["model", "regime", "modality", "seed"]
    table = main_detection(perception)[[*keys, *TABLE_COLUMNS[4:9]]]
    if not detection.empty:
        f1 = main_detection(detection)[[*keys, "f1"]].rename(columns={"f1": "detection_f1"})
        table = table.merge(f1, on=keys, how="left")
    else:
        table = table.assign(detection_f1=math.nan)
    omcd = navigation[navigation.strategy == "omcd"] if not navigation.empty else navigation
    if "filter" in omcd.columns:
        omcd = omcd[omcd["filter"] == "delete"]  # the paper's OMCD: flagged entries removed
    if not omcd.empty:
        success = per_seed_rates(omcd)[[*keys, "success"]].rename(columns={"success": "omcd_success"})
        table = table.merge(success, on=keys, how="left")
    else:
        table = table.assign(omcd_success=math.nan)
    return table.sort_values(keys).reset_index(drop=True)[TABLE_COLUMNS]


def probe_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Means per (model, regime, modality) of :func:`probe_table`, with the seed count."""
    columns = ["model", "regime", "modality", "seeds", *TABLE_COLUMNS[4:]]
    if table.empty:
        return pd.DataFrame(columns=columns)
    summary = table.groupby(["model", "regime", "modality"], as_index=False).agg(
        seeds=("seed", "size"), **{c: (c, "mean") for c in TABLE_COLUMNS[4:]}
    )
    return summary[columns]


def perception_gap(table: pd.DataFrame) -> pd.DataFrame:
    """Per (model, regime) run in text and vision: the F1 gap and the part perception explains.

    Over the seeds run in both modalities: ``gap`` = text F1 - vision F1 (means over
    the paired seeds); ``implied_gap`` = the same difference of ``implied_f1``;
    ``explained`` = implied_gap / gap, NaN when the gap is under ``MIN_GAP``. A share
    near 1 says the vision deficit is one of sight; near 0, of reasoning over what
    was seen; above 1, that the model reasons better than its readings would allow.
    """
    rows = []
    for (model, regime), group in table.groupby(["model", "regime"]):
        text = group[group.modality == "text"].set_index("seed")
        vision = group[group.modality == "vision"].set_index("seed")
        seeds = sorted(set(text.index[text.detection_f1.notna()]) & set(vision.index[vision.detection_f1.notna()]))
        if not seeds:
            continue
        t, v = text.loc[seeds], vision.loc[seeds]
        gap = float(t.detection_f1.mean() - v.detection_f1.mean())
        implied_gap = float(t.implied_f1.mean() - v.implied_f1.mean())
        rows.append(
            {
                "model": model,
                "regime": regime,
                "seeds": len(seeds),
                "text_f1": float(t.detection_f1.mean()),
                "vision_f1": float(v.detection_f1.mean()),
                "gap": gap,
                "text_implied_f1": float(t.implied_f1.mean()),
                "vision_implied_f1": float(v.implied_f1.mean()),
                "implied_gap": implied_gap,
                "explained": implied_gap / gap if abs(gap) >= MIN_GAP else math.nan,
                "text_accuracy": float(t.accuracy.mean()),
                "vision_accuracy": float(v.accuracy.mean()),
            }
        )
    return pd.DataFrame(rows, columns=GAP_COLUMNS)


def probe_reading(gaps: pd.DataFrame) -> str:
    """A short reading of :func:`perception_gap`, one sentence per (model, regime)."""
    if gaps.empty:
        return (
            "No model was run in both text and vision with detection and perception on the same seeds, "
            "so the text-vision gap cannot be split."
        )
    lines = []
    for row in gaps.itertuples():
        head = (
            f"{row.model}, {row.regime} ({row.seeds} seeds): detection F1 {row.text_f1:.2f} in text, "
            f"{row.vision_f1:.2f} in vision; perception accuracy {row.text_accuracy:.2f} vs {row.vision_accuracy:.2f}."
        )
        if math.isnan(row.explained):
            lines.append(f"{head} No gap to explain (under {MIN_GAP:.2f}).")
            continue
        implied = (
            f"{head} With its own readings a perfect reasoner would reach {row.text_implied_f1:.2f} in text and "
            f"{row.vision_implied_f1:.2f} in vision"
        )
        if row.explained > 1.05:
            tail = (
                f": its misreadings alone would open a gap of {row.implied_gap:.2f}, more than the {row.gap:.2f} "
                "measured, so its reasoning recovers part of what it misread."
            )
        elif row.explained >= 0.95:
            tail = f", so perception explains all of the {row.gap:.2f} gap."
        else:
            tail = (
                f", so perception explains {100 * max(row.explained, 0.0):.0f} % of the {row.gap:.2f} gap "
                f"({row.implied_gap:.2f}); the remaining {row.gap - row.implied_gap:.2f} is reasoning over what "
                "was seen."
            )
        lines.append(implied + tail)
    return "\n".join(lines)


def fig_perception_f1(table: pd.DataFrame, path: Path) -> Path | None:
    """Perception (balanced accuracy) against detection F1, one point per seed, one panel
    per model, coloured by modality; None when no seed has both."""
    pairs = table.dropna(subset=["balanced_accuracy", "detection_f1"])
    if pairs.empty:
        return None
    models = sorted(pairs.model.unique())
    fig, axes = plt.subplots(1, len(models), figsize=(4.2 * len(models), 4.0), squeeze=False, sharey=True)
    for ax, model in zip(axes[0], models, strict=True):
        group = pairs[pairs.model == model]
        for modality, points in group.groupby("modality"):
            colour, marker = MODALITY_STYLES.get(str(modality), ("#7f7f7f", "x"))
            # hollow markers of different shapes, so text and vision points that coincide stay visible
            ax.scatter(
                points.balanced_accuracy,
                points.detection_f1,
                s=40 if marker == "o" else 24,
                facecolors="none",
                edgecolors=colour,
                marker=marker,
                label=str(modality),
            )
        ax.set_xlim(-0.03, 1.03)
        ax.set_ylim(-0.03, 1.03)
        ax.set_title(model, fontsize=9)
        ax.set_xlabel("perception (balanced accuracy)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("detection F1")
    axes[0][-1].legend(title="modality", fontsize=8, loc="lower right")
    fig.suptitle("Perception vs detection, per seed")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
