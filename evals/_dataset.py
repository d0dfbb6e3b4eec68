"""Samples: one per seed (detection) or per (seed, strategy) (navigation)."""

from __future__ import annotations

from typing import Any

from inspect_ai.dataset import Sample

from spatialstale.env import DEFAULT_SIZE, Instance, make_instance


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
    }


def _suffix(size: int) -> str:
    return "" if size == DEFAULT_SIZE else f"-n{size}"


def detection_samples(
    regimes: list[str],
    seeds: list[int],
    size: int,
    modality: str,
    batch_size: int,
    observation: str = "full",
    *,
    task: str = "Audit the memory of",
) -> list[Sample]:
    """One sample per (regime, seed). The perception probe uses these ids and metadata
    too (with its own ``task`` words), so a seed's rows of the two tasks pair up."""
    samples = []
    for regime in regimes:
        for seed in seeds:
            instance = make_instance(seed, regime, size)
            samples.append(
                Sample(
                    id=f"{regime}{_suffix(size)}-s{seed}",
                    input=f"{task} SpatialSTALE instance {regime} seed {seed} ({modality}).",
                    metadata={
                        **instance_metadata(instance),
                        "modality": modality,
                        "batch_size": batch_size,
                        "observation": observation,
                    },
                )
            )
    return samples


def navigation_samples(
    regimes: list[str],
    seeds: list[int],
    size: int,
    modality: str,
    batch_size: int,
    strategies: list[str],
    observation: str = "full",
    filter_mode: str = "delete",
    view_radius: int | None = None,
    agent: str = "prompt",
) -> list[Sample]:
    """One sample per (regime, seed, strategy).

    ``filter_mode`` and ``view_radius`` are recorded in every sample's metadata; only
    a non-default value is named in the id (``-unknown``, ``-r1``), so the defaults
    keep the ids of logs written before them. ``agent`` (the navigator: ``prompt`` or
    ``tools``) is recorded too, and named in the id only when it is ``tools``.
    """
    samples = []
    mode = "" if filter_mode == "delete" else f"-{filter_mode}"
    if view_radius is not None:
        mode += f"-r{view_radius}"
    if agent != "prompt":
        mode += f"-{agent}"
    for regime in regimes:
        for seed in seeds:
            instance = make_instance(seed, regime, size)
            meta = {
                **instance_metadata(instance),
                "modality": modality,
                "batch_size": batch_size,
                "observation": observation,
                "filter": filter_mode,
                "view_radius": view_radius,
                "agent": agent,
            }
            for strategy in strategies:
                samples.append(
                    Sample(
                        id=f"{regime}{_suffix(size)}-{strategy}{mode}-s{seed}",
                        input=f"Navigate SpatialSTALE instance {regime} seed {seed} with {strategy} ({modality}).",
                        metadata={**meta, "strategy": strategy},
                    )
                )
    return samples
