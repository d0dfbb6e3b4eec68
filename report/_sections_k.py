"""The report's section on the paper's planned experiments (its Appendix K), each part
present only when the logs hold it: distractor entries, memory edits, memory as crops
and the world changed by another agent (regime ``MA``). Each part compares its runs
with the paper's condition on the same seeds, so a difference is paired by seed."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from spatialstale.env import CHANGE_REGIMES, OtherAgent
from spatialstale.protocol import extension_scores

from ._document import MISSING, Evidence, Links, Table, cut_of, evidence, link, log_of, name, nan, num, pvalue
from ._figures import STRATEGY_NAMES
from ._load import paper_value
from ._navigation_stats import matching, pooled, strategies_in
from ._stats import bootstrap_ci, paired_wilcoxon

EDIT_COUNTS = extension_scores("detection")["edits"].columns
"""Each truly stale entry of a run with edits is exactly one of these, as the scorer names them."""
DETECTION_AXES = ("distractors", "edits", "memory")
"""The detection axes of App. K; every other part holds the others at the paper's value."""
NAVIGATION_AXES = ("distractors",)
"""The navigation axes of App. K, likewise."""
APP_K = (*DETECTION_AXES, "regime")
"""The settings App. K's tables vary, each against the paper's value with the others at theirs."""
OTHER_AGENT = OtherAgent.name
"""The regime whose changes another agent makes (MA), this section's part."""
CELL = ("model", "regime", "modality")


def paper_regimes(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of the paper's change regimes (and the static grid), which the prompt
    sensitivity pools; another agent's world has its own part here too."""
    return pooled(frame)


def at_paper(frame: pd.DataFrame, *axes: str) -> pd.DataFrame:
    """The rows whose ``axes`` (those the frame has) hold the paper's value."""
    for axis in axes:
        if axis in frame.columns and not frame.empty:
            frame = frame[frame[axis] == paper_value(axis)]
    return frame


def paper_detection(det: pd.DataFrame) -> pd.DataFrame:
    """Detection in the paper's protocol: no distractors, no edits, textual memory."""
    return at_paper(paper_regimes(det), *DETECTION_AXES)


def _mean_ci(values: Sequence[float], *, as_pct: bool = False) -> str:
    x = [float(v) for v in values if not nan(v)]
    if not x:
        return "—"
    low, high = bootstrap_ci(x)  # none with too few seeds or every seed alike: the mean alone
    mean = float(np.mean(x))
    if as_pct:
        ci = "" if nan(low) else f" [{100 * low:.0f}, {100 * high:.0f}]"
        return f"{100 * mean:.0f} %{ci}"
    return num(mean) + ("" if nan(low) else f" [{num(low)}, {num(high)}]")


def _ratio(part: pd.DataFrame, numerator: str, denominator: str) -> list[float]:
    """Per-seed shares ``numerator / denominator`` (NaN where nothing was counted)."""
    return [n / d if d else math.nan for n, d in zip(part[numerator], part[denominator], strict=True)]


def _paired(part: pd.DataFrame, base: pd.DataFrame, metric: str, as_pct: bool = False) -> tuple[str, str]:
    """The mean difference on the seeds both ran, in the unit of the columns beside it
    (percentage points for a rate shown in percent, ``as_pct``), and the Wilcoxon p-value."""
    joined = part[["seed", metric]].merge(base[["seed", metric]], on="seed", suffixes=("", "_base")).dropna()
    if joined.empty:
        return MISSING, ""
    test = paired_wilcoxon(list(joined[metric]), list(joined[f"{metric}_base"]))
    difference = f"{100 * test.mean_difference:+.0f} pp" if as_pct else f"{test.mean_difference:+.3f}"
    return f"{difference} ({test.n} seeds)", pvalue(test.p)


def _other_axes(frame: pd.DataFrame, axis: str) -> pd.DataFrame:
    return at_paper(frame, *(a for a in DETECTION_AXES if a != axis))


def _cells(frame: pd.DataFrame, *extra: str) -> list[tuple[object, ...]]:
    keys = [*CELL, *extra]
    return sorted({tuple(row) for row in frame[keys].drop_duplicates().itertuples(index=False)}, key=str)


@dataclass(frozen=True)
class Compared:
    """One cell (model, regime, modality, and the axis's value) of the runs with a
    detection axis away from the paper's value, beside the same cell at the paper's value."""

    keys: dict[str, object]
    part: pd.DataFrame
    base: pd.DataFrame
    evidence: Evidence | None

    def f1(self, links: Links) -> tuple[str, str, str, str]:
        """F1 of the runs (linked to them), F1 at the paper's value, the paired difference and p."""
        delta, p = _paired(self.part, self.base, "f1")
        base = _mean_ci(self.base.f1) if not self.base.empty else MISSING
        return link(_mean_ci(self.part.f1), links.href(self.evidence)) + cut_of(self.part), base, delta, p


def _against_paper(det: pd.DataFrame, axis: str, *extra: str) -> list[Compared]:
    """Each cell of the runs with ``axis`` away from the paper's value (the other App. K
    axes at theirs), with the same cell's runs at the paper's value."""
    if det.empty or axis not in det.columns:
        return []
    det = _other_axes(det, axis)
    runs = det[det[axis] != paper_value(axis)]
    out = []
    for cell in _cells(runs, *extra):
        keys = dict(zip((*CELL, *extra), cell, strict=True))
        part, base = matching(runs, keys), matching(det, {**keys, axis: paper_value(axis)})
        out.append(Compared(keys, part, base, log_of(runs, **keys)))
    return out


def distractors(det: pd.DataFrame, links: Links) -> Table | None:
    """F1 over the cells' entries with K distractors beside F1 without them on the same
    seeds, and the share of distractor judgments flagged stale."""
    rows = []
    for c in _against_paper(det, "distractors", "distractors"):
        f1, base, delta, p = c.f1(links)
        flagged = _mean_ci(_ratio(c.part, "distractors_flagged", "distractor_judgments"), as_pct=True)
        rows.append([*_names(c), str(c.keys["distractors"]), str(c.part.seed.nunique()), f1, base, delta, p, flagged])
    header = ["model", "regime", "modality", "K", "seeds", "F1 with K", "F1 with 0", "Δ F1", "p", "distractors flagged"]
    return Table(header, rows) if rows else None


def _names(c: Compared) -> list[str]:
    return [name(c.keys["model"]), str(c.keys["regime"]), str(c.keys["modality"])]


def distractors_navigation(nav: pd.DataFrame, links: Links) -> Table | None:
    """Death with K distractors in the memory view beside death without them, per strategy."""
    if nav.empty or "distractors" not in nav.columns:
        return None
    runs = nav[nav["distractors"] != paper_value("distractors")]
    rows = []
    for model, regime, modality, k in _cells(runs, "distractors"):
        keys = {"model": model, "regime": regime, "modality": modality}
        for strategy in strategies_in(matching(runs, {**keys, "distractors": k}).strategy):
            part = matching(runs, {**keys, "distractors": k, "strategy": strategy})
            base = matching(nav, {**keys, "distractors": paper_value("distractors"), "strategy": strategy})
            rates, base_rates = (f.groupby("seed")[["death"]].mean().reset_index() for f in (part, base))
            delta, p = _paired(rates, base_rates, "death", as_pct=True)
            source = log_of(runs, **keys, distractors=k, strategy=strategy)
            rows.append(
                [
                    name(model),
                    str(regime),
                    str(modality),
                    STRATEGY_NAMES.get(strategy, strategy),
                    str(k),
                    str(len(rates)),
                    link(_mean_ci(rates.death, as_pct=True), links.href(source)) + cut_of(part),
                    _mean_ci(base_rates.death, as_pct=True) if not base.empty else MISSING,
                    delta,
                    p,
                    num(float(part.audit_calls.mean()), 1),
                ]
            )
    header = ["model", "regime", "modality", "strategy", "K", "seeds", "death with K", "death with 0", "Δ death", "p"]
    return Table([*header, "audit calls an episode"], rows) if rows else None


def edits(det: pd.DataFrame, links: Links) -> Table | None:
    """Edit accuracy beside F1, and what went wrong with the other stale entries."""
    rows = []
    for c in _against_paper(det, "edits"):
        f1, _, delta, p = c.f1(links)
        stale = c.part[list(EDIT_COUNTS)].sum(axis=1)
        right = [n / d if d else math.nan for n, d in zip(c.part.edits_correct, stale, strict=True)]
        totals = [str(int(np.nansum(c.part[key]))) for key in EDIT_COUNTS]
        pooled = f"{totals[0]} / {int(np.nansum(stale))}"
        rows.append([*_names(c), str(c.part.seed.nunique()), f1, _mean_ci(right), pooled, *totals[1:], delta, p])
    header = ["model", "regime", "modality", "seeds", "F1", "edit accuracy", "right / stale", "wrong", "missing"]
    return Table([*header, "unreadable", "Δ F1 vs no edits", "p"], rows) if rows else None


def crops(det: pd.DataFrame, links: Links) -> Table | None:
    """F1 with the memory as crops beside F1 with textual memory on the same seeds."""
    rows = []
    for c in _against_paper(det, "memory"):
        f1, base, delta, p = c.f1(links)
        unparseable = f"{int(np.nansum(c.part.unparseable))} / {int(np.nansum(c.part.calls))}"
        rows.append([*_names(c), str(c.part.seed.nunique()), f1, _mean_ci(c.part.recall), base, delta, p, unparseable])
    header = ["model", "regime", "modality", "seeds", "F1 crops", "recall crops", "F1 text memory", "Δ F1", "p"]
    return Table([*header, "unparseable / calls"], rows) if rows else None


def other_agent(det: pd.DataFrame, nav: pd.DataFrame, links: Links) -> dict[str, Table] | None:
    """Another agent's world beside L1-L3: stale ratios, detection F1 per regime and
    navigation outcomes per strategy."""
    det, nav = at_paper(det, *DETECTION_AXES), at_paper(nav, "distractors")
    in_det = not det.empty and (det["regime"] == OTHER_AGENT).any()
    in_nav = not nav.empty and (nav["regime"] == OTHER_AGENT).any()
    if not (in_det or in_nav):
        return None
    regimes = [r for r in (*CHANGE_REGIMES, OTHER_AGENT) if (not det.empty and (det["regime"] == r).any())]
    out: dict[str, Table] = {}
    if in_det:
        seeds = det.drop_duplicates(["regime", "seed"])
        out["ratios"] = Table(
            ["regime", "seeds", "stale ratio mean [95 % CI]", "range", "stale entries a seed"],
            [
                [
                    r,
                    str(len(part := seeds[seeds.regime == r])),
                    _mean_ci(part.stale_ratio),
                    f"[{part.stale_ratio.min():.3f}, {part.stale_ratio.max():.3f}]",
                    num(float(part.n_stale.mean()), 1),
                ]
                for r in regimes
            ],
        )
        rows = []
        for model, modality in sorted({(m, mo) for m, mo in zip(det.model, det.modality, strict=True)}):
            cell = det[(det.model == model) & (det.modality == modality)]
            row = [name(model), str(modality)]
            for r in regimes:
                part = cell[cell.regime == r]
                text = _mean_ci(part.f1)
                row.append(evidence(text, cell, links, regime=r) if not part.empty else MISSING)
            rows.append(row)
        out["detection"] = Table(["model", "modality", *(f"F1 {r}" for r in regimes)], rows)
    if in_nav:
        beside = [r for r in CHANGE_REGIMES if (nav["regime"] == r).any()]
        rows = []
        for (model, modality), cell in nav.groupby(["model", "modality"]):
            for strategy in strategies_in(cell[cell.regime == OTHER_AGENT].strategy):
                part = cell[(cell.regime == OTHER_AGENT) & (cell.strategy == strategy)]
                per_seed = part.groupby("seed")[["success", "death"]].mean()
                keys = {"model": model, "modality": modality, "regime": OTHER_AGENT, "strategy": strategy}
                row = [
                    name(model),
                    str(modality),
                    STRATEGY_NAMES.get(strategy, strategy),
                    str(len(per_seed)),
                    evidence(_mean_ci(per_seed.success, as_pct=True), nav, links, **keys),
                    _mean_ci(per_seed.death, as_pct=True),
                    _mean_ci(part.groupby("seed").died_on_stale.mean(), as_pct=True),
                ]
                for regime in beside:
                    other = cell[(cell.regime == regime) & (cell.strategy == strategy)]
                    row.append(
                        _mean_ci(other.groupby("seed").death.mean(), as_pct=True) if not other.empty else MISSING
                    )
                rows.append(row)
        header = ["model", "modality", "strategy", "seeds", "success MA", "death MA", "death on a stale entry"]
        out["navigation"] = Table([*header, *(f"death {r}" for r in beside)], rows)
    return out


def planned(det: pd.DataFrame, nav: pd.DataFrame, links: Links) -> dict[str, object] | None:
    """The App. K section's context, or None when the logs hold none of its runs."""
    parts: dict[str, object] = {
        "distractors": distractors(det, links) if not det.empty else None,
        "distractors_navigation": distractors_navigation(nav, links),
        "edits": edits(det, links) if not det.empty else None,
        "crops": crops(det, links) if not det.empty else None,
        "other_agent": other_agent(det, nav, links),
    }
    return parts if any(parts.values()) else None
