"""Clean up after the llama.cpp launcher, however it exits (run as a script, standard library only).

The launcher starts this script in a session of its own (so a terminal's SIGHUP or
Ctrl-C does not reach it) with a pipe on its stdin that only the launcher holds. The
script creates the launcher's scratch folder and prints its path; the launcher then
writes the process group id of each server it starts, one per line. When the pipe
closes, because the launcher finished or because it died, even by SIGKILL, the script
stops those process groups (SIGTERM, then SIGKILL after a grace period) and removes
the scratch folder. A launcher that finishes normally has stopped its servers already:
then only the folder is left to remove.

Usage: ``python -I _llama_watchdog.py [PREFIX [GRACE_SECONDS]]``.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import time

GRACE_SECONDS = 5.0
"""How long a server's process group has to exit after SIGTERM before SIGKILL."""


def _signal_group(pgid: int, signum: int) -> bool:
    """Send ``signum`` to process group ``pgid``; False when the group is gone."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:  # not ours any more: leave it alone
        return False
    return True


def stop_groups(pgids: list[int], grace: float = GRACE_SECONDS) -> None:
    """SIGTERM each process group, then SIGKILL what is left after ``grace`` seconds."""
    left = [pgid for pgid in pgids if _signal_group(pgid, signal.SIGTERM)]
    deadline = time.monotonic() + grace
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [pgid for pgid in left if _signal_group(pgid, 0)]
    for pgid in left:
        _signal_group(pgid, signal.SIGKILL)


def main(argv: list[str]) -> int:
    # belt and braces: the launcher starts us in our own session already
    for signum in (signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, signal.SIG_IGN)
    prefix = argv[1] if len(argv) > 1 else "spatialstale-llama-"
    grace = float(argv[2]) if len(argv) > 2 else GRACE_SECONDS
    scratch = tempfile.mkdtemp(prefix=prefix)
    try:
        print(scratch, flush=True)
        pgids = [int(line) for line in sys.stdin if line.strip()]  # until the launcher's end closes
        stop_groups(pgids, grace)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
