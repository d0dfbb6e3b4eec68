"""The report's first section: what was found, per model, in sentences and one table.

For each model (a navigator with its auditor, when one is bound) and the paper's cells
(text observation for navigation, the main batch size for detection, every regime
pooled): detection F1 by modality, deaths by strategy, the safety tax (NoFilter's death
rate - NoMemory's) and OMCD's success gap to Oracle, each with a seeded bootstrap CI
(``_stats.bootstrap_ci``: none with too few units or every unit alike) and the paired
tests behind it, each named with its method. Units pool regimes: a detection unit is a (regime, seed),
a navigation unit a (regime, seed) whose rate is over its episodes; paired tests pair
units (Wilcoxon) and episodes by (regime, seed, epoch) (exact McNemar), whatever log
each strategy came from. A part the logs lack is left out of the sentence, never
written as nan.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._detection_stats import main_detection, modality_tests
from ._document import MISSING, NO_CI, UNDEFINED, Table, cut_of, cut_phrase, esc, nan, pvalue, short
from ._figures import STRATEGY_NAMES
from ._navigation_stats import paper_cells, per_seed_rates, strategies_in
from ._stats import ALPHA, bootstrap_ci, mcnemar, paired_wilcoxon

UNIT = ["regime", "seed"]
NAV_MODALITY = "text"


def who(model: str) -> str:
    """``openai/gpt-4o (auditor x/y)`` -> ``gpt-4o (audited by y)``."""
    navigator, _, auditor = model.partition(" (auditor ")
    return short(navigator) + (f" (audited by {short(auditor.rstrip(')'))})" if auditor else "")


def share(x: float) -> str:
    return UNDEFINED if nan(x) else f"{100 * x:.0f} %"


def interval(low: float, high: float, points: bool = False) -> str:
    if nan(low) or nan(high):
        return f" ({NO_CI})"
    if points:
        return f" [95 % CI {100 * low:+.0f}, {100 * high:+.0f} pp]"
    return f" [95 % CI {100 * low:.0f}, {100 * high:.0f} %]"


@dataclass(frozen=True)
class Contrast:
    """A paired difference A - B of per-unit rates, with its CI and tests."""

    a: float
    b: float
    difference: float
    low: float
    high: float
    units: int
    nonzero: int
    """Units whose difference is not zero (the ones the signed-rank test ranks)."""
    p: float
    mcnemar_p: float
    only_a: int
    only_b: int
    cut: str = ""
    """What the limits cut of the episodes compared (:func:`cut_of`), or empty."""

    def sentence(self) -> str:
        """``+33 pp [95 % CI +7, +67 pp] (exact Wilcoxon signed-rank, 15 (regime, seed)
        pairs, 5 non-zero, p = 0.0625; exact McNemar, 5/0 discordant episodes, p = 0.0625)``."""
        tests = wilcoxon_words(self.units, self.nonzero, self.p)
        if not nan(self.mcnemar_p):
            tests += f"; exact McNemar, {self.only_a}/{self.only_b} discordant episodes, p = {pvalue(self.mcnemar_p)}"
        if nan(self.low) or nan(self.high):
            return f"{100 * self.difference:+.0f} pp ({NO_CI}; {tests}){self.cut}"
        return f"{100 * self.difference:+.0f} pp{interval(self.low, self.high, True)} ({tests}){self.cut}"


def wilcoxon_words(units: int, nonzero: int, p: float) -> str:
    """The signed-rank test as a sentence gives it: its method, its pairs and its p."""
    return f"exact Wilcoxon signed-rank, {units} (regime, seed) pairs, {nonzero} non-zero, p = {pvalue(p)}"


def contrast(seeds: pd.DataFrame, episodes: pd.DataFrame, a: str, b: str, metric: str) -> Contrast | None:
    """``a`` - ``b`` on ``metric`` over the (regime, seed) units both strategies ran."""
    left = seeds[seeds.strategy == a].set_index(UNIT)[metric]
    right = seeds[seeds.strategy == b].set_index(UNIT)[metric]
    shared = sorted(set(left.index) & set(right.index))
    if not shared:
        return None
    x, y = [float(left[k]) for k in shared], [float(right[k]) for k in shared]
    w = paired_wilcoxon(x, y)
    low, high = bootstrap_ci(list(np.subtract(x, y)))
    keys = [*UNIT, "epoch"]
    ea = episodes[episodes.strategy == a].set_index(keys)[metric]
    eb = episodes[episodes.strategy == b].set_index(keys)[metric]
    pairs = sorted(set(ea.index) & set(eb.index))
    mc = mcnemar([ea[p] for p in pairs], [eb[p] for p in pairs]) if pairs else None
    return Contrast(
        a=float(np.mean(x)),
        b=float(np.mean(y)),
        difference=w.mean_difference,
        low=low,
        high=high,
        units=w.n,
        nonzero=w.nonzero,
        p=w.p,
        mcnemar_p=mc.p if mc else math.nan,
        only_a=mc.only_a if mc else 0,
        only_b=mc.only_b if mc else 0,
        cut=cut_of(episodes[episodes.strategy.isin([a, b])]),
    )


@dataclass
class Finding:
    """What one model's logs show."""

    model: str
    f1: dict[str, tuple[float, float, float, int, str]]
    """modality -> (mean F1, CI low, CI high, defined units, what limits cut of its samples)."""
    unflagged: tuple[int, int]
    """(samples, one per (regime, modality, seed), on which nothing was flagged: precision
    undefined; detection samples)."""
    vision_vs_text: tuple[float, float, int, int] | None
    """(mean difference vision - text, p, pairs, non-zero pairs)."""
    deaths: dict[str, tuple[float, float, float, str]]
    """strategy -> (death rate, CI low, CI high, what limits cut of its episodes) pooled over regimes."""
    nofilter_by_regime: list[tuple[str, float]]
    tax: Contrast | None
    gap: Contrast | None
    regimes: list[str]
    sentences: list[str]


def _detection(
    det: pd.DataFrame, model: str
) -> tuple[dict[str, tuple[float, float, float, int, str]], tuple[float, float, int, int] | None, tuple[int, int]]:
    if det.empty:
        return {}, None, (0, 0)
    main = main_detection(det)
    part = main[main.model == model]
    out = {}
    for modality, group in part.groupby("modality"):
        values = [float(v) for v in group.f1 if not nan(v)]
        if values:
            low, high = bootstrap_ci(values)
            out[str(modality)] = (float(np.mean(values)), low, high, len(values), cut_of(group))
    tests = modality_tests(det)
    row = tests[tests.model == model]
    vt = None
    if len(row):
        first = row.iloc[0]
        vt = (float(first.difference), float(first.p), int(first.pairs), int(first.nonzero))
    return out, vt, (int(part.precision.isna().sum()), len(part))


def _navigation(nav: pd.DataFrame, model: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    if nav.empty:
        return nav, nav
    episodes = paper_cells(nav)
    episodes = episodes[(episodes.model == model) & (episodes.modality == NAV_MODALITY)]
    if episodes.empty:
        return episodes, episodes
    return episodes, per_seed_rates(episodes)


def finding(det: pd.DataFrame, nav: pd.DataFrame, model: str) -> Finding:
    """The numbers and the sentences of one model."""
    f1, vt, unflagged = _detection(det, model)
    episodes, seeds = _navigation(nav, model)
    deaths: dict[str, tuple[float, float, float, str]] = {}
    by_regime: list[tuple[str, float]] = []
    tax = gap = None
    regimes: list[str] = []
    if not seeds.empty:
        regimes = sorted(set(episodes.regime))
        for strategy in strategies_in(seeds.strategy):
            part = seeds[seeds.strategy == strategy]
            if len(part):
                ran = episodes[episodes.strategy == strategy]
                deaths[strategy] = (float(ran.death.mean()), *bootstrap_ci(list(part.death)), cut_of(ran))
        nofilter = episodes[episodes.strategy == "nofilter"]
        by_regime = [(str(r), float(g.death.mean())) for r, g in nofilter.groupby("regime")]
        tax = contrast(seeds, episodes, "nofilter", "nomemory", "death")
        gap = contrast(seeds, episodes, "omcd", "oracle", "success")
    result = Finding(esc(who(model)), f1, unflagged, vt, deaths, by_regime, tax, gap, regimes, [])
    result.sentences = _sentences(result)
    return result


def _sentences(f: Finding) -> list[str]:
    out = []
    if f.f1:
        parts = [f"{m} {mean:.2f}{_f1_ci(low, high, n, cut)}" for m, (mean, low, high, n, cut) in f.f1.items()]
        text = "Detection F1: " + ", ".join(parts)
        if f.vision_vs_text is not None:
            d, p, n, nonzero = f.vision_vs_text
            text += f"; vision - text {d:+.2f} ({wilcoxon_words(n, nonzero, p)})"
        none, samples = f.unflagged
        if none:
            text += f"; it flagged nothing on {none} of {samples} samples (precision undefined there, not 0)"
        out.append(text + ".")
    if f.deaths:
        regimes = dict(f.nofilter_by_regime) if len(f.nofilter_by_regime) > 1 else {}
        parts = []
        for s, (r, lo, hi, cut) in f.deaths.items():
            split = ""
            if s == "nofilter" and regimes:
                split = " (" + ", ".join(f"{regime} {share(x)}" for regime, x in regimes.items()) + ")"
            parts.append(f"{STRATEGY_NAMES.get(s, s)} {share(r)}{interval(lo, hi)}{split}{cut}")
        out.append(f"Deaths per episode ({', '.join(f.regimes)}, text observation): " + "; ".join(parts) + ".")
    if f.tax is not None:
        t = f.tax
        out.append(
            f"Safety tax: NoFilter died in {share(t.a)} of episodes vs {share(t.b)} with NoMemory, {t.sentence()}."
        )
    elif f.deaths:
        out.append("Safety tax: not measured (needs NoFilter and NoMemory on shared seeds).")
    if f.gap is not None:
        g = f.gap
        out.append(f"OMCD vs Oracle: OMCD succeeded in {share(g.a)} of episodes vs {share(g.b)}, {g.sentence()}.")
    elif f.deaths:
        out.append("OMCD vs Oracle: not measured (needs both on shared seeds).")
    return out


def _f1_ci(low: float, high: float, units: int, cut: str = "") -> str:
    """The interval of a modality's F1 and its units: F1 pools regimes, so a unit is a
    (regime, seed) (one detection sample), not a seed."""
    if nan(low) or nan(high):
        return f" ({units} (regime, seed) units, {NO_CI}{cut})"
    return f" [95 % CI {low:.2f}, {high:.2f}] ({units} (regime, seed) units{cut})"


def headline(det: pd.DataFrame, nav: pd.DataFrame) -> dict[str, object] | None:
    """The headline section's context: findings per model and the summary table."""
    models = sorted({*(det.model.unique() if not det.empty else ()), *(nav.model.unique() if not nav.empty else ())})
    findings = [finding(det, nav, str(m)) for m in models]
    findings = [f for f in findings if f.sentences]
    if not findings:
        return None
    return {"findings": findings, "summary": summary_table(findings), "alpha": ALPHA}


def summary_table(findings: Sequence[Finding]) -> Table:
    modalities = sorted({m for f in findings for m in f.f1})
    strategies = strategies_in(s for f in findings for s in f.deaths)
    header = [
        "model",
        *(f"F1 {m}" for m in modalities),
        *(f"death {STRATEGY_NAMES.get(s, s)}" for s in strategies),
        *(["safety tax (pp)"] if any(f.tax for f in findings) else []),
        *(["OMCD - Oracle success (pp)"] if any(f.gap for f in findings) else []),
    ]
    rows = []
    for f in findings:
        row = [f.model]
        row += [f"{f.f1[m][0]:.2f}{f.f1[m][4]}" if m in f.f1 else MISSING for m in modalities]
        row += [share(f.deaths[s][0]) + f.deaths[s][3] if s in f.deaths else MISSING for s in strategies]
        if any(x.tax for x in findings):
            row.append(f"{100 * f.tax.difference:+.0f} (p = {pvalue(f.tax.p)}){f.tax.cut}" if f.tax else UNDEFINED)
        if any(x.gap for x in findings):
            row.append(f"{100 * f.gap.difference:+.0f} (p = {pvalue(f.gap.p)}){f.gap.cut}" if f.gap else UNDEFINED)
        rows.append(row)
    return Table(header, rows)


KIND_UNITS = {"detection": "detection samples", "navigation": "navigation episodes", "perception": "perception samples"}


def cut_parts(limits: Mapping[str, Mapping[str, int]], totals: Mapping[str, int]) -> list[str]:
    """``2 of 4 detection samples cut by the token limit`` for each task kind a limit cut
    samples of (detection, navigation, perception, then any other): ``limits`` holds, per
    task kind, how many samples each limit cut, ``totals`` the samples of each kind."""
    kinds = [*(k for k in KIND_UNITS if k in limits), *sorted(k for k in limits if k not in KIND_UNITS)]
    return [
        cut_phrase(dict(sorted(limits[kind].items())), totals.get(kind, 0), KIND_UNITS.get(kind, f"{kind} samples"))
        for kind in kinds
        if sum(limits[kind].values())
    ]


def cut_warning(cut: pd.DataFrame, totals: dict[str, int], left_out: bool) -> str | None:
    """The report's first words when a sample limit cut samples short: how many of each
    task kind, by which limit, and what that does to the figures; None when none was.

    ``cut`` holds a row per sample cut (``Results.cut``), ``totals`` the samples read per
    task kind (the cut ones included), ``left_out`` whether the figures leave them out
    (``--exclude-limited``).
    """
    if cut.empty:
        return None
    limits = {
        str(kind): {str(k): int(n) for k, n in part["limit"].value_counts().sort_index().items()}
        for kind, part in cut.groupby("kind")
    }
    read = {kind: totals.get(kind, 0) + (sum(limits[kind].values()) if left_out else 0) for kind in limits}
    parts = cut_parts(limits, read)
    listed = "[Appendix: samples cut short](#appendix-cut) lists them"
    if left_out:
        return (
            f"**Samples cut short, left out.** {'; '.join(parts)}: a sample limit ended them before their work was "
            f"done, and every figure below leaves them out (`--exclude-limited`); {listed}."
        )
    return (
        f"**Samples cut short.** {'; '.join(parts)}: a sample limit ended them before their work was done. Their "
        "scores count only what ran before the limit (an audit's unjudged entries count as not flagged, an episode "
        "cut mid-way is neither a success nor a death), so the figures that include them are not the model's; "
        f"every cell that includes them says how many, and {listed}. `spatialstale report LOG_DIR "
        "--exclude-limited` shows the figures without them; to finish them, run them again with a higher limit "
        "(`inspect eval-retry` does not rerun a sample that ended on a limit)."
    )
