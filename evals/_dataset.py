"""Samples: one per (regime, seed) for detection and perception, per (regime, seed,
strategy) for navigation, each with the metadata that recomputes its labels."""

from __future__ import annotations

from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample

from spatialstale.env import DEFAULT_SIZE, Instance, make_instance
from spatialstale.protocol import GridSettings, NavigationSettings, extension_instance, extension_instance_metadata


def instance_metadata(instance: Instance) -> dict[str, Any]:
    """Enough of the instance to recompute every label from the log alone."""
    final = instance.final_grid
    return {
        "seed": instance.seed,
        "regime": instance.regime,
        "size": instance.size,
        "n_stale": len(instance.stale_ids(final)),
        "stale_ratio": instance.stale_ratio(final),
        "g0": list(instance.g0),
        "changes": [c.to_dict() for c in instance.changes],
        "schedule": [e.to_dict() for e in instance.schedule],
        "explored": [m.id for m in instance.memory if m.explored],
        # an extension's entries beside the cells' (their ids and texts); nothing in the paper's protocol
        **extension_instance_metadata(instance),
        # what the regime recorded (MA: the other agent's route); nothing for most regimes
        **instance.record,
    }


def _size_part(size: int) -> str:
    return "" if size == DEFAULT_SIZE else f"-n{size}"


def grid_samples(settings: GridSettings, *, task: str) -> MemoryDataset:
    """One sample per (regime, seed): the detection task's (``task``: "Audit the memory
    of") and the perception probe's ("Read the grid of"), with the same ids and
    metadata, so a seed's rows of the two tasks pair up."""
    samples = []
    for regime in settings.regime:
        for seed in settings.seeds:
            instance = extension_instance(make_instance(seed, regime, settings.size), settings.values())
            samples.append(
                Sample(
                    id=f"{regime}{_size_part(settings.size)}{settings.id_suffix()}-s{seed}",
                    input=f"{task} SpatialSTALE instance {regime} seed {seed} ({settings.modality}).",
                    metadata={
                        **instance_metadata(instance),
                        **settings.sample_metadata(),
                        **settings.prompt_record,
                    },
                )
            )
    return MemoryDataset(samples, name=f"spatialstale-{settings.kind}")


def navigation_samples(settings: NavigationSettings) -> MemoryDataset:
    """One sample per (regime, seed, strategy).

    Every axis is recorded in each sample's metadata; only a value away from its
    default is named in the id (``-unknown``, ``-r1``, ``-tools``), so the defaults
    keep the ids of logs written before the axis existed.
    """
    samples = []
    suffix = settings.id_suffix()

    def reach(strategy: str) -> dict[str, int]:
        # the one strategy verify_radius changes records it (the task header does not)
        return {"verify_radius": settings.verify_radius} if strategy == "localverify" else {}

    for regime in settings.regime:
        for seed in settings.seeds:
            instance = extension_instance(make_instance(seed, regime, settings.size), settings.values())
            meta = {**instance_metadata(instance), **settings.sample_metadata()}
            for strategy in settings.strategies:
                samples.append(
                    Sample(
                        id=f"{regime}{_size_part(settings.size)}-{strategy}{suffix}-s{seed}",
                        input=f"Navigate SpatialSTALE instance {regime} seed {seed} with {strategy} "
                        f"({settings.modality}).",
                        metadata={**meta, "strategy": strategy, **reach(strategy), **settings.prompt_record},
                    )
                )
    return MemoryDataset(samples, name="spatialstale-navigation")
