"""The report's page: Markdown laid out by Jinja2 templates, and the same page as HTML.

The section builders (``_sections_paper``, ``_sections_beyond``) compute the numbers
and the cells of every table; the templates in ``templates/`` hold the headings, the
prose and the order of the sections. report.html is the Markdown converted by
markdown-it-py with every figure embedded as a data URI, so the page travels as one
file. Cells are Markdown: plain names go through :func:`esc`.
"""

from __future__ import annotations

import base64
import functools
import html
import math
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
import pandas as pd
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

MISSING = "missing"
UNDEFINED = "—"
"""A value whose denominator is empty (precision with nothing flagged): not zero."""
NO_CI = "no CI"
"""An interval the bootstrap does not give: too few seeds, or every seed alike
(``_stats.bootstrap_ci``)."""
VIEWER = "viewer"
"""The folder, beside the report, of Inspect's static log viewer (``--bundle``)."""
TITLE = "SpatialSTALE reproduction report"
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


def short(label: str) -> str:
    """A model label without provider prefixes: ``openai/gpt-4o`` -> ``gpt-4o``."""
    return re.sub(r"[\w.\-]+/", "", label)


def name(model: object) -> str:
    """A model label as a table shows it: provider prefixes dropped, Markdown escaped."""
    return esc(short(str(model)))


def nan(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def pct(x: float) -> str:
    return MISSING if nan(x) else f"{100 * x:.1f}%"


def num(x: float, digits: int = 3) -> str:
    return UNDEFINED if nan(x) else f"{x:.{digits}f}"


def pvalue(p: float) -> str:
    """Three significant digits (an exact 2/2^5 reads 0.0625), below 0.001 in e-notation."""
    if nan(p):
        return "-"
    return f"{p:.2e}" if p < 0.001 else f"{p:.3g}"


def ci(low: float, high: float, show: Callable[[float], str] = num) -> str:
    """``[low, high]``, or :data:`NO_CI` where the bootstrap gives no interval."""
    return NO_CI if nan(low) or nan(high) else f"[{show(low)}, {show(high)}]"


def with_ci(value: str, low: float, high: float, show: Callable[[float], str] = num) -> str:
    """``value [low, high]``, or ``value (no CI)``."""
    return f"{value} ({NO_CI})" if nan(low) or nan(high) else f"{value} {ci(low, high, show)}"


def beside(ours: float, theirs: float | None, as_pct: bool = True, digits: int = 3) -> str:
    """``paper value (Δ ours - paper)``, or empty when the paper gives none."""
    if theirs is None:
        return ""
    if as_pct:
        delta = "" if nan(ours) else f" (Δ {100 * (ours - theirs):+.1f} pp)"
        return f"{100 * theirs:.1f}%{delta}"
    delta = "" if nan(ours) else f" (Δ {ours - theirs:+.{digits}f})"
    return f"{theirs:.{digits}f}{delta}"


def as_int(value: object) -> int:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0
    return 0 if math.isnan(number) else int(number)


SAMPLE_KEY = ("log", "sample_id", "epoch")
"""What names one sample row of a table, whatever frame it was copied into."""
_shown: ContextVar[set[tuple[str, str, int]] | None] = ContextVar("shown", default=None)


@contextmanager
def shown_samples() -> Iterator[set[tuple[str, str, int]]]:
    """Collect the samples behind every cell built inside the block: the rows a cell
    links to (:func:`log_of`) or counts the cut samples of (:func:`cut_of`), and the rows
    a section marks with :func:`show`. The report compares them with every sample read,
    so a run no table shows is listed rather than silently dropped."""
    collected: set[tuple[str, str, int]] = set()
    token = _shown.set(collected)
    try:
        yield collected
    finally:
        _shown.reset(token)


def sample_keys(frame: pd.DataFrame) -> set[tuple[str, str, int]]:
    """The :data:`SAMPLE_KEY` of every row of ``frame`` (epoch 1 for a table without one)."""
    if frame.empty or "log" not in frame.columns or "sample_id" not in frame.columns:
        return set()
    epochs = frame["epoch"] if "epoch" in frame.columns else pd.Series(1, index=frame.index)
    return {
        (str(log), str(sample), as_int(epoch) or 1)
        for log, sample, epoch in zip(frame["log"], frame["sample_id"], epochs, strict=True)
    }


def show(frame: pd.DataFrame) -> pd.DataFrame:
    """Mark the rows of ``frame`` as shown by the section being built (see
    :func:`shown_samples`); returns ``frame``."""
    collected = _shown.get()
    if collected is not None:
        collected |= sample_keys(frame)
    return frame


def rows_matching(frame: pd.DataFrame, **keys: object) -> pd.DataFrame:
    """The rows of ``frame`` matching ``keys`` (none when ``frame`` lacks a key's column:
    a table of a partial matrix may have none of its rows)."""
    if frame.empty or any(key not in frame.columns for key in keys):
        return frame.iloc[0:0]
    mask = pd.Series(True, index=frame.index)
    for key, value in keys.items():
        mask &= frame[key] == value
    return frame[mask]


def first_row(frame: pd.DataFrame, **keys: object) -> pd.Series | None:
    """The first row of ``frame`` matching ``keys``, or None."""
    part = rows_matching(frame, **keys)
    return None if part.empty else part.iloc[0]


LIMITS = {
    "token": "the token limit",
    "message": "the message limit",
    "turn": "the turn limit",
    "time": "the time limit",
    "working": "the working-time limit",
    "context": "the context window",
    "cost": "the cost limit",
    "operator": "an operator",
    "custom": "a custom limit",
}
"""Each sample limit (Inspect's ``EvalSampleLimit.type``) as the report names it."""


def limit_name(limit: str) -> str:
    return LIMITS.get(limit, f"the {limit} limit")


def cut_counts(frame: pd.DataFrame) -> dict[str, int]:
    """How many rows of ``frame`` a sample limit cut short, by limit (none when the
    table has no ``limit`` column: a table built before limits were read)."""
    if frame.empty or "limit" not in frame.columns:
        return {}
    cut = frame["limit"][frame["limit"].fillna("") != ""]
    return {str(limit): int(n) for limit, n in cut.value_counts().sort_index().items()}


def cut_phrase(counts: Mapping[str, int], total: int, unit: str) -> str:
    """``3 of 3 samples cut by the token limit``, or ``2 of 10 episodes cut (1 by the token
    limit, 1 by the time limit)``; empty when nothing was cut."""
    cut = sum(counts.values())
    if not cut:
        return ""
    if len(counts) == 1:
        return f"{cut} of {total} {unit} cut by {limit_name(next(iter(counts)))}"
    parts = ", ".join(f"{n} by {limit_name(limit)}" for limit, n in counts.items())
    return f"{cut} of {total} {unit} cut ({parts})"


def unit_of(frame: pd.DataFrame) -> str:
    """What a row of ``frame`` is: an episode (navigation: a row per epoch) or a sample."""
    return "episodes" if "epoch" in frame.columns else "samples"


def cut_note(frame: pd.DataFrame, **keys: object) -> str:
    """`` — 3 of 3 samples cut by the token limit``: what a cell built from the rows of
    ``frame`` matching ``keys`` must say of the samples a limit ended (their score counts
    only what ran before it); empty when none was."""
    return cut_of(rows_matching(frame, **keys))


def cut_of(part: pd.DataFrame, unit: str | None = None) -> str:
    """:func:`cut_note` of every row of ``part``, each row one of ``unit`` (by default
    :func:`unit_of` the table)."""
    show(part)
    phrase = cut_phrase(cut_counts(part), len(part), unit or unit_of(part))
    return f" — {phrase}" if phrase else ""


def log_of(frame: pd.DataFrame, **keys: object) -> Evidence | None:
    """The log, and the first sample in it, of the newest sample row matching ``keys``
    (the samples a cell came from: the viewer opens that sample and steps through the rest)."""
    show(rows_matching(frame, **keys))
    row = first_row(frame.iloc[::-1], **keys)
    if row is None:
        return None
    log = str(row["log"])
    same = frame[frame["log"] == log]
    for key, value in keys.items():
        same = same[same[key] == value]
    first = same.iloc[0] if len(same) else row
    sample = first.get("sample_id")
    epoch = first.get("epoch", 1)
    if nan(sample) or sample is None:
        return (log, None, None)
    return (log, str(sample), as_int(epoch) or 1)


@dataclass(frozen=True)
class Table:
    """A pipe table: a header and rows of Markdown cells."""

    header: Sequence[str]
    rows: Sequence[Sequence[str]]

    def __bool__(self) -> bool:
        return bool(self.rows)

    def compact(self) -> Table:
        """The table without the columns empty in every row (the paper's columns
        when no model matches one the paper ran)."""
        if not self.rows:
            return self
        keep = [i for i in range(len(self.header)) if any(str(row[i]).strip() for row in self.rows)]
        return Table([self.header[i] for i in keep], [[row[i] for i in keep] for row in self.rows])


@dataclass(frozen=True)
class Figure:
    """A figure the report drew (``path`` None: nothing to draw) and its caption."""

    path: Path | None
    caption: str


@dataclass(frozen=True)
class Links:
    """Where a cell's log is, seen from the report folder."""

    log_dir: str
    out: Path
    viewer: bool = False

    def href(self, log: object) -> str | None:
        """The report-relative link to ``log`` (a log location, or :data:`Evidence`):
        in the viewer bundle the sample's page (Inspect's viewer route
        ``#/logs/<log>/samples/sample/<id>/<epoch>/``), else the log; or None."""
        sample: tuple[str, int] | None = None
        if isinstance(log, tuple):
            log, sample_id, epoch = log
            sample = (sample_id, epoch or 1) if sample_id is not None else None
        if not isinstance(log, str) or not log:
            return None
        local = log.removeprefix("file://")
        remote = "://" in local
        if self.viewer:
            base = self.log_dir.rstrip("/") if remote else os.path.abspath(self.log_dir.removeprefix("file://"))
            inside = local[len(base) :].lstrip("/") if remote else os.path.relpath(local, base)
            page = f"{VIEWER}/index.html#/logs/{quote(inside)}"
            return f"{page}/samples/sample/{quote(sample[0], safe='')}/{sample[1]}/" if sample else page
        return log if remote else quote(os.path.relpath(local, self.out.resolve()))


def evidence(text: str, frame: pd.DataFrame, links: Links, **keys: object) -> str:
    """A data cell: ``text`` linked to the log of the rows of ``frame`` matching ``keys``,
    followed by how many of them a limit cut short (:func:`cut_note`)."""
    return link(text, links.href(log_of(frame, **keys))) + cut_note(frame, **keys)


Evidence = tuple[str, str | None, int | None]
"""Where a cell's number comes from: (log, sample id, epoch); the id is None when unknown."""


def _cell(text: object) -> str:
    # a pipe inside a cell ends it unless escaped, even inside a link
    return str(text).replace("\n", " ").replace("|", "\\|")


@functools.cache
def environment() -> jinja2.Environment:
    """The templates' environment: Markdown, so nothing is HTML-escaped (cells go through :func:`esc`)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("spatialstale.report"),
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["cell"] = _cell
    env.filters["compact"] = Table.compact
    return env


def render_markdown(context: Mapping[str, Any]) -> str:
    """The report as Markdown: ``report.md.j2`` with ``context``; blocks are separated by
    one blank line whatever the templates' spacing."""
    text = environment().get_template("report.md.j2").render(**context, title=TITLE, missing=MISSING)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


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


OPEN_TARGET = (
    "<script>"
    # a link to an anchor (#appendix-cut) opens the folded table of its section: the
    # <details> holding the anchor, or the first one after it before the next heading
    "function openTarget(){var id=decodeURIComponent(location.hash.slice(1));"
    "var el=id&&document.getElementById(id);if(!el)return;"
    "for(var d=el.closest('details');d;d=d.parentElement&&d.parentElement.closest('details'))d.open=true;"
    "var n=el;while(n.parentElement&&n.parentElement!==document.body)n=n.parentElement;"
    "for(n=n.nextElementSibling;n&&!/^H[12]$/.test(n.tagName);n=n.nextElementSibling)"
    "{if(n.tagName==='DETAILS'){n.open=true;break;}}el.scrollIntoView();}"
    "window.addEventListener('hashchange',openTarget);window.addEventListener('DOMContentLoaded',openTarget);"
    "</script>"
)
"""report.html's script that opens a folded section when a link to it is followed."""


def to_html(markdown: str, figures_dir: Path) -> str:
    """The Markdown as one self-contained HTML page: figures from ``figures_dir`` are
    embedded as data URIs."""
    md = MarkdownIt("commonmark", {"html": True}).enable("table")  # <details> and anchors; cells are escaped
    md.add_render_rule("image", _embedded_image(figures_dir))
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f"<title>{html.escape(TITLE)}</title><style>{STYLE}</style>{OPEN_TARGET}</head><body>\n"
        + str(md.render(markdown))
        + "</body></html>\n"
    )
