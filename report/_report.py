"""The reproduction report: report.md and report.html with PNG figures.

:func:`write_report` computes every section (``_sections_paper`` for the paper's own
tables and figures, ``_sections_beyond`` for the extensions' sweeps, the other
navigators, the perception probe and the prompt sets, ``_sections_k`` for the paper's planned
experiments (its App. K), each only when the logs hold it), lays the
page out with the templates (``_document``) and writes it as Markdown and as one
self-contained HTML page. A cell the logs do not cover reads ``missing``; a cell with
data links to the log it came from (the .eval file, or its page in Inspect's viewer
when the report is written with a viewer bundle).
"""

from __future__ import annotations

import contextlib
import io
import shutil
import tempfile
from pathlib import Path

import pandas as pd

from spatialstale.protocol import DEFAULT_PROMPT_SET, PROMPT_SETS

from . import _sections_beyond as beyond
from . import _sections_k as k_sections
from . import _sections_paper as paper_sections
from ._detection_stats import MAIN_BATCH_SIZE
from ._document import MISSING, VIEWER, Links, pct, render_markdown, shown_samples, to_html
from ._headline import cut_warning, headline
from ._inventory import untabulated
from ._load import Results
from ._navigation_stats import (
    AGENT,
    PAPER,
    PROMPT_AGENT,
    main_grid,
    matching,
    outcome_rates,
    paper_cells,
    paper_view,
    pooled,
    with_axes,
)
from ._prompt_sets import PROMPT_SET_KEY
from ._stats import (
    ALPHA,
    BOOTSTRAP_METHOD,
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    CORRELATION_METHOD,
    MIN_BOOTSTRAP_UNITS,
    WILCOXON_METHOD,
)

__all__ = ["MISSING", "build_markdown", "pct", "write_report", "write_viewer"]


def write_report(results: Results, out: Path, *, source: str = "", bundle: bool = False) -> list[Path]:
    """Write report.md, report.html and the PNG figures into ``out``; returns their paths.

    Args:
        results: the logs, as :func:`read_logs` read them.
        out: the report folder (created).
        source: how to name the logs' location in the report (default: where they were read).
        bundle: also write Inspect's static log viewer with every log into ``out/viewer``,
            and link each cell to its samples' page there, so that ``out`` can be published
            alone; the last path returned is then the viewer's index.html (absolute).
    """
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("fig*.png"):  # a figure this report does not draw must not linger from the last one
        old.unlink()
    if bundle:
        write_viewer(results.log_dir, out / VIEWER)
    links = Links(results.log_dir, out, viewer=bundle)
    markdown = build_markdown(results, out, source=source or results.log_dir, links=links)
    md, page = out / "report.md", out / "report.html"
    md.write_text(markdown, encoding="utf-8")
    page.write_text(to_html(markdown, out), encoding="utf-8")
    viewer = [(out / VIEWER / "index.html").resolve()] if bundle else []
    return [md, page, *sorted(out.glob("fig*.png")), *viewer]


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
        # Inspect announces the scratch folder, which is gone once moved: say nothing of it
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            bundle_log_dir(log_dir=log_dir, output_dir=str(built))
        shutil.move(str(built), str(target))


def build_markdown(results: Results, out: Path, *, source: str = "", links: Links | None = None) -> str:
    """Compute every section, draw every figure into ``out`` and lay out the page."""
    links = links or Links(results.log_dir, out)
    sets = _sets(results.detection, results.navigation)
    wording = DEFAULT_PROMPT_SET if DEFAULT_PROMPT_SET in sets or not sets else sets[0]
    every_nav, every_det = _one_set(results.navigation, wording), _one_set(results.detection, wording)
    # navigation at n = 8 (a study at several sides, --sizes, is otherwise pooled); detection
    # keeps every side for App. E, its other tables read n = 8 (main_detection)
    every_nav = main_grid(every_nav)
    # App. K's runs (k_sections.DETECTION_AXES / NAVIGATION_AXES away from the paper's value,
    # another agent's world) have their own section; every other section reads the paper's
    # memory, every regime in the logs
    # (the paper's first; a table of regimes gives any other its row or column), and the
    # pooled numbers (the headline, the vision-text test, Fig. 6) the paper's regimes alone
    planned_nav = matching(
        with_axes(every_nav), {k: v for k, v in PAPER.items() if k not in k_sections.NAVIGATION_AXES}
    )
    det = k_sections.at_paper(every_det, *k_sections.DETECTION_AXES)
    every_nav = k_sections.at_paper(every_nav, *k_sections.NAVIGATION_AXES)
    # the paper's tables and figures: every axis at the paper's value but the filter mode
    # (its modes side by side); an extension's sweep and the other navigators have their
    # own sections
    nav = paper_view(every_nav) if not every_nav.empty else every_nav
    axes = with_axes(every_nav)
    prompt_note = ""
    if sets and (wording != DEFAULT_PROMPT_SET or sets != [wording]):
        compared = "; the section *Prompt sensitivity* compares the sets." if len(sets) > 1 else "."
        prompt_note = f"The paper's tables and figures below are the runs under the prompt set `{wording}`{compared}"
    rates = outcome_rates(nav) if not nav.empty else pd.DataFrame()
    paper_det = k_sections.paper_detection(results.detection)
    every_set = (
        paper_cells(k_sections.paper_regimes(results.navigation))
        if not results.navigation.empty
        else results.navigation
    )
    with shown_samples() as shown:
        totals = {kind: len(frame) for kind, frame in results.tables().items()}
        context: dict[str, object] = {
            "alpha": ALPHA,
            "cut_warning": cut_warning(results.cut(), totals, left_out=not results.left_out.empty),
            "headline": headline(pooled(det), pooled(nav)),
            "overview": paper_sections.overview(results, source, links),
            "prompt_note": prompt_note,
            "navigation": paper_sections.navigation(nav, rates, out, links),
            "cost": beyond.safety_cost(nav, out, links) if not nav.empty else None,
            "detection": paper_sections.detection(det, nav, out, links),
            "sweeps": [
                beyond.sweep(spec, every_nav, out, links)
                for spec in beyond.SWEEPS
                if set(axes[spec.axis]) - {PAPER[spec.axis]}
            ],
            "navigators": beyond.navigators(every_nav, links) if set(axes[AGENT]) - {PROMPT_AGENT} else None,
            "agent_memory": beyond.agent_memory(every_nav, links) if set(axes[AGENT]) - {PROMPT_AGENT} else None,
            "perception": (
                beyond.perception(results.perception, det, nav, out, links) if not results.perception.empty else None
            ),
            "prompt_sets": (
                beyond.prompt_sensitivity(paper_det, every_set, sets, DEFAULT_PROMPT_SET) if len(sets) > 1 else None
            ),
            "planned": k_sections.planned(every_det, planned_nav, links),
            "method": {
                "resamples": BOOTSTRAP_RESAMPLES,
                "seed": BOOTSTRAP_SEED,
                "min_units": MIN_BOOTSTRAP_UNITS,
                "batch_size": MAIN_BATCH_SIZE,
                "wilcoxon": WILCOXON_METHOD,
                "bootstrap": BOOTSTRAP_METHOD,
                "correlation": CORRELATION_METHOD,
            },
        }
    context["untabulated"] = untabulated(results.logs, results.tables(), shown, links)
    return render_markdown(context)


def _sets(*frames: pd.DataFrame) -> list[str]:
    """The prompt sets the rows were run under, the registry's order first."""
    found = {str(v) for f in frames if PROMPT_SET_KEY in f.columns for v in f[PROMPT_SET_KEY].unique()}
    return sorted(found, key=lambda name: (list(PROMPT_SETS).index(name) if name in PROMPT_SETS else 99, name))


def _one_set(frame: pd.DataFrame, wording: str) -> pd.DataFrame:
    if frame.empty or PROMPT_SET_KEY not in frame.columns:
        return frame
    return frame[frame[PROMPT_SET_KEY] == wording]
