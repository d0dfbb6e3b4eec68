"""The reproduction report: report.md and report.html with PNG figures.

The report is written once, as Markdown (tables, figures, paragraphs), and
report.html is that Markdown converted by markdown-it-py with every figure embedded
as a data URI, so the page travels as one file. A cell the logs do not cover reads
``missing``; a cell with data links to the log it came from (the .eval file, or its
page in Inspect's viewer when the report is written with a viewer bundle). Where a
model matches one the paper reports, the paper's value stands beside ours with the
difference (ours - paper).
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import pandas as pd
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from spatialstale.env import CHANGE_REGIMES as REGIMES
from spatialstale.solvers import DEFAULT_PROMPT_SET, PROMPT_SETS

from . import _figures as figures
from . import _paper as paper
from . import _perception as probe
from . import _prompt_sets as prompt_sets
from ._detection_stats import (
    MAIN_BATCH_SIZE,
    batch_sweep,
    detection_summary,
    f1_vs_success,
    flag_rates,
    main_detection,
    modality_tests,
    stale_ratios,
    thaw_freeze,
)
from ._load import FLAG_CELLS, Results
from ._navigation_stats import (
    AGENT as AGENT_KEY,
)
from ._navigation_stats import (
    FILTER as FILTER_KEY,
)
from ._navigation_stats import (
    FULL_VIEW,
    PAPER_FILTER,
    PROMPT_AGENT,
    STRATEGY_ORDER,
    agent_tests,
    nomemory_bound,
    outcome_rates,
    paper_cells,
    paper_view,
    strategy_label,
    strategy_tests,
    view_order,
)
from ._navigation_stats import (
    VIEW as VIEW_KEY,
)
from ._navigation_stats import (
    with_axes as with_filter,
)
from ._prompt_sets import PROMPT_SET_KEY
from ._stats import ALPHA, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED

MISSING = "missing"
MODALITIES = ("text", "vision")
SWEEP = (1, 5, 10, 20)
VIEWER = "viewer"
"""The folder, beside the report, of Inspect's static log viewer (``--bundle``)."""
STYLE = (
    "body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;line-height:1.4}"
    "table{border-collapse:collapse;margin:1em 0;font-size:13px}"
    "td,th{border:1px solid #ccc;padding:3px 7px;text-align:left}th{background:#f3f3f3}"
    "img{max-width:100%}a{color:inherit}td a{text-decoration:underline dotted}"
)
_MARKDOWN_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*[]<>|#"})


def esc(text: str) -> str:
    """``text`` with Markdown's inline syntax escaped (model names, file names)."""
    return text.translate(_MARKDOWN_SPECIAL)


def link(text: str, href: str | None) -> str:
    """A Markdown link, or ``text`` alone when there is nothing to link to."""
    return f"[{text}](<{href}>)" if href else text


@dataclass
class Document:
    """The report as Markdown, written once; HTML is converted from it."""

    title: str
    parts: list[str] = field(default_factory=list)

    def heading(self, text: str, level: int = 2) -> None:
        self.parts.append("#" * level + " " + text)

    def para(self, text: str) -> None:
        self.parts.append(text)

    def table(self, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        """A pipe table; cells are Markdown (escape plain names with :func:`esc`)."""
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(_table_cell(c) for c in row) + " |" for row in rows]
        self.parts.append("\n".join(lines))

    def figure(self, path: Path | None, caption: str) -> None:
        if path is None:
            self.para(f"*{caption}: {MISSING} (no data in the logs).*")
        else:
            self.parts.append(f"![{caption}]({path.name})\n\n*{caption}*")

    def markdown(self) -> str:
        return "\n\n".join([f"# {self.title}", *self.parts]) + "\n"

    def html(self, figures_dir: Path) -> str:
        """The Markdown as one self-contained HTML page: figures from ``figures_dir``
        are embedded as data URIs."""
        md = MarkdownIt("commonmark", {"html": False}).enable("table")
        md.add_render_rule("image", _embedded_image(figures_dir))
        return (
            '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
            f"<title>{html.escape(self.title)}</title><style>{STYLE}</style></head><body>\n"
            + str(md.render(self.markdown()))
            + "</body></html>\n"
        )


def _table_cell(text: str) -> str:
    # a pipe inside a cell ends it unless escaped, even inside a link
    return text.replace("\n", " ").replace("|", "\\|")


ImageRule = Callable[[RendererHTML, Sequence[Token], int, OptionsDict, EnvType], str]


def _embedded_image(folder: Path) -> ImageRule:
    """markdown-it's image rule, with a figure of ``folder`` inlined as a data URI."""

    def render(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        token = tokens[idx]
        src = str(token.attrGet("src") or "")
        path = folder / src
        if src and "/" not in src and path.is_file():
            token.attrSet("src", "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii"))
        return self.image(tokens, idx, options, env)

    return render


@dataclass(frozen=True)
class Links:
    """Where a cell's log is, seen from the report folder."""

    log_dir: str
    out: Path
    viewer: bool = False

    def href(self, log: object) -> str | None:
        """The report-relative link to ``log`` (a log location), or None."""
        if not isinstance(log, str) or not log:
            return None
        local = log.removeprefix("file://")
        remote = "://" in local
        if self.viewer:
            base = self.log_dir.rstrip("/") if remote else os.path.abspath(self.log_dir.removeprefix("file://"))
            inside = local[len(base) :].lstrip("/") if remote else os.path.relpath(local, base)
            return f"{VIEWER}/index.html#/logs/{quote(inside)}"
        return log if remote else quote(os.path.relpath(local, self.out.resolve()))


def name(model: object) -> str:
    """A model label as a table shows it: provider prefixes dropped, Markdown escaped."""
    return esc(figures.short(str(model)))


def pct(x: float) -> str:
    return MISSING if x is None or math.isnan(x) else f"{100 * x:.1f}%"


def num(x: float, digits: int = 3) -> str:
    return "-" if x is None or math.isnan(x) else f"{x:.{digits}f}"


def pvalue(p: float) -> str:
    if math.isnan(p):
        return "-"
    return f"{p:.2e}" if p < 0.001 else f"{p:.3f}"


def beside(ours: float, theirs: float | None, as_pct: bool = True, digits: int = 3) -> str:
    """``paper value (Δ ours - paper)``, or empty when the paper gives none."""
    if theirs is None:
        return ""
    if as_pct:
        delta = "" if math.isnan(ours) else f" (Δ {100 * (ours - theirs):+.1f} pp)"
        return f"{100 * theirs:.1f}%{delta}"
    delta = "" if math.isnan(ours) else f" (Δ {ours - theirs:+.{digits}f})"
    return f"{theirs:.{digits}f}{delta}"


def _cell(frame: pd.DataFrame, **keys: object) -> pd.Series | None:
    """The first row of ``frame`` matching ``keys``, or None (also when ``frame``
    lacks a key's column: a table of a partial matrix may have none of its rows)."""
    if frame.empty or any(key not in frame.columns for key in keys):
        return None
    mask = pd.Series(True, index=frame.index)
    for key, value in keys.items():
        mask &= frame[key] == value
    part = frame[mask]
    return None if part.empty else part.iloc[0]


def _log_of(frame: pd.DataFrame, **keys: object) -> str | None:
    """The log of the newest sample row matching ``keys`` (the log a cell came from)."""
    row = _cell(frame.iloc[::-1], **keys)
    return None if row is None else str(row["log"])


def write_report(results: Results, out: Path, *, source: str = "", bundle: bool = False) -> list[Path]:
    """Write report.md, report.html and the PNG figures into ``out``; returns their paths.

    Args:
        results: the logs, as :func:`read_logs` read them.
        out: the report folder (created).
        source: how to name the logs' location in the report (default: where they were read).
        bundle: also write Inspect's static log viewer with every log into ``out/viewer``,
            and link each cell to its log's page there, so that ``out`` can be published alone.
    """
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("fig*.png"):  # a figure this report does not draw must not linger from the last one
        old.unlink()
    if bundle:
        write_viewer(results.log_dir, out / VIEWER)
    links = Links(results.log_dir, out, viewer=bundle)
    doc = build_report(results, out, source=source or results.log_dir, links=links)
    md = out / "report.md"
    page = out / "report.html"
    md.write_text(doc.markdown(), encoding="utf-8")
    page.write_text(doc.html(out), encoding="utf-8")
    return [md, page, *sorted(out.glob("fig*.png")), *([out / VIEWER] if bundle else [])]


def write_viewer(log_dir: str, target: Path) -> None:
    """Inspect's static viewer bundle of ``log_dir`` at ``target`` (replaced if present).

    Inspect refuses to bundle into a folder inside the log directory (the bundle
    would copy itself next time), which is where the report lives by default; so
    the bundle is built in a scratch folder and moved into place, and the previous
    one is removed first so that it is not copied into the new one.
    """
    from inspect_ai.log import bundle_log_dir

    if target.exists():
        shutil.rmtree(target)
    with tempfile.TemporaryDirectory() as scratch:
        built = Path(scratch) / VIEWER
        bundle_log_dir(log_dir=log_dir, output_dir=str(built))
        shutil.move(str(built), str(target))


def build_report(results: Results, out: Path, *, source: str = "", links: Links | None = None) -> Document:
    """Compute every table, draw every figure into ``out`` and lay out the document."""
    links = links or Links(results.log_dir, out)
    doc = Document("SpatialSTALE reproduction report")
    wording = _main_prompt_set(results.detection, results.navigation)
    every_nav, det = _one_set(results.navigation, wording), _one_set(results.detection, wording)
    # the paper's tables and figures: full view and the per-step prompt navigator (filter
    # modes side by side); fog and the tool-calling navigator have their own sections
    nav = paper_view(every_nav) if not every_nav.empty else every_nav
    _overview(doc, results, source, links)
    if wording != DEFAULT_PROMPT_SET or _sets(results.detection, results.navigation) != [wording]:
        doc.para(
            f"The paper's tables and figures below are the runs under the prompt set `{wording}`"
            + (
                "; the section *Prompt sensitivity* compares the sets."
                if len(_sets(results.detection, results.navigation)) > 1
                else "."
            )
        )
    rates = outcome_rates(nav) if not nav.empty else pd.DataFrame()
    _navigation(doc, nav, rates, out, links)
    _detection(doc, det, nav, out, links)
    if not every_nav.empty and set(with_filter(every_nav)[VIEW_KEY]) != {FULL_VIEW}:
        _fog(doc, every_nav, out, links)
    if not every_nav.empty and set(with_filter(every_nav)[AGENT_KEY]) != {PROMPT_AGENT}:
        _tool_agent(doc, every_nav, links)
    if not results.perception.empty:
        _perception(doc, results.perception, det, nav, out, links)
    if len(_sets(results.detection, results.navigation)) > 1:
        every_set = results.navigation
        _prompt_sensitivity(doc, results.detection, paper_cells(every_set) if not every_set.empty else every_set)
    _method(doc)
    return doc


def _sets(*frames: pd.DataFrame) -> list[str]:
    """The prompt sets the rows were run under, the registry's order first."""
    found = {str(v) for f in frames if PROMPT_SET_KEY in f.columns for v in f[PROMPT_SET_KEY].unique()}
    return sorted(found, key=lambda name: (list(PROMPT_SETS).index(name) if name in PROMPT_SETS else 99, name))


def _main_prompt_set(det: pd.DataFrame, nav: pd.DataFrame) -> str:
    """The set the paper's tables show: ``default`` when it was run, else the first one run."""
    sets = _sets(det, nav)
    return DEFAULT_PROMPT_SET if DEFAULT_PROMPT_SET in sets or not sets else sets[0]


def _one_set(frame: pd.DataFrame, wording: str) -> pd.DataFrame:
    if frame.empty or PROMPT_SET_KEY not in frame.columns:
        return frame
    return frame[frame[PROMPT_SET_KEY] == wording]


def _prompt_sensitivity(doc: Document, det: pd.DataFrame, nav: pd.DataFrame) -> None:
    """Each measure under each prompt set, the change against ``default`` with its
    Holm-adjusted p, and whether the paper's strategy contrasts hold under every set."""
    doc.heading("Prompt sensitivity")
    table = prompt_sets.sensitivity_table(det, nav)
    sets = _sets(det, nav)
    others = [name for name in sets if name != DEFAULT_PROMPT_SET]
    doc.para(
        "The same seeds under each prompt set (see the README's *Prompt sets*). F1 is the mean per-seed "
        "detection F1; success and death are per-seed rates over episodes. Δ is the paired mean change against "
        f"`{DEFAULT_PROMPT_SET}` on the seeds both ran, with its Holm-adjusted p (Wilcoxon over seeds; "
        f"McNemar on success by episode). *{MISSING}*: the cell was not run under that set."
    )
    header = ["model", "regime", "modality", "measure", *[f"`{n}`" for n in sets]]
    header += [h for n in others for h in (f"`{n}` Δ", "p")]
    rows = []
    for r in table.to_dict("records"):
        measure = "F1" if r["strategy"] == prompt_sets.DETECTION_MEASURE else f"{r['strategy']} {r['metric']}"
        cells = [name(r["model"]), str(r["regime"]), str(r["modality"]), measure]
        cells += [MISSING if _nan(r.get(n)) else num(float(r[n])) for n in sets]
        for n in others:
            delta, p = r.get(f"{n} Δ"), r.get(f"{n} p_holm")
            cells += ["-" if _nan(delta) else f"{float(delta):+.3f}", "-" if _nan(p) else pvalue(float(p))]
        rows.append(cells)
    doc.table(header, rows)
    robust = prompt_sets.contrast_robustness(nav) if not nav.empty else pd.DataFrame()
    if not robust.empty:
        holds = robust[robust.holds_under_every_set.astype(bool)]
        same = robust[robust.same_direction.astype(bool)]
        doc.para(
            f"Of {len(robust)} strategy contrasts (model x regime x modality x contrast x measure), "
            f"{len(same)} keep one direction under every set and {len(holds)} are significant at alpha = {ALPHA} "
            "under every set" + (":" if len(holds) else ".")
        )
        if len(holds):
            doc.table(
                ["model", "regime", "modality", "contrast", "measure"],
                [
                    [name(r["model"]), str(r["regime"]), str(r["modality"]), f"{r['a']} vs {r['b']}", str(r["metric"])]
                    for r in holds.to_dict("records")
                ],
            )


def _nan(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


# --- overview --------------------------------------------------------------------


def _overview(doc: Document, results: Results, source: str, links: Links) -> None:
    logs = results.logs
    superseded = logs[logs.superseded]
    doc.para(
        f"Source: `{source or 'logs'}`: {len(logs) - len(superseded)} SpatialSTALE log(s), "
        f"{len(results.detection)} detection samples and {len(results.navigation)} navigation episodes read. "
        "Cells the logs do not cover are marked *missing*; a cell with data links to its log. Where a model "
        "matches one the paper reports, the paper's value stands beside ours with the difference Δ = ours - paper."
    )
    doc.heading("Logs")
    rows = []
    for _, log in logs.sort_values(["kind", "model_label", "created"]).iterrows():
        expected = _int(log.total_samples) * max(1, _int(log.epochs))
        status = str(log.status) + (" (superseded)" if log.superseded else "")
        rows.append(
            [
                str(log.kind),
                esc(str(log.model_label)),
                status,
                f"{_int(log.completed_samples)} / {expected}",
                link(esc(os.path.basename(str(log.log))), links.href(log.log)),
            ]
        )
    doc.table(["task", "model", "status", "sample records completed / expected", "log"], rows)
    incomplete = logs[(logs.status != "success") & ~logs.superseded]
    if len(incomplete):
        doc.para(
            f"**{len(incomplete)} log(s) did not finish** (status other than success): their completed samples "
            "are used; re-run the study command to complete them."
        )
    if len(superseded):
        doc.para(
            f"{len(superseded)} log(s) of interrupted runs are superseded by a complete log of the same task, "
            "model and arguments (a resumed study leaves them); they are not read."
        )
    if results.problems:
        doc.para("Problems while reading: " + esc("; ".join(results.problems)))
    _usage(doc, results)
    if not results.detection.empty:
        ratios = stale_ratios(results.detection)
        doc.heading("Stale ratio of the instances (SPEC §4)")
        rows = []
        for regime in REGIMES:
            r = _cell(ratios, regime=regime)
            ref = paper.STALE_RATIO[regime]
            if r is None:
                rows.append([regime, "0", MISSING, "", f"{ref[0]:.3f} ± {ref[1]:.3f} [{ref[2]:.3f}, {ref[3]:.3f}]"])
                continue
            rows.append(
                [
                    regime,
                    str(r.seeds),
                    f"{r['mean']:.3f} ± {num(r['std'])}",
                    f"[{r['min']:.3f}, {r['max']:.3f}]",
                    f"{ref[0]:.3f} ± {ref[1]:.3f} [{ref[2]:.3f}, {ref[3]:.3f}] (Δ mean {r['mean'] - ref[0]:+.3f})",
                ]
            )
        doc.table(["regime", "seeds", "ours mean ± std", "ours range", "paper (50 seeds)"], rows)
        doc.para(
            "L3 is the end-of-episode ratio with every scheduled event applied. The paper's figures hold for "
            "the 50 default seeds; fewer seeds give a noisier mean."
        )


USAGE_FIELDS = (
    ("input_tokens", "input"),
    ("input_tokens_cache_read", "cache read"),
    ("input_tokens_cache_write", "cache write"),
    ("output_tokens", "output"),
    ("reasoning_tokens", "reasoning"),
    ("total_tokens", "total"),
)


def _usage(doc: Document, results: Results) -> None:
    doc.heading("Token usage", 3)
    totals: dict[str, dict[str, int]] = {}
    for text in results.logs.model_usage:
        for model, usage in (json.loads(text) if isinstance(text, str) else {}).items():
            into = totals.setdefault(model, {})
            for key, _ in USAGE_FIELDS:
                into[key] = into.get(key, 0) + int(usage.get(key) or 0)
    if not totals:
        doc.para(f"{MISSING}: the logs record no model usage.")
        return
    rows = [[esc(model), *(f"{totals[model][key]:,}" for key, _ in USAGE_FIELDS)] for model in sorted(totals)]
    doc.table(["model", *(name for _, name in USAGE_FIELDS)], rows)
    doc.para(
        "Tokens per model as Inspect records them in each log's model usage, summed over every log read "
        "(superseded ones included: their calls were made); cache columns are 0 where the provider reports none."
    )


def _int(value: object) -> int:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0
    return 0 if math.isnan(number) else int(number)


# --- navigation ------------------------------------------------------------------


def _strategy_rows(nav: pd.DataFrame) -> list[tuple[str, str]]:
    """(strategy, filter mode) of each table row: every strategy in the paper's mode,
    each followed by the other modes the logs ran it in (side by side)."""
    ran = set(zip(nav.strategy, nav[FILTER_KEY], strict=True))
    others = sorted({mode for _, mode in ran} - {PAPER_FILTER})
    return [(s, m) for s in STRATEGY_ORDER for m in (PAPER_FILTER, *others) if m == PAPER_FILTER or (s, m) in ran]


def _navigation(doc: Document, nav: pd.DataFrame, rates: pd.DataFrame, out: Path, links: Links) -> None:
    doc.heading("Navigation")
    if nav.empty:
        doc.para(f"Table 3, Fig. 5, Fig. 6 and Table 6: {MISSING} (no navigation log).")
        return
    nav = with_filter(nav)
    strategy_rows = _strategy_rows(nav)
    # the figures draw the paper's filter mode; the tables show every mode side by side
    paper_rates = rates[rates[FILTER_KEY] == PAPER_FILTER] if FILTER_KEY in rates.columns else rates
    models = sorted(nav.model.unique())
    modalities = sorted(nav.modality.unique())
    doc.heading("Table 3: success and death rate by model x strategy x regime", 3)
    for modality in modalities:
        rows = []
        for model in models:
            for strategy, mode in strategy_rows:
                row = [name(model), strategy_label(strategy, mode, figures.STRATEGY_NAMES)]
                for regime in REGIMES:
                    r = _cell(rates, model=model, regime=regime, modality=modality, strategy=strategy, filter=mode)
                    log = _log_of(nav, model=model, regime=regime, modality=modality, strategy=strategy, filter=mode)
                    row.append(MISSING if r is None else link(f"{pct(r.success)} / {pct(r.death)}", links.href(log)))
                rows.append(row)
        doc.para(f"{modality} observation; cells: success / death over all episodes (seeds x epochs).")
        doc.table(["model", "strategy", *(f"{r} SR / Death" for r in REGIMES)], rows)

    doc.heading("Table 3 (detail): rates with 95% bootstrap CIs, and the paper's values", 3)
    rows = []
    for model in models:
        ref_model = paper.paper_model(model)
        for modality in modalities:
            for regime in REGIMES:
                for strategy, mode in strategy_rows:
                    label = strategy_label(strategy, mode)
                    r = _cell(rates, model=model, regime=regime, modality=modality, strategy=strategy, filter=mode)
                    if r is None:
                        rows.append([name(model), modality, regime, label, "0", MISSING, "", "", "", "", ""])
                        continue
                    paper_row = modality == "text" and mode == PAPER_FILTER
                    ref = paper.NAVIGATION.get((ref_model or "", regime, strategy)) if paper_row else None
                    log = _log_of(nav, model=model, regime=regime, modality=modality, strategy=strategy, filter=mode)
                    rows.append(
                        [
                            name(model),
                            modality,
                            regime,
                            label,
                            link(f"{r.episodes} ({r.seeds} seeds)", links.href(log)),
                            f"{pct(r.success)} [{pct(r.success_low)}, {pct(r.success_high)}]",
                            f"{pct(r.death)} [{pct(r.death_low)}, {pct(r.death_high)}]",
                            pct(r.timeout),
                            f"{r.fallbacks} / {r.died_on_stale}",
                            beside(r.success, ref["success"]) if ref else "",
                            beside(r.death, ref["death"]) if ref else "",
                        ]
                    )
    doc.table(
        [
            "model",
            "obs",
            "regime",
            "strategy",
            "episodes",
            "success [95% CI]",
            "death [95% CI]",
            "timeout",
            "fallbacks / died on stale",
            "paper success",
            "paper death",
        ],
        rows,
    )

    tests = strategy_tests(nav)
    doc.heading("Paired tests between strategies", 3)
    if tests.empty:
        doc.para(f"{MISSING}: no regime has two strategies on shared seeds.")
    else:
        shown = tests[tests.reachable]
        doc.para(
            f"Wilcoxon signed-rank (two-sided) over per-seed rates on shared seeds; Holm-adjusted over all "
            f"{len(tests)} tests of this family; significant at alpha = {ALPHA} after adjustment. McNemar (exact) "
            "on success paired by seed x episode. Δ = mean per-seed rate of A - B. "
            + _unreachable(tests, "seeds", "tests", "Table 3 holds their rates")
        )
        rows = []
        for _, t in shown.iterrows():
            ref_model = paper.paper_model(str(t.model))
            paper_test = t.metric == "success" and t[FILTER_KEY] == PAPER_FILTER
            contrast = paper.CONTRASTS.get((ref_model or "", t.regime, t.a, t.b)) if paper_test else None
            names = figures.STRATEGY_NAMES
            rows.append(
                [
                    name(t.model),
                    str(t.regime),
                    f"{strategy_label(t.a, t[FILTER_KEY], names)} vs {strategy_label(t.b, t[FILTER_KEY], names)}",
                    str(t.metric),
                    f"{t.seeds} ({t.nonzero} ≠ 0)",
                    f"{100 * t.difference:+.1f} pp",
                    pvalue(t.p),
                    pvalue(t.p_holm),
                    "yes" if t.significant else "no",
                    "" if t.metric != "success" else f"{int(t.only_a)}/{int(t.only_b)}, p={pvalue(t.mcnemar_p)}",
                    contrast or "",
                ]
            )
        if rows:
            doc.table(
                [
                    "model",
                    "regime",
                    "A vs B",
                    "rate",
                    "seeds",
                    "Δ",
                    "Wilcoxon p",
                    "Holm p",
                    f"sig. (alpha={ALPHA})",
                    "McNemar only A/only B",
                    "paper",
                ],
                rows,
            )

    doc.heading("Fig. 5: NoFilter / OMCD / Oracle", 3)
    doc.figure(
        figures.fig5_filtering(paper_rates, out / "fig5_filtering.png"), "Fig. 5: success rate, 95% bootstrap CI"
    )

    doc.heading("Table 6 and Fig. 6: steps by outcome", 3)
    rows = []
    for model in models:
        ref_model = paper.paper_model(model) or ""
        for regime in REGIMES:
            for strategy, mode in strategy_rows:
                label = strategy_label(strategy, mode)
                r = _cell(rates, model=model, regime=regime, strategy=strategy, filter=mode)
                if r is None:
                    rows.append([name(model), regime, label, MISSING, MISSING, MISSING, ""])
                    continue
                cells = []
                refs = []
                for outcome in ("success", "death", "timeout"):
                    n = int(r[f"n_{outcome}"])
                    cells.append(f"{num(r[f'steps_{outcome}'], 1)} (n={n})" if n else "- (n=0)")
                    paper_row = regime == paper.STEPS_REGIME and mode == PAPER_FILTER
                    steps = paper.STEPS.get((ref_model, strategy, outcome)) if paper_row else None
                    if steps is not None:
                        refs.append(f"{outcome} {beside(r[f'steps_{outcome}'], steps, as_pct=False, digits=1)}")
                rows.append([name(model), regime, label, *cells, "; ".join(refs)])
    doc.table(["model", "regime", "strategy", "success steps", "death steps", "timeout steps", "paper"], rows)
    doc.figure(figures.fig6_steps(paper_rates, out / "fig6_steps.png"), "Fig. 6: mean steps by outcome and strategy")


# --- detection -------------------------------------------------------------------


def _detection(doc: Document, det: pd.DataFrame, nav: pd.DataFrame, out: Path, links: Links) -> None:
    doc.heading("Detection")
    if det.empty:
        doc.para(f"Fig. 3, 4, 7, 8, 9 and Table 5: {MISSING} (no detection log).")
        return
    main = main_detection(det)
    summary = detection_summary(main)
    models = sorted(det.model.unique())
    doc.heading("Fig. 3: F1 by model x regime x modality", 3)
    rows = []
    for model in models:
        ref_model = paper.paper_model(model) or ""
        for modality in [*MODALITIES, *(m for m in sorted(set(summary.modality)) if m not in MODALITIES)]:
            for regime in REGIMES:
                r = _cell(summary, model=model, regime=regime, modality=modality)
                if r is None:
                    rows.append([name(model), modality, regime, "0", MISSING, "", "", "", "", ""])
                    continue
                rows.append(
                    [
                        name(model),
                        modality,
                        regime,
                        f"{r.seeds} (B={r.batch_size})",
                        link(
                            f"{r.f1_mean:.3f} ± {num(r.f1_std)}",
                            links.href(
                                _log_of(main, model=model, regime=regime, modality=modality, batch_size=r.batch_size)
                            ),
                        ),
                        f"[{num(r.f1_low)}, {num(r.f1_high)}]",
                        f"{r.precision:.3f} / {r.recall:.3f}",
                        f"{r.calls_per_seed:.1f}",
                        f"{r.unparseable} / {r.unanswered} / {r.unknown_ids}",
                        "",
                    ]
                )
            overall = summary[(summary.model == model) & (summary.modality == modality)]
            ref = paper.DETECTION_F1.get((ref_model, modality))
            if ref is not None and len(overall):
                rows.append(
                    [
                        name(model),
                        modality,
                        "mean of L1-L3",
                        "",
                        f"{overall.f1_mean.mean():.3f}",
                        "",
                        "",
                        "",
                        "",
                        beside(float(overall.f1_mean.mean()), ref, as_pct=False),
                    ]
                )
    doc.table(
        [
            "model",
            "obs",
            "regime",
            "seeds",
            "F1 mean ± std",
            "95% CI",
            "P / R",
            "calls a seed",
            "unparseable / unanswered / unknown ids",
            "paper",
        ],
        rows,
    )
    doc.figure(figures.fig3_f1(summary, out / "fig3_f1.png"), "Fig. 3: detection F1, mean ± std over seeds")

    mod = modality_tests(det)
    if not mod.empty:
        doc.para(
            "Vision vs text F1, paired by (regime, seed), Wilcoxon signed-rank, Holm-adjusted over models "
            f"(alpha = {ALPHA}). " + _unreachable(mod, "pairs", "model tests", "Fig. 3 holds their F1")
        )
        rows = []
        for _, t in mod[mod.reachable].iterrows():
            ref = paper.VISION_DELTA.get(paper.paper_model(str(t.model)) or "")
            rows.append(
                [
                    name(t.model),
                    str(t.pairs),
                    f"{t.difference:+.3f}",
                    pvalue(t.p),
                    pvalue(t.p_holm),
                    "yes" if t.significant else "no",
                    beside(t.difference, ref, as_pct=False) if ref is not None else "",
                ]
            )
        if rows:
            doc.table(["model", "pairs", "Δ F1 (vision - text)", "Wilcoxon p", "Holm p", "significant", "paper"], rows)

    flags = flag_rates(det)
    doc.heading("Fig. 4: flag rate by memory claim x current truth (L1+L2)", 3)
    rows = []
    for _, f in flags.iterrows():
        ref_model = paper.paper_model(str(f.model)) or ""
        refs = [
            f"{cell} {beside(f[cell], paper.FLAG_RATES[(ref_model, cell)])}"
            for cell in FLAG_CELLS
            if (ref_model, cell) in paper.FLAG_RATES and f.modality == "vision"
        ]
        rows.append(
            [name(f.model), str(f.modality)]
            + [f"{pct(f[c])} (n={int(f[c + '_n'])})" for c in FLAG_CELLS]
            + ["; ".join(refs)]
        )
    doc.table(["model", "obs", *FLAG_CELLS, "paper"], rows)
    doc.para(
        "SAFE_hole: a SAFE claim about a cell now a hole (deadly stale, a thaw); DANGER_safe: a DANGER claim "
        "about a cell now safe (a freeze); the other two cells are valid entries, whose flags are false alarms."
    )
    doc.figure(figures.fig4_flags(flags, out / "fig4_flags.png"), "Fig. 4: flag rate by claim x truth")

    doc.heading("Fig. 7: precision-recall per run", 3)
    doc.figure(
        figures.fig7_precision_recall(summary, out / "fig7_precision_recall.png"),
        "Fig. 7: mean precision and recall per (model, modality, regime), iso-F1 contours",
    )

    tf = thaw_freeze(det)
    doc.heading("Fig. 8: thaw vs freeze recall", 3)
    rows = []
    for _, t in tf.iterrows():
        ref_model = paper.paper_model(str(t.model)) or ""
        refs = [
            f"{kind} {beside(t[kind], paper.THAW_FREEZE[(ref_model, t.regime, kind)])}"
            for kind in ("thaw", "freeze")
            if (ref_model, t.regime, kind) in paper.THAW_FREEZE and t.modality == "vision"
        ]
        gap = t.thaw - t.freeze
        rows.append(
            [
                name(t.model),
                str(t.modality),
                str(t.regime),
                f"{pct(t.thaw)} (N={t.thaw_n})",
                f"{pct(t.freeze)} (N={t.freeze_n})",
                "-" if math.isnan(gap) else f"{100 * gap:+.1f} pp",
                "; ".join(refs),
            ]
        )
    doc.table(["model", "obs", "regime", "thaw recall", "freeze recall", "gap", "paper"], rows)
    doc.figure(figures.fig8_thaw_freeze(tf, out / "fig8_thaw_freeze.png"), "Fig. 8: recall by change direction")

    doc.heading("Fig. 9: per-seed F1 vs OMCD success", 3)
    pairs, corr = f1_vs_success(det, nav) if not nav.empty else (pd.DataFrame(), pd.DataFrame())
    if corr.empty:
        doc.para(f"{MISSING}: needs text detection and text OMCD navigation on shared seeds.")
    else:
        rows = [
            [
                name(c.model),
                str(c.regime),
                str(c.seeds),
                _corr(c.pearson_r, c.pearson_p),
                _corr(c.spearman_rho, c.spearman_p),
            ]
            for _, c in corr.iterrows()
        ]
        doc.table(["model", "regime", "seeds", "Pearson r (p)", "Spearman rho (p)"], rows)
        doc.para(f"Paper: {paper.CORRELATION}. 'undefined' means one side is constant over the seeds.")
        doc.figure(
            figures.fig9_f1_success(pairs, corr, out / "fig9_f1_success.png"), "Fig. 9: per-seed F1 vs OMCD success"
        )

    doc.heading("Table 5: batch size vs F1 and calls (L1, text)", 3)
    sweep = batch_sweep(det)
    rows = []
    for model in models:
        sweep_model = paper.paper_model(model)
        base = _cell(sweep, model=model, batch_size=MAIN_BATCH_SIZE)
        for b in SWEEP:
            r = _cell(sweep, model=model, batch_size=b)
            if r is None:
                rows.append([name(model), str(b), "0", MISSING, MISSING, "", ""])
                continue
            delta = math.nan if base is None else r.f1_mean - base.f1_mean
            ref = paper.BATCH_DELTA.get(b) if sweep_model == "GPT-4o" else None
            rows.append(
                [
                    name(model),
                    str(b),
                    str(r.seeds),
                    link(
                        f"{r.f1_mean:.3f} ± {num(r.f1_std)}",
                        links.href(_log_of(det, model=model, regime="L1", modality="text", batch_size=b)),
                    ),
                    f"{r.calls_per_seed:.1f}",
                    "-" if math.isnan(delta) else f"{delta:+.3f}",
                    "" if ref is None else f"{ref:+.3f}" + ("" if math.isnan(delta) else f" (Δ {delta - ref:+.3f})"),
                ]
            )
    doc.table(["model", "B", "seeds", "F1 mean ± std", "calls a seed", "F1 - F1(B=10)", "paper F1 - F1(B=10)"], rows)
    doc.para(
        f"Calls a seed are ⌈64/B⌉ = 64, 13, 7, 4 at n = 8. The paper's B=10 F1 for GPT-4o is about "
        f"{paper.BATCH_F1_B10} (App. D). Run `spatialstale study --batch-sweep` to fill this table."
    )


def _perception(
    doc: Document, per: pd.DataFrame, det: pd.DataFrame, nav: pd.DataFrame, out: Path, links: Links
) -> None:
    """The perception probe beside detection and OMCD: is a low F1 memory or sight?"""
    doc.heading("Perception probe")
    table = probe.probe_table(per, det, nav)
    summary = probe.probe_summary(table)
    doc.para(
        "`spatialstale/perception` asks for the cell type at each coordinate of the detection task's observations, "
        "with no memory. Accuracy pools every cell; balanced accuracy is the mean of hole recall and ice recall. "
        "Detection F1 and OMCD success are the same seeds' values from the detection and navigation logs "
        f"(*{MISSING}* where those were not run)."
    )
    rows = []
    for r in summary.itertuples():
        cell = per[(per.model == r.model) & (per.regime == r.regime) & (per.modality == r.modality)]
        href = links.href(str(cell.iloc[-1].log)) if len(cell) else None
        rows.append(
            [
                name(r.model),
                str(r.regime),
                str(r.modality),
                str(r.seeds),
                link(num(r.accuracy), href),
                num(r.balanced_accuracy),
                num(r.hole_recall),
                num(r.ice_recall),
                MISSING if math.isnan(r.detection_f1) else num(r.detection_f1),
                MISSING if math.isnan(r.omcd_success) else pct(r.omcd_success),
            ]
        )
    doc.table(
        [
            "model",
            "regime",
            "modality",
            "seeds",
            "accuracy",
            "balanced accuracy",
            "hole recall",
            "ice recall",
            "detection F1",
            "OMCD success",
        ],
        rows,
    )
    doc.para(probe.probe_reading(probe.perception_gap(table)).replace("\n", "\n\n"))
    doc.figure(
        probe.fig_perception_f1(table, out / "fig10_perception.png"),
        "Fig. 10 (ours): perception vs detection F1, one point per seed",
    )


# --- fog and the tool-calling navigator ---------------------------------------------


def _view_name(radius: str) -> str:
    return "full view" if radius == FULL_VIEW else f"radius {radius}"


def _fog(doc: Document, every_nav: pd.DataFrame, out: Path, links: Links) -> None:
    """Success and death against the view radius, paired tests between strategies at
    each radius, and whether NoMemory is still an upper bound under fog."""
    doc.heading("Fog (partial observability)")
    nav = with_filter(every_nav)
    nav = nav[(nav[FILTER_KEY] == PAPER_FILTER) & (nav[AGENT_KEY] == PROMPT_AGENT)]
    if nav.empty:
        doc.para(f"{MISSING}: the fog runs hold no `delete`-filter run of the per-step navigator.")
        return
    radii = view_order(nav[VIEW_KEY].unique())
    rates = outcome_rates(nav)
    models = sorted(nav.model.unique())
    modalities = sorted(nav.modality.unique())
    doc.para(
        "Navigation with `-T view_radius=k`: the observation shows only the cells within k rows and k columns "
        "of the agent (a square around it); the rest is unknown, so memory now carries information the "
        "observation lacks. Rows: the `delete` filter and the per-step navigator; *full view* is the paper's "
        f"observation. Cells: success / death over all episodes (seeds x epochs); *{MISSING}*: not run."
    )
    for modality in modalities:
        rows = []
        for model in models:
            for regime in REGIMES:
                for strategy in STRATEGY_ORDER:
                    if _cell(rates, model=model, regime=regime, modality=modality, strategy=strategy) is None:
                        continue
                    row = [name(model), regime, figures.STRATEGY_NAMES.get(strategy, strategy)]
                    for radius in radii:
                        keys = {"model": model, "regime": regime, "modality": modality, "strategy": strategy}
                        r = _cell(rates, **keys, view_radius=radius)
                        log = _log_of(nav, **keys, view_radius=radius)
                        row.append(
                            MISSING if r is None else link(f"{pct(r.success)} / {pct(r.death)}", links.href(log))
                        )
                    rows.append(row)
        doc.para(f"Observation: {modality}.")
        doc.table(["model", "regime", "strategy", *(f"{_view_name(r)} SR / Death" for r in radii)], rows)
    doc.figure(
        figures.fig_fog(rates, out / "fig11_fog.png"),
        "Fig. 11 (ours): success and death rate against the view radius (full = the paper's view), per strategy",
    )
    doc.para(_upper_bound_reading(nomemory_bound(nav)))

    tests = strategy_tests(nav)
    doc.heading("Paired tests between strategies at each radius", 3)
    if tests.empty:
        doc.para(f"{MISSING}: no radius has two strategies on shared seeds.")
        return
    doc.para(
        "As the paired tests of the navigation section, within each view radius: Wilcoxon signed-rank over "
        f"per-seed rates on shared seeds, Holm-adjusted over all {len(tests)} tests of this family, "
        f"significant at alpha = {ALPHA}; McNemar (exact) on success paired by seed x episode. "
        + _unreachable(tests, "seeds", "tests", "the table above holds their rates")
    )
    rows = []
    names = figures.STRATEGY_NAMES
    for t in tests[tests.reachable].itertuples():
        rows.append(
            [
                name(t.model),
                str(t.regime),
                _view_name(str(t.view_radius)),
                f"{names.get(t.a, t.a)} vs {names.get(t.b, t.b)}",
                str(t.metric),
                f"{t.seeds} ({t.nonzero} ≠ 0)",
                f"{100 * t.difference:+.1f} pp",
                pvalue(t.p),
                pvalue(t.p_holm),
                "yes" if t.significant else "no",
                "" if t.metric != "success" else f"{int(t.only_a)}/{int(t.only_b)}, p={pvalue(t.mcnemar_p)}",
            ]
        )
    if rows:
        doc.table(
            [
                "model",
                "regime",
                "view",
                "A vs B",
                "rate",
                "seeds",
                "Δ",
                "Wilcoxon p",
                "Holm p",
                f"sig. (alpha={ALPHA})",
                "McNemar only A/only B",
            ],
            rows,
        )


def _upper_bound_reading(bound: pd.DataFrame) -> str:
    """Whether NoMemory is still an upper bound on success, under fog and in full view."""
    if bound.empty:
        return "Whether NoMemory is an upper bound needs NoMemory and another strategy on the same radius."
    fog = bound[bound[VIEW_KEY] != FULL_VIEW]
    full = bound[bound[VIEW_KEY] == FULL_VIEW]
    parts = []
    if len(full):
        parts.append(
            f"In the full view NoMemory is an upper bound on success in {int(full.bounded.sum())} of {len(full)} "
            "(model, regime) cells (no memory strategy succeeds more often)."
        )
    if len(fog):
        broken = fog[~fog.bounded.astype(bool)]
        if broken.empty:
            parts.append(f"Under fog NoMemory is still an upper bound in every one of the {len(fog)} cells.")
        else:
            shown = [
                f"{name(r.model)} {r.regime} {_view_name(str(r.view_radius))}: "
                f"{figures.STRATEGY_NAMES.get(r.best, r.best)} {pct(r.best_success)} vs NoMemory {pct(r.nomemory)} "
                f"(at least as often on {r.seeds_at_least} of {r.seeds} seeds, more often on {r.seeds_more})"
                for r in broken.itertuples()
            ]
            parts.append(
                f"Under fog NoMemory is no longer an upper bound in {len(broken)} of {len(fog)} (model, regime, "
                f"radius) cells, where a memory strategy succeeds more often: " + "; ".join(shown) + "."
            )
    return " ".join(parts)


def _tool_agent(doc: Document, every_nav: pd.DataFrame, links: Links) -> None:
    """Outcomes of the tool-calling navigator beside the per-step prompt navigator's,
    strategy by strategy, with paired tests on the same seeds."""
    doc.heading("Tool-using navigator")
    nav = with_filter(every_nav)
    tests = agent_tests(nav)
    doc.para(
        "`-T agent=tools` plays the same episodes through tool calls (`move`, `recall`) in one conversation an "
        "episode; `prompt` is the paper's one call a step. Same seeds, strategies and step budget: each row "
        "pairs the two on the seeds both ran. Δ = mean per-seed rate of tools - prompt; Wilcoxon signed-rank "
        f"over per-seed rates, Holm-adjusted over the {len(tests)} tests of this family (alpha = {ALPHA}; "
        "*n too small*: no p this family can give with those seeds reaches alpha); McNemar (exact) on success "
        "paired by seed x episode (only tools / only prompt succeeded)."
    )
    if tests.empty:
        doc.para(f"{MISSING}: no strategy ran under both agents on shared seeds.")
        return
    several_views = len(set(tests[VIEW_KEY])) > 1
    rows = []
    success = tests[tests.metric == "success"]
    radii = view_order(success[VIEW_KEY].unique())
    modes = sorted(set(success[FILTER_KEY]), key=lambda mode: (mode != PAPER_FILTER, mode))
    success = success.assign(
        _order=[
            (m, r, mo, STRATEGY_ORDER.index(s) if s in STRATEGY_ORDER else 99, modes.index(f), radii.index(v))
            for m, r, mo, s, f, v in zip(
                success.model,
                success.regime,
                success.modality,
                success.strategy,
                success[FILTER_KEY],
                success[VIEW_KEY],
                strict=True,
            )
        ]
    ).sort_values("_order")
    for t in success.itertuples():
        death = tests[
            (tests.metric == "death")
            & (tests.model == t.model)
            & (tests.regime == t.regime)
            & (tests.modality == t.modality)
            & (tests.strategy == t.strategy)
            & (tests[FILTER_KEY] == t.filter)
            & (tests[VIEW_KEY] == t.view_radius)
            & (tests.agent == t.agent)
        ].iloc[0]
        keys = {
            "model": t.model,
            "regime": t.regime,
            "modality": t.modality,
            "strategy": t.strategy,
            "filter": t.filter,
            "view_radius": t.view_radius,
        }
        log, prompt_log = _log_of(nav, **keys, agent=t.agent), _log_of(nav, **keys, agent=PROMPT_AGENT)
        row = [name(t.model), str(t.regime), str(t.modality)]
        if several_views:
            row.append(_view_name(str(t.view_radius)))
        row += [
            strategy_label(str(t.strategy), str(t.filter), figures.STRATEGY_NAMES),
            str(t.seeds),
            link(f"{pct(t.mean_b)} / {pct(death.mean_b)}", links.href(prompt_log)),
            link(f"{pct(t.mean_a)} / {pct(death.mean_a)}", links.href(log)),
            f"{100 * t.difference:+.1f} pp, p={pvalue(t.p_holm)} ({_sig(t.significant, t.reachable)})",
            f"{100 * death.difference:+.1f} pp, p={pvalue(death.p_holm)} ({_sig(death.significant, death.reachable)})",
            f"{int(t.only_a)}/{int(t.only_b)}, p={pvalue(t.mcnemar_p)}",
        ]
        rows.append(row)
    header = ["model", "regime", "obs", *(["view"] if several_views else []), "strategy", "seeds"]
    header += ["prompt SR / Death", "tools SR / Death", "Δ success (Holm p)", "Δ death (Holm p)", "McNemar"]
    doc.table(header, rows)


def _sig(significant: object, reachable: object) -> str:
    if not reachable:
        return "n too small"
    return "significant" if significant else "not significant"


def _unreachable(tests: pd.DataFrame, unit: str, what: str, where: str) -> str:
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
        f"{which} reach alpha = {ALPHA} with the {unit} they pair (at most {most}): a two-sided Wilcoxon test "
        "on n pairs gives p >= 2/2^n at best, and Holm's adjustment over the family leaves even that above "
        f"alpha, so they are not listed ({where})."
    )


def _corr(value: float, p: float) -> str:
    return "undefined" if math.isnan(value) else f"{value:+.3f} ({pvalue(p)})"


def _method(doc: Document) -> None:
    doc.heading("Method")
    doc.para(
        "Navigation rates are over episodes (seed x epoch). Confidence intervals are percentile bootstraps of "
        f"the mean of per-seed values ({BOOTSTRAP_RESAMPLES} resamples, seed {BOOTSTRAP_SEED}), so episodes of "
        "one seed move together. Paired Wilcoxon signed-rank tests use per-seed rates on the seeds both "
        "conditions share (zero differences dropped; p = 1 when all are zero), Holm-adjusted within each table. "
        "Detection F1 is per seed (L3 sums a seed's windows first); mean and sample standard deviation over "
        f"seeds; the main matrix uses B = {MAIN_BATCH_SIZE}. Flag rates and thaw/freeze recall pool the entries "
        "of all seeds, as the paper's Fig. 4 and 8 do. Where a log set holds the same sample twice, the newest "
        "log wins."
    )
