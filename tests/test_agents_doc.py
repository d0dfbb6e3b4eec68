"""docs/agents.md as a user runs it: its ``# my_agents.py`` and ``# my_bridged_agent.py``
blocks written to a scratch directory, then the page's commands on the reference agents
run there as subprocesses, with ``PYTHONPATH=.`` as the page says (a command on a hosted
model is checked to name the same agent, not run: it needs a key)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from tests.test_regimes_doc import FENCE, LINK

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "agents.md"
BIN = Path(sys.executable).parent


def blocks(language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(PAGE.read_text(encoding="utf-8")) if lang == language]


def source(name: str) -> str:
    [found] = [b for b in blocks("python") if b.startswith(f"# {name}\n")]
    return found


def offline_commands(program: str) -> list[list[str]]:
    """The page's ``program`` commands on the reference agents (``inspect eval``,
    ``spatialstale study``) and its reports, as argv."""
    out = []
    for block in blocks("bash"):
        for line in block.replace("\\\n", " ").splitlines():
            offline = "--model" not in line or line.split("--model", 1)[1].split()[0].startswith("spatialstale/")
            if line.removeprefix("PYTHONPATH=. ").startswith(program) and offline:
                argv = shlex.split(line.removeprefix("PYTHONPATH=. "))
                out.append([str(BIN / argv[0]), *argv[1:]])
    return out


@pytest.mark.slow
def test_the_pages_agents_run_as_written(tmp_path: Path) -> None:
    (tmp_path / "my_agents.py").write_text(source("my_agents.py"), encoding="utf-8")
    (tmp_path / "my_bridged_agent.py").write_text(source("my_bridged_agent.py"), encoding="utf-8")
    env = {**{k: v for k, v in os.environ.items() if k != "INSPECT_LOG_DIR"}, "PYTHONPATH": "."}
    commands = offline_commands("inspect eval")
    agents = {arg for c in commands for arg in c if arg.startswith("agent=")}
    assert agents == {"agent=my_agents:scout", "agent=my_bridged_agent:scout"}, commands
    for argv in commands:
        done = subprocess.run(
            [*argv, "--log-dir", "logs", "--display", "none"], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr[-2000:]
    logs = [read_eval_log(info) for info in list_eval_logs(str(tmp_path / "logs"), recursive=False)]
    assert len(logs) == 2
    for log in logs:
        assert log.status == "success"
        agent = str((log.eval.metadata or {})["agent"])
        outcomes = {}
        for sample in log.samples or []:
            assert sample.error is None, sample.error
            [score] = (sample.scores or {}).values()
            outcomes.setdefault(sample.metadata["strategy"], []).append(score.answer)
        # the credulous agent dies on raw memory's stale SAFE claims; OMCD takes them away
        assert "death" in outcomes["nofilter"], (agent, outcomes)
        assert set(outcomes["omcd"]) == {"success"}, (agent, outcomes)
    # the study and its report, and the report's rows the page shows
    for argv in [*offline_commands("spatialstale study"), *offline_commands("spatialstale report")]:
        done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = LINK.sub(r"\1", (tmp_path / "logs" / "agents" / "report" / "report.md").read_text(encoding="utf-8"))
    page = PAGE.read_text(encoding="utf-8")
    shown = [line for line in page.splitlines() if line.startswith("| credulous (auditor observer) |")]
    assert len(shown) == 2 and all(line in report for line in shown), shown


def test_the_page_names_its_agent_in_every_command() -> None:
    for block in blocks("bash"):
        for line in block.replace("\\\n", " ").splitlines():
            if "agent=" in line or "--agents" in line:
                assert line.startswith("PYTHONPATH=. "), line
