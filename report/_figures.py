"""The paper's figures as PNGs (matplotlib, Agg backend).

Each function takes the aggregated tables, writes one PNG and returns its path, or
None when there is nothing to draw.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ._document import short
from ._load import FLAG_CELLS
from ._navigation_stats import PAPER_REGIMES, regime_order, regimes_in, strategies_in, value_order

DPI = 120
STRATEGY_COLOURS = {
    "nomemory": "#7f7f7f",
    "nofilter": "#d62728",
    "selfverify": "#ff7f0e",
    "omcd": "#1f77b4",
    "oracle": "#2ca02c",
    "localverify": "#9467bd",
}
STRATEGY_NAMES = {
    "nomemory": "NoMemory",
    "nofilter": "NoFilter",
    "selfverify": "SelfVerify",
    "omcd": "OMCD",
    "oracle": "Oracle",
    "localverify": "LocalVerify",
}
"""Each built-in strategy's name in the figures and tables; a plug-in's is its own."""
MODALITY_COLOURS = {"text": "#1f77b4", "vision": "#ff7f0e", "both": "#9467bd"}
FLAG_NAMES = {
    "SAFE_safe": "SAFE,\nsafe",
    "SAFE_hole": "SAFE,\nhole\n(thaw)",
    "DANGER_hole": "DANGER,\nhole",
    "DANGER_safe": "DANGER,\nsafe\n(freeze)",
}


def wrap(label: str, width: int = 22) -> str:
    """``label`` over several lines (broken at hyphens and spaces), so that long
    model names stay within their own bar group or panel."""
    return textwrap.fill(label, width, break_on_hyphens=True) or label


def _save(fig: Figure, path: Path) -> Path:
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path


def _legend_right(ax: Axes, title: str | None = None, handles: list[Artist] | None = None) -> None:
    extra = {"handles": handles} if handles is not None else {}
    ax.legend(title=title, fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0, **extra)


def _bar_legend(ax: Axes, hatched: bool) -> list[Artist]:
    """The legend of ``ax``'s bars as plain swatches (whatever bar was hatched first),
    and a hatched swatch for the bars that include samples a limit cut, when any does."""
    handles, labels = ax.get_legend_handles_labels()
    swatches: list[Artist] = []
    for handle, label in zip(handles, labels, strict=True):
        patches = getattr(handle, "patches", None)
        colour = patches[0].get_facecolor() if patches else "grey"
        swatches.append(Patch(facecolor=colour, label=label))
    if hatched:
        swatches.append(Patch(facecolor="white", edgecolor="black", hatch=CUT_HATCH, label="cut by a limit"))
    return swatches


UNIT_TOP = 1.05
"""The top of a rate or F1 axis: 1 with a small margin; no tick above 1."""


def _unit_axis(ax: Axes, which: str = "y") -> None:
    """A rate or F1 axis: from 0 to 1 with a small margin, ticks 0, 0.2, ..., 1."""
    ticks = np.linspace(0, 1, 6)
    if which == "y":
        ax.set_ylim(0, UNIT_TOP)
        ax.set_yticks(ticks)
    else:
        ax.set_xlim(0, UNIT_TOP)
        ax.set_xticks(ticks)


def _label_bars(
    ax: Axes,
    xs: np.ndarray,
    values: list[float],
    above: list[float] | None = None,
    digits: int = 2,
    missing: str = "missing",
) -> None:
    """Write each bar's value on it, so that a zero bar is told apart from a missing one
    (labelled ``missing``): inside the top of a tall bar, above a short one (and above
    its error bar, ``above``, when that stays on a unit axis)."""
    extra = above or [0.0] * len(values)
    pad = 0.02
    for x, v, e in zip(xs, values, extra, strict=True):
        if math.isnan(v):
            ax.text(x, pad, missing, rotation=90, ha="center", va="bottom", fontsize=7, color="grey")
            continue
        text = f"{v:.{digits}f}"
        if v >= 0.3:
            ax.text(x, v - pad, text, rotation=90, ha="center", va="top", fontsize=7, color="white")
            continue
        top = v + (0 if math.isnan(e) else e) + pad
        y = top if top < 0.85 else v + pad
        ax.text(x, y, text, rotation=90, ha="center", va="bottom", fontsize=7, color="black")


def _models(frame: pd.DataFrame) -> list[str]:
    return sorted(frame.model.unique())


CUT_HATCH = "///"
"""The hatching of a bar whose samples include some a sample limit cut short."""
Cut = dict[tuple[str, ...], tuple[int, int]]
"""(cut, total) samples or episodes behind each bar, by its key."""


def _cut_title(title: str, counts: list[tuple[int, int]], unit: str) -> str:
    """A panel's title, and under it how many of its ``unit`` a sample limit cut (hatched bars)."""
    cut, total = sum(c for c, _ in counts), sum(t for _, t in counts)
    return f"{title}\n{cut} of {total} {unit} cut by a limit (hatched)" if cut else title


def fig3_f1(summary: pd.DataFrame, path: Path, cut: Cut | None = None) -> Path | None:
    """F1 by model x regime x modality, mean ± std over seeds (one panel per regime);
    ``cut``: (cut, total) samples per (model, regime, modality), hatched where any was cut."""
    if summary.empty:
        return None
    models = _models(summary)
    modalities = [m for m in ("text", "vision", "both") if m in set(summary.modality)]
    regimes = regime_order(summary.regime)
    fig, axes = plt.subplots(
        1, len(regimes), figsize=(4 + 1.1 * len(models) * len(regimes), 3.8), sharey=True, squeeze=False
    )
    width = 0.8 / len(modalities)
    for ax, regime in zip(axes[0], regimes, strict=True):
        x = np.arange(len(models))
        ax.set_xlim(-0.6, len(models) - 0.4)  # room for the outer bars' labels
        counts = []
        for k, modality in enumerate(modalities):
            means, stds = [], []
            for model in models:
                cell = summary[(summary.model == model) & (summary.regime == regime) & (summary.modality == modality)]
                means.append(cell.f1_mean.iloc[0] if len(cell) else math.nan)
                stds.append(cell.f1_std.iloc[0] if len(cell) else math.nan)
                counts.append((cut or {}).get((str(model), str(regime), modality), (0, 0)))
            bars = ax.bar(
                x + (k - (len(modalities) - 1) / 2) * width,
                means,
                width,
                yerr=np.nan_to_num(stds),
                capsize=3,
                label=modality,
                color=MODALITY_COLOURS[modality],
            )
            for bar, (n_cut, _) in zip(bars, counts[-len(models) :], strict=True):
                if n_cut:
                    bar.set_hatch(CUT_HATCH)
            _label_bars(ax, x + (k - (len(modalities) - 1) / 2) * width, means, stds)
        ax.set_title(_cut_title(regime, counts, "samples"), fontsize=9)
        ax.set_xticks(x, [wrap(short(m), 18) for m in models], fontsize=8)
        _unit_axis(ax)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("detection F1 (mean ± std over seeds)")
    hatched = any(n for n, _ in (cut or {}).values())
    _legend_right(axes[0][-1], title="observation", handles=_bar_legend(axes[0][-1], hatched))
    # a panel's second title line (its samples cut) needs the room
    fig.suptitle("Fig. 3: stale-entry detection F1 by model, regime and modality", y=1.04 if hatched else 0.98)
    return _save(fig, path)


def fig4_flags(flags: pd.DataFrame, path: Path) -> Path | None:
    """Flag rate by memory claim x current truth (L1+L2 pooled), a panel per modality."""
    if flags.empty:
        return None
    modalities = [m for m in ("text", "vision", "both") if m in set(flags.modality)]
    models = _models(flags)
    fig, axes = plt.subplots(
        1, len(modalities), figsize=(1.5 + (3 + 0.4 * len(models)) * len(modalities), 4), sharey=True, squeeze=False
    )
    width = 0.8 / len(models)
    colours = plt.get_cmap("tab10")
    for ax, modality in zip(axes[0], modalities, strict=True):
        x = np.arange(len(FLAG_CELLS))
        ax.set_xlim(-0.6, len(FLAG_CELLS) - 0.4)  # room for the outer bars' labels
        for k, model in enumerate(models):
            cell = flags[(flags.model == model) & (flags.modality == modality)]
            values = [cell[c].iloc[0] if len(cell) else math.nan for c in FLAG_CELLS]
            xs = x + (k - (len(models) - 1) / 2) * width
            ax.bar(xs, values, width, label=wrap(short(model), 30), color=colours(k))
            _label_bars(ax, xs, values)
        ax.set_xticks(x, [FLAG_NAMES[c] for c in FLAG_CELLS], fontsize=8)
        ax.set_xlabel("memory claim, current cell")
        ax.set_title(f"{modality} observation")
        _unit_axis(ax)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("share of entries flagged stale")
    _legend_right(axes[0][-1])
    fig.suptitle("Fig. 4: flag rate by memory claim x current truth (L1+L2 judgments)")
    return _save(fig, path)


def fig5_filtering(rates: pd.DataFrame, path: Path) -> Path | None:
    """NoFilter / OMCD / Oracle success with 95% bootstrap CIs, a panel per model."""
    part = rates[rates.strategy.isin(["nofilter", "omcd", "oracle"])]
    if part.empty:
        return None
    models = _models(part)
    strategies = [s for s in ("nofilter", "omcd", "oracle") if s in set(part.strategy)]
    regimes = regime_order(part.regime)
    panel = 3.6 if len(regimes) <= len(PAPER_REGIMES) else 1.2 * len(regimes)  # wider for a regime beyond the paper's
    fig, axes = plt.subplots(
        1, len(models), figsize=(0.6 + panel * len(models), 3.8), sharey=True, squeeze=False, layout="constrained"
    )
    width = 0.8 / len(strategies)
    for ax, model in zip(axes[0], models, strict=True):
        _unit_axis(ax)
        x = np.arange(len(regimes))
        ax.set_xlim(-0.6, len(regimes) - 0.4)  # room for the outer bars' labels
        counts = []
        for k, strategy in enumerate(strategies):
            values, low, high, cut_bars = [], [], [], []
            for regime in regimes:
                cell = part[(part.model == model) & (part.regime == regime) & (part.strategy == strategy)]
                v = cell.success.iloc[0] if len(cell) else math.nan
                values.append(v)
                n_cut = int(cell.n_limited.iloc[0]) if len(cell) and "n_limited" in cell else 0
                counts.append((n_cut, int(cell.episodes.iloc[0]) if len(cell) else 0))
                cut_bars.append(n_cut > 0)
                lo = cell.success_low.iloc[0] if len(cell) else math.nan
                hi = cell.success_high.iloc[0] if len(cell) else math.nan
                low.append(0 if math.isnan(lo) else v - lo)
                high.append(0 if math.isnan(hi) else hi - v)
            bars = ax.bar(
                x + (k - (len(strategies) - 1) / 2) * width,
                values,
                width,
                yerr=[low, high],
                capsize=3,
                label=STRATEGY_NAMES.get(strategy, strategy),
                color=STRATEGY_COLOURS.get(strategy, "black"),
            )
            for bar, hatch in zip(bars, cut_bars, strict=True):
                if hatch:
                    bar.set_hatch(CUT_HATCH)
            _label_bars(ax, x + (k - (len(strategies) - 1) / 2) * width, values, high)
        ax.set_xticks(x, regimes)
        ax.set_title(_cut_title(wrap(short(model), 34), counts, "episodes"), fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("success rate (95% bootstrap CI over seeds)")
    hatched = bool(len(part)) and "n_limited" in part and bool((part.n_limited > 0).any())
    _legend_right(axes[0][-1], handles=_bar_legend(axes[0][-1], hatched))
    fig.suptitle("Fig. 5: filtering intervention: NoFilter vs OMCD vs Oracle")
    return _save(fig, path)


def fig6_steps(rates: pd.DataFrame, path: Path) -> Path | None:
    """Mean steps by outcome (success, death) per strategy, pooled over regimes, a panel per model."""
    if rates.empty:
        return None
    models = _models(rates)
    # room above the tallest bar for its label
    top = 1.25 * max(1.0, float(np.nanmax(rates[["steps_success", "steps_death"]].to_numpy(dtype=float), initial=0)))
    fig, axes = plt.subplots(
        1, len(models), figsize=(0.6 + 4 * len(models), 3.8), sharey=True, squeeze=False, layout="constrained"
    )
    for ax, model in zip(axes[0], models, strict=True):
        part = rates[rates.model == model]
        strategies = strategies_in(part.strategy)
        x = np.arange(len(strategies))
        ax.set_ylim(0, top)
        ax.set_xlim(-0.6, len(strategies) - 0.4)
        for k, outcome in enumerate(("success", "death")):
            values = []
            for strategy in strategies:
                cell = part[part.strategy == strategy]
                n = cell[f"n_{outcome}"].sum()
                total = (cell[f"steps_{outcome}"].fillna(0) * cell[f"n_{outcome}"]).sum()
                values.append(total / n if n else math.nan)
            colour = "#2ca02c" if outcome == "success" else "#d62728"
            ax.bar(x + (k - 0.5) * 0.38, values, 0.38, label=outcome, color=colour)
            _label_bars(ax, x + (k - 0.5) * 0.38, values, digits=1, missing="none")
        ax.set_xticks(x, [STRATEGY_NAMES.get(s, s) for s in strategies], rotation=20, ha="right")
        ax.set_title(wrap(short(model), 34), fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("mean steps of the episode")
    _legend_right(axes[0][-1])
    fig.suptitle("Fig. 6: trajectory length by outcome (all regimes; none: no episode ended so)")
    return _save(fig, path)


REGIME_MARKERS = {"L1": "o", "L2": "s", "L3": "^"}
OTHER_MARKERS = ("D", "v", "P", "X", "*", "h")
"""The markers of the regimes beyond the paper's in Fig. 7, in :func:`regime_order`."""


def regime_markers(present: pd.Series) -> dict[str, str]:
    """A marker per regime present: the paper's own, then one each for the others."""
    others = [r for r in regimes_in(present) if r not in PAPER_REGIMES]
    return {**REGIME_MARKERS, **{r: OTHER_MARKERS[i % len(OTHER_MARKERS)] for i, r in enumerate(others)}}


SPREAD = 0.025
"""Points closer than this (precision-recall units) share a place."""
RING = 0.045
"""The radius of the ring points sharing a place are drawn on (wider with more points)."""


def spread(points: list[tuple[float, float]], radius: float = SPREAD) -> list[tuple[float, float, int]]:
    """Each point, moved onto a small ring around its place when others share it (within
    ``radius``), so that every point stays visible; with how many share its place. The
    ring is centred on the shared place itself (the figure marks it), so a point drawn
    off its place is never read as another value; the axes leave room for the ring."""
    groups: list[list[int]] = []
    for i, (x, y) in enumerate(points):
        home = next(
            (g for g in groups if abs(points[g[0]][0] - x) < radius and abs(points[g[0]][1] - y) < radius), None
        )
        if home is None:
            groups.append([i])
        else:
            home.append(i)
    out: list[tuple[float, float, int]] = [(0.0, 0.0, 1)] * len(points)
    for group in groups:
        r = RING * max(1.0, len(group) / 6) if len(group) > 1 else 0.0
        x0, y0 = points[group[0]]
        for k, i in enumerate(group):
            angle = math.pi / 2 + 2 * math.pi * k / len(group)
            out[i] = (x0 + r * math.cos(angle), y0 + r * math.sin(angle), len(group))
    return out


def fig7_precision_recall(summary: pd.DataFrame, path: Path) -> Path | None:
    """Mean precision vs mean recall per run (model, modality, regime) with iso-F1 contours.

    A run whose precision or recall is undefined on every seed (nothing flagged, or
    nothing stale) has no point: it is not drawn at 0. Colour is the model, the marker's
    shape the regime and its fill the modality; runs at one place are spread on a small
    ring around it and labelled with their count.
    """
    drawn = summary.dropna(subset=["precision", "recall"]) if not summary.empty else summary
    if drawn.empty:
        return None
    fig, ax = plt.subplots(figsize=(6.4, 5.6))
    grid = np.linspace(0.01, 1, 200)
    p, r = np.meshgrid(grid, grid)
    f1 = 2 * p * r / (p + r)
    contours = ax.contour(r, p, f1, levels=[0.2, 0.4, 0.6, 0.8, 0.9], colors="lightgrey", linewidths=0.8)
    ax.clabel(contours, fmt="F1=%.1f", fontsize=7)
    ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=0.8)
    colours = plt.get_cmap("tab10")
    models = _models(summary)
    markers = regime_markers(drawn.regime)
    rows = list(drawn.itertuples())
    places = spread([(float(row.recall), float(row.precision)) for row in rows])
    clusters: dict[tuple[float, float], list[tuple[float, float]]] = {}
    for row, (x, y, count) in zip(rows, places, strict=True):
        colour = colours(models.index(row.model) % 10)
        ax.scatter(
            x,
            y,
            marker=markers[str(row.regime)],
            s=55,
            facecolors=colour if row.modality == "text" else "white",
            edgecolors=colour,
            linewidths=1.5,
            zorder=3,
        )
        if count > 1:
            clusters.setdefault((round(float(row.recall), 2), round(float(row.precision), 2)), []).append((x, y))
    for (rx, ry), drawn_at in clusters.items():
        ax.scatter(rx, ry, marker="+", s=40, color="black", linewidths=1, zorder=4)
        left = min(x for x, _ in drawn_at)
        middle = float(np.mean([y for _, y in drawn_at]))
        ax.annotate(
            f"{len(drawn_at)} runs at +",
            (left, middle),
            xytext=(-9, 0),
            textcoords="offset points",
            fontsize=7,
            ha="right",
            va="center",
            bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "lightgrey"},
        )
    shown = set(drawn.model)
    handles: list[Artist] = [
        Patch(color=colours(k % 10), label=wrap(short(m) + ("" if m in shown else " (undefined: not drawn)"), 30))
        for k, m in enumerate(models)
    ]
    handles += [
        Line2D([], [], ls="", marker=markers[regime], color="black", mfc="grey", label=regime)
        for regime in regimes_in(drawn.regime)
    ]
    handles += [
        Patch(facecolor="black", edgecolor="black", label="text (filled)"),
        Patch(facecolor="white", edgecolor="black", label="vision (hollow)"),
    ]
    ax.legend(handles=handles, fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.set_xlim(-0.06, 1.06)
    ax.set_ylim(-0.06, 1.06)
    ax.set_xticks(np.linspace(0, 1, 6))
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.set_xlabel("mean recall")
    ax.set_ylabel("mean precision")
    ax.set_title(
        "Fig. 7: precision-recall per run\n(above the diagonal: under-flagging; below: over-flagging)", fontsize=10
    )
    return _save(fig, path)


def fig8_thaw_freeze(tf: pd.DataFrame, path: Path) -> Path | None:
    """Pooled per-entry recall of thaws vs freezes per (model, modality), a panel per
    regime; horizontal bars, so that long model names read on the shared axis."""
    if tf.empty:
        return None
    runs = sorted({(m, mod) for m, mod in zip(tf.model, tf.modality, strict=True)})
    height = 0.38
    regimes = regime_order(tf.regime)
    fig, axes = plt.subplots(
        1, len(regimes), figsize=(4 + 3 * len(regimes), 1.2 + 0.75 * len(runs)), sharey=True, squeeze=False
    )
    y = np.arange(len(runs))[::-1]
    for ax, regime in zip(axes[0], regimes, strict=True):
        for k, kind in enumerate(("thaw", "freeze")):
            values, counts = [], []
            for model, modality in runs:
                cell = tf[(tf.model == model) & (tf.modality == modality) & (tf.regime == regime)]
                values.append(cell[kind].iloc[0] if len(cell) else math.nan)
                counts.append(int(cell[f"{kind}_n"].iloc[0]) if len(cell) else 0)
            colour = "#d62728" if kind == "thaw" else "#1f77b4"
            ys = y + (0.5 - k) * height
            ax.barh(ys, values, height, label=f"{kind} ({'F→H' if kind == 'thaw' else 'H→F'})", color=colour)
            for yi, v, n in zip(ys, values, counts, strict=True):
                text = "missing" if math.isnan(v) and not n else f"{'—' if math.isnan(v) else f'{v:.2f}'}  N={n}"
                if not math.isnan(v) and v > 0.6:  # inside a long bar, so that the label stays on the axis
                    ax.text(v - 0.02, yi, text, va="center", ha="right", fontsize=8, color="white")
                else:
                    ax.text((0 if math.isnan(v) else v) + 0.02, yi, text, va="center", fontsize=8)
        ax.set_yticks(y, [f"{wrap(short(m), 30)}\n({mod})" for m, mod in runs], fontsize=8)
        ax.set_title(regime)
        _unit_axis(ax, "x")
        ax.set_xlabel("recall on truly stale entries")
        ax.grid(axis="x", alpha=0.3)
    _legend_right(axes[0][-1])
    fig.suptitle("Fig. 8: recall by change direction (N: truly stale entries of that direction)")
    return _save(fig, path)


FIG9_MARKERS = ("o", "s", "^", "D", "v", "P")
"""One shape per model in Fig. 9 (with its colour), so coinciding models stay apart."""


def fig9_f1_success(pairs: pd.DataFrame, corr: pd.DataFrame, path: Path) -> Path | None:
    """Per-seed text detection F1 vs OMCD success, a panel per regime, r annotated."""
    if pairs.empty:
        return None
    models = _models(pairs)
    colours = plt.get_cmap("tab10")
    regimes = regime_order(pairs.regime)
    fig, axes = plt.subplots(1, len(regimes), figsize=(4 * len(regimes), 4), sharey=True, squeeze=False)
    for ax, regime in zip(axes[0], regimes, strict=True):
        notes = []
        for k, model in enumerate(models):
            part = pairs[(pairs.model == model) & (pairs.regime == regime)]
            if part.empty:
                continue
            # seeds at one place are one marker, sized and labelled by their count
            places = part.groupby([part.f1.round(3), part.success.round(3)]).size()
            xs = [x for x, _ in places.index]
            ys = [y for _, y in places.index]
            sizes = [22 * math.sqrt(n) for n in places]
            marker = FIG9_MARKERS[k % len(FIG9_MARKERS)]
            ax.scatter(xs, ys, s=sizes, alpha=0.8, color=colours(k), marker=marker, label=short(model))
            for x, y, n in zip(xs, ys, places, strict=True):
                if n > 1:  # left of a point near the right edge, so the label stays on the axes
                    left = x > 0.7
                    ax.annotate(
                        f"{n} seeds",
                        (x, y),
                        xytext=(-8 if left else 8, -4 - 8 * k),
                        textcoords="offset points",
                        fontsize=7,
                        ha="right" if left else "left",
                    )
            c = corr[(corr.model == model) & (corr.regime == regime)]
            if len(c):
                r = c.pearson_r.iloc[0]
                notes.append(f"{short(model)}: r={'n/a' if math.isnan(r) else f'{r:+.2f}'}")
        ax.set_title(regime)
        ax.set_xlim(-0.05, 1.05)
        ax.set_ylim(-0.08, 1.08)
        ax.set_xticks(np.linspace(0, 1, 6))
        ax.set_yticks(np.linspace(0, 1, 6))
        ax.set_xlabel("per-seed detection F1 (text)")
        ax.grid(alpha=0.3)
        if notes:
            ax.text(0.0, -0.2, "\n".join(notes), transform=ax.transAxes, fontsize=8, va="top")
    axes[0][0].set_ylabel("per-seed OMCD success rate")
    handles, labels = axes[0][0].get_legend_handles_labels()
    for ax in axes[0][1:]:
        h, lab = ax.get_legend_handles_labels()
        for hh, ll in zip(h, lab, strict=True):
            if ll not in labels:
                handles.append(hh)
                labels.append(ll)
    axes[0][-1].legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    fig.suptitle(
        "Fig. 9: per-seed detection F1 vs OMCD navigation success\n"
        "(r = Pearson; n/a: constant input; labels count the seeds at one place)",
        y=1.06,
    )
    return _save(fig, path)


def _grid(rows: int, columns: int, size: tuple[float, float, float, float]) -> tuple[Figure, np.ndarray]:
    """Panels sharing their axes, laid out by matplotlib: ``size`` is the figure's width
    and height, each a base plus so much a column (a row)."""
    width, per_column, height, per_row = size
    figsize = (width + per_column * columns, height + per_row * rows)
    return plt.subplots(rows, columns, figsize=figsize, sharex=True, sharey=True, squeeze=False, layout="constrained")


def _edge_labels(axes: np.ndarray, regimes: Sequence[str], xlabel: str, ylabels: Sequence[str]) -> None:
    """A regime over each column, ``xlabel`` under the bottom row, each row's label left of it."""
    for col, regime in enumerate(regimes):
        axes[0][col].set_title(regime)
        axes[-1][col].set_xlabel(xlabel)
    for row, label in enumerate(ylabels):
        axes[row][0].set_ylabel(label, fontsize=8)


STRATEGY_MARKERS = {"nomemory": "o", "nofilter": "v", "selfverify": "s", "omcd": "D", "oracle": "^"}


def fig_sweep(rates: pd.DataFrame, path: Path, axis: str, title: str, xlabel: str) -> Path | None:
    """Success and death against the values of a navigation axis (an extension's
    ``ReportSweep``; the paper's value last), one line per strategy: a row of panels per
    (model, modality) and outcome, a column per regime. Strategies are drawn a little
    apart along x, so equal values stay visible."""
    if rates.empty or axis not in rates.columns:
        return None
    radii = value_order(rates[axis].unique(), axis)
    runs = sorted({(m, mod) for m, mod in zip(rates.model, rates.modality, strict=True)})
    regimes = regimes_in(rates.regime)
    panels = [(model, modality, outcome) for model, modality in runs for outcome in ("success", "death")]
    fig, axes = _grid(len(panels), len(regimes), (2.2, 3.2, 0.8, 2.3))
    x = np.arange(len(radii))
    strategies = strategies_in(rates.strategy)
    dodge = np.linspace(-0.08, 0.08, len(strategies)) if len(strategies) > 1 else np.zeros(1)
    for row, (model, modality, outcome) in enumerate(panels):
        for col, regime in enumerate(regimes):
            ax = axes[row][col]
            part = rates[(rates.model == model) & (rates.modality == modality) & (rates.regime == regime)]
            for k, strategy in enumerate(strategies):
                cells = part[part.strategy == strategy].set_index(axis)
                values = [float(cells.loc[r, outcome]) if r in cells.index else math.nan for r in radii]
                ax.plot(
                    x + dodge[k],
                    values,
                    marker=STRATEGY_MARKERS.get(strategy, "o"),
                    ms=5,
                    color=STRATEGY_COLOURS.get(strategy, "black"),
                    label=STRATEGY_NAMES.get(strategy, strategy),
                )
            ax.set_ylim(-0.05, 1.05)
            ax.set_xlim(-0.4, len(radii) - 0.6)
            ax.set_xticks(x, radii)
            ax.grid(alpha=0.3)
    ylabels = [f"{wrap(short(model), 24)} ({modality})\n{outcome} rate" for model, modality, outcome in panels]
    _edge_labels(axes, regimes, xlabel, ylabels)
    _legend_right(axes[0][-1], title="strategy")
    fig.suptitle(title)
    return _save(fig, path)


EXTRA_MARKERS = ("P", "X", "*", "h", "p", "<", ">", "d", "8")
"""Markers for strategies beyond the built-in five (plug-ins), never one of theirs."""


def strategy_markers(strategies: list[str]) -> dict[str, str]:
    """A distinct marker per strategy: the built-ins' own, then unused ones in turn."""
    spare = iter(m for m in EXTRA_MARKERS if m not in STRATEGY_MARKERS.values())
    return {s: STRATEGY_MARKERS[s] if s in STRATEGY_MARKERS else next(spare, "o") for s in strategies}


def _interval(value: float, low: float, high: float) -> tuple[float, float]:
    """Error bar lengths below and above ``value``; none when the interval is undefined."""
    if math.isnan(low) or math.isnan(high):
        return (0.0, 0.0)
    return (max(value - low, 0.0), max(high - value, 0.0))


def fig_safety_cost(cost: pd.DataFrame, path: Path) -> Path | None:
    """Audit model calls per episode (x) against the death rate (y), a point per
    (model, strategy, regime) with both 95 % intervals: a row of panels per (model,
    modality), a column per regime; a marker and colour per strategy. Cells whose
    cost was not recorded (logs from before navigation 4) are left out."""
    cost = cost[cost.recorded > 0] if not cost.empty else cost
    if cost.empty:
        return None
    runs = sorted({(m, mod) for m, mod in zip(cost.model, cost.modality, strict=True)})
    regimes = regimes_in(cost.regime)
    labels = cost.strategy.astype(str)
    strategies = strategies_in(labels)
    markers = strategy_markers(strategies)
    extra = iter(plt.get_cmap("tab10").colors)  # type: ignore[attr-defined]
    colours = {s: STRATEGY_COLOURS.get(s) or next(extra) for s in strategies}
    # hollow markers shrinking down the order, so points at one place (the controls'
    # zero calls) nest inside one another instead of hiding
    sizes = {s: max(11.0 - 1.3 * k, 4.0) for k, s in enumerate(strategies)}
    right = float(np.nanmax(cost[["audit_calls", "audit_calls_high"]].to_numpy(dtype=float)))
    right = 1.0 if math.isnan(right) or right <= 0 else right * 1.1
    fig, axes = _grid(len(runs), len(regimes), (2.4, 3.4, 0.9, 2.8))
    for row, (model, modality) in enumerate(runs):
        for col, regime in enumerate(regimes):
            ax = axes[row][col]
            part = cost[(cost.model == model) & (cost.modality == modality) & (cost.regime == regime)]
            for strategy in strategies:
                for r in part[part.strategy == strategy].itertuples():
                    x, y = float(r.audit_calls), float(r.death)
                    xerr = np.array([_interval(x, float(r.audit_calls_low), float(r.audit_calls_high))]).T
                    yerr = np.array([_interval(y, float(r.death_low), float(r.death_high))]).T
                    ax.errorbar(
                        x,
                        y,
                        xerr=xerr,
                        yerr=yerr,
                        fmt=markers[strategy],
                        ms=sizes[strategy],
                        mfc="none",
                        mew=1.5,
                        color=colours[strategy],
                        ecolor=colours[strategy],
                        elinewidth=1,
                        capsize=3,
                        alpha=0.9,
                        clip_on=False,  # a point on an axis (0 calls, 0 deaths) shows whole
                    )
            _unit_axis(ax, "y")
            ax.set_xlim(0, right)
            ax.grid(alpha=0.3)
    ylabels = [f"{wrap(short(model), 24)} ({modality})\ndeath rate" for model, modality in runs]
    _edge_labels(axes, regimes, "audit model calls per episode", ylabels)
    handles: list[Artist] = [
        Line2D(
            [],
            [],
            ls="none",
            marker=markers[s],
            ms=sizes[s],
            mfc="none",
            mew=1.5,
            color=colours[s],
            label=STRATEGY_NAMES.get(s, s),
        )
        for s in strategies
    ]
    axes[0][-1].legend(
        handles=handles, title="strategy", fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0
    )
    fig.suptitle("Fig. 12: what safety costs: audit calls per episode against death rate")
    return _save(fig, path)


BATCH_DODGE = 0.03
"""How far apart (in decades of B) Fig. E draws the lines of successive grid sides."""
SIZE_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
"""One marker per grid side n, in increasing n (colour alone does not tell the lines apart)."""


def fig_batch_growth(sweep: pd.DataFrame, path: Path) -> Path | None:
    """App. E: F1 (mean, 95 % CI bars) vs batch size B on a log axis, a line per grid
    side n, a panel per model; each point labelled, in its line's colour, with its
    calls an audit."""
    data = sweep.dropna(subset=["f1_mean"]) if not sweep.empty else sweep
    if data.empty:
        return None
    models = _models(data)
    sizes = sorted({int(n) for n in data["size"]})
    markers = {n: SIZE_MARKERS[i % len(SIZE_MARKERS)] for i, n in enumerate(sizes)}
    fig, axes = plt.subplots(1, len(models), figsize=(1.5 + 4.6 * len(models), 3.9), sharey=True, squeeze=False)
    for ax, model in zip(axes[0], models, strict=True):
        for i, n in enumerate(sizes):
            part = data[(data.model == model) & (data["size"] == n)].sort_values("batch_size")
            if part.empty:
                continue
            # lines of equal F1 would hide each other: each n a little apart on the log axis
            x = part.batch_size * 10 ** ((i - (len(sizes) - 1) / 2) * BATCH_DODGE)
            low = (part.f1_mean - part.f1_low).clip(lower=0).fillna(0)
            high = (part.f1_high - part.f1_mean).clip(lower=0).fillna(0)
            drawn = ax.errorbar(
                x,
                part.f1_mean,
                yerr=[low, high],
                marker=markers[n],
                capsize=3,
                label=f"n = {n} ({n * n} entries)",
            )
            for artist in (*drawn.lines[:1], *drawn.lines[1], *drawn.lines[2]):
                artist.set_clip_on(False)  # a marker at F1 = 0 or 1 is drawn whole
            for b, f1, calls in zip(x, part.f1_mean, part.calls_per_audit, strict=True):
                below = f1 > 0.5
                ax.annotate(
                    f"{calls:.0f}",
                    (b, f1),
                    textcoords="offset points",
                    xytext=(0, -(12 + 9 * i) if below else 8 + 9 * i),
                    ha="center",
                    fontsize=6,
                    color=drawn.lines[0].get_color(),
                )
        ax.set_xscale("log")
        bs = sorted({int(b) for b in data.batch_size})
        ax.set_xticks(bs, [str(b) for b in bs], fontsize=7)
        ax.minorticks_off()
        ax.set_xlabel("batch size B (log scale); numbers: calls an audit")
        ax.set_title(wrap(short(model), 40), fontsize=9)
        _unit_axis(ax)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("detection F1 (L1, text)")
    _legend_right(axes[0][-1], title="grid side")
    fig.suptitle("Fig. E: how B should grow with n: F1 vs batch size, a line per grid side")
    return _save(fig, path)
