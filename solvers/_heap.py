"""Keep Python's cycle collector from pausing a large run.

Inspect keeps every running sample's transcript in memory, and Python's full
(generation 2) collections walk every tracked object, the modules, classes and
registries loaded at start-up included. With 128 samples in flight, those walks
took up to 0.9 s each (9.5 s in a 150 s navigation run); the event loop stands
still meanwhile, so every answered request waits and its connection sits idle.

The first time a task of this suite is made in a process (every import is in place
by then, and no sample has started), :func:`freeze_startup_heap` collects once and
then moves every object alive at that moment into the collector's permanent
generation (:func:`gc.freeze`), so later full collections walk only what the run
creates. Reference counting still frees frozen objects that are released; only a
reference cycle among them would outlive the process's collections. So nothing a run
creates is frozen: freezing at the first sample instead froze the samples already in
flight, whose transcripts (held in reference cycles) then lived as long as the process.
It is done once per process, so objects made later (samples, logs, results) are never
frozen.

Measured by ``python benchmarks/bench_harness.py --sections efficiency`` and
``python benchmarks/bench_study_memory.py``; docs/performance.md quotes the figures.
Set ``SPATIALSTALE_GC_FREEZE=0`` to leave the collector as it was.
"""

from __future__ import annotations

import gc
import os

FREEZE_ENV = "SPATIALSTALE_GC_FREEZE"
"""Set to ``0`` (or ``false``, ``no``, ``off``) to turn the freeze off."""

_OFF = {"0", "false", "no", "off"}

_state = {"frozen": False}


def freeze_startup_heap() -> bool:
    """Collect, then freeze what is alive, once per process; True if it froze now."""
    if _state["frozen"] or os.environ.get(FREEZE_ENV, "1").strip().lower() in _OFF:
        return False
    gc.collect()
    gc.freeze()
    _state["frozen"] = True
    return True
