"""Studies, resumes and reports on an ``s3://`` log directory: a local S3-compatible
server (moto's) on 127.0.0.1, two shards run as two processes (as on two hosts) into
one bucket, one of them interrupted and resumed, then one report."""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from spatialstale.study._cli import main
from tests.study.test_study import BASE, SLOW, _last_line, _scores, _start, wait_until_midway

pytestmark = pytest.mark.slow

moto_server = pytest.importorskip("moto.server")
boto3 = pytest.importorskip("boto3")
s3fs = pytest.importorskip("s3fs")

BUCKET = "spatialstale-study"
LINK = re.compile(r"\[((?:[^\[\]]|\[[^\]]*\])*)\]\(<[^>]*>\)")
"""A Markdown link, its text kept (which may hold an interval in brackets: ``[0.9 [0.8, 1.0]](<log>)``)."""


@pytest.fixture(scope="module")
def bucket() -> Iterator[str]:
    """An empty bucket on a fresh local server; the AWS variables point at it only
    while this module's tests run."""
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("AWS_ACCESS_KEY_ID", "testing")
        env.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        env.setenv("AWS_DEFAULT_REGION", "us-east-1")
        env.setenv("AWS_ENDPOINT_URL", f"http://{host}:{port}")
        boto3.client("s3").create_bucket(Bucket=BUCKET)
        try:
            yield f"s3://{BUCKET}"
        finally:
            server.stop()


def _eval_files(url: str) -> list[str]:
    fs = s3fs.S3FileSystem()
    fs.invalidate_cache()
    try:
        return [name for name in fs.ls(url.removeprefix("s3://")) if name.endswith(".eval")]
    except FileNotFoundError:
        return []


def _comparable(markdown: str) -> str:
    """The report without what names the logs (where they are, how many files)."""
    text = LINK.sub(r"\1", markdown)
    text = re.sub(r"^Source: .*$", "", text, flags=re.MULTILINE)
    return re.sub(r"## (?:Appendix: )?[Ll]ogs\n.*?(?=\n## |\Z)", "", text, flags=re.DOTALL)


def test_sharded_study_in_s3_reports_as_the_whole_study(bucket: str, tmp_path: Path) -> None:
    sharded = f"{bucket}/sharded"
    argv = [*BASE, "--n-seeds", "3", "-M", f"delay={SLOW}", "--log-dir", sharded]
    first, second = _start([*argv, "--shard", "1/2"]), _start([*argv, "--shard", "2/2"])
    wait_until_midway(first, sharded)
    first.send_signal(signal.SIGINT)
    output, _ = first.communicate(timeout=300)
    assert first.returncode == 130, output[-3000:]
    last = _last_line(output)
    assert last.startswith("study interrupted (SIGINT): ") and f"in {sharded} (shard 1/2)" in last
    output, _ = second.communicate(timeout=600)
    assert second.returncode == 0, output[-3000:]
    assert _last_line(output).startswith(f"study complete: 3 of 3 task logs in {sharded} (shard 2/2)")

    resume = _start([*argv, "--shard", "1/2"])
    output, _ = resume.communicate(timeout=600)
    assert resume.returncode == 0, output[-3000:]
    assert _last_line(output).startswith(f"study complete: 3 of 3 task logs in {sharded} (shard 1/2)")
    # a resumed shard left its cancelled logs; they are superseded, not missing
    assert len(_eval_files(sharded)) >= 4

    whole = f"{bucket}/whole"
    assert main([*BASE, "--n-seeds", "3", "-M", "delay=0", "--log-dir", whole]) == 0
    assert _scores(sharded) == _scores(whole) and len(_scores(whole)) == 3 + 3 * 2

    for name in ("sharded", "whole"):
        assert main(["report", f"{bucket}/{name}", "--out", str(tmp_path / name)]) == 0
    sharded_md = (tmp_path / "sharded" / "report.md").read_text()
    whole_md = (tmp_path / "whole" / "report.md").read_text()
    assert f"s3://{BUCKET}/sharded/" in sharded_md  # cells link to the logs in the bucket
    assert _comparable(sharded_md) == _comparable(whole_md)
    assert "| observer | text | L1 | 3 (B=10) |" in _comparable(whole_md)
