"""The report over any part of a real study: every single log alone, seeded random
subsets, an L2-only study; logs superseded by a rerun; the self-contained HTML, the
links to the logs and the viewer bundle; token usage; tests that cannot reach alpha."""

from __future__ import annotations

import random
import re
import shutil
from collections import defaultdict
from pathlib import Path
from urllib.parse import unquote

import pandas as pd
import pytest
from inspect_ai import eval
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from spatialstale.report import ALPHA, read_logs
from spatialstale.report import _paper as paper
from spatialstale.report import _sections_paper as paper_sections
from spatialstale.report._document import Links, pvalue
from spatialstale.report._navigation_stats import outcome_rates, strategy_tests
from spatialstale.report._report import MISSING
from spatialstale.study import Study, TaskSpec, study_seeds
from spatialstale.study._cli import main
from tests.report._markdown import episode
from tests.scripted import Script, truthful_flags

MODELS = ("spatialstale/observer", "spatialstale/credulous")
SEEDS = study_seeds(None, 2)


@pytest.fixture
def study(paper_study: Study) -> Path:
    """Detection (text and vision) and navigation (every strategy) on L1 and L3."""
    return Path(paper_study.log_dir)


def _files(log_dir: Path) -> list[Path]:
    return sorted(Path(info.name.removeprefix("file://")) for info in list_eval_logs(str(log_dir)))


def _report(log_dir: Path, out: Path, *extra: str) -> tuple[str, str]:
    assert main(["report", str(log_dir), "--out", str(out), *extra]) == 0
    return (out / "report.md").read_text(), (out / "report.html").read_text()


def _links(markdown: str) -> list[str]:
    return re.findall(r"\]\(<([^>]+)>\)", markdown)


def _assert_self_contained(page: str, out: Path) -> None:
    sources = re.findall(r'<img src="([^"]+)"', page)
    assert sources and all(s.startswith("data:image/png;base64,") for s in sources)
    assert len(sources) == len(list(out.glob("fig*.png")))


@pytest.mark.parametrize("every", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["two", "every"])
def test_every_single_log_reports_alone(study: Path, tmp_path: Path, every: bool) -> None:
    files = _files(study)
    # 2 models x (4 detection + navigation: one log per regime, or per regime and strategy)
    assert len(files) in (12, 28)
    if not every:  # the fast tier: one detection and one navigation log
        kinds = {read_eval_log(str(f), header_only=True).eval.task.rsplit("/", 1)[-1]: f for f in files}
        files = [kinds["detection"], kinds["navigation"]]
    for k, file in enumerate(files):
        alone = tmp_path / f"log{k}"
        alone.mkdir()
        shutil.copy(file, alone / file.name)
        markdown, page = _report(alone, tmp_path / f"out{k}")
        log = read_eval_log(str(file), header_only=True)
        kind = log.eval.task.rsplit("/", 1)[-1]
        absent = "detection" if kind == "navigation" else "navigation"
        assert f"{MISSING} (no {absent} log)" in markdown
        assert f"<td>{MISSING}</td>" in page
        # every link of the report reaches the one log
        links = {Path(unquote(link)) for link in _links(markdown)}
        assert {link.name for link in links} == {file.name}
        assert all((tmp_path / f"out{k}" / link).resolve() == (alone / file.name).resolve() for link in links)
        _assert_self_contained(page, tmp_path / f"out{k}")


@pytest.mark.parametrize("subsets", [1, pytest.param(4, marks=pytest.mark.slow)])
def test_random_subsets_report(study: Path, tmp_path: Path, subsets: int) -> None:
    files = _files(study)
    rng = random.Random(9)
    for k in range(subsets):
        subset = rng.sample(files, rng.randint(2, len(files) - 1))
        folder = tmp_path / f"subset{k}"
        folder.mkdir()
        for file in subset:
            shutil.copy(file, folder / file.name)
        markdown, page = _report(folder, tmp_path / f"out{k}")
        assert f"{len(subset)} SpatialSTALE log(s)" in markdown
        assert {Path(unquote(link)).name for link in _links(markdown)} == {file.name for file in subset}
        _assert_self_contained(page, tmp_path / f"out{k}")


def test_l2_only_study_reports(l2_study: Path, tmp_path: Path) -> None:
    markdown, page = _report(l2_study, tmp_path / "out")
    table3 = markdown.split("### Table 3: success and death rate")[1].split("###")[0]
    rows = [line for line in table3.splitlines() if line.startswith("| observer")]
    assert len(rows) == 5
    for row in rows:
        l1, l2, l3 = (cell.strip() for cell in row.strip(" |").split(" | ")[2:])
        assert l1 == l3 == "missing" and l2.startswith("[100.0% / 0.0%](<")
    assert "| L2 | 1 |" in markdown  # the stale-ratio row of the one seed
    _assert_self_contained(page, tmp_path / "out")


def test_cells_link_to_their_logs_and_the_html_is_the_markdown(study: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    markdown, page = _report(study, out)
    for link in _links(markdown):
        assert (out / unquote(link)).resolve().is_file()
    # a Table 3 cell links to the navigation log of its model, regime and strategy (a log
    # runs every strategy, or one)
    ran = [
        log
        for log in _headers(study)
        if log.eval.model == "spatialstale/credulous"
        and log.eval.task.endswith("navigation")
        and log.eval.task_args_passed["regime"] == "L1"
        and "nofilter" in log.eval.task_args["strategies"]
    ]
    assert len(ran) == 1
    table3 = markdown.split("### Table 3: success and death rate")[1].split("###")[0]
    credulous = next(line for line in table3.splitlines() if line.startswith("| credulous | NoFilter"))
    l1_link = _links(credulous)[0]
    assert Path(unquote(l1_link)).name == Path(ran[0].location).name
    # every Markdown table is an HTML table with as many rows
    tables = [part for part in markdown.split("\n\n") if part.startswith("| ")]
    html_tables = re.findall(r"<table>.*?</table>", page, re.S)
    assert len(tables) == len(html_tables) > 5
    for md_table, html_table in zip(tables, html_tables, strict=True):
        assert len(md_table.splitlines()) - 1 == html_table.count("<tr>")


def _headers(log_dir: Path) -> list[EvalLog]:
    return [read_eval_log(str(file), header_only=True) for file in _files(log_dir)]


@pytest.mark.slow  # writes and checks a whole viewer bundle
def test_bundle_writes_the_viewer_and_links_into_it(study: Path, tmp_path: Path) -> None:
    copy = tmp_path / "logs"
    shutil.copytree(study, copy)
    for _ in range(2):  # the second run finds the first bundle inside the log directory
        assert main(["report", str(copy), "--bundle"]) == 0
    out = copy / "report"
    viewer = out / "viewer"
    assert (viewer / "index.html").is_file()
    assert {p.name for p in (viewer / "logs").glob("*.eval")} == {p.name for p in _files(study)}
    markdown = (out / "report.md").read_text()
    assert f"{len(_files(study))} SpatialSTALE log(s)" in markdown  # the bundle's copies are not read twice
    links = _links(markdown)
    assert links and all(link.startswith("viewer/index.html#/logs/") for link in links)
    for link in links:  # a cell opens its first sample, a log of the appendix the log
        log = link.removeprefix("viewer/index.html#/logs/").split("/samples/sample/")[0]
        assert (viewer / "logs" / unquote(log)).is_file()
    _assert_self_contained((out / "report.html").read_text(), out)


@pytest.mark.slow  # reads every log's usage again
def test_token_usage_per_model_equals_the_logs(study: Path, tmp_path: Path) -> None:
    totals: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for log in _headers(study):
        for model, usage in log.stats.model_usage.items():
            totals[model]["input"] += usage.input_tokens
            totals[model]["output"] += usage.output_tokens
    assert set(totals) == set(MODELS)
    markdown, _ = _report(study, tmp_path / "out")
    section = markdown.split("### Token usage")[1].split("\n## ")[0]
    for model, counts in totals.items():
        assert f"| {model} | {counts['input']:,} | 0 | 0 | {counts['output']:,} |" in section


def test_a_log_superseded_by_a_rerun_is_not_unfinished(tmp_path: Path) -> None:
    spec = TaskSpec.make("detection", regime="L1", seeds=SEEDS[:1])

    def broken(call: object) -> set[str]:
        raise RuntimeError("the provider went away")

    [failed] = eval(spec.task(), model=Script(flag=broken).model(), log_dir=str(tmp_path), display="none")
    assert failed.status == "error"
    [done] = eval(spec.task(), model=Script(flag=truthful_flags).model(), log_dir=str(tmp_path), display="none")
    assert done.status == "success"
    results = read_logs(tmp_path)
    # by status, not by creation time: two logs may be created within one clock tick
    assert dict(zip(results.logs.status, results.logs.superseded, strict=True)) == {"error": True, "success": False}
    markdown, _ = _report(tmp_path, tmp_path / "out")
    assert "did not finish" not in markdown
    assert "1 log(s) of interrupted runs are superseded" in markdown
    assert "error (superseded)" in markdown


def test_an_unfinished_log_without_a_rerun_is_reported(tmp_path: Path) -> None:
    spec = TaskSpec.make("detection", regime="L1", seeds=SEEDS[:1])
    eval(spec.task(), model=Script(flag=truthful_flags).model(), log_dir=str(tmp_path), display="none")
    other = TaskSpec.make("detection", regime="L2", seeds=SEEDS[:1])

    def broken(call: object) -> set[str]:
        raise RuntimeError("the provider went away")

    eval(other.task(), model=Script(flag=broken).model(), log_dir=str(tmp_path), display="none")
    markdown, _ = _report(tmp_path, tmp_path / "out")
    assert "**1 log(s) did not finish**" in markdown and "are superseded" not in markdown


def _navigation(seeds: int) -> pd.DataFrame:
    """OMCD succeeds on every seed, NoFilter on none: the strongest paired contrast."""
    rows = []
    for seed in range(seeds):
        for strategy, success in (("omcd", 1.0), ("nofilter", 0.0)):
            rows.append(episode(seed, strategy, success, timeout=0.0))
    return pd.DataFrame(rows)


@pytest.mark.parametrize(("seeds", "reachable"), [(5, False), (11, False), (12, True), (30, True)])
def test_tests_that_cannot_reach_alpha_are_marked(seeds: int, reachable: bool) -> None:
    # two tests (success and death): Holm doubles the smallest p = 2/2^n, which is
    # 0.00195 > alpha at n = 11 and 0.00098 <= alpha at n = 12
    tests = strategy_tests(_navigation(seeds), [("omcd", "nofilter")])
    assert len(tests) == 2
    assert set(tests.reachable) == {reachable}
    # an unreachable test is never significant; with enough seeds this contrast is
    assert not (tests.significant & ~tests.reachable).any()
    assert tests.significant.all() == reachable
    assert (tests.p_holm >= tests.p_min).all() and ALPHA == 0.001


def test_the_papers_p_values_are_quoted_with_a_note_on_their_method(tmp_path: Path) -> None:
    # GPT-4o on L1: OMCD succeeds on 12 of 12 seeds, NoFilter on none, each seed once
    nav = _navigation(12).assign(
        model="openai/gpt-4o",
        regime="L1",
        outcome=lambda f: f.success.map({1.0: "success", 0.0: "death"}),
        steps=10,
        fallbacks=0,
        died_on_stale=0,
        log="x.eval",
    )
    section = paper_sections.navigation(nav, outcome_rates(nav), tmp_path, Links(str(tmp_path), tmp_path))
    assert section is not None
    [row] = [r for r in section["tests"].rows if r[2] == "OMCD vs NoFilter" and r[3] == "success"]
    # the exact p is 2/2^12 and Holm doubles it; the paper's claim sits beside it, as stated
    assert (row[6], row[7], row[-1]) == (pvalue(2 / 2**12), pvalue(4 / 2**12), "+14.4 pp, p<0.001")
    assert section["paper_p_values"] == paper.P_VALUES and "does not say how it computed them" in paper.P_VALUES


@pytest.mark.slow  # a report of a study cut to pieces
def test_report_summarises_unreachable_tests_in_one_sentence(study: Path, tmp_path: Path) -> None:
    markdown, _ = _report(study, tmp_path / "out")
    section = markdown.split("### Paired tests between strategies")[1].split("###")[0]
    # 2 models x 2 regimes x 7 contrasts x (success, death), each on 2 seeds
    assert "None of the 56 tests can reach alpha = 0.001 with the seeds they pair (at most 2)" in section
    assert "| model | regime | A vs B |" not in section
