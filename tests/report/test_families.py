"""Holm's families: adding a regime's logs leaves the paper's adjusted p-values alone."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.log import list_eval_logs

from spatialstale.evals import navigation
from spatialstale.report import read_logs
from spatialstale.report._navigation_stats import adjusted_by_regime, strategy_tests
from spatialstale.report._stats import holm
from spatialstale.study import Study
from tests.conftest import SEEDS, run_eval


@pytest.mark.slow  # an MA run beside the shared study; the family rule itself is tested fast below
def test_a_regime_beyond_the_papers_is_a_family_of_its_own(paper_study: Study, tmp_path: Path) -> None:
    both = tmp_path / "both"
    both.mkdir()
    for info in list_eval_logs(paper_study.log_dir):
        shutil.copy(info.name.removeprefix("file://"), both)
    seeds = ",".join(map(str, SEEDS))
    ma = navigation(regime="MA", seeds=seeds, episodes=1)
    run_eval(ma, "spatialstale/credulous", both, model_roles={"auditor": "spatialstale/observer"})

    paper = strategy_tests(read_logs(paper_study.log_dir).navigation)
    together = strategy_tests(read_logs(both).navigation)
    assert set(together.regime) == {*paper.regime, "MA"}
    keys = ["model", "regime", "modality", "a", "b", "metric"]
    alone = paper.set_index(keys).sort_index()
    beside = together[together.regime != "MA"].set_index(keys).sort_index()
    pd.testing.assert_series_equal(beside.p_holm, alone.p_holm)
    ma_tests = together[together.regime == "MA"]
    assert list(ma_tests.p_holm) == holm(list(ma_tests.p))


def test_holm_adjusts_the_papers_regimes_apart_from_the_others() -> None:
    paper = [("L1", 0.01), ("L2", 0.02), ("none", 0.03), ("L3", 0.04)]
    others = [("MA", 0.001), ("MA", 0.002), ("Seasonal", 0.003)]
    table = pd.DataFrame([{"regime": r, "p": p, "seeds": 12} for r, p in [*paper, *others]])
    result = adjusted_by_regime(table)
    assert list(result.index) == list(table.index)
    assert list(result.p_holm[:4]) == holm([p for _, p in paper]) == [0.04, 0.06, 0.06, 0.06]
    assert list(result.p_holm[4:6]) == holm([0.001, 0.002]) and result.p_holm[6] == 0.003
    # one family when only the paper's regimes ran: Holm over all of them, as before
    assert list(adjusted_by_regime(table[:4].copy()).p_holm) == holm([p for _, p in paper])
