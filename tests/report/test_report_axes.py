"""The report's fog and tool-using navigator sections, on real navigation runs of the
credulous reference agent: they appear only when the logs hold such runs, their numbers
equal per-sample means computed from the raw logs, and the paper's tables are those
of the paper's cells alone."""

from __future__ import annotations

import re
import shutil
from collections import defaultdict
from pathlib import Path

import pytest
from inspect_ai import eval
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from spatialstale.evals.navigation import navigation
from spatialstale.report import read_logs
from spatialstale.report._load import axis_label, row_axes
from spatialstale.report._navigation_stats import value_order
from spatialstale.report._report import pct, write_report
from tests.conftest import Shared

# one worker runs the module, so its module fixtures' runs are made once
pytestmark = pytest.mark.xdist_group("report_axes")

VIEW = next(a for a in row_axes("navigation") if a.name == "view_radius")


def view_label(value: object) -> str:
    return axis_label(VIEW, value)


CREDULOUS = "spatialstale/credulous"
SEEDS = "4810,1734,4196,2517"
STRATEGIES = "nomemory,nofilter,oracle"
NAMES = {"nomemory": "NoMemory", "nofilter": "NoFilter", "oracle": "Oracle"}
LINK = re.compile(r"\[([^\]]*)\]\(<[^>]*>\)")


@pytest.fixture(scope="module")
def log_dir(shared: Shared) -> Path:
    def make(logs: Path) -> None:
        common = {"regime": "L2", "seeds": SEEDS, "strategies": STRATEGIES, "episodes": 1, "max_steps": 20}
        tasks = [
            navigation(**common),
            navigation(**common, view_radius=1),
            navigation(**common, agent="tools"),
        ]
        done = eval(tasks, model=CREDULOUS, log_dir=str(logs), display="none", log_realtime=False)
        assert all(log.status == "success" for log in done)

    logs = shared("axes", make)
    return logs


@pytest.fixture(scope="module")
def paper_only(log_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same paper-protocol log, alone in a folder."""
    folder = tmp_path_factory.mktemp("paper")
    for log in _logs(log_dir):
        if not {"view_radius", "agent"} & set(log.eval.task_args_passed):
            shutil.copy(log.location.removeprefix("file://"), folder)
    assert len(list_eval_logs(str(folder))) == 1
    return folder


def _logs(folder: Path) -> list[EvalLog]:
    return [read_eval_log(info.name) for info in list_eval_logs(str(folder))]


def _raw_rates(folder: Path) -> dict[tuple[str, str, str], tuple[float, float]]:
    """(view radius, agent, strategy) -> (success, death) means over the sample records."""
    values: dict[tuple[str, str, str], list[tuple[float, float]]] = defaultdict(list)
    for log in _logs(folder):
        for sample in log.samples or []:
            assert sample.scores is not None
            value = sample.scores["episode_outcome"].value
            assert isinstance(value, dict)
            meta = sample.metadata
            key = (view_label(meta.get("view_radius")), str(meta.get("agent") or "prompt"), meta["strategy"])
            values[key].append((float(value["success"]), float(value["death"])))
    return {key: (sum(s for s, _ in v) / len(v), sum(d for _, d in v) / len(v)) for key, v in values.items()}


def _section(markdown: str, heading: str) -> str:
    start = markdown.index(f"\n## {heading}\n")
    end = markdown.find("\n## ", start + 1)
    return markdown[start : end if end >= 0 else None]


def _rows(section: str) -> list[list[str]]:
    """The body rows of every table in ``section``, links reduced to their text."""
    rows = []
    for line in section.splitlines():
        if line.startswith("| ") and not line.startswith("| model"):
            rows.append([cell.strip() for cell in LINK.sub(r"\1", line).strip("|").split(" | ")])
    return rows


@pytest.fixture(scope="module")
def report(log_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("report")
    paths = write_report(read_logs(log_dir), out)
    assert out / "fig11_fog.png" in paths
    return (out / "report.md").read_text(encoding="utf-8")


def test_the_loader_reads_each_runs_view_and_agent(log_dir: Path) -> None:
    nav = read_logs(log_dir).navigation
    assert nav.groupby(["view_radius", "agent"]).size().to_dict() == {
        ("1", "prompt"): 12,
        ("full", "prompt"): 12,
        ("full", "tools"): 12,
    }
    assert view_label(None) == "full" and view_label(2) == "2" and view_label("full") == "full"
    assert value_order(["full", "10", "2", "0"], "view_radius") == ["0", "2", "10", "full"]


def test_the_paper_tables_are_those_of_the_paper_cells_alone(report: str, paper_only: Path, tmp_path: Path) -> None:
    write_report(read_logs(paper_only), tmp_path)
    alone = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert LINK.sub(r"\1", _section(report, "Navigation")) == LINK.sub(r"\1", _section(alone, "Navigation"))
    # and the new sections appear only when the logs hold their runs
    for heading in ("Fog (partial observability)", "Agent navigators"):
        assert f"\n## {heading}\n" in report
        assert f"\n## {heading}\n" not in alone
    assert not (tmp_path / "fig11_fog.png").exists()


def test_the_fog_table_equals_the_raw_logs(report: str, log_dir: Path) -> None:
    raw = _raw_rates(log_dir)
    fog = _section(report, "Fog (partial observability)")
    header = next(line for line in fog.splitlines() if line.startswith("| model"))
    assert header == "| model | regime | strategy | radius 1 SR / Death | full view SR / Death |"
    rows = _rows(fog.split("### ")[0])
    assert [row[2] for row in rows] == list(NAMES.values())
    for row in rows:
        strategy = next(s for s, n in NAMES.items() if n == row[2])
        for cell, radius in zip(row[3:], ("1", "full"), strict=True):
            success, death = raw[(radius, "prompt", strategy)]
            assert cell == f"{pct(success)} / {pct(death)}"


def test_the_upper_bound_sentence_reads_the_raw_logs(report: str, log_dir: Path) -> None:
    raw = _raw_rates(log_dir)
    fog = _section(report, "Fog (partial observability)")
    nomemory = raw[("1", "prompt", "nomemory")][0]
    beaten = [s for s in ("nofilter", "oracle") if raw[("1", "prompt", s)][0] > nomemory]
    assert "In the full view NoMemory is an upper bound on success in 1 of 1" in fog
    if not beaten:
        assert "Under fog NoMemory is still an upper bound in every one of the 1 cells." in fog
        return
    assert "Under fog NoMemory is no longer an upper bound in 1 of 1" in fog
    found = re.search(
        r"radius 1: (\w+) ([\d.]+)% vs NoMemory ([\d.]+)% "
        r"\(at least as often on (\d+) of (\d+) seeds, more often on (\d+)\)",
        fog,
    )
    assert found is not None
    best = next(s for s, n in NAMES.items() if n == found.group(1))
    assert raw[("1", "prompt", best)][0] == max(raw[("1", "prompt", s)][0] for s in ("nofilter", "oracle"))
    assert found.group(2, 3) == (f"{100 * raw[('1', 'prompt', best)][0]:.1f}", f"{100 * nomemory:.1f}")
    # seed by seed (one episode a seed): the best strategy against NoMemory
    per_seed: dict[str, dict[int, float]] = defaultdict(dict)
    for log in _logs(log_dir):
        for sample in log.samples or []:
            if sample.metadata.get("view_radius") == 1 and sample.scores is not None:
                value = sample.scores["episode_outcome"].value
                assert isinstance(value, dict)
                per_seed[sample.metadata["strategy"]][sample.metadata["seed"]] = float(value["success"])
    seeds = sorted(per_seed["nomemory"])
    at_least = sum(per_seed[best][s] >= per_seed["nomemory"][s] for s in seeds)
    more = sum(per_seed[best][s] > per_seed["nomemory"][s] for s in seeds)
    assert found.group(4, 5, 6) == (str(at_least), str(len(seeds)), str(more))


def test_the_tool_agent_table_equals_the_raw_logs(report: str, log_dir: Path) -> None:
    raw = _raw_rates(log_dir)
    rows = _rows(_section(report, "Agent navigators"))
    assert [row[3] for row in rows] == list(NAMES.values())
    for row in rows:
        strategy = next(s for s, n in NAMES.items() if n == row[3])
        prompt, tools = raw[("full", "prompt", strategy)], raw[("full", "tools", strategy)]
        assert row[4] == "4"
        assert row[5] == f"{pct(prompt[0])} / {pct(prompt[1])}"
        assert row[6] == f"{pct(tools[0])} / {pct(tools[1])}"
        assert row[7].startswith(f"{100 * (tools[0] - prompt[0]):+.1f} pp, p=")


def test_a_sweep_section_is_laid_out_from_its_declaration(log_dir: Path, tmp_path: Path) -> None:
    """The fog section is fog's declaration (``ReportSweep``) computed: another
    declaration of the same axis gives the same numbers under its own words and figure."""
    from dataclasses import replace

    from spatialstale.protocol import extension_sweeps
    from spatialstale.report._document import Links, environment
    from spatialstale.report._sections_beyond import sweep

    [fog] = extension_sweeps()
    ours = replace(
        fog,
        title="Less in sight",
        value="k = {}",
        paper="whole grid",
        unit="k",
        away="with less in sight",
        column="sight",
        figure=("fig99_sight.png", "Fig. 99: sight", "Fig. 99", "k"),
    )
    nav = read_logs(log_dir).navigation
    theirs, mine = (sweep(spec, nav, tmp_path, Links(str(log_dir), tmp_path)) for spec in (fog, ours))
    assert (tmp_path / "fig99_sight.png").is_file() and (tmp_path / "fig11_fog.png").is_file()
    [(_, table)] = mine["tables"]  # type: ignore[misc]
    [(_, fog_table)] = theirs["tables"]  # type: ignore[misc]
    assert table.header == ["model", "regime", "strategy", "k = 1 SR / Death", "whole grid SR / Death"]
    assert table.rows == fog_table.rows
    assert str(mine["upper_bound"]).startswith("In the whole grid NoMemory is an upper bound on success in 1 of 1")
    assert "With less in sight NoMemory" in str(mine["upper_bound"])
    page = environment().get_template("sweep.md.j2").render(sweep=mine, method={"wilcoxon": "W"}, alpha=0.05)
    assert page.startswith("## Less in sight\n") and "### Paired tests between strategies at each k\n" in page
