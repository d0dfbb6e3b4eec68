"""Samples a sample limit cut short, in plain sight: every table row records the limit,
every report cell that includes such samples says how many, the headline warns first,
the appendix lists them, and ``--exclude-limited`` shows the figures without them.

The logs: the observer under a token limit of 6,000, which cuts every L3 detection
sample (35-49 calls a seed) and every memory strategy's episode, but no L1 detection
sample and no NoMemory episode."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.evals.perception import perception
from spatialstale.report import read_logs
from tests.conftest import SEEDS, run_eval
from tests.report._markdown import report_of, rows, section

# one worker runs the module, so its module fixtures' runs are made once
pytestmark = pytest.mark.xdist_group("cut_short")

OBSERVER = "spatialstale/observer"
LIMIT = 6000
SEED_ARG = ",".join(map(str, SEEDS))
CUT = "2 of 2 samples cut by the token limit"


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cut")
    run_eval(detection(regime="L3", seeds=SEED_ARG), OBSERVER, folder, token_limit=LIMIT)
    run_eval(detection(regime="L1", seeds=SEED_ARG), OBSERVER, folder, token_limit=LIMIT)
    strategies = "nomemory,nofilter"
    run_eval(
        navigation(regime="L1", seeds=SEED_ARG, strategies=strategies), OBSERVER, folder, token_limit=LIMIT, epochs=1
    )
    return folder


@pytest.fixture(scope="module")
def report(logs: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    return report_of(logs, tmp_path_factory.mktemp("cut-report") / "out")


def test_every_table_records_the_limit_of_each_sample(logs: Path) -> None:
    results = read_logs(logs)
    det, nav = results.detection, results.navigation
    assert set(det[det.regime == "L3"].limit) == {"token"}
    assert set(det[det.regime == "L1"].limit) == {""}
    assert all(reason.startswith("Token limit exceeded") for reason in det[det.regime == "L3"].limit_reason)
    assert set(nav[nav.strategy == "nofilter"].limit) == {"token"}  # read from the sample summaries
    assert set(nav[nav.strategy == "nomemory"].limit) == {""}
    assert len(results.cut()) == 4


def test_the_headline_warns_first(report: str) -> None:
    found = section(report, "## What was found")
    first = found.strip().splitlines()[0]
    assert first.startswith("**Samples cut short.**")
    assert "2 of 4 detection samples cut by the token limit" in first
    assert "2 of 4 navigation episodes cut by the token limit" in first
    assert "--exclude-limited" in first and "inspect eval-retry" in first
    # the sentences and the summary table say it too: text F1 pools L1 and L3
    [f1] = [line for line in found.splitlines() if "Detection F1: text" in line]
    assert "(4 (regime, seed) units" in f1 and f1.endswith("— 2 of 4 samples cut by the token limit).")
    assert "NoFilter 0 %" in found or "NoFilter" in found
    [summary] = rows(found, "observer")
    assert summary[1].endswith("— 2 of 4 samples cut by the token limit")


def test_each_cell_that_includes_cut_samples_says_how_many(report: str) -> None:
    fig3 = section(report, "### Fig. 3")
    l1, l3 = (next(r for r in rows(fig3, "observer") if r[1:3] == ["text", regime]) for regime in ("L1", "L3"))
    assert l3[4].endswith(f"— {CUT}")
    assert "cut by" not in l1[4]
    table3 = section(report, "### Table 3")
    nofilter = next(r for r in rows(table3, "observer") if r[1] == "NoFilter")
    nomemory = next(r for r in rows(table3, "observer") if r[1] == "NoMemory")
    assert nofilter[2].endswith("— 2 of 2 episodes cut by the token limit")
    assert "cut by" not in nomemory[2]
    thaw_freeze = section(report, "### Fig. 8")
    assert next(r for r in rows(thaw_freeze, "observer") if r[2] == "L3")[3].endswith(f"— {CUT}")


def test_the_appendix_lists_every_sample_cut(report: str, logs: Path) -> None:
    listed = section(report, "### Samples cut short")
    assert "`inspect eval-retry` does not rerun them" in listed
    lines = [
        line for line in listed.splitlines() if line.startswith("| detection ") or line.startswith("| navigation ")
    ]
    assert len(lines) == 4
    ids = {sample for sample in read_logs(logs).cut().sample_id}
    assert all(any(f"[{sample}]" in line for line in lines) for sample in ids)
    assert all("the token limit" in line and "Token limit exceeded" in line for line in lines)


def test_exclude_limited_shows_the_figures_without_them(logs: Path, tmp_path: Path) -> None:
    from spatialstale.study._cli import main

    out = tmp_path / "out"
    assert main(["report", str(logs), "--out", str(out), "--exclude-limited"]) == 0
    markdown = (out / "report.md").read_text()
    first = section(markdown, "## What was found").strip().splitlines()[0]
    assert first.startswith("**Samples cut short, left out.**")
    fig3 = section(markdown, "### Fig. 3")
    l3 = next(r for r in rows(fig3, "observer") if r[1:3] == ["text", "L3"])
    assert l3[4] == "missing"
    l1 = next(r for r in rows(fig3, "observer") if r[1:3] == ["text", "L1"])
    assert l1[4].startswith("[1.000 ± 0.000]") and "cut by" not in l1[4]
    assert "2 detection samples and 2 navigation episodes read" in markdown
    listed = section(markdown, "### Samples cut short").splitlines()
    assert len([line for line in listed if line.startswith(("| detection ", "| navigation "))]) == 4


def test_a_rerun_with_a_higher_limit_inside_the_log_dir_replaces_them(logs: Path, tmp_path: Path) -> None:
    """What the report tells a user to do: the cut cells again with a higher limit, into a
    folder inside the log directory; the report reads both and the newer samples win."""
    import shutil

    copy = tmp_path / "logs"
    shutil.copytree(logs, copy)
    run_eval(detection(regime="L3", seeds=SEED_ARG), OBSERVER, copy / "rerun", token_limit=LIMIT * 100)
    results = read_logs(copy)
    l3 = results.detection[results.detection.regime == "L3"]
    assert len(l3) == 2 and set(l3.limit) == {""} and set(l3.f1) == {1.0}
    markdown = report_of(copy, tmp_path / "out")
    assert "2 of 2 detection samples" not in section(markdown, "## What was found")


def test_a_sample_whose_provider_hangs_into_the_time_limit_is_flagged(tmp_path: Path) -> None:
    """The flaky endpoint leaves one call in ten unanswered; ``--time-limit`` ends those
    samples, which keep their score and are flagged as cut by the time limit."""
    seeds = ",".join(map(str, range(1, 7)))
    faults = {"hang": 0.1, "fault_seed": 1}
    run_eval(
        detection(regime="L1", seeds=seeds), "spatialstale-faults/observer", tmp_path, time_limit=3, model_args=faults
    )
    cut = read_logs(tmp_path).cut()
    assert len(cut) > 0 and set(cut.limit) == {"time"}
    first = section(report_of(tmp_path, tmp_path / "out"), "## What was found").strip().splitlines()[0]
    assert f"{len(cut)} of 6 detection samples cut by the time limit" in first


@pytest.fixture(scope="module")
def all_cut(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The paper's matrix, small (L1 and L3, text and vision, every strategy, one
    episode), and a run of each section beyond it (fog, the tool navigator, the
    perception probe, a prompt set, App. K's distractors, crops, edits and MA), under a
    token limit that cuts every sample after a few calls."""
    folder = tmp_path_factory.mktemp("all-cut")
    seeds = SEED_ARG

    def cut(task: Any, limit: int = ALL_CUT_LIMIT, **kwargs: Any) -> None:
        run_eval(task, OBSERVER, folder, token_limit=limit, **kwargs)

    for regime in ("L1", "L3"):
        for modality in ("text", "vision"):
            cut(detection(regime=regime, seeds=seeds, modality=modality))
        cut(navigation(regime=regime, seeds=seeds), epochs=1)
    cut(navigation(regime="L1", seeds=seeds, view_radius=2), epochs=1)
    cut(navigation(regime="L1", seeds=seeds, agent="tools"), epochs=1)
    cut(perception(regime="L1", seeds=seeds), limit=500)  # a perception call is small
    cut(detection(regime="L1", seeds=seeds, prompt_set="minimal"))
    cut(navigation(regime="L1", seeds=seeds, prompt_set="minimal"), epochs=1)
    cut(detection(regime="L1", seeds=seeds, distractors=4))
    cut(detection(regime="L1", seeds=seeds, memory="crops", modality="vision"))
    cut(detection(regime="L1", seeds=seeds, edits=True))
    cut(detection(regime="MA", seeds=seeds))
    cut(navigation(regime="MA", seeds=seeds), epochs=1)
    return folder


ALL_CUT_LIMIT = 3000
LABELS = {"model", "obs", "modality", "regime", "strategy", "measure", "n", "B", "K", "A vs B", "rate", "seeds"}
"""Columns that name a row (or count its seeds), not a value the samples gave."""
STATISTICS = ("Wilcoxon p", "Holm p", "sig", "significant", "McNemar", "Δ", "Pearson", "Spearman", "paper")
"""Columns of a test's statistics (its row says what was cut in its pairs, seeds or
difference), and the paper's own values."""
INSTANCES = {"p", "stale ratio mean [95 % CI]", "range", "stale entries a seed"}
"""A p-value beside its difference, and MA's stale ratios: a property of the instances,
which no model changes."""
NO_SAMPLES = ("", "0", "missing", "—", "-")
"""Cells of no sample: a cell the logs do not cover, or an undefined value."""
NOTE = re.compile(r" — \d+ of \d+ (samples|episodes) cut (by |\()")


def tables(markdown: str) -> Iterator[tuple[str, list[str], list[list[str]]]]:
    """(heading, header, rows) of every pipe table of ``markdown``."""
    heading, lines = "", markdown.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("#"):
            heading = line
        if line.startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            body = []
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                body.append(_cells(row))
            yield heading, _cells(line), body


def _cells(line: str) -> list[str]:
    # a pipe inside a cell is escaped
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]


def test_every_cell_of_a_report_of_cut_samples_says_how_many(all_cut: Path, tmp_path: Path) -> None:
    """Every sample was cut: every value cell before the appendix says how many of its
    samples (or episodes), each sentence of the findings too, and every outcome table's
    rates add up to 100 %."""
    results = read_logs(all_cut)
    assert all(set(frame.limit) == {"token"} for frame in (results.detection, results.navigation))
    markdown = report_of(all_cut, tmp_path / "out").split("## Appendix: logs")[0]
    walked = 0
    for heading, header, body in tables(markdown):
        for row in body:
            assert len(row) == len(header), (heading, row)
            for column, cell in zip(header, row, strict=True):
                if column in LABELS | INSTANCES or column.startswith(STATISTICS) or cell in NO_SAMPLES:
                    continue
                walked += 1
                assert NOTE.search(cell), f"{heading}: {column} = {cell!r} says nothing of the samples cut"
            if any(column.startswith(STATISTICS[:2]) for column in header):  # a test's row
                assert any(NOTE.search(cell) for cell in row), (heading, row)
    assert walked > 300
    for part in ("## Fog", "## Agent navigators", "## Perception probe", "## Prompt sensitivity"):
        assert part in markdown
    for part in ("### Distractor entries", "### Memory as pictures", "### Memory edits", "(MA)"):
        assert part in markdown
    for line in section(markdown, "## What was found").splitlines():
        if line.startswith("  - "):
            assert "cut by the token limit" in line, line
    detail = next(t for t in tables(markdown) if t[0].startswith("### Table 3 (detail)"))
    header, body = detail[1], detail[2]
    rates = [header.index(c) for c in ("success [95% CI]", "death [95% CI]", "timeout", "cut by a limit")]
    for row in body:
        if row[header.index("episodes")] != "0":
            assert sum(float(row[i].split("%")[0]) for i in rates) == 100.0, row


def test_the_warning_s_link_opens_the_appendix(logs: Path, tmp_path: Path) -> None:
    """report.html opens a folded section when a link to it is followed: the warning
    links to #appendix-cut, whose table is the first <details> after the anchor."""
    report_of(logs, tmp_path)
    page = (tmp_path / "report.html").read_text()
    head, body = page.split("</head>")
    assert "function openTarget()" in head and "'hashchange',openTarget" in head
    assert 'href="#appendix-cut"' in body
    after = body.split('id="appendix-cut"')[1]
    assert after.index("<details>") < after.index("<h2") if "<h2" in after else "<details>" in after
    assert "sample(s) cut short</summary>" in after.split("</details>")[0]


def test_the_study_s_closing_lines_count_the_samples_cut(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A study under a token limit that cuts L3 detection and NoFilter's episodes ends by
    counting them per task kind, with ``--exclude-limited`` and how to rerun them."""
    from spatialstale.study._cli import main

    folder = tmp_path / "study"
    args = ["study", "--model", OBSERVER, "--regimes", "L1,L3", "--modalities", "text", "--n-seeds", "2"]
    args += ["--episodes", "1", "--strategies", "nomemory,nofilter", "--token-limit", str(LIMIT)]
    assert main([*args, "--log-dir", str(folder)]) == 0
    out = capsys.readouterr().out.splitlines()
    [counted] = [line for line in out if line.startswith("study: ") and "cut by" in line]
    assert "2 of 4 detection samples cut by the token limit" in counted
    assert "4 of 8 navigation episodes cut by the token limit" in counted
    assert any(line.endswith(f"report {folder} --exclude-limited") for line in out)
    assert any("higher limit" in line and "inspect eval-retry" in line for line in out)
    assert out[-1].startswith("study complete:")


BROWSER = next(
    (found for name in ("chromium", "chromium-headless-shell", "google-chrome") if (found := shutil.which(name))), None
)


@pytest.mark.skipif(BROWSER is None, reason="needs Chromium (apt-get install -y chromium)")
def test_following_the_link_opens_the_appendix_in_a_browser(logs: Path, tmp_path: Path) -> None:
    """In headless Chromium: report.html#appendix-cut opens the list of samples cut
    short and nothing else; a click on the warning's link does the same; without the
    fragment every table stays folded."""
    assert BROWSER is not None
    report_of(logs, tmp_path)
    page = tmp_path / "report.html"
    click = tmp_path / "click.html"
    script = "<script>setTimeout(function(){document.querySelector('a[href=\"#appendix-cut\"]').click()},100)</script>"
    click.write_text(page.read_text().replace("</body>", script + "</body>"))

    def opened(url: str) -> list[str]:
        args = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=3000", "--dump-dom"]
        dom = subprocess.run([*args, url], capture_output=True, text=True, timeout=120, check=True).stdout
        return re.findall(r"<details open=\"\"><summary>([^<]*)</summary>", dom)

    assert opened(f"{page.as_uri()}#appendix-cut") == ["4 sample(s) cut short"]
    assert opened(click.as_uri()) == ["4 sample(s) cut short"]
    assert opened(page.as_uri()) == []
