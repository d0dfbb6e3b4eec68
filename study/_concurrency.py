"""How much of a study runs at once, and the memory that takes.

Every sample in flight holds its transcript, so the peak memory follows the samples
in flight, not the study's size. A provider serves at most its connections' calls at
once; more samples only wait, holding memory. So unless ``--max-tasks`` is given a
study runs two tasks a model at once (:data:`SAMPLES_PER_CONNECTION`), more when its
tasks are too small to fill that, but no more than Inspect's own ``max(models, 10)``.
The expected peak is :data:`BASE_MB` plus :data:`SAMPLE_MB` a sample in flight,
measured on the paper's matrix (``benchmarks/bench_study_memory.py``).
"""

from __future__ import annotations

import statistics
from math import ceil

from ._matrix import Study

ADAPTIVE_CONNECTIONS = (10, 20, 100)
"""Inspect's adaptive connections per model when ``--max-connections`` is not given
(``inspect_ai.util.AdaptiveConcurrency``: min, start, max; inspect_ai 0.3.285)."""
EVAL_SET_MAX_TASKS = 10
"""``eval_set`` runs ``max(models, 10)`` tasks at once unless ``max_tasks`` is given."""
SAMPLES_PER_CONNECTION = 2
"""Samples in flight a model may keep per connection (two tasks' worth)."""
BASE_MB = 250
"""Resident memory of a study process before its samples: Python, Inspect, the
suite, the model clients, the logs being written."""
SAMPLE_MB = 0.8
"""Resident memory per sample in flight, averaged over the paper's matrix (a
navigation sample's transcript grows with its steps; a detection sample's holds its
images)."""


def connections(study: Study) -> int:
    """The most connections a model of the study uses: ``--max-connections``, else
    the adaptive maximum."""
    given = study.options.get("max_connections")
    return int(given) if given else ADAPTIVE_CONNECTIONS[2]


def sample_limit(study: Study) -> int:
    """The most samples one task runs at once: ``--max-samples``, else Inspect's own
    limit, its model's connections."""
    given = study.options.get("max_samples")
    return int(given) if given else connections(study)


def tasks_at_once(study: Study) -> int:
    """The ``max_tasks`` the study gives its eval set: ``--max-tasks``, else two a model,
    or as many a model as fill :data:`SAMPLES_PER_CONNECTION` x its connections with
    samples (a study of small tasks) up to Inspect's ``max(models, 10)``."""
    given = study.options.get("max_tasks")
    if given:
        return int(given)
    models = len(study.models)
    typical = statistics.median(min(spec.records, sample_limit(study)) for spec in study.tasks)
    filling = models * ceil(SAMPLES_PER_CONNECTION * connections(study) / typical)
    return max(2 * models, min(filling, max(models, EVAL_SET_MAX_TASKS)))


def samples_in_flight(study: Study) -> int:
    """At most this many samples (sample x epoch runs) at once: the largest tasks that
    can run together, each at its sample limit."""
    limit = sample_limit(study)
    sizes = sorted((min(cell.spec.records, limit) for cell in study.cells), reverse=True)
    return sum(sizes[: tasks_at_once(study)])


def expected_peak_mb(study: Study) -> float:
    """The study's expected peak resident memory, in MB (a rule of thumb, see above)."""
    return BASE_MB + SAMPLE_MB * samples_in_flight(study)


def memory_line(study: Study) -> str:
    """The dry run's line on memory: the expected peak, what sets it and what bounds it."""
    tasks, limit = tasks_at_once(study), sample_limit(study)
    if study.options.get("max_samples"):
        each = "--max-samples"
    elif study.options.get("max_connections"):
        each = "its model's connections"
    else:
        each = "its model's connections, Inspect's adaptive maximum"
    given = "--max-tasks" if study.options.get("max_tasks") else "the study's default"
    return (
        f"peak memory: ~{expected_peak_mb(study):,.0f} MB expected (~{BASE_MB} MB + ~{SAMPLE_MB:g} MB a sample "
        f"in flight; up to {_count(samples_in_flight(study), 'sample')} in flight: {_count(tasks, 'task')} at "
        f"once, {given}, each up to {limit}, {each}); --max-tasks, --max-samples and --max-connections bound it"
    )


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}{'' if n == 1 else 's'}"
