"""The report's sections on what lies beyond the paper's protocol, each present only when
the logs hold it: each extension's section setting its axis's values side by side
(``ReportSweep``), the other navigators, the perception probe and the prompt sets; and
what safety costs. Each function returns its template's context
(``templates/<section>.md.j2``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from spatialstale.protocol import ReportSweep, extension_sweeps

from . import _figures as figures
from . import _perception as probe
from . import _prompt_sets as prompt_sets
from ._detection_stats import main_detection
from ._document import (
    MISSING,
    Figure,
    Links,
    Table,
    cut_note,
    cut_of,
    evidence,
    first_row,
    name,
    nan,
    num,
    pct,
    pvalue,
    rows_matching,
    with_ci,
)
from ._load import row_axes
from ._navigation_stats import (
    AGENT,
    FILTER,
    PAPER,
    PAPER_FILTER,
    PROMPT_AGENT,
    STRATEGY_ORDER,
    agent_tests,
    audit_costs,
    matching,
    nomemory_bound,
    outcome_rates,
    paper_cells,
    regime_order,
    strategy_label,
    strategy_order,
    strategy_tests,
    value_order,
    with_axes,
)
from ._sections_paper import TEST_HEADER, test_row, tested_cut, unreachable

NAMES = figures.STRATEGY_NAMES
SWEEPS = extension_sweeps()
"""The extensions' sections that set a navigation axis's values side by side, in registry order."""
NOT_RECORDED = "not recorded"
"""A cost cell of a log from before navigation 4, which did not record it."""


def axis_title(axis: str) -> str:
    """How the report names a navigation axis (its ``title``: ``view radius``)."""
    return next(a.title or a.name for a in row_axes("navigation") if a.name == axis)


def sweep(spec: ReportSweep, every_nav: pd.DataFrame, out: Path, links: Links) -> dict[str, object]:
    """An extension's section setting its axis's values side by side (its declaration,
    ``spec``): success and death at each value, paired tests between strategies within
    each value, and whether NoMemory is still an upper bound away from the paper's value."""
    axis = spec.axis
    nav = matching(with_axes(every_nav), {FILTER: PAPER_FILTER, AGENT: PROMPT_AGENT})
    context: dict[str, object] = {"spec": spec, "title": axis_title(axis)}
    if nav.empty:
        return {**context, "empty": True}
    values = value_order(nav[axis].unique(), axis)
    named = {value: spec.name(value, str(PAPER[axis])) for value in values}
    rates = outcome_rates(nav)
    tables = []
    for modality in sorted(nav.modality.unique()):
        rows = []
        for model in sorted(nav.model.unique()):
            for regime in regime_order(nav.regime):
                for strategy in strategy_order(nav.strategy):
                    keys = {"model": model, "regime": regime, "modality": modality, "strategy": strategy}
                    if first_row(rates, **keys) is None:
                        continue
                    row = [name(model), regime, NAMES.get(strategy, strategy)]
                    for value in values:
                        r = first_row(rates, **keys, **{axis: value})
                        text = "" if r is None else f"{pct(r.success)} / {pct(r.death)}"
                        row.append(MISSING if r is None else evidence(text, nav, links, **keys, **{axis: value}))
                    rows.append(row)
        header = ["model", "regime", "strategy", *(f"{named[v]} SR / Death" for v in values)]
        tables.append((modality, Table(header, rows)))
    tests = strategy_tests(nav)
    test_rows = [
        test_row(
            t,
            NAMES.get(t.a, t.a),
            NAMES.get(t.b, t.b),
            view=named[str(getattr(t, axis))],
            cut=tested_cut(nav, t, FILTER, axis),
        )
        for t in tests[tests.reachable].itertuples()
    ]
    file, caption, title, xlabel = spec.figure
    return {
        **context,
        "empty": False,
        "tables": tables,
        "figure": Figure(figures.fig_sweep(rates, out / file, axis, title, xlabel), caption),
        "upper_bound": upper_bound_reading(nomemory_bound(nav, axis), spec),
        "n_tests": len(tests),
        "unreachable": unreachable(tests, "seeds", "tests", "the table above holds their rates") if len(tests) else "",
        "tests": Table(["model", "regime", spec.column, *TEST_HEADER], test_rows),
    }


def upper_bound_reading(bound: pd.DataFrame, spec: ReportSweep) -> str:
    """Whether NoMemory is still an upper bound on success, away from the paper's value of
    the sweep's axis and at it."""
    if bound.empty:
        return f"Whether NoMemory is an upper bound needs NoMemory and another strategy on the same {spec.unit}."
    paper = str(PAPER[spec.axis])
    away = bound[bound.value.astype(str) != paper]
    at_paper = bound[bound.value.astype(str) == paper]
    parts = []
    if len(at_paper):
        parts.append(
            f"In the {spec.paper} NoMemory is an upper bound on success in {int(at_paper.bounded.sum())} of "
            f"{len(at_paper)} (model, regime) cells (no memory strategy succeeds more often)."
        )
    if len(away):
        broken = away[~away.bounded.astype(bool)]
        where = spec.away[:1].upper() + spec.away[1:]
        if broken.empty:
            parts.append(f"{where} NoMemory is still an upper bound in every one of the {len(away)} cells.")
        else:
            shown = [
                f"{name(r.model)} {r.regime} {spec.name(str(r.value), paper)}: "
                f"{NAMES.get(r.best, r.best)} {pct(r.best_success)} vs NoMemory {pct(r.nomemory)} "
                f"(at least as often on {r.seeds_at_least} of {r.seeds} seeds, more often on {r.seeds_more})"
                for r in broken.itertuples()
            ]
            parts.append(
                f"{where} NoMemory is no longer an upper bound in {len(broken)} of {len(away)} (model, regime, "
                f"{spec.unit}) cells, where a memory strategy succeeds more often: " + "; ".join(shown) + "."
            )
    return " ".join(parts)


def _sig(significant: object, reachable: object) -> str:
    if not reachable:
        return "n too small"
    return "significant" if significant else "not significant"


def _change(t: pd.Series) -> str:
    return f"{100 * t.difference:+.1f} pp, p={pvalue(t.p_holm)} ({_sig(t.significant, t.reachable)})"


def navigators(every_nav: pd.DataFrame, links: Links) -> dict[str, object]:
    """Outcomes of each navigator (``-T agent``) beside the paper's per-step prompt
    navigator's, strategy by strategy, with paired tests on the same seeds."""
    nav = with_axes(every_nav)
    tests = agent_tests(nav)
    success = tests[tests.metric == "success"]
    # a column for each swept axis (an extension's ReportSweep) that the tests hold several values of
    swept = [spec for spec in SWEEPS if len(set(tests[spec.axis])) > 1]
    values = {spec.axis: value_order(success[spec.axis].unique(), spec.axis) for spec in SWEEPS}
    modes = sorted(set(success[FILTER]), key=lambda mode: (mode != PAPER_FILTER, mode))

    def order(t: pd.Series) -> tuple[object, ...]:
        rank = STRATEGY_ORDER.index(t.strategy) if t.strategy in STRATEGY_ORDER else 99
        at = tuple(values[spec.axis].index(str(t[spec.axis])) for spec in SWEEPS)
        return (t.model, t.regime, t.modality, rank, modes.index(t[FILTER]), *at)

    rows = []
    for _, t in sorted(success.iterrows(), key=lambda item: order(item[1])):
        axes = ("model", "regime", "modality", "strategy", FILTER, *(spec.axis for spec in SWEEPS))
        keys = {k: t[k] for k in axes}
        death = matching(tests, {**keys, "metric": "death", "agent": t.agent}).iloc[0]
        rows.append(
            [
                name(t.model),
                str(t.regime),
                str(t.modality),
                *(spec.name(str(t[spec.axis]), str(PAPER[spec.axis])) for spec in swept),
                strategy_label(str(t.strategy), str(t[FILTER]), NAMES),
                str(t.seeds),
                evidence(f"{pct(t.mean_b)} / {pct(death.mean_b)}", nav, links, **keys, agent=PROMPT_AGENT),
                evidence(f"{pct(t.mean_a)} / {pct(death.mean_a)}", nav, links, **keys, agent=t.agent),
                _change(t),
                _change(death),
                f"{int(t.only_a)}/{int(t.only_b)}, p={pvalue(t.mcnemar_p)}",
            ]
        )
    header = ["model", "regime", "obs", *(spec.column for spec in swept), "strategy", "seeds"]
    others = "/".join(dict.fromkeys(str(a) for a in success.agent))
    header += [
        f"{PROMPT_AGENT} SR / Death",
        f"{others} SR / Death",
        "Δ success (Holm p)",
        "Δ death (Holm p)",
        "McNemar",
    ]
    return {"n_tests": len(tests), "table": Table(header, rows)}


def _share(part: pd.DataFrame, numerator: str, denominator: str) -> str:
    """``a / b = x %`` of the two columns' totals over ``part``; ``-`` when ``b`` is 0."""
    top, bottom = int(part[numerator].sum()), int(part[denominator].sum())
    return f"{top}/{bottom} = {pct(top / bottom)}" if bottom else f"{top}/0"


MEMORY_SHARES = (
    ("lies kept (of stale)", "memory_lie_kept", "memory_seeded_stale"),
    ("repaired (of stale)", "memory_repaired", "memory_seeded_stale"),
    ("removed (of seeded)", "memory_removed", "memory_seeded"),
    ("corrupted (of valid)", "memory_corrupted", "memory_seeded_valid"),
    ("added false (of added)", "memory_added_false", "memory_added"),
)
"""The agent memory table's shares: (header, numerator, denominator), each a column of the episodes."""


def agent_memory(every_nav: pd.DataFrame, links: Links) -> dict[str, object] | None:
    """The memory an agent keeps (an agent given Inspect's memory tool): per model, regime,
    modality, strategy and agent, what became of the seeded entries at the end of the
    episodes (pooled over them), beside the agent's death rate and the paper's per-step
    navigator's on the same seeds (the paired tests of :func:`navigators`)."""
    nav = with_axes(every_nav)
    if "memory_seeded" not in nav or nav["memory_seeded"].isna().all():
        return None
    kept = nav[nav["memory_seeded"].notna()]
    tests = agent_tests(nav)
    axes = ("model", "regime", "modality", "strategy", FILTER, AGENT)
    rows = []
    groups = sorted(
        kept.groupby(list(axes)),
        key=lambda item: (
            item[0][0],
            item[0][1],
            item[0][2],
            STRATEGY_ORDER.index(item[0][3]) if item[0][3] in STRATEGY_ORDER else 99,
            item[0][4],
            item[0][5],
        ),
    )
    for key, part in groups:
        keys = dict(zip(axes, key, strict=True))
        cell = {k: v for k, v in keys.items() if k != AGENT}
        death = matching(tests, {**cell, "metric": "death", "agent": keys[AGENT]})
        if death.empty:
            paired = [MISSING, MISSING, "no paper's navigator on these seeds"]
        else:
            d = death.iloc[0]
            paired = [
                evidence(pct(d.mean_b), nav, links, **cell, agent=PROMPT_AGENT),
                str(d.seeds),
                _change(d),
            ]
        rows.append(
            [
                name(keys["model"]),
                str(keys["regime"]),
                str(keys["modality"]),
                strategy_label(str(keys["strategy"]), str(keys[FILTER]), NAMES),
                str(keys[AGENT]),
                f"{len(part)}{cut_of(part, 'episodes')}",
                *(_share(part, numerator, denominator) for _, numerator, denominator in MEMORY_SHARES),
                evidence(pct(part["death"].mean()), nav, links, **keys),
                *paired,
            ]
        )
    header = [
        "model",
        "regime",
        "obs",
        "strategy",
        "agent",
        "episodes",
        *(header for header, _, _ in MEMORY_SHARES),
        "agent death",
        f"{PROMPT_AGENT} death",
        "seeds paired",
        "Δ death (Holm p)",
    ]
    return {"n_tests": len(tests), "table": Table(header, rows)}


def perception(per: pd.DataFrame, det: pd.DataFrame, nav: pd.DataFrame, out: Path, links: Links) -> dict[str, object]:
    """The perception probe beside detection and OMCD: is a low F1 memory or sight?"""
    table = probe.probe_table(per, det, nav)
    rows = []
    # the samples behind each column, as probe_table reads them
    main_det = main_detection(det) if not det.empty else det
    omcd = rows_matching(with_axes(nav), strategy="omcd", filter=PAPER_FILTER) if not nav.empty else nav
    for r in probe.probe_summary(table).itertuples():
        keys = {"model": r.model, "regime": r.regime, "modality": r.modality}
        cut = cut_note(main_detection(per), **keys)
        rows.append(
            [
                name(r.model),
                str(r.regime),
                str(r.modality),
                str(r.seeds),
                evidence(num(r.accuracy), per, links, **keys),
                num(r.balanced_accuracy) + cut,
                num(r.hole_recall) + cut,
                num(r.ice_recall) + cut,
                MISSING if nan(r.detection_f1) else num(r.detection_f1) + cut_note(main_det, **keys),
                MISSING if nan(r.omcd_success) else pct(r.omcd_success) + cut_note(omcd, **keys),
            ]
        )
    header = ["model", "regime", "modality", "seeds", "accuracy", "balanced accuracy", "hole recall", "ice recall"]
    return {
        "table": Table([*header, "detection F1", "OMCD success"], rows),
        "reading": probe.probe_reading(probe.perception_gap(table)).split("\n"),
        "fig10": Figure(
            probe.fig_perception_f1(table, out / "fig10_perception.png"),
            "Fig. 10 (ours): perception vs detection F1, one point per seed",
        ),
    }


def prompt_sensitivity(det: pd.DataFrame, nav: pd.DataFrame, sets: list[str], baseline: str) -> dict[str, object]:
    """Each measure under each prompt set, the change against ``baseline`` with its
    Holm-adjusted p, and whether the paper's strategy contrasts hold under every set."""
    table = prompt_sets.sensitivity_table(det, nav)
    others = [n for n in sets if n != baseline]
    header = ["model", "regime", "modality", "measure", *[f"`{n}`" for n in sets]]
    header += [h for n in others for h in (f"`{n}` Δ", "p")]
    rows = []
    main_det, paper_nav = main_detection(det) if not det.empty else det, paper_cells(nav) if not nav.empty else nav
    for r in table.to_dict("records"):
        detection = r["strategy"] == prompt_sets.DETECTION_MEASURE
        measure = "F1" if detection else f"{r['strategy']} {r['metric']}"
        keys = {"model": r["model"], "regime": r["regime"], "modality": r["modality"]}
        frame = main_det if detection else rows_matching(paper_nav, strategy=r["strategy"])

        def cut(*names: str, frame: pd.DataFrame = frame, keys: dict[str, object] = keys) -> str:
            # the samples a value (or a change between sets) reads: each set's of the cell
            return cut_of(rows_matching(frame, **keys)[lambda f: f[prompt_sets.PROMPT_SET_KEY].isin(names)])

        cells = [name(r["model"]), str(r["regime"]), str(r["modality"]), measure]
        cells += [MISSING if nan(r.get(n)) else num(float(r[n])) + cut(n) for n in sets]
        for n in others:
            delta, p = r.get(f"{n} Δ"), r.get(f"{n} p_holm")
            cells += [
                "-" if nan(delta) else f"{float(delta):+.3f}" + cut(n, baseline),
                "-" if nan(p) else pvalue(float(p)),
            ]
        rows.append(cells)
    robust = prompt_sets.contrast_robustness(nav) if not nav.empty else pd.DataFrame()
    holds = robust[robust.holds_under_every_set.astype(bool)] if not robust.empty else robust
    return {
        "baseline": baseline,
        "table": Table(header, rows),
        "contrasts": len(robust),
        "same_direction": int(robust.same_direction.astype(bool).sum()) if not robust.empty else 0,
        "holding": Table(
            ["model", "regime", "modality", "contrast", "measure"],
            [
                [name(r["model"]), str(r["regime"]), str(r["modality"]), f"{r['a']} vs {r['b']}", str(r["metric"])]
                for r in holds.to_dict("records")
            ],
        ),
    }


def safety_cost(nav: pd.DataFrame, out: Path, links: Links) -> dict[str, object]:
    """What safety costs: audit model calls (and tokens) per episode beside the death
    rate, a table and Fig. 12, per (model, regime, modality, strategy). Logs from before
    navigation 4 did not record the cost: their cells say so."""
    cost = audit_costs(nav)
    if cost.empty:
        return {"empty": True}
    rows = []
    regimes = regime_order(cost.regime)

    def order(r: pd.Series) -> tuple[object, ...]:
        strategy = str(r.strategy)
        known = STRATEGY_ORDER.index(strategy) if strategy in STRATEGY_ORDER else len(STRATEGY_ORDER)
        return (r.model, r.modality, regimes.index(r.regime), known, strategy)

    for r in sorted(cost.itertuples(), key=order):
        keys = {"model": r.model, "regime": r.regime, "modality": r.modality, "strategy": r.strategy}
        keys[FILTER] = getattr(r, FILTER)
        label = strategy_label(str(r.strategy), str(keys[FILTER]), NAMES)
        if r.recorded:
            calls = _with_interval(r.audit_calls, r.audit_calls_low, r.audit_calls_high, lambda x: num(x, 1))
            tokens = f"{r.audit_tokens:,.0f}"
        else:
            calls = tokens = NOT_RECORDED
        cut = cut_note(nav, **keys)
        rows.append(
            [
                name(r.model),
                str(r.modality),
                str(r.regime),
                label,
                evidence(f"{r.episodes}", nav, links, **keys),
                calls + cut,
                tokens + cut,
                _with_interval(r.death, r.death_low, r.death_high, pct) + cut,
            ]
        )
    header = ["model", "obs", "regime", "strategy", "episodes", "audit calls / episode [95% CI]"]
    header += ["audit tokens / episode", "death [95% CI]"]
    drawn = cost[cost[FILTER] == PAPER_FILTER]
    return {
        "empty": False,
        "recorded": bool((cost.recorded > 0).any()),
        "unrecorded": int((cost.recorded == 0).sum()),
        "table": Table(header, rows),
        "fig12": Figure(
            figures.fig_safety_cost(drawn, out / "fig12_safety_cost.png"),
            "Fig. 12 (ours): audit model calls per episode (x) against death rate (y), a point per model, "
            "strategy and regime with 95 % bootstrap intervals over seeds where there is one. A strategy down and "
            "to the left of another is cheaper and safer; one up and to the right costs more and dies more"
            + cut_of(rows_matching(with_axes(nav), filter=PAPER_FILTER)),
        ),
    }


def _with_interval(value: float, low: float, high: float, show: Callable[[float], str]) -> str:
    """``value [low, high]``, or ``value (no CI)`` where the bootstrap gives none."""
    return with_ci(show(value), low, high, show)
