"""Logs of the earlier task versions (detection 2, navigation 4, perception 1: every
system prompt opened with a ``[SpatialSTALE:kind]`` line and carried no tag) read and
report as the current ones: the report keys on no version, hash or prompt line."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.event import ModelEvent
from inspect_ai.log import list_eval_logs, read_eval_log, write_eval_log
from inspect_ai.model import ChatMessageSystem

from spatialstale.evals.detection import VERSION as DETECTION_VERSION
from spatialstale.evals.navigation import VERSION as NAVIGATION_VERSION
from spatialstale.protocol import DEFAULT_PROMPTS, call_kind, prompt_hash
from spatialstale.report import read_logs
from spatialstale.study._cli import main
from tests.report._markdown import report_of

EARLIER = {"detection": 2, "navigation": 4, "perception": 1}
"""The last task versions whose prompts opened with the marker line."""
KINDS = {"detection": ("audit",), "navigation": ("navigate", "audit", "selfverify"), "perception": ("perception",)}


def as_earlier_version(log_dir: Path, out: Path) -> int:
    """Each log of ``log_dir`` rewritten into ``out`` as its earlier version wrote it:
    the header's task version, prompt set version 1 and the hash of the marked texts,
    and every system prompt sent with its marker line and without the tag. Returns the
    number of system prompts rewritten."""
    out.mkdir()
    rewritten = 0
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info)
        task = log.eval.task.rsplit("/", 1)[-1]
        log.eval.task_version = EARLIER[task]
        marked = prompt_hash({kind: f"[SpatialSTALE:{kind}]\n{DEFAULT_PROMPTS[kind]}" for kind in KINDS[task]})
        for sample in log.samples or []:
            for event in sample.events:
                if not isinstance(event, ModelEvent):
                    continue
                kind = call_kind(event.input)
                for message in event.input:
                    if isinstance(message, ChatMessageSystem) and isinstance(message.content, str) and kind:
                        message.content = f"[SpatialSTALE:{kind}]\n{message.content}"
                        message.metadata = None
                        rewritten += 1
        for meta in [log.eval.metadata, *(sample.metadata for sample in log.samples or [])]:
            if meta is not None and "prompt_set_version" in meta:
                meta["prompt_set_version"] = 1
                meta["prompt_hash"] = marked
        write_eval_log(log, str(out / Path(info.name).name))
    return rewritten


@pytest.fixture
def old(l2_study: Path, tmp_path: Path) -> Path:
    """The shared L2 study's logs as the earlier versions wrote them."""
    folder = tmp_path / "old"
    assert as_earlier_version(l2_study, folder) > 0
    versions = {read_eval_log(info, header_only=True).eval.task_version for info in list_eval_logs(str(folder))}
    assert versions == {EARLIER["detection"], EARLIER["navigation"]}
    return folder


def test_logs_of_the_earlier_versions_read_as_the_current_ones(l2_study: Path, old: Path) -> None:
    now, then = read_logs(l2_study), read_logs(old)
    assert not then.problems
    for kind in ("detection", "navigation"):
        current, earlier = getattr(now, kind), getattr(then, kind)
        assert len(earlier) == len(current) > 0
        # the same rows, value for value; only the path of each row's log differs
        assert list(earlier.log.map(lambda p: Path(p).name)) == list(current.log.map(lambda p: Path(p).name))
        pd.testing.assert_frame_equal(earlier.drop(columns="log"), current.drop(columns="log"))
    # the logs' own table differs in where they are, their version and the prompt records only
    same = [c for c in now.logs.columns if c not in ("log", "task_settings", "task_version")]
    pd.testing.assert_frame_equal(then.logs[same], now.logs[same])


@pytest.mark.slow  # two reports with their figures, about 20 s
def test_logs_of_the_earlier_versions_report_as_the_current_ones(l2_study: Path, old: Path, tmp_path: Path) -> None:
    reports = []
    for folder, out in ((l2_study, tmp_path / "now"), (old, tmp_path / "then")):
        assert main(["report", str(folder), "--out", str(out)]) == 0
        markdown = (out / "report.md").read_text().replace(str(folder), "LOGS")
        reports.append(LINK.sub(r"(<\1>)", markdown))
    # the same document, apart from where its logs are
    assert "Table 3" in reports[1] and reports[1] == reports[0]


@pytest.mark.slow
def test_logs_of_two_versions_in_one_folder_are_said_to_be_pooled(l2_study: Path, old: Path, tmp_path: Path) -> None:
    both = tmp_path / "both"
    shutil.copytree(l2_study, both / "now")
    (both / "then").mkdir()
    for info in list_eval_logs(str(old)):
        log = read_eval_log(info)
        log.eval.eval_id += "-then"  # another run, not a copy of the same one (which the report reads once)
        write_eval_log(log, str(both / "then" / Path(info.name).name))
    markdown = report_of(both, tmp_path / "out")
    n = {
        kind: len([i for i in list_eval_logs(str(l2_study)) if kind in i.name]) for kind in ("detection", "navigation")
    }
    d, v = n["detection"], n["navigation"]
    assert f"**Task versions differ:** detection ({d} of version 2, {d} of version {DETECTION_VERSION})" in markdown
    assert f"navigation ({v} of version 4, {v} of version {NAVIGATION_VERSION})" in markdown
    assert "**Task versions differ:**" not in report_of(l2_study, tmp_path / "one")


LINK = re.compile(r"\(<[^>]*/([^/>]+\.eval)>\)")
"""A link to a log, whose folder differs between the two reports."""
