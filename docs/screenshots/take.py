"""Screenshots of Inspect's log viewer (and of any HTML page) for the docs.

Regenerates ``docs/screenshots/report-first-screen.png`` (the demo's report, first
screen), ``docs/screenshots/viewer-log-list.png`` (the log list: tags and headline
score of each log) and ``docs/screenshots/viewer-sample.png`` (a detection sample's
transcript: the audit's verdict table with the truth beside each verdict) from a fresh
small run on the reference agents into a temporary log directory:

    .venv/bin/python docs/screenshots/take.py            # all three pictures
    .venv/bin/python docs/screenshots/take.py --html path/to/report.html \\
        --out docs/screenshots/report-first-screen.png   # the first screen of a page

It needs Chromium (``apt-get install -y chromium``) and nothing else beyond the dev
install: ``inspect view`` serves the logs, a headless Chromium renders the viewer (a JS
app, so a plain HTTP fetch shows nothing) and is driven over its DevTools protocol with
aiohttp's websocket client; Pillow crops and shrinks each PNG to at most 200 kB. From
Python, :func:`screenshot_html` takes the first screen of an HTML file and
:func:`viewer_screenshots` the two viewer pictures.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import io
import itertools
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import aiohttp
from PIL import Image

HERE = Path(__file__).resolve().parent
VIEWER_BUSY = ("Syncing data", "Loading")
"""What the viewer shows while it still fetches logs."""
MAX_BYTES = 200_000
"""The largest PNG kept in the repository."""

RUNS: tuple[tuple[str, str, dict[str, object]], ...] = (
    ("detection", "spatialstale/credulous", {"seeds": "4810,1734"}),
    ("detection", "spatialstale/observer", {"seeds": "4810,1734", "modality": "vision"}),
    ("detection", "spatialstale/credulous", {"seeds": "4810,1734", "regime": "L3", "prompt_set": "minimal"}),
    ("navigation", "spatialstale/credulous", {"seeds": "4810,1734", "episodes": 1}),
    (
        "navigation",
        "spatialstale/credulous",
        {"seeds": "4810,1734", "episodes": 1, "strategies": "nofilter,omcd,oracle", "filter": "unknown"},
    ),
)
"""The small runs behind the viewer screenshots: logs that differ by one axis each, so
the Tags column has something to tell apart."""

SAMPLE = "L2-s4810"
"""The detection sample shown: the credulous agent misses every stale entry of it."""


# --- the logs -----------------------------------------------------------------------------


def run_logs(log_dir: Path) -> None:
    """Run :data:`RUNS` into ``log_dir`` (a few seconds on the reference agents)."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval

    from spatialstale.evals.detection import detection
    from spatialstale.evals.navigation import navigation

    tasks: dict[str, Callable[..., Task]] = {"detection": detection, "navigation": navigation}
    for name, model, args in RUNS:
        [log] = inspect_eval(tasks[name](**args), model=model, log_dir=str(log_dir), display="none")
        if log.status != "success":
            raise RuntimeError(f"{name} {args} on {model}: {log.status} {log.error}")


# --- processes ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(url: str, timeout: float = 30.0) -> bytes:
    """The body at ``url`` once it answers."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return bytes(response.read())
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@contextlib.contextmanager
def started(command: Sequence[str]) -> Iterator[subprocess.Popen[bytes]]:
    """``command`` running for the block, then stopped (this process only)."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def viewer(log_dir: Path) -> Iterator[str]:
    """``inspect view`` serving ``log_dir`` for the block; yields its URL."""
    port = free_port()
    inspect = shutil.which("inspect", path=str(Path(sys.executable).parent)) or shutil.which("inspect")
    if inspect is None:
        raise RuntimeError("no `inspect` command: run this with the venv's python")
    command = [inspect, "view", "start", "--log-dir", str(log_dir), "--port", str(port), "--host", "127.0.0.1"]
    with started(command):
        url = f"http://127.0.0.1:{port}/"
        wait_http(url)
        yield url


def chromium_binary() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    raise RuntimeError("no Chromium found: apt-get install -y chromium")


@contextlib.contextmanager
def chromium() -> Iterator[str]:
    """A headless Chromium for the block; yields the websocket URL of its page."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="spatialstale-chromium-") as profile:
        command = [
            chromium_binary(),
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--remote-allow-origins=*",
            f"--remote-debugging-port={port}",
            f"--user-data-dir={profile}",
            "about:blank",
        ]
        with started(command):
            deadline = time.monotonic() + 30
            while True:
                targets = json.loads(wait_http(f"http://127.0.0.1:{port}/json/list"))
                pages = [t for t in targets if t.get("type") == "page"]
                if pages:
                    yield str(pages[0]["webSocketDebuggerUrl"])
                    return
                if time.monotonic() > deadline:
                    raise RuntimeError("Chromium opened no page")
                time.sleep(0.2)


# --- the DevTools protocol ----------------------------------------------------------------


class Page:
    """One Chromium page over the DevTools protocol (only what a screenshot needs)."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        self.socket = socket
        self.ids = itertools.count(1)

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send ``method`` and return its result (events in between are skipped)."""
        number = next(self.ids)
        await self.socket.send_json({"id": number, "method": method, "params": params})
        while True:
            message = await self.socket.receive_json()
            if message.get("id") == number:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))

    async def evaluate(self, expression: str) -> Any:
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return result.get("result", {}).get("value")

    async def open(self, url: str, width: int, height: int) -> None:
        await self.call(
            "Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False
        )
        await self.call("Page.enable")
        await self.call("Page.navigate", url=url)

    async def wait_for_text(self, needles: Sequence[str], busy: Sequence[str] = (), timeout: float = 60.0) -> None:
        """Until the page has loaded, its text holds every needle and none of ``busy``."""
        deadline = time.monotonic() + timeout
        while True:
            state = await self.evaluate("document.readyState")
            text = await self.evaluate("document.body ? document.body.innerText : ''") or ""
            if state == "complete" and all(n in text for n in needles) and not any(b in text for b in busy):
                return
            if time.monotonic() > deadline:
                missing = [n for n in needles if n not in text]
                raise TimeoutError(f"the page never showed {missing}; it shows: {text[:300]!r}")
            await asyncio.sleep(0.3)

    async def widen(self, column: str, pixels: int) -> None:
        """Drag the resize handle of the viewer's ``column`` (its id, ``tags``) ``pixels`` right."""
        box = await self.evaluate(
            f"(() => {{ const h = document.querySelector('[aria-label=\"Resize {column}\"]');"
            " if (!h) return null; const r = h.getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        if box is None:
            raise LookupError(f"the viewer has no column {column!r} to resize")
        x, y = box
        await self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        await self.call("Input.dispatchMouseEvent", type="mousePressed", x=x, y=y, button="left", clickCount=1)
        for step in range(1, 11):
            await self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x + pixels * step / 10, y=y, button="left")
        await self.call(
            "Input.dispatchMouseEvent", type="mouseReleased", x=x + pixels, y=y, button="left", clickCount=1
        )

    async def png(self) -> bytes:
        await asyncio.sleep(0.8)  # let the last layout and fonts settle
        shot = await self.call("Page.captureScreenshot", format="png")
        return base64.b64decode(shot["data"])


async def _shoot(
    socket_url: str,
    url: str,
    width: int,
    height: int,
    needles: Sequence[str],
    scripts: Sequence[str],
    widen: Mapping[str, int],
    busy: Sequence[str],
) -> bytes:
    async with aiohttp.ClientSession() as session, session.ws_connect(socket_url, max_msg_size=0) as ws:
        page = Page(ws)
        await page.open(url, width, height)
        await page.wait_for_text(needles, busy)
        await asyncio.sleep(2)  # the viewer scrolls to an ?event= target after its text is in
        for column, pixels in widen.items():
            await page.widen(column, pixels)
        for script in scripts:
            await page.evaluate(script)
            await asyncio.sleep(0.8)
        return await page.png()


def shoot(
    socket_url: str,
    url: str,
    *,
    width: int = 1400,
    height: int = 900,
    needles: Sequence[str] = (),
    scripts: Sequence[str] = (),
    widen: Mapping[str, int] | None = None,
    busy: Sequence[str] = (),
) -> bytes:
    """A PNG of ``url`` once it has loaded and its text shows ``needles`` and none of
    ``busy``, after widening the viewer's columns (``{"tags": 200}``) and running
    ``scripts`` in turn."""
    return asyncio.run(_shoot(socket_url, url, width, height, needles, scripts, widen or {}, busy))


# --- pictures -----------------------------------------------------------------------------


def save_small(
    png: bytes, out: Path, *, crop: tuple[int, int, int, int] | None = None, max_bytes: int = MAX_BYTES
) -> Path:
    """Crop ``png`` (left, top, right, bottom) and save it as an optimized palette PNG of
    at most ``max_bytes``, shrinking it step by step if it is larger."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    if crop is not None:
        image = image.crop(crop)
    scale = 1.0
    while True:
        size = (round(image.width * scale), round(image.height * scale))
        frame = image if scale == 1.0 else image.resize(size, Image.Resampling.LANCZOS)
        buffer = io.BytesIO()
        frame.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(buffer, format="PNG", optimize=True)
        if buffer.tell() <= max_bytes or scale < 0.3:
            break
        scale *= 0.85
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(buffer.getvalue())
    return out


def screenshot_html(html: Path | str, out: Path | str, *, width: int = 1400, height: int = 900) -> Path:
    """The first screen (``width`` by ``height`` pixels) of an HTML file, as a PNG of at most 200 kB."""
    page = Path(html).resolve()
    if not page.is_file():
        raise FileNotFoundError(page)
    with chromium() as socket_url:
        png = shoot(socket_url, page.as_uri(), width=width, height=height)
    return save_small(png, Path(out))


UNFOLD = """
(() => {
  const summary = [...document.querySelectorAll('strong')].find(s => s.innerText.includes('Against the truth'));
  let el = summary, button = null;
  while (el && !button) {
    el = el.parentElement;
    button = el && [...el.querySelectorAll('button')].find(b => b.innerText.trim() === 'more...');
  }
  if (button) button.click();
  return !!button;
})()
"""
"""Unfold the audit table (the viewer folds a long info event behind "more...")."""

TO_TABLE = """
(() => {
  const summary = [...document.querySelectorAll('strong')].find(s => s.innerText.includes('Against the truth'));
  let el = summary.parentElement;
  while (el && !(el.scrollHeight > el.clientHeight && getComputedStyle(el).overflowY.match(/auto|scroll/))) {
    el = el.parentElement;
  }
  // below the viewer's sticky headers, with the panel's title above the summary
  if (el) el.scrollTop += summary.getBoundingClientRect().top - 190;
  return !!el;
})()
"""
"""Scroll to the audit's summary line (with the panel's title above it)."""


def audit_event(log: Path, sample_id: str) -> str:
    """The id of the first audit table (an info event) of ``sample_id`` in ``log``."""
    from inspect_ai.event import InfoEvent
    from inspect_ai.log import read_eval_log

    for sample in read_eval_log(str(log)).samples or []:
        if sample.id == sample_id:
            return next(e.uuid for e in sample.events if isinstance(e, InfoEvent) and e.source == "audit" and e.uuid)
    raise LookupError(f"no sample {sample_id} in {log}")


def viewer_screenshots(out_dir: Path = HERE, log_dir: Path | None = None) -> list[Path]:
    """``viewer-log-list.png`` and ``viewer-sample.png`` in ``out_dir``, from a fresh
    small run (:data:`RUNS`) into ``log_dir`` (a temporary directory when None; a
    directory that already holds logs of these runs is shown as it is)."""
    with contextlib.ExitStack() as stack:
        if log_dir is None:
            log_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="spatialstale-view-")))
        if not any(log_dir.glob("*.eval")):
            run_logs(log_dir)
        base = stack.enter_context(viewer(log_dir))
        socket_url = stack.enter_context(chromium())
        listing = shoot(
            socket_url,
            base,
            width=1500,
            height=260,
            needles=("navigation", "detection", "B=10"),
            busy=VIEWER_BUSY,
            widen={"tags": 330, "taskArgs": 60},
        )
        task, model, args = RUNS[0]
        detection_log = _log_of(log_dir, task, model, args)
        event = audit_event(detection_log, SAMPLE)
        sample = f"{base}#/logs/{urllib.parse.quote(detection_log.name)}/samples/sample/{SAMPLE}/1/transcript"
        transcript = shoot(
            socket_url,
            f"{sample}?event={event}",
            width=1300,
            height=1300,
            needles=("Against the truth",),
            busy=VIEWER_BUSY,
            scripts=(UNFOLD, TO_TABLE),
        )
    return [
        save_small(listing, out_dir / "viewer-log-list.png"),
        save_small(transcript, out_dir / "viewer-sample.png"),
    ]


def _log_of(log_dir: Path, task: str, model: str, args: dict[str, object]) -> Path:
    """The log of the run of ``task`` on ``model`` with ``args``."""
    from inspect_ai.log import read_eval_log

    for path in sorted(log_dir.glob("*.eval")):
        header = read_eval_log(str(path), header_only=True)
        if (
            header.eval.task.endswith(task)
            and header.eval.model.endswith(model)
            and header.eval.task_args_passed == args
        ):
            return path
    raise FileNotFoundError(f"no {task} log of {model} with {args} in {log_dir}")


def report_screenshot(out_dir: Path = HERE) -> Path:
    """The first screen of the demo's report: ``spatialstale demo`` and ``spatialstale
    report`` into a temporary directory, then :func:`screenshot_html`."""
    bin_dir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(tmp) / "demo"
        subprocess.run([str(bin_dir / "spatialstale"), "demo", "--log-dir", str(logs)], check=True)
        subprocess.run(
            [str(bin_dir / "spatialstale"), "report", str(logs), "--out", str(Path(tmp) / "report")], check=True
        )
        return screenshot_html(Path(tmp) / "report" / "report.html", out_dir / "report-first-screen.png")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, help="screenshot the first screen of this HTML file instead")
    parser.add_argument("--out", type=Path, help="the PNG to write (with --html)")
    parser.add_argument(
        "--log-dir",
        type=Path,
        help="keep the run's logs here, or reuse the logs there (default: a temporary directory)",
    )
    args = parser.parse_args(argv)
    if args.html:
        if not args.out:
            parser.error("--html needs --out")
        written = [screenshot_html(args.html, args.out)]
    else:
        written = [*viewer_screenshots(HERE, args.log_dir), report_screenshot(HERE)]
    for path in written:
        print(f"{path} ({path.stat().st_size // 1000} kB)")


if __name__ == "__main__":
    main()
