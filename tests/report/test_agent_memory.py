"""The report's section on the memory an agent keeps, from a real study of the paper's
navigator and the memory navigator on the same seeds (the credulous agent, audited by
the observer): it keeps every lie it was seeded with, repairs none, and each cell reads
back from the logs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

BIN = Path(sys.executable).parent

pytestmark = pytest.mark.slow


def test_the_report_shows_the_lies_kept_beside_the_death_rates(tmp_path: Path) -> None:
    logs = str(tmp_path / "logs")
    study = [str(BIN / "spatialstale"), "study", "--model", "spatialstale/credulous", "--auditor"]
    study += ["spatialstale/observer", "--agents", "prompt,memory", "--n-seeds", "3", "--episodes", "1"]
    study += ["--regimes", "L1,L2", "--strategies", "nofilter,omcd", "--no-detection", "--log-dir", logs]
    done = subprocess.run(study, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = [str(BIN / "spatialstale"), "report", logs, "--out", str(tmp_path / "report")]
    done = subprocess.run(report, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    text = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    section = text[text.index("## Memory the agent keeps") :]
    section = section[: section.index("\n## ", 5)]
    rows = [line for line in section.splitlines() if line.startswith("| credulous")]
    assert len(rows) == 4  # 2 regimes x 2 strategies
    # the seeded entries' fates, against the logs: every stale entry kept, none repaired
    stale: dict[tuple[str, str], int] = {}
    for info in list_eval_logs(logs):
        log = read_eval_log(info)
        for sample in log.samples or []:
            [score] = (sample.scores or {}).values()
            if sample.metadata.get("agent") == "memory":
                assert isinstance(score.value, dict)
                key = (str(sample.metadata["regime"]), str(sample.metadata["strategy"]))
                stale[key] = stale.get(key, 0) + int(score.value["memory_seeded_stale"])
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        regime, strategy = cells[1], cells[3]
        n = stale[(regime, {"NoFilter": "nofilter", "OMCD": "omcd"}[strategy])]
        assert cells[6] == (f"{n}/{n} = 100.0%" if n else "0/0"), row
        assert re.match(rf"0/{n}\b", cells[7]), row
