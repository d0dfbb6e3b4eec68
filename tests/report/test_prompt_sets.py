"""The prompt-sensitivity tables: on a small real run of the reference agents under two
prompt sets (read back by ``read_logs``), and on hand-built frames whose differences
are known."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai import eval

from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.report import ALPHA, Results, read_logs
from spatialstale.report._prompt_sets import (
    SUMMARY_COLUMNS,
    TEST_COLUMNS,
    contrast_robustness,
    prompt_set_summary,
    prompt_set_tests,
    sensitivity_table,
)
from tests.conftest import Shared
from tests.report._markdown import episode

# one worker runs the module, so its module fixtures' runs are made once
pytestmark = pytest.mark.xdist_group("prompt_sets")

SEEDS = "4810,1734,4196,2517"
SETS = ("default", "warned")
OBSERVER, CREDULOUS = "spatialstale/observer", "spatialstale/credulous"
STRATEGIES = "nomemory,nofilter,omcd"


@pytest.fixture(scope="module")
def results(shared: Shared) -> Results:
    def make(log_dir: Path) -> None:
        for prompt_set in SETS:
            tasks = [
                detection(regime="L2", seeds=SEEDS, prompt_set=prompt_set),
                navigation(regime="L2", seeds=SEEDS, episodes=1, strategies=STRATEGIES, prompt_set=prompt_set),
            ]
            for model in (OBSERVER, CREDULOUS):
                logs = eval(tasks, model=model, log_dir=str(log_dir), display="none", log_realtime=False)
                assert all(log.status == "success" for log in logs)

    return read_logs(shared("prompt-sets", make))


def test_runs_under_two_sets_are_two_sets_of_rows_not_reruns(results: Results) -> None:
    det, nav = results.detection, results.navigation
    assert det.groupby(["model", "prompt_set"]).size().to_dict() == {
        (model, s): 4 for model in (CREDULOUS, OBSERVER) for s in SETS
    }
    assert nav.groupby(["model", "prompt_set"]).size().to_dict() == {
        (model, s): 4 * 3 for model in (CREDULOUS, OBSERVER) for s in SETS
    }


def test_the_summary_has_f1_and_each_strategys_rates_under_each_set(results: Results) -> None:
    summary = prompt_set_summary(results.detection, results.navigation)
    assert list(summary.columns) == list(SUMMARY_COLUMNS)
    assert set(summary.prompt_set) == set(SETS) and (summary.seeds == 4).all()
    observer = summary[summary.model == OBSERVER].set_index(["strategy", "metric", "prompt_set"])["mean"]
    for prompt_set in SETS:
        assert observer[("detection", "f1", prompt_set)] == 1.0
        assert observer[("nofilter", "success", prompt_set)] == 1.0
    credulous = summary[summary.model == CREDULOUS]
    assert set(zip(credulous.strategy, credulous.metric, strict=True)) == {
        ("detection", "f1"),
        *((s, m) for s in STRATEGIES.split(",") for m in ("success", "death")),
    }
    # the first rows of a model are its detection F1, default before warned
    first = summary[summary.model == CREDULOUS].iloc[:2]
    assert list(first.strategy) == ["detection", "detection"] and list(first.prompt_set) == list(SETS)


def test_the_reference_agents_do_not_move_with_the_wording(results: Results) -> None:
    # they read the call kind by its tag and the grid by listing, so every paired
    # difference is exactly zero and no test can reject
    tests = prompt_set_tests(results.detection, results.navigation)
    assert list(tests.columns) == list(TEST_COLUMNS)
    assert len(tests) == 2 * (1 + 3 * 2)
    assert (tests.baseline == "default").all() and (tests.prompt_set == "warned").all()
    assert (tests.seeds == 4).all() and (tests.nonzero == 0).all() and (tests.difference == 0).all()
    assert (tests.p == 1.0).all() and not tests.significant.any()
    success = tests[tests.metric == "success"]
    assert (success.mcnemar_pairs == 4).all() and (success.only_set == 0).all() and (success.mcnemar_p == 1.0).all()
    assert tests[tests.metric != "success"].mcnemar_p.isna().all()


def test_the_sensitivity_table_puts_each_set_in_a_column_with_its_change(results: Results) -> None:
    table = sensitivity_table(results.detection, results.navigation)
    assert list(table.columns) == [
        "model",
        "regime",
        "modality",
        "strategy",
        "metric",
        "default",
        "warned",
        "warned Δ",
        "warned p_holm",
    ]
    f1 = table[table.strategy == "detection"].set_index("model")
    assert f1.loc[OBSERVER, "default"] == f1.loc[OBSERVER, "warned"] == 1.0
    assert (table["warned Δ"] == 0).all()


def test_credulous_nofilter_dies_more_than_nomemory_under_both_sets(results: Results) -> None:
    robust = contrast_robustness(results.navigation)
    row = robust[(robust.model == CREDULOUS) & (robust.a == "nofilter") & (robust.b == "nomemory")]
    death = row[row.metric == "death"].iloc[0]
    assert death["sets"] == "default,warned"
    assert death["default Δ"] > 0 and death["warned Δ"] == death["default Δ"]
    assert death["same_direction"]
    # four seeds cannot reach the paper's alpha, so nothing is shown to hold
    assert death["significant_under"] == "" and not death["holds_under_every_set"]


def _navigation(rates: dict[tuple[str, str], list[int]], seeds: int) -> pd.DataFrame:
    """One episode per seed; ``rates[(set, strategy)]`` lists each seed's death (0/1)."""
    rows = []
    for (prompt_set, strategy), deaths in rates.items():
        assert len(deaths) == seeds
        for seed, death in enumerate(deaths):
            rows.append(episode(seed, strategy, 1 - death, prompt_set=prompt_set))
    return pd.DataFrame(rows)


def _detection(f1: dict[str, list[float]]) -> pd.DataFrame:
    rows = [
        {"model": "m", "regime": "L2", "modality": "text", "batch_size": 10, "seed": seed, "f1": v, "prompt_set": s}
        for s, values in f1.items()
        for seed, v in enumerate(values)
    ]
    return pd.DataFrame(rows)


def test_a_wording_that_halves_deaths_is_found_and_the_contrast_holds_only_where_it_should() -> None:
    n = 16
    nav = _navigation(
        {
            ("default", "nofilter"): [1] * n,
            ("default", "nomemory"): [0] * n,
            ("warned", "nofilter"): [1] * (n // 2) + [0] * (n // 2),
            ("warned", "nomemory"): [0] * n,
        },
        n,
    )
    det = _detection({"default": [0.5] * n, "no_rule": [0.5 - 0.01 * (i + 1) for i in range(n)]})
    tests = prompt_set_tests(det, nav).set_index(["strategy", "metric", "prompt_set"])
    warned_death = tests.loc[("nofilter", "death", "warned")]
    assert warned_death.difference == -0.5 and warned_death.nonzero == n // 2
    success = tests.loc[("nofilter", "success", "warned")]
    assert (success.only_set, success.only_baseline, success.mcnemar_pairs) == (n // 2, 0, n)
    assert success.mcnemar_p == pytest.approx(2 * 0.5 ** (n // 2))
    f1 = tests.loc[("detection", "f1", "no_rule")]
    assert f1.difference == pytest.approx(-0.085) and f1.nonzero == n and f1.p < ALPHA
    assert f1.p_holm >= f1.p and f1.significant
    assert tests.loc[("nomemory", "death", "warned")].p == 1.0

    robust = contrast_robustness(nav).set_index(["a", "b", "metric"])
    death = robust.loc[("nofilter", "nomemory", "death")]
    assert (death["default Δ"], death["warned Δ"]) == (1.0, 0.5)
    assert death["same_direction"] and death["significant_under"] == "default"
    assert not death["holds_under_every_set"]  # eight seeds' worth of deaths under warned cannot reach alpha

    table = sensitivity_table(det, nav).set_index(["strategy", "metric"])
    assert list(table.columns[3:]) == [
        "default",
        "no_rule",
        "warned",
        "no_rule Δ",
        "no_rule p_holm",
        "warned Δ",
        "warned p_holm",
    ]
    assert table.loc[("nofilter", "death"), "warned"] == 0.5
    assert math.isnan(table.loc[("nofilter", "death"), "no_rule"])  # no_rule ran detection only
    assert math.isnan(table.loc[("detection", "f1"), "warned Δ"])


def test_a_contrast_that_holds_under_every_set_is_marked() -> None:
    n = 16
    nav = _navigation(
        {(s, strategy): [int(strategy == "nofilter")] * n for s in SETS for strategy in ("nofilter", "nomemory")},
        n,
    )
    robust = contrast_robustness(nav).set_index(["a", "b", "metric"])
    death = robust.loc[("nofilter", "nomemory", "death")]
    assert death["significant_under"] == "default,warned" and death["holds_under_every_set"]
    single = contrast_robustness(nav[nav.prompt_set == "default"]).set_index(["a", "b", "metric"])
    assert not single.loc[("nofilter", "nomemory", "death"), "holds_under_every_set"]


def test_empty_frames_give_empty_tables_with_their_columns() -> None:
    empty = pd.DataFrame()
    assert list(prompt_set_summary(empty, empty).columns) == list(SUMMARY_COLUMNS)
    assert list(prompt_set_tests(empty, empty).columns) == list(TEST_COLUMNS)
    assert prompt_set_summary(empty, empty).empty and contrast_robustness(empty).empty
    assert sensitivity_table(empty, empty).empty


def test_the_report_shows_the_default_set_in_the_paper_tables_and_compares_the_sets(
    results: Results, tmp_path: Path
) -> None:
    from spatialstale.report._report import write_report

    write_report(results, tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert "runs under the prompt set `default`" in md
    section = md[md.index("## Prompt sensitivity") : md.index("## Method")]
    header = next(line for line in section.splitlines() if line.startswith("| model |"))
    assert "`default`" in header and "`warned`" in header and "`warned` Δ" in header
    # detection F1 and each strategy's success and death, per model
    rows = [line for line in section.splitlines() if line.startswith(("| observer", "| credulous"))]
    assert len(rows) == 2 * (1 + 2 * len(STRATEGIES.split(",")))
    f1 = next(r for r in rows if r.startswith("| observer") and "| F1 |" in r)
    cells = [c.strip() for c in f1.strip("|").split("|")]
    assert cells[4:7] == ["1.000", "1.000", "+0.000"]  # 1.0 under both sets, no change
    # the paper's tables read the default set only: one Table 3 row per strategy, not two
    table3 = md[md.index("## Navigation") : md.index("## Detection")] if "## Detection" in md else md
    assert table3.count("| credulous | L2 | text | nofilter") <= 1


def test_a_study_under_one_other_set_reports_that_set(tmp_path: Path) -> None:
    from spatialstale.report._report import write_report

    eval(detection(regime="L2", seeds=SEEDS, prompt_set="minimal"), model=OBSERVER, log_dir=str(tmp_path / "logs"))
    results = read_logs(tmp_path / "logs")
    write_report(results, tmp_path / "out")
    md = (tmp_path / "out" / "report.md").read_text()
    assert "runs under the prompt set `minimal`" in md and "## Prompt sensitivity" not in md
    assert "1.000" in md[md.index("## Detection") :]
