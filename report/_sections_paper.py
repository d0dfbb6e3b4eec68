"""The report's sections on the paper's own matrix: the logs, navigation and detection.

Each function computes one section's numbers, table cells and figures and returns
them as the context of its template (``templates/<section>.md.j2``), which holds the
headings and the prose. A cell the logs do not cover reads ``missing``; a cell with
data links to the log it came from; where a model matches one the paper reports, the
paper's value stands beside ours with the difference (ours - paper).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from . import _figures as figures
from . import _paper as paper
from ._detection_stats import (
    MAIN_BATCH_SIZE,
    batch_sweep,
    detection_summary,
    enough_batch,
    f1_vs_success,
    flag_rates,
    main_detection,
    modality_tests,
    stale_ratios,
    thaw_freeze,
)
from ._document import (
    MISSING,
    Figure,
    Links,
    Table,
    as_int,
    beside,
    ci,
    cut_note,
    cut_of,
    esc,
    evidence,
    first_row,
    limit_name,
    link,
    name,
    nan,
    num,
    pct,
    pvalue,
    rows_matching,
    with_ci,
)
from ._inventory import inventory
from ._load import FLAG_CELLS, Results
from ._navigation_stats import (
    FILTER,
    LIMITED,
    MAIN_GRID_SIZE,
    PAPER_FILTER,
    POOLED_REGIMES,
    pooled,
    regime_order,
    strategy_label,
    strategy_order,
    strategy_tests,
    with_axes,
)
from ._stats import ALPHA

MODALITIES = ("text", "vision")
SWEEP = (1, 5, 10, 20)
USAGE_FIELDS = (
    ("input_tokens", "input"),
    ("input_tokens_cache_read", "cache read"),
    ("input_tokens_cache_write", "cache write"),
    ("output_tokens", "output"),
    ("reasoning_tokens", "reasoning"),
    ("total_tokens", "total"),
)


def unreachable(tests: pd.DataFrame, unit: str, what: str, where: str) -> str:
    """One sentence on the tests that cannot reach alpha with the pairs they have."""
    out = tests[~tests.reachable]
    if out.empty:
        return ""
    most = int(out[unit].max())
    which = (
        f"None of the {len(tests)} {what} can"
        if len(out) == len(tests)
        else f"{len(out)} of the {len(tests)} {what} cannot"
    )
    return (
        f"{which} reach alpha = {ALPHA} with the {unit} they pair (at most {most}): the exact two-sided "
        "Wilcoxon test on n pairs gives p >= 2/2^n at best (every pair differing, all one way), and Holm's "
        f"adjustment over the family leaves even that above alpha, so they are not listed ({where})."
    )


def test_row(t: Any, a: str, b: str, *, view: str | None = None, extra: str | None = None, cut: str = "") -> list[str]:
    """A row of a table of paired tests between strategies: the contrast, its seeds
    (and ``cut``: what limits cut of the episodes compared, :func:`tested_cut`), Δ,
    Wilcoxon p, Holm p, significance and McNemar (success only)."""
    return [
        name(t.model),
        str(t.regime),
        *([view] if view is not None else []),
        f"{a} vs {b}",
        str(t.metric),
        f"{t.seeds} ({t.nonzero} ≠ 0){cut}",
        f"{100 * t.difference:+.1f} pp",
        pvalue(t.p),
        pvalue(t.p_holm),
        "yes" if t.significant else "no",
        "" if t.metric != "success" else f"{int(t.only_a)}/{int(t.only_b)}, p={pvalue(t.mcnemar_p)}",
        *([extra] if extra is not None else []),
    ]


def tested_cut(nav: pd.DataFrame, t: Any, *axes: str) -> str:
    """What limits cut of the episodes a strategy test ``t`` compares: its model and
    regime, strategies A and B, and its value of each of ``axes``."""
    # a table row (a pandas Series, whose ``t.filter`` is its method) or a named tuple
    row = t.to_dict() if isinstance(t, pd.Series) else t._asdict()
    keys = {"model": row["model"], "regime": row["regime"], **{axis: row[axis] for axis in axes}}
    part = rows_matching(nav, **keys)
    return cut_of(part[part.strategy.isin([row["a"], row["b"]])])


TEST_HEADER = [
    "A vs B",
    "rate",
    "seeds",
    "Δ",
    "Wilcoxon p (exact)",
    "Holm p",
    f"sig. (alpha={ALPHA})",
    "McNemar (exact) only A/only B",
]


# --- overview -----------------------------------------------------------------------


def overview(results: Results, source: str, links: Links) -> dict[str, object]:
    """The logs read (the appendix's inventory), their run status, what could not be
    read, token usage, stale ratios."""
    logs = results.logs
    superseded = logs[logs.superseded]
    table, note = inventory(logs, links)
    models = {str(m) for frame in (results.detection, results.navigation) if not frame.empty for m in frame.model}
    return {
        "source": source or "logs",
        "logs_read": len(logs) - len(superseded),
        "detection_samples": len(results.detection),
        "navigation_episodes": len(results.navigation),
        "logs": table,
        "inventory_note": note,
        "paper_match": any(paper.paper_model(m) for m in models),
        "incomplete": int(((logs.status != "success") & ~logs.superseded).sum()),
        "superseded": len(superseded),
        "problems": esc("; ".join(results.problems)),
        "usage": _usage(results),
        "stale_ratios": _stale_ratios(results.detection) if not results.detection.empty else None,
        "versions": _versions(logs[~logs.superseded]),
        "cut": _cut_samples(results.cut(), links),
        "cut_left_out": not results.left_out.empty,
    }


def _versions(logs: pd.DataFrame) -> str:
    """A warning when the logs of one task were written by different task versions: a
    version changes when what a task measures, or how it reads or counts an answer,
    changes (CHANGELOG.md), so its numbers are not comparable with another version's."""
    if "task_version" not in logs.columns:
        return ""
    mixed = []
    for kind, group in logs.groupby("kind"):
        versions = sorted({str(as_int(v)) for v in group.task_version})
        if len(versions) > 1:
            counts = ", ".join(f"{(group.task_version.map(as_int) == int(v)).sum()} of version {v}" for v in versions)
            mixed.append(f"{kind} ({counts})")
    if not mixed:
        return ""
    return (
        f"**Task versions differ:** {'; '.join(mixed)}. A task's version changes when what it measures, or how it "
        "reads or counts an answer, changes (see the suite's CHANGELOG.md), so numbers of different versions are "
        "not comparable number for number; the tables below pool them."
    )


def _cut_samples(cut: pd.DataFrame, links: Links) -> Table:
    """The appendix's list of the samples a limit cut short, each linked to its sample."""
    rows = []
    order = ["kind", "model", "regime", "seed", "strategy", "epoch"]
    for r in cut.sort_values(order, na_position="first").itertuples():
        epoch = None if nan(r.epoch) else as_int(r.epoch)
        rows.append(
            [
                str(r.kind),
                name(r.model),
                str(r.regime),
                str(r.modality),
                "" if nan(r.strategy) else str(r.strategy),
                str(as_int(r.seed)),
                "" if epoch is None else str(epoch),
                limit_name(str(r.limit)),
                esc(str(r.limit_reason)),
                link(esc(str(r.sample_id)), links.href((str(r.log), str(r.sample_id), epoch or 1))),
            ]
        )
    header = ["task", "model", "regime", "obs", "strategy", "seed", "epoch", "cut by", "Inspect's reason", "sample"]
    return Table(header, rows)


def _usage(results: Results) -> Table:
    totals: dict[str, dict[str, int]] = {}
    for text in results.logs.model_usage:
        for model, usage in (json.loads(text) if isinstance(text, str) else {}).items():
            into = totals.setdefault(model, {})
            for key, _ in USAGE_FIELDS:
                into[key] = into.get(key, 0) + int(usage.get(key) or 0)
    rows = [[esc(model), *(f"{totals[model][key]:,}" for key, _ in USAGE_FIELDS)] for model in sorted(totals)]
    return Table(["model", *(label for _, label in USAGE_FIELDS)], rows)


def _stale_ratios(det: pd.DataFrame) -> Table:
    ratios = stale_ratios(det)
    rows = []
    for regime in regime_order(ratios.regime):
        r = first_row(ratios, regime=regime)
        ref = paper.STALE_RATIO.get(regime)
        if ref is None:  # a regime beyond the paper: ours alone
            assert r is not None  # regime_order lists only the paper's regimes when absent
            rows.append([regime, str(r.seeds), f"{r['mean']:.3f} ± {num(r['std'])}", _range(r), "not in the paper"])
            continue
        theirs = f"{ref[0]:.3f} ± {ref[1]:.3f} [{ref[2]:.3f}, {ref[3]:.3f}]"
        if r is None:
            rows.append([regime, "0", MISSING, "", theirs])
            continue
        rows.append(
            [
                regime,
                str(r.seeds),
                f"{r['mean']:.3f} ± {num(r['std'])}",
                _range(r),
                f"{theirs} (Δ mean {r['mean'] - ref[0]:+.3f})",
            ]
        )
    return Table(["regime", "seeds", "ours mean ± std", "ours range", "paper (50 seeds)"], rows)


def _range(r: pd.Series) -> str:
    return f"[{r['min']:.3f}, {r['max']:.3f}]"


# --- navigation ---------------------------------------------------------------------


def _strategy_rows(nav: pd.DataFrame) -> list[tuple[str, str]]:
    """(strategy, filter mode) of each table row: every strategy in the paper's mode,
    each followed by the other modes the logs ran it in (side by side)."""
    ran = set(zip(nav.strategy, nav[FILTER], strict=True))
    others = sorted({mode for _, mode in ran} - {PAPER_FILTER})
    modes = (PAPER_FILTER, *others)
    return [(s, m) for s in strategy_order(nav.strategy) for m in modes if m == PAPER_FILTER or (s, m) in ran]


def navigation(nav: pd.DataFrame, rates: pd.DataFrame, out: Path, links: Links) -> dict[str, object] | None:
    """Table 3 (rates with CIs and the paper's values), the paired tests between
    strategies, Fig. 5, Table 6 and Fig. 6; None without navigation logs."""
    if nav.empty:
        return None
    nav = with_axes(nav)
    strategy_rows = _strategy_rows(nav)
    # the figures draw the paper's filter mode; the tables show every mode side by side
    paper_rates = rates[rates[FILTER] == PAPER_FILTER] if FILTER in rates.columns else rates
    models = sorted(nav.model.unique())
    modalities = sorted(nav.modality.unique())
    # the paper's regimes, then any other the logs hold (MA, a plug-in): a column or rows each
    regimes = regime_order(nav.regime)

    table3 = []
    for modality in modalities:
        rows = []
        for model in models:
            for strategy, mode in strategy_rows:
                row = [name(model), strategy_label(strategy, mode, figures.STRATEGY_NAMES)]
                for regime in regimes:
                    keys = {"model": model, "regime": regime, "modality": modality, "strategy": strategy}
                    r = first_row(rates, **keys, filter=mode)
                    text = f"{pct(r.success)} / {pct(r.death)}" if r is not None else ""
                    row.append(MISSING if r is None else evidence(text, nav, links, **keys, filter=mode))
                rows.append(row)
        table3.append((modality, Table(["model", "strategy", *(f"{r} SR / Death" for r in regimes)], rows)))

    any_cut = bool((rates[f"n_{LIMITED}"] > 0).any()) if len(rates) else False
    detail = []
    for model in models:
        ref_model = paper.paper_model(model)
        for modality in modalities:
            for regime in regimes:
                for strategy, mode in strategy_rows:
                    label = strategy_label(strategy, mode)
                    keys = {"model": model, "regime": regime, "modality": modality, "strategy": strategy}
                    r = first_row(rates, **keys, filter=mode)
                    if r is None:
                        empty = ["0", MISSING, "", "", *([""] if any_cut else []), ""]
                        detail.append([name(model), modality, regime, label, *empty, "", ""])
                        continue
                    paper_row = modality == "text" and mode == PAPER_FILTER
                    ref = paper.NAVIGATION.get((ref_model or "", regime, strategy)) if paper_row else None
                    cut = cut_note(nav, **keys, filter=mode)
                    detail.append(
                        [
                            name(model),
                            modality,
                            regime,
                            label,
                            evidence(f"{r.episodes} ({r.seeds} seeds)", nav, links, **keys, filter=mode),
                            with_ci(pct(r.success), r.success_low, r.success_high, pct) + cut,
                            with_ci(pct(r.death), r.death_low, r.death_high, pct) + cut,
                            pct(r.timeout) + cut,
                            *([pct(r[LIMITED]) + cut] if any_cut else []),
                            f"{r.fallbacks} / {r.died_on_stale}{cut}",
                            beside(r.success, ref["success"]) if ref else "",
                            beside(r.death, ref["death"]) if ref else "",
                        ]
                    )
    detail_header = ["model", "obs", "regime", "strategy", "episodes", "success [95% CI]", "death [95% CI]"]
    detail_header += ["timeout", *(["cut by a limit"] if any_cut else []), "fallbacks / died on stale"]
    detail_header += ["paper success", "paper death"]

    tests = strategy_tests(nav)
    test_rows = []
    names = figures.STRATEGY_NAMES
    quoted = False
    for _, t in tests[tests.reachable].iterrows():
        ref_model = paper.paper_model(str(t.model))
        paper_test = t.metric == "success" and t[FILTER] == PAPER_FILTER
        contrast = paper.CONTRASTS.get((ref_model or "", t.regime, t.a, t.b)) if paper_test else None
        quoted = quoted or contrast is not None
        a, b = strategy_label(t.a, t[FILTER], names), strategy_label(t.b, t[FILTER], names)
        test_rows.append(test_row(t, a, b, extra=contrast or "", cut=tested_cut(nav, t, FILTER)))

    ends = ("success", "death", "timeout", *([LIMITED] if any_cut else []))
    steps = []
    for model in models:
        ref_model = paper.paper_model(model) or ""
        for regime in regimes:
            for strategy, mode in strategy_rows:
                label = strategy_label(strategy, mode)
                r = first_row(rates, model=model, regime=regime, strategy=strategy, filter=mode)
                if r is None:
                    steps.append([name(model), regime, label, *(MISSING for _ in ends), ""])
                    continue
                cut = cut_note(nav, model=model, regime=regime, strategy=strategy, filter=mode)
                cells, refs = [], []
                for outcome in ends:
                    n = int(r[f"n_{outcome}"])
                    cells.append((f"{num(r[f'steps_{outcome}'], 1)} ({n} episodes)" if n else "- (0 episodes)") + cut)
                    paper_row = regime == paper.STEPS_REGIME and mode == PAPER_FILTER
                    value = paper.STEPS.get((ref_model, strategy, outcome)) if paper_row else None
                    if value is not None:
                        refs.append(f"{outcome} {beside(r[f'steps_{outcome}'], value, as_pct=False, digits=1)}")
                steps.append([name(model), regime, label, *cells, "; ".join(refs)])
    steps_header = ["model", "regime", "strategy", *(f"{'cut' if e == LIMITED else e} steps" for e in ends), "paper"]

    return {
        "beyond": _beyond(regimes),
        "table3": table3,
        "any_cut": any_cut,
        "detail": Table(detail_header, detail),
        "tests": Table(["model", "regime", *TEST_HEADER, "paper"], test_rows),
        "n_tests": len(tests),
        "paper_p_values": paper.P_VALUES if quoted else "",
        "unreachable": unreachable(tests, "seeds", "tests", "Table 3 holds their rates") if len(tests) else "",
        "fig5": Figure(
            figures.fig5_filtering(paper_rates, out / "fig5_filtering.png"),
            "Fig. 5: success rate, 95 % bootstrap CI over seeds (none with fewer than 5 seeds or every seed alike)"
            + _hatched(nav[nav.strategy.isin(["nofilter", "omcd", "oracle"]) & (nav[FILTER] == PAPER_FILTER)]),
        ),
        "steps": Table(steps_header, steps),
        "fig6": Figure(
            # pooled over the paper's regimes (and the static grid), as the paper pools them
            figures.fig6_steps(pooled(paper_rates), out / "fig6_steps.png"),
            "Fig. 6: mean steps by outcome and strategy" + cut_of(pooled(nav[nav[FILTER] == PAPER_FILTER])),
        ),
    }


# --- detection ----------------------------------------------------------------------


def detection(det: pd.DataFrame, nav: pd.DataFrame, out: Path, links: Links) -> dict[str, object] | None:
    """Fig. 3 with the vision-text tests, Fig. 4, 7, 8, 9 and Table 5; None without
    detection logs."""
    if det.empty:
        return None
    main = main_detection(det)
    summary = detection_summary(main)
    models = sorted(det.model.unique())
    f1_rows = []
    for model in models:
        ref_model = paper.paper_model(model) or ""
        for modality in [*MODALITIES, *(m for m in sorted(set(summary.modality)) if m not in MODALITIES)]:
            for regime in regime_order(summary.regime):
                r = first_row(summary, model=model, regime=regime, modality=modality)
                if r is None:
                    f1_rows.append([name(model), modality, regime, "0", MISSING, "", "", "", "", ""])
                    continue
                keys = {"model": model, "regime": regime, "modality": modality, "batch_size": r.batch_size}
                cut = cut_note(main, **keys)
                f1_rows.append(
                    [
                        name(model),
                        modality,
                        regime,
                        f"{r.seeds} (B={r.batch_size})",
                        evidence(f"{r.f1_mean:.3f} ± {num(r.f1_std)}", main, links, **keys),
                        ci(r.f1_low, r.f1_high) + cut,
                        f"{num(r.precision)} / {num(r.recall)}{cut}",
                        f"{r.calls_per_seed:.1f}{cut}",
                        f"{r.unparseable} / {r.unanswered} / {r.unknown_ids}{cut}",
                        "",
                    ]
                )
            overall = pooled(summary[(summary.model == model) & (summary.modality == modality)])
            ref = paper.DETECTION_F1.get((ref_model, modality))
            if ref is not None and len(overall):
                mean = float(overall.f1_mean.mean())
                cut = cut_of(pooled(rows_matching(main, model=model, modality=modality)))
                f1_rows.append(
                    [
                        name(model),
                        modality,
                        "mean of L1-L3",
                        "",
                        f"{mean:.3f}{cut}",
                        "",
                        "",
                        "",
                        "",
                        beside(mean, ref, False),
                    ]
                )
    f1_header = ["model", "obs", "regime", "seeds", "F1 mean ± std", "95% CI", "P / R", "calls a seed"]
    f1_header += ["unparseable / unanswered / unknown ids", "paper"]

    mod = modality_tests(pooled(det))  # over the (regime, seed) pairs of the paper's regimes
    mod_rows = []
    for _, t in mod[mod.reachable].iterrows():
        ref = paper.VISION_DELTA.get(paper.paper_model(str(t.model)) or "")
        mod_rows.append(
            [
                name(t.model),
                f"{t.pairs} ({t.nonzero})"
                + cut_of(pooled(main[(main.model == t.model) & main.modality.isin(["text", "vision"])])),
                f"{t.difference:+.3f}",
                pvalue(t.p),
                pvalue(t.p_holm),
                "yes" if t.significant else "no",
                beside(t.difference, ref, as_pct=False) if ref is not None else "",
            ]
        )

    flags = flag_rates(det)
    flag_rows = []
    for _, f in flags.iterrows():
        refs = _vision_refs(f, FLAG_CELLS, paper.FLAG_RATES)
        cut = cut_of(rows_matching(main[main.regime.isin(["L1", "L2"])], model=f.model, modality=f.modality))
        rates = [f"{pct(f[c])} ({int(f[c + '_n'])} entries){cut}" for c in FLAG_CELLS]
        flag_rows.append([name(f.model), str(f.modality), *rates, refs])

    tf = thaw_freeze(det)
    tf_rows = []
    for _, t in tf.iterrows():
        refs = _vision_refs(t, ("thaw", "freeze"), paper.THAW_FREEZE, t.regime)
        gap = t.thaw - t.freeze
        cut = cut_note(main, model=t.model, modality=t.modality, regime=t.regime)
        tf_rows.append(
            [
                name(t.model),
                str(t.modality),
                str(t.regime),
                f"{pct(t.thaw)} ({t.thaw_n} entries){cut}",
                f"{pct(t.freeze)} ({t.freeze_n} entries){cut}",
                "-" if math.isnan(gap) else f"{100 * gap:+.1f} pp{cut}",
                refs,
            ]
        )

    pairs, corr = f1_vs_success(det, nav) if not nav.empty else (pd.DataFrame(), pd.DataFrame())
    corr_rows = [
        [
            name(c.model),
            str(c.regime),
            str(c.seeds) + cut_of(_correlated(det, nav, str(c.model), str(c.regime)), "samples"),
            _corr(c.pearson_r, c.pearson_p),
            _corr(c.spearman_rho, c.spearman_p),
        ]
        for _, c in corr.iterrows()
    ]
    return {
        "beyond": _beyond(regime_order(summary.regime)),
        "f1": Table(f1_header, f1_rows),
        "fig3": Figure(
            figures.fig3_f1(summary, out / "fig3_f1.png", _cut_by(main, ["model", "regime", "modality"])),
            "Fig. 3: detection F1, mean ± std over seeds" + _hatched(main),
        ),
        "modality_tests": Table(
            MODALITY_TEST_HEADER,
            mod_rows,
        ),
        "n_modality_tests": len(mod),
        "modality_unreachable": unreachable(mod, "pairs", "model tests", "Fig. 3 holds their F1") if len(mod) else "",
        "flags": Table(["model", "obs", *FLAG_CELLS, "paper"], flag_rows),
        "fig4": Figure(
            figures.fig4_flags(flags, out / "fig4_flags.png"),
            "Fig. 4: flag rate by claim x truth" + cut_of(main[main.regime.isin(["L1", "L2"])]),
        ),
        "fig7": Figure(
            figures.fig7_precision_recall(summary, out / "fig7_precision_recall.png"),
            "Fig. 7: mean precision and recall per (model, modality, regime), iso-F1 contours"
            + _undefined_note(summary)
            + cut_of(main),
        ),
        "thaw_freeze": Table(["model", "obs", "regime", "thaw recall", "freeze recall", "gap", "paper"], tf_rows),
        "fig8": Figure(
            figures.fig8_thaw_freeze(tf, out / "fig8_thaw_freeze.png"),
            "Fig. 8: recall by change direction" + cut_of(main),
        ),
        "correlations": Table(["model", "regime", "seeds", "Pearson r (p)", "Spearman rho (p)"], corr_rows),
        "paper_correlation": paper.CORRELATION,
        "paper_correlation_p": paper.CORRELATION_P_VALUES,
        "fig9": Figure(
            figures.fig9_f1_success(pairs, corr, out / "fig9_f1_success.png") if len(corr) else None,
            "Fig. 9: per-seed F1 vs OMCD success"
            + (
                cut_of(
                    pd.concat(_correlated(det, nav, str(c.model), str(c.regime)) for _, c in corr.iterrows()), "samples"
                )
                if len(corr)
                else ""
            ),
        ),
        "sweep": _sweep(det, models, links),
        "paper_b10": paper.BATCH_F1_B10,
        **_growth(det, models, links, out),
    }


MODALITY_TEST_HEADER = ["model", "(regime, seed) pairs (≠ 0)", "Δ F1 (vision - text)", "Wilcoxon p (exact)"]
MODALITY_TEST_HEADER += ["Holm p", "significant", "paper"]


def _cut_by(frame: pd.DataFrame, keys: list[str]) -> dict[tuple[str, ...], tuple[int, int]]:
    """(cut, total) rows of ``frame`` by ``keys``: the samples behind each bar a figure hatches."""
    if frame.empty or "limit" not in frame.columns:
        return {}
    cut = frame["limit"].fillna("") != ""
    return {tuple(str(k) for k in key): (int(cut[group.index].sum()), len(group)) for key, group in frame.groupby(keys)}


def _hatched(frame: pd.DataFrame) -> str:
    """A caption's note of the samples a limit cut, behind the bars it hatches."""
    note = cut_of(frame)
    return f"{note}; hatched bars include them" if note else ""


def _beyond(regimes: Sequence[str]) -> str:
    """The regimes of a table that the report's pooled numbers leave out, as a list in words."""
    return ", ".join(r for r in regimes if r not in POOLED_REGIMES)


def _correlated(det: pd.DataFrame, nav: pd.DataFrame, model: str, regime: str) -> pd.DataFrame:
    """The samples behind Fig. 9's correlation of a (model, regime): text detection and
    text OMCD episodes."""
    detection = rows_matching(main_detection(det), model=model, regime=regime, modality="text")
    return pd.concat([detection, rows_matching(nav, model=model, regime=regime, modality="text", strategy="omcd")])


def _undefined_note(summary: pd.DataFrame) -> str:
    """How many runs Fig. 7 leaves out, and how many seeds' precision or recall is undefined."""
    if summary.empty:
        return ""
    runs = int((summary.precision.isna() | summary.recall.isna()).sum())
    seeds_p, seeds_r = int(summary.precision_undefined.sum()), int(summary.recall_undefined.sum())
    if not (runs or seeds_p or seeds_r):
        return ""
    parts = [f"{runs} of {len(summary)} runs not drawn (precision or recall undefined on every seed)"]
    if seeds_p:
        parts.append(f"precision undefined on {seeds_p} seed(s) (nothing flagged)")
    if seeds_r:
        parts.append(f"recall undefined on {seeds_r} seed(s) (nothing stale)")
    return "; " + "; ".join(parts) + "; runs at one place are spread on a ring around it, labelled with their count"


def _vision_refs(row: pd.Series, columns: Sequence[str], values: Mapping[Any, float], *within: str) -> str:
    """The paper's value of each of ``columns`` beside ours, for a vision row of a model
    the paper reports (its figures state vision values only); ``values`` is keyed by
    (paper model, *within, column)."""
    model = paper.paper_model(str(row.model)) or ""
    if row.modality != "vision":
        return ""
    keys = {c: (model, *within, c) for c in columns}
    return "; ".join(f"{c} {beside(row[c], values[keys[c]])}" for c in columns if keys[c] in values)


def _corr(value: float, p: float) -> str:
    return "undefined" if math.isnan(value) else f"{value:+.3f} ({pvalue(p)})"


def _sweep_grid(sweep: pd.DataFrame, model: str) -> list[tuple[int, int]]:
    """The (n, B) rows of ``model``'s Table 5: at each grid side it ran (n = 8 when
    none), the paper's B in {1, 5, 10, 20} (``missing`` where absent) and every other
    B it logged (the study's sweep adds B = n²/64 x (5, 10, 20) beyond n = 8)."""
    own = sweep[sweep.model == model] if not sweep.empty else sweep
    sizes = sorted({int(n) for n in own["size"]}) or [MAIN_GRID_SIZE]
    grid: list[tuple[int, int]] = []
    for n in sizes:
        logged = {int(b) for b in own[own["size"] == n].batch_size}
        grid.extend((n, b) for b in sorted(logged | set(SWEEP)))
    return grid


def _sweep(det: pd.DataFrame, models: list[str], links: Links) -> Table:
    """Table 5: F1 and calls against the batch size (L1, text) at each grid side n,
    and the paper's deltas (n = 8)."""
    sweep = batch_sweep(det)
    rows = []
    for model in models:
        sweep_model = paper.paper_model(model)
        for n, b in _sweep_grid(sweep, model):
            base = first_row(sweep, model=model, size=n, batch_size=MAIN_BATCH_SIZE)
            r = first_row(sweep, model=model, size=n, batch_size=b)
            if r is None:
                rows.append([name(model), str(n), str(b), "0", MISSING, MISSING, "", ""])
                continue
            delta = math.nan if base is None else r.f1_mean - base.f1_mean
            ref = paper.BATCH_DELTA.get(b) if sweep_model == "GPT-4o" and n == MAIN_GRID_SIZE else None
            keys = {"model": model, "regime": "L1", "modality": "text", "size": n, "batch_size": b}
            cut = cut_note(det, **keys)
            delta_cut = cut
            if base is not None:  # the difference reads the B = 10 row's samples too
                both = det[det.batch_size.isin([b, MAIN_BATCH_SIZE])]
                delta_cut = cut_note(both, **{k: v for k, v in keys.items() if k != "batch_size"})
            rows.append(
                [
                    name(model),
                    str(n),
                    str(b),
                    str(r.seeds),
                    evidence(f"{r.f1_mean:.3f} ± {num(r.f1_std)}", det, links, **keys),
                    f"{r.calls_per_seed:.1f}{cut}",
                    "-" if math.isnan(delta) else f"{delta:+.3f}{delta_cut}",
                    "" if ref is None else f"{ref:+.3f}" + ("" if math.isnan(delta) else f" (Δ {delta - ref:+.3f})"),
                ]
            )
    header = ["model", "n", "B", "seeds", "F1 mean ± std", "calls a seed", "F1 - F1(B=10)", "paper F1 - F1(B=10)"]
    return Table(header, rows)


def _growth(det: pd.DataFrame, models: list[str], links: Links, out: Path) -> dict[str, Any]:
    """App. E, how B should grow with n: F1 [95 % CI] and calls an audit per (n, B),
    Fig. E (F1 vs B, a line per n) and, per (model, n), the B that kept F1 within the
    CI of the best B with the fewest calls."""
    sweep = batch_sweep(det)
    rows = []
    for model in models:
        for _, r in sweep[sweep.model == model].sort_values(["size", "batch_size"]).iterrows():
            keys = {"model": model, "regime": "L1", "modality": "text", "size": r["size"], "batch_size": r.batch_size}
            rows.append(
                [
                    name(model),
                    str(r["size"]),
                    str(r.batch_size),
                    str(r.seeds),
                    evidence(with_ci(num(r.f1_mean), r.f1_low, r.f1_high), det, links, **keys),
                    num(r.calls_per_audit, 1) + cut_note(det, **keys),
                ]
            )
    answers = []
    for _, a in enough_batch(sweep).iterrows():
        who = f"{name(a.model)}, " if len(models) > 1 else ""
        best = with_ci(num(a.best_f1), a.best_low, a.best_high)
        if a.b == a.best_b:
            within = "within its CI" if not math.isnan(a.best_low) else "with its mean F1"
            answers.append(
                f"{who}n = {a['size']}: B = {a.b} (F1 {best}, {num(a.calls, 1)} calls an audit) is both "
                f"the best of the {a.candidates} B run and the cheapest {within}."
            )
        elif math.isnan(a.best_low):
            answers.append(
                f"{who}n = {a['size']}: B = {a.b} matched the mean F1 of the best B = {a.best_b} ({best}) with "
                f"{num(a.calls, 1)} calls an audit instead of {num(a.best_calls, 1)}."
            )
        else:
            answers.append(
                f"{who}n = {a['size']}: B = {a.b} kept F1 ({num(a.f1)}) within the 95 % CI of the best B = "
                f"{a.best_b} ({best}) with {num(a.calls, 1)} calls an audit instead of {num(a.best_calls, 1)}."
            )
    figure = figures.fig_batch_growth(sweep, out / "figE_batch_growth.png")
    return {
        "growth": Table(["model", "n", "B", "seeds", "F1 [95 % CI]", "calls an audit"], rows),
        "growth_answers": answers,
        "figE": Figure(
            figure,
            "Fig. E: detection F1 (mean over seeds, 95 % bootstrap CI bars where there is one) vs batch size B "
            "(log scale), a line per grid side n; L1, text" + cut_of(rows_matching(det, regime="L1", modality="text")),
        ),
    }
