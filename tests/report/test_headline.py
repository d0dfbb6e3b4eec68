"""The report leads with its findings: the headline sentences and summary table before
any other table, numbers equal to the logs', "—" for an undefined precision, the log
inventory (with its axes and the run status) in the appendix, the paper's columns only
when a model matches one the paper ran, and every bundle link pointing at a log and a
sample that exist."""

from __future__ import annotations

import math
import re
from pathlib import Path
from urllib.parse import unquote

import pandas as pd
import pytest
from inspect_ai import eval
from inspect_ai.log import list_eval_logs, read_eval_log

from spatialstale.evals.navigation import navigation
from spatialstale.report import read_logs
from spatialstale.report._document import UNDEFINED, Table
from spatialstale.report._figures import fig7_precision_recall, spread
from spatialstale.report._headline import headline, share
from spatialstale.report._inventory import inventory_axes
from spatialstale.report._load import undefined_as_nan
from spatialstale.report._report import build_markdown
from spatialstale.study import Study
from spatialstale.study._cli import main
from tests.conftest import Shared

# one worker runs the module, so its module fixtures' runs are made once
pytestmark = pytest.mark.xdist_group("headline")


@pytest.fixture(scope="module")
def study(paper_study: Study) -> Path:
    """Detection (text and vision) and navigation (every strategy) on L1 and L3."""
    return Path(paper_study.log_dir)


@pytest.fixture(scope="module")
def report(study: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """The report of the study, written once for the module's tests (they only read it)."""
    out = tmp_path_factory.mktemp("headline") / "out"
    assert main(["report", str(study), "--out", str(out)]) == 0
    return (out / "report.md").read_text(), (out / "report.html").read_text()


def _section(markdown: str, heading: str) -> str:
    return markdown.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]


def test_the_findings_come_before_any_other_table(study: Path, report: tuple[str, str]) -> None:
    markdown, page = report
    nav = read_logs(study).navigation
    credulous = nav[(nav.model == "spatialstale/credulous") & (nav.modality == "text")]
    nofilter = credulous[credulous.strategy == "nofilter"].death.mean()
    nomemory = credulous[credulous.strategy == "nomemory"].death.mean()
    assert nofilter > nomemory  # the credulous navigator walks into thawed holes
    sentence = f"Safety tax: NoFilter died in {share(nofilter)} of episodes vs {share(nomemory)} with NoMemory"
    found = _section(markdown, "What was found")
    assert sentence in found and f"{100 * (nofilter - nomemory):+.0f} pp" in found
    assert "Wilcoxon" in found and "McNemar" in found
    # the headline's sentence and its summary table open the page: no table before them
    first_table = page.index("<table>")
    assert page.index("What was found") < page.index("Safety tax: NoFilter died") < first_table
    summary = page[first_table : page.index("</table>")]
    assert "safety tax" in summary and "death NoFilter" in summary and "F1 text" in summary
    assert "sample records" not in summary and ".eval" not in summary  # not the inventory
    assert not re.search(r"\bnan\b", found)


def test_an_undefined_precision_is_a_dash_not_zero(study: Path, report: tuple[str, str], tmp_path: Path) -> None:
    markdown, _ = report
    det = read_logs(study).detection
    credulous = det[det.model == "spatialstale/credulous"]
    assert (credulous.tp + credulous.fp == 0).all()  # it flags nothing: precision 0/0
    assert credulous.precision.isna().all() and (credulous.f1 == 0).all()
    f1 = markdown.split("### Fig. 3:")[1].split("###")[0]
    rows = [line for line in f1.splitlines() if line.startswith("| credulous | text | L1 | ")]
    assert rows and f"| {UNDEFINED} / 0.000 |" in rows[0]
    # Fig. 7 draws no credulous point and its caption says how many runs it leaves out
    caption = next(line for line in markdown.splitlines() if line.startswith("*Fig. 7:"))
    assert "4 of 8 runs not drawn" in caption and "precision undefined on 8 seed(s)" in caption


def test_undefined_rules() -> None:
    recorded = {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    nothing_flagged = undefined_as_nan(0, 0, 3, recorded)
    assert math.isnan(nothing_flagged["precision"]) and nothing_flagged["recall"] == nothing_flagged["f1"] == 0
    nothing_stale = undefined_as_nan(0, 2, 0, recorded)
    assert math.isnan(nothing_stale["recall"]) and nothing_stale["precision"] == 0
    assert all(math.isnan(v) for v in undefined_as_nan(0, 0, 0, {"precision": 1, "recall": 1, "f1": 1}).values())
    assert undefined_as_nan(1, 1, 1, {"precision": 0.5, "recall": 0.5, "f1": 0.5})["f1"] == 0.5


def test_the_appendix_lists_each_log_with_its_axes(study: Path, report: tuple[str, str]) -> None:
    markdown, page = report
    assert markdown.index("## What was found") < markdown.index("## Appendix: logs")
    appendix = _section(markdown, "Appendix: logs")
    header = next(line for line in appendix.splitlines() if line.startswith("| task |"))
    cells = [c.strip() for c in header.strip("|").split("|")]
    assert "run status" in cells and "status" not in cells and "success" not in cells
    titles = {a.title or a.name.replace("_", " ") for a in inventory_axes()}
    shown = set(cells) & titles
    assert {"regime", "modality"} <= shown  # the axes these logs differ in
    note = next(line for line in appendix.splitlines() if line.startswith("Every log"))
    assert all(title in note or title in shown for title in ("prompt set", "batch size"))
    # every log a row; the regime column reads the log header
    logs = len(list_eval_logs(str(study)))
    rows = [line for line in appendix.splitlines() if line.startswith(("| detection |", "| navigation |"))]
    assert len(rows) == logs
    regime = cells.index("regime")
    assert {row.strip("|").split("|")[regime].strip() for row in rows} == {"L1", "L3"}
    assert f"<details><summary>{logs} log(s)" in page


def test_the_paper_columns_only_when_a_model_matches(study: Path, report: tuple[str, str], tmp_path: Path) -> None:
    markdown, _ = report
    headers = [line for line in markdown.splitlines() if line.startswith("| model |")]
    assert headers and not any("paper" in h for h in headers)
    assert "Δ = ours - paper" not in markdown
    # the same logs with the credulous model named as the paper's Claude: its vision flag
    # rates (Fig. 4) stand beside the paper's
    results = read_logs(study)
    renamed = {"spatialstale/credulous": "anthropic/claude-sonnet-4-6"}
    results.navigation = results.navigation.assign(model=results.navigation.model.replace(renamed))
    results.detection = results.detection.assign(model=results.detection.model.replace(renamed))
    text = build_markdown(results, tmp_path)
    flags = next(line for line in text.splitlines() if line.startswith("| model | obs | SAFE_safe"))
    assert flags.endswith("| paper |") and "Δ = ours - paper" in text


def test_empty_columns_are_dropped() -> None:
    table = Table(["a", "paper", "b"], [["1", "", "2"], ["3", " ", "4"]]).compact()
    assert list(table.header) == ["a", "b"] and [list(r) for r in table.rows] == [["1", "2"], ["3", "4"]]


def test_partial_studies_say_less_and_never_nan(study: Path, tmp_path: Path) -> None:
    results = read_logs(study)
    nav = results.navigation
    cases = {
        "detection only": (results.detection, nav.iloc[0:0]),
        "navigation only": (results.detection.iloc[0:0], nav),
        "no NoMemory, no Oracle": (results.detection, nav[~nav.strategy.isin(["nomemory", "oracle"])]),
        "one regime": (results.detection[results.detection.regime == "L1"], nav[nav.regime == "L1"]),
    }
    for case, (det, part) in cases.items():
        found = headline(det, part)
        assert found is not None, case
        text = " ".join(s for f in found["findings"] for s in f.sentences)  # type: ignore[attr-defined]
        assert "nan" not in text, case
        if case == "no NoMemory, no Oracle":
            assert "Safety tax: not measured" in text and "OMCD vs Oracle: not measured" in text
        if case == "detection only":
            assert "Detection F1" in text and "Deaths" not in text
    assert headline(results.detection.iloc[0:0], nav.iloc[0:0]) is None


@pytest.mark.slow
def test_the_bundle_links_samples_that_exist_and_prints_where_it_is(
    study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["report", str(study), "--out", str(out), "--bundle"]) == 0
    output = capsys.readouterr().out
    index = (out / "viewer" / "index.html").resolve()
    assert output.split()[-1] == str(index) and index.is_file()
    assert "view bundle" not in output  # Inspect's note naming its scratch folder
    markdown = (out / "report.md").read_text()
    links = re.findall(r"\]\(<([^>]+)>\)", markdown)
    samples = [link for link in links if "/samples/sample/" in link]
    assert len(samples) > 20
    pattern = re.compile(r"viewer/index\.html#/logs/(.+)/samples/sample/([^/]+)/(\d+)/$")
    ids: dict[Path, set[tuple[str, int]]] = {}
    for link in samples:
        match = pattern.match(link)
        assert match, link
        log = out / "viewer" / "logs" / unquote(match.group(1))
        assert log.is_file(), link
        if log not in ids:
            full = read_eval_log(str(log))
            ids[log] = {(str(s.id), s.epoch) for s in full.samples or []}
        assert (unquote(match.group(2)), int(match.group(3))) in ids[log], link


def test_fig7_spreads_points_at_one_place_and_draws_no_undefined_point(tmp_path: Path) -> None:
    placed = spread([(1.0, 1.0)] * 6 + [(0.5, 0.2)])
    points = {(round(x, 4), round(y, 4)) for x, y, _ in placed}
    assert len(points) == 7 and all(-0.05 <= v <= 1.05 for p in points for v in p)
    assert [c for _, _, c in placed] == [6] * 6 + [1]
    # centred on the shared place, so the ring is not read as a lower precision or recall
    assert math.isclose(sum(x for x, _, _ in placed[:6]) / 6, 1.0) and math.isclose(
        sum(y for _, y, _ in placed[:6]) / 6, 1.0
    )
    undefined = pd.DataFrame(
        {"model": ["m"], "regime": ["L1"], "modality": ["text"], "precision": [math.nan], "recall": [0.0]}
    )
    assert fig7_precision_recall(undefined, tmp_path / "f.png") is None


@pytest.fixture
def one_log(shared: Shared) -> Path:
    """One navigation log holding three strategies (the layout before one log per strategy)."""

    def make(logs: Path) -> None:
        task = navigation(regime="L1", seeds="4810,1734,4196", strategies="nomemory,nofilter,oracle", episodes=1)
        [log] = eval(task, model="spatialstale/credulous", log_dir=str(logs), display="none", log_realtime=False)
        assert log.status == "success"

    return shared("headline-one-log", make)


def test_both_log_layouts_pair_across_logs_by_regime_seed_and_epoch(study: Path, one_log: Path) -> None:
    """Navigation logs holding several strategies and one log per (regime, strategy)
    give the same pairs: by (regime, seed, epoch), whichever log a strategy came from."""
    for folder in (one_log, study):
        results = read_logs(folder)
        nav = results.navigation
        credulous = nav[nav.model == "spatialstale/credulous"]
        found = headline(results.detection, nav)
        assert found is not None
        [finding] = [f for f in found["findings"] if f.model == "credulous"]  # type: ignore[attr-defined]
        units = credulous[["regime", "seed"]].drop_duplicates()
        assert finding.tax is not None and finding.tax.units == len(units)
        per_cell = credulous.groupby(["regime", "strategy"]).log.nunique()
        assert (per_cell == 1).all()
        death = credulous.groupby("strategy").death.mean()
        assert finding.tax.difference == pytest.approx(death["nofilter"] - death["nomemory"])
    assert read_logs(one_log).navigation.log.nunique() == 1
