"""Regime MA: the other agent's route, its thaws, and what the observation shows of it."""

from __future__ import annotations

import hashlib
import itertools
import json

import pytest

from spatialstale.env import (
    BUILTIN_REGIMES,
    CHANGE_REGIMES,
    REGIMES,
    TRACK_COLOUR,
    Instance,
    OtherAgent,
    cover_tracks,
    default_seeds,
    fog,
    make_instance,
    other_agent_note,
    probe_pixel,
    render_image,
    route_moves,
    route_of,
    text_observation,
)
from spatialstale.env._instance import _make_instance
from spatialstale.env._tracks import MA_LENGTHS

from ._support import has_path, run_python

SEEDS = default_seeds()


def test_ma_is_a_regime_but_not_one_of_the_papers() -> None:
    assert CHANGE_REGIMES == ("L1", "L2", "L3")
    assert BUILTIN_REGIMES["MA"] is OtherAgent
    assert REGIMES == ("none", "L1", "L2", "L3", "MA")


@pytest.mark.parametrize("size", [8, 16])
def test_route_rules(size: int) -> None:
    for seed in SEEDS[:25]:
        instance = make_instance(seed, "MA", size)
        route, g0 = route_of(instance), instance.g0
        assert len(route) - 1 in MA_LENGTHS
        assert len(set(route)) == len(route), "self-avoiding"
        for (r0, c0), (r1, c1) in itertools.pairwise(route):
            assert abs(r0 - r1) + abs(c0 - c1) == 1, "4-connected moves"
        for r, c in route:
            assert g0[r][c] == "F", "only frozen cells"
            assert (r, c) not in ((0, 0), (size - 1, size - 1)), "never S or G"
        thawed = [(c.row, c.col) for c in instance.changes]
        assert thawed == list(route[:-1]), "the thaws are the route minus its last cell, in order"
        assert all(c.before == "F" and c.after == "H" for c in instance.changes)
        assert has_path(instance.initial_grid)
        assert instance.schedule == ()
        assert instance.stale_ids(instance.final_grid) == {instance.entry_at(p).id for p in route[:-1]}


def test_same_g0_and_memory_as_the_other_regimes() -> None:
    for seed in SEEDS[:10]:
        ma, l2 = make_instance(seed, "MA"), make_instance(seed, "L2")
        assert ma.g0 == l2.g0 and ma.memory == l2.memory


def test_determinism_pinned_digest() -> None:
    def digest(seed: int, size: int) -> str:
        return hashlib.sha256(make_instance(seed, "MA", size).to_json().encode()).hexdigest()

    assert digest(4810, 8) == "20552239bf91e87ebbc00fad082213a8cd3ffb53b72d26b04b4af4acb342a2e0"
    assert digest(77, 16) == "99909c93d8dfda7c6d8593bde1616c6c0bd70ea79e2d5a4b10bf240c450d5af9"
    first = make_instance(4810, "MA").to_json()
    _make_instance.cache_clear()
    assert make_instance(4810, "MA").to_json() == first
    code = "from spatialstale.env import make_instance; print(make_instance(4810, 'MA').to_json())"
    result = run_python(code, hash_seed="random")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == first


def test_the_other_regimes_keep_their_bytes() -> None:
    """Pinned before MA existed: no ``route`` key, the same digests."""
    pinned = {
        "L1": "59f823e80518cc08e8233e2090e5555d9857fc7bcdb770c6452c35735833ed1a",
        "L2": "5f84bd70127c4bf91347a642c38c4c1f2e5f32cc3d469aadcf10c31718bbb5fa",
        "L3": "e5589f8fc8608339ee04d7bb1b2fc313c3d9e7ad977f500d1de482309ce40f66",
        "none": "1d899cd9f8c0d95486f74c4a5e6f361c9b3ad3f7b17cfd092f03140ec2ab883a",
    }
    for regime, digest in pinned.items():
        text = make_instance(4810, regime).to_json()
        assert hashlib.sha256(text.encode()).hexdigest() == digest
        assert "route" not in json.loads(text)


def test_round_trip() -> None:
    instance = make_instance(4810, "MA")
    data = json.loads(instance.to_json())
    assert data["route"] == [list(p) for p in route_of(instance)]
    assert Instance.from_dict(data) == instance
    assert route_of(Instance.from_dict(data)) == route_of(instance)


def test_the_observation_covers_every_changed_cell() -> None:
    for seed in SEEDS[:10]:
        instance = make_instance(seed, "MA")
        covered = cover_tracks(instance.initial_grid, route_of(instance))
        listing = text_observation(covered, instance.start)
        image = render_image(covered, instance.start)
        for change in instance.changes:
            assert f"({change.row},{change.col})=?" in listing
            assert image.getpixel(probe_pixel((change.row, change.col))) == TRACK_COLOUR
        end = route_of(instance)[-1]
        assert f"({end[0]},{end[1]})=A" in listing
        assert not any(f"({c.row},{c.col})=H" in listing for c in instance.changes)


def test_the_note_tells_the_moves() -> None:
    route = ((2, 3), (2, 4), (2, 5), (3, 5), (4, 5))
    assert [a.name for a in route_moves(route)] == ["RIGHT", "RIGHT", "DOWN", "DOWN"]
    assert other_agent_note(route) == (
        "Another agent crossed the lake before you: it started at (2,3) and moved RIGHT, RIGHT, DOWN, DOWN, "
        "and now stands at (4,5). Its habit: it breaks the ice of every cell it leaves."
    )


def test_fog_hides_tracks_beyond_the_view() -> None:
    instance = make_instance(4810, "MA")
    seen = cover_tracks(fog(instance.initial_grid, instance.start, 1), route_of(instance))
    assert seen == fog(instance.initial_grid, instance.start, 1) or all(
        max(r, c) <= 1 for r, row in enumerate(seen) for c, x in enumerate(row) if x not in "?SFHG"
    )
    assert "Cells marked ? are beyond your view" in text_observation(seen, instance.start)


def test_stats_reports_ma_beside_the_paper_regimes() -> None:
    result = run_python("", "-m", "spatialstale.env", "stats")
    assert result.returncode == 0, result.stderr
    [row] = [line for line in result.stdout.splitlines() if line.startswith("MA ")]
    assert "0.123 ± 0.023    [0.094, 0.156]    (not in the paper)" in row
