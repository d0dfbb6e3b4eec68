"""The report's section on the paper's planned experiments (its Appendix K), each part
present only when the logs hold it: first each extension's part, as it declares it
(``Extension.report``: which axis, which tables, which columns) and computed here, then
the world changed by another agent (regime ``MA``). Each part compares its runs with the
paper's condition on the same seeds, so a difference is paired by seed."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from spatialstale.env import CHANGE_REGIMES, ChangeRegime, RegimeError, regime_of
from spatialstale.protocol import ReportColumn, ReportPart, ReportTable, compared_axes, extension_reports

from ._document import MISSING, Links, Table, cut_of, evidence, link, log_of, name, nan, num, pvalue, unit_of
from ._figures import STRATEGY_NAMES
from ._load import paper_value
from ._navigation_stats import matching, pooled, regimes_in, strategies_in
from ._stats import bootstrap_ci, paired_wilcoxon

PARTS = extension_reports()
"""The extensions' parts (``Extension.report``), in registry order: what this section's
first parts show, each computed here from its declaration."""
DETECTION_AXES, NAVIGATION_AXES = compared_axes("detection"), compared_axes("navigation")
"""The axes the extensions' parts vary (one an extension); every other
part and section holds them at the paper's value."""
APP_K = (*DETECTION_AXES, "regime")
"""The settings this section's tables vary, each against the paper's value with the others at theirs."""
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
    """Detection in the paper's protocol: every axis an extension's part varies at the paper's value."""
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


def _paired(part: pd.DataFrame, base: pd.DataFrame, metric: str, as_pct: bool = False) -> tuple[str, str]:
    """The mean difference on the seeds both ran, in the unit of the columns beside it
    (percentage points for a rate shown in percent, ``as_pct``), and the Wilcoxon p-value."""
    joined = part[["seed", metric]].merge(base[["seed", metric]], on="seed", suffixes=("", "_base")).dropna()
    if joined.empty:
        return MISSING, ""
    test = paired_wilcoxon(list(joined[metric]), list(joined[f"{metric}_base"]))
    difference = f"{100 * test.mean_difference:+.0f} pp" if as_pct else f"{test.mean_difference:+.3f}"
    return f"{difference} ({test.n} seeds)", pvalue(test.p)


def _cells(frame: pd.DataFrame, *extra: str) -> list[tuple[object, ...]]:
    keys = [*CELL, *extra]
    return sorted({tuple(row) for row in frame[keys].drop_duplicates().itertuples(index=False)}, key=str)


def _rows_sum(part: pd.DataFrame, columns: Sequence[str]) -> pd.Series:
    """Each row's sum of ``columns`` (NaN where every one is)."""
    return part[list(columns)].sum(axis=1, min_count=1)


def _total(part: pd.DataFrame, columns: Sequence[str]) -> int:
    return int(np.nansum(_rows_sum(part, columns)))


def _shown(column: ReportColumn, part: pd.DataFrame) -> str:
    """A column of the extension's declaration that reads the runs' score values."""
    numerator = _rows_sum(part, column.numerator)
    if column.shows in ("share", "ratio"):
        denominator = _rows_sum(part, column.denominator)
        ratios = [n / d if d else math.nan for n, d in zip(numerator, denominator, strict=True)]
        return _mean_ci(ratios, as_pct=column.shows == "share")
    if column.shows == "mean":
        return _mean_ci(numerator)
    if column.shows == "pooled":
        return f"{_total(part, column.numerator)} / {_total(part, column.denominator)}"
    if column.shows == "total":
        return str(_total(part, column.numerator))
    if column.shows == "average":
        return num(float(numerator.mean()), 1)
    raise ValueError(f"a report column cannot show {column.shows!r}")


@dataclass(frozen=True)
class Compared:
    """One row of an extension's table: the runs of one cell with its axis away from the
    paper's value (``part``), the keys it shares with the same cell at the paper's value,
    and the comparison of the two as shown."""

    keys: dict[str, object]
    part: pd.DataFrame
    seeds: int
    runs: str
    delta: str
    p: str
    base_mean: str
    base: pd.DataFrame = field(default_factory=pd.DataFrame)
    """The same cell's runs at the paper's value, which ``base_mean`` and ``delta`` read."""

    def cell(self, column: ReportColumn, axis: str) -> str:
        shows = column.shows
        if shows == "model":
            return name(self.keys["model"])
        if shows == "strategy":
            return STRATEGY_NAMES.get(str(self.keys["strategy"]), str(self.keys["strategy"]))
        if shows in ("regime", "modality", "value"):
            return str(self.keys[axis if shows == "value" else shows])
        # what the limits cut of the samples each value reads (``runs`` says it already)
        base_cut = cut_of(self.base, unit_of(self.part)) if not self.base.empty else ""
        both = cut_of(pd.concat([self.part, self.base]), unit_of(self.part)) if not self.base.empty else ""
        fixed = {
            "seeds": str(self.seeds),
            "runs": self.runs,
            "base": self.base_mean + (base_cut if self.base_mean != MISSING else ""),
            "delta": self.delta + (both if self.delta not in ("", "-", MISSING) else ""),
            "p": self.p,
        }
        if shows in fixed:
            return fixed[shows]
        value = _shown(column, self.part)
        return value if value in ("", "-", MISSING) else value + cut_of(self.part)


def _detection_rows(det: pd.DataFrame, axis: str, links: Links) -> list[Compared]:
    """Each detection cell with ``axis`` away from the paper's value (the other compared
    axes at theirs): F1 over seeds beside the same cell's at the paper's value."""
    det = at_paper(det, *(a for a in DETECTION_AXES if a != axis))
    runs = det[det[axis] != paper_value(axis)]
    out = []
    for cell in _cells(runs, axis):
        keys = dict(zip((*CELL, axis), cell, strict=True))
        part, base = matching(runs, keys), matching(det, {**keys, axis: paper_value(axis)})
        delta, p = _paired(part, base, "f1")
        shown = link(_mean_ci(part.f1), links.href(log_of(runs, **keys))) + cut_of(part)
        base_mean = _mean_ci(base.f1) if not base.empty else MISSING
        out.append(Compared(keys, part, part.seed.nunique(), shown, delta, p, base_mean, base))
    return out


def _navigation_rows(nav: pd.DataFrame, axis: str, links: Links) -> list[Compared]:
    """Each navigation cell and strategy with ``axis`` away from the paper's value: the
    per-seed death rate beside the same cell's at the paper's value."""
    runs = nav[nav[axis] != paper_value(axis)]
    out = []
    for cell in _cells(runs, axis):
        keys = dict(zip((*CELL, axis), cell, strict=True))
        for strategy in strategies_in(matching(runs, keys).strategy):
            part = matching(runs, {**keys, "strategy": strategy})
            base = matching(nav, {**keys, axis: paper_value(axis), "strategy": strategy})
            rates, base_rates = (f.groupby("seed")[["death"]].mean().reset_index() for f in (part, base))
            delta, p = _paired(rates, base_rates, "death", as_pct=True)
            source = log_of(runs, **keys, strategy=strategy)
            shown = link(_mean_ci(rates.death, as_pct=True), links.href(source)) + cut_of(part)
            base_mean = _mean_ci(base_rates.death, as_pct=True) if not base.empty else MISSING
            row = Compared({**keys, "strategy": strategy}, part, len(rates), shown, delta, p, base_mean, base)
            out.append(row)
    return out


def compared(part: ReportPart, table: ReportTable, frame: pd.DataFrame, links: Links) -> Table | None:
    """An extension's table as it declares it (``Extension.report``), or None when the
    logs hold no run of its kind with its axis away from the paper's value."""
    if frame.empty or part.axis not in frame.columns:
        return None
    rows_of = _navigation_rows if table.kind == "navigation" else _detection_rows
    rows = [[row.cell(column, part.axis) for column in table.columns] for row in rows_of(frame, part.axis, links)]
    return Table([column.header for column in table.columns], rows) if rows else None


def _with_part(name: str) -> ChangeRegime | None:
    """The regime of ``name`` when it has a part of its own (``report_title``); None for
    one without, or a plug-in this process cannot resolve (its rows stay in the tables)."""
    try:
        regime = regime_of(name)
    except RegimeError:
        return None
    return regime if regime.report_title else None


def regime_part(regime: ChangeRegime, det: pd.DataFrame, nav: pd.DataFrame, links: Links) -> dict[str, object] | None:
    """A regime's own part beside L1-L3 (``ChangeRegime.report_title``, MA's): stale
    ratios, detection F1 per regime and navigation outcomes per strategy."""
    own = regime.name
    det, nav = at_paper(det, *DETECTION_AXES), at_paper(nav, *NAVIGATION_AXES)
    in_det = not det.empty and (det["regime"] == own).any()
    in_nav = not nav.empty and (nav["regime"] == own).any()
    if not (in_det or in_nav):
        return None
    regimes = [r for r in (*CHANGE_REGIMES, own) if (not det.empty and (det["regime"] == r).any())]
    out: dict[str, object] = {"name": own, "title": regime.report_title, "text": regime.report_text}
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
            for strategy in strategies_in(cell[cell.regime == own].strategy):
                part = cell[(cell.regime == own) & (cell.strategy == strategy)]
                per_seed = part.groupby("seed")[["success", "death"]].mean()
                keys = {"model": model, "modality": modality, "regime": own, "strategy": strategy}
                cut = cut_of(part)
                row = [
                    name(model),
                    str(modality),
                    STRATEGY_NAMES.get(strategy, strategy),
                    str(len(per_seed)),
                    evidence(_mean_ci(per_seed.success, as_pct=True), nav, links, **keys),
                    _mean_ci(per_seed.death, as_pct=True) + cut,
                    _mean_ci(part.groupby("seed").died_on_stale.mean(), as_pct=True) + cut,
                ]
                for r in beside:
                    other = cell[(cell.regime == r) & (cell.strategy == strategy)]
                    row.append(
                        _mean_ci(other.groupby("seed").death.mean(), as_pct=True) + cut_of(other)
                        if not other.empty
                        else MISSING
                    )
                rows.append(row)
        header = ["model", "modality", "strategy", "seeds", f"success {own}", f"death {own}", "death on a stale entry"]
        out["navigation"] = Table([*header, *(f"death {r}" for r in beside)], rows)
    return out


def planned(det: pd.DataFrame, nav: pd.DataFrame, links: Links) -> dict[str, object] | None:
    """The App. K section's context, or None when the logs hold none of its runs: each
    extension's part with the tables the logs hold, then each regime's with a part of its
    own (``ChangeRegime.report_title``: MA's) in :func:`regimes_in` order."""
    frames = {"detection": det, "navigation": nav}
    parts = []
    for part in PARTS:
        tables = [(t, compared(part, t, frames[t.kind], links)) for t in part.tables if t.kind in frames]
        listed = [{"text": t.text, "caption": t.caption, "table": table} for t, table in tables if table is not None]
        if listed:
            parts.append({"title": part.title, "text": part.text, "tables": listed})
    present = {str(r) for frame in (det, nav) if not frame.empty for r in frame["regime"].unique()}
    regimes = [regime for r in regimes_in(present) if (regime := _with_part(r)) is not None]
    own = [shown for regime in regimes if (shown := regime_part(regime, det, nav, links)) is not None]
    return {"parts": parts, "regimes": own} if parts or own else None
