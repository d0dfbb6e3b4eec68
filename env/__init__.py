"""The SpatialSTALE world: seeded dynamic FrozenLake instances, memory and observations.

Pure and seedable; nothing here imports Inspect or knows about models.
"""

import gymnasium

from ._crops import (
    CROP_CELLS,
    CROP_STRIP_PX,
    OUTLINE_COLOUR,
    PAD_COLOUR,
    crop_centre,
    crop_image,
    crop_label_box,
    crop_png,
    entry_crop,
    read_crop,
)
from ._data import DATA_VERSION, load_instances
from ._distractor_bank import BANK_DIR as DISTRACTOR_BANK_DIR
from ._distractor_bank import BANK_VERSION as DISTRACTOR_BANK_VERSION
from ._distractor_bank import MAX_DISTRACTORS, distractor_bank, with_distractor_entries
from ._fog import FOG_CELL, FULL_VIEW, fog, fog_note, in_view, visible_window
from ._grid import (
    apply_changes,
    cell_at,
    changed_cells,
    flip,
    generate_grid,
    greedy_action,
    is_solvable,
    move,
    shortest_path,
)
from ._gym import MAX_STEPS, DynamicFrozenLakeEnv
from ._instance import (
    DEFAULT_SIZE,
    MASTER_SEED,
    N_DEFAULT_SEEDS,
    Instance,
    _make_instance,
    default_seeds,
    make_instance,
    validate_regime,
    validate_seed,
    validate_size,
)
from ._memory import entry_id, entry_text
from ._plugins import BUILTIN_REGIMES, REGIMES, installed_plugins, load_plugin, regime_of, regime_source
from ._plugins import ENTRY_POINT_GROUP as REGIME_ENTRY_POINTS
from ._regime import ChangeRegime, Drawn, Overlay, RegimeError
from ._regimes import CHANGE_REGIMES, STATIC
from ._render import (
    CELL_PX,
    COLOURS,
    FOG_COLOUR,
    FOG_HOLES_NOTE,
    HOLES_NOTE,
    OTHER_AGENT_COLOUR,
    TRACK_COLOUR,
    holes_observation,
    probe_pixel,
    render_image,
    render_png,
    render_rgb,
    text_observation,
)
from ._rng import Stream
from ._tracks import (
    OTHER_AGENT_CELL,
    TRACK_CELLS,
    TRACK_LISTED,
    TRACKS_IMAGE_LEGEND,
    TRACKS_NOTE,
    OtherAgent,
    Tracks,
    cover_tracks,
    has_tracks,
    is_track,
    other_agent_note,
    route_moves,
    route_of,
)
from ._types import Action, Cell, Change, Event, Grid, MemoryEntry, Pos

clear_instance_cache = _make_instance.cache_clear
"""Forget the instances built so far (:func:`make_instance` keeps 4,096): a benchmark's cold start."""

ENV_ID = "spatialstale/DynamicFrozenLake-v0"

if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="spatialstale.env._gym:DynamicFrozenLakeEnv")

__all__ = [
    "BUILTIN_REGIMES",
    "CELL_PX",
    "CHANGE_REGIMES",
    "COLOURS",
    "CROP_CELLS",
    "CROP_STRIP_PX",
    "DATA_VERSION",
    "DEFAULT_SIZE",
    "DISTRACTOR_BANK_DIR",
    "DISTRACTOR_BANK_VERSION",
    "ENV_ID",
    "FOG_CELL",
    "FOG_COLOUR",
    "FOG_HOLES_NOTE",
    "FULL_VIEW",
    "HOLES_NOTE",
    "MASTER_SEED",
    "MAX_DISTRACTORS",
    "MAX_STEPS",
    "N_DEFAULT_SEEDS",
    "OTHER_AGENT_CELL",
    "OTHER_AGENT_COLOUR",
    "OUTLINE_COLOUR",
    "PAD_COLOUR",
    "REGIMES",
    "REGIME_ENTRY_POINTS",
    "STATIC",
    "TRACKS_IMAGE_LEGEND",
    "TRACKS_NOTE",
    "TRACK_CELLS",
    "TRACK_COLOUR",
    "TRACK_LISTED",
    "Action",
    "Cell",
    "Change",
    "ChangeRegime",
    "Drawn",
    "DynamicFrozenLakeEnv",
    "Event",
    "Grid",
    "Instance",
    "MemoryEntry",
    "OtherAgent",
    "Overlay",
    "Pos",
    "RegimeError",
    "Stream",
    "Tracks",
    "apply_changes",
    "cell_at",
    "changed_cells",
    "clear_instance_cache",
    "cover_tracks",
    "crop_centre",
    "crop_image",
    "crop_label_box",
    "crop_png",
    "default_seeds",
    "distractor_bank",
    "entry_crop",
    "entry_id",
    "entry_text",
    "flip",
    "fog",
    "fog_note",
    "generate_grid",
    "greedy_action",
    "has_tracks",
    "holes_observation",
    "in_view",
    "installed_plugins",
    "is_solvable",
    "is_track",
    "load_instances",
    "load_plugin",
    "make_instance",
    "move",
    "other_agent_note",
    "probe_pixel",
    "read_crop",
    "regime_of",
    "regime_source",
    "render_image",
    "render_png",
    "render_rgb",
    "route_moves",
    "route_of",
    "shortest_path",
    "text_observation",
    "validate_regime",
    "validate_seed",
    "validate_size",
    "visible_window",
    "with_distractor_entries",
]
