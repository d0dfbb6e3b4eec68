"""The change-regime interface: the built-ins behind it, plug-ins by ``module:Class``,
their streams, records and hooks, and the rules every plug-in's draw is held to."""

from __future__ import annotations

import json
import re

import pytest

from spatialstale.env import (
    BUILTIN_REGIMES,
    REGIMES,
    Cell,
    Change,
    ChangeRegime,
    Drawn,
    Event,
    Grid,
    Instance,
    OtherAgent,
    RegimeError,
    Stream,
    apply_changes,
    default_seeds,
    flip,
    is_solvable,
    make_instance,
    regime_of,
    validate_regime,
)
from spatialstale.env._plugins import regime_stream

from ._support import has_path, run_python

HERE = __name__
SEEDS = default_seeds()[:20]


class EnvBand(ChangeRegime):
    """Thaws some of the ice of a band of two rows before the episode."""

    name = "EnvBand"

    def draw(self, g0: Grid, rng: Stream) -> Drawn:
        n = len(g0)
        while True:
            top = rng.below(n - 1)
            ice = [(r, c) for r in (top, top + 1) for c in range(n) if g0[r][c] == Cell.FROZEN]
            changes = tuple(flip(g0, p) for p in ice if rng.chance(0.5))
            if changes and is_solvable(apply_changes(g0, changes)):
                return Drawn(changes=changes)


class EnvLate(ChangeRegime):
    """One event after step 3 (two ice cells thaw), recorded as ``spring``."""

    name = "EnvLate"

    def draw(self, g0: Grid, rng: Stream) -> Drawn:
        ice = [(r, c) for r, row in enumerate(g0) for c, cell in enumerate(row) if cell == Cell.FROZEN]
        while True:
            a, b = rng.choice(ice), rng.choice(ice)
            changes = (flip(g0, a), flip(g0, b))
            if a != b and is_solvable(apply_changes(g0, changes)):
                return Drawn(schedule=(Event(3, changes),), record={"spring": [3, (a[0], a[1])]})


def bad(drawn: Drawn) -> type[ChangeRegime]:
    """A regime that always draws ``drawn``."""

    class Bad(ChangeRegime):
        name = "EnvBad"

        def draw(self, g0: Grid, rng: Stream) -> Drawn:
            return drawn

    return Bad


def test_the_builtins_are_a_registry_in_the_papers_order() -> None:
    assert REGIMES == ("none", "L1", "L2", "L3", "MA")
    assert tuple(BUILTIN_REGIMES) == REGIMES
    assert all(issubclass(cls, ChangeRegime) and cls.name == name for name, cls in BUILTIN_REGIMES.items())
    assert isinstance(regime_of("MA"), OtherAgent)


def test_an_instance_is_the_regimes_draw() -> None:
    """The core builds every instance from its regime's draw, from the regime's own stream."""
    for regime in ("L1", "L2", "L3", "MA"):
        for seed in SEEDS[:5]:
            instance = make_instance(seed, regime)
            assert instance.drawn == regime_of(regime).draw(instance.g0, regime_stream(seed, 8, regime))


def test_a_plugin_is_resolved_by_module_and_class_then_by_its_name() -> None:
    assert validate_regime(f"{HERE}:EnvBand") == "EnvBand"
    assert validate_regime("envband") == "EnvBand"  # once resolved, any case, as the built-ins
    for seed in SEEDS:
        instance = make_instance(seed, "EnvBand")
        assert instance.id == f"EnvBand-s{seed}"
        assert instance.g0 == make_instance(seed, "L2").g0 and instance.memory == make_instance(seed, "L2").memory
        rows = {c.row for c in instance.changes}
        assert len(rows) <= 2 and max(rows) - min(rows) <= 1
        assert all(c.kind == "thaw" for c in instance.changes) and has_path(instance.initial_grid)
        assert instance.schedule == () and instance.record == {}
        assert regime_of("EnvBand").windows(instance.drawn) == (0,)
        assert json.loads(instance.to_json()).keys() == json.loads(make_instance(seed, "L2").to_json()).keys()


def test_a_plugins_stream_is_keyed_by_its_name_on_every_machine() -> None:
    def words(stream: Stream) -> list[int]:
        return [stream.below(10**9) for _ in range(4)]

    # pinned: the first draws of a plug-in named Seasonal (docs/regimes.md) at seed 4810, n = 8
    seasonal = Stream.named(4810, 8, "Seasonal")
    assert [seasonal.below(1000) for _ in range(5)] == [270, 330, 501, 903, 565]
    assert words(Stream.named(4810, 8, "Seasonal")) != words(Stream.named(4810, 8, "Seasonal2"))
    assert words(Stream.named(4810, 8, "L2")) != words(Stream(4810, 8, "L2"))
    code = (
        f"from spatialstale.env import make_instance, validate_regime; validate_regime('{HERE}:EnvBand'); "
        "print(make_instance(4810, 'EnvBand').to_json())"
    )
    result = run_python(code, hash_seed="random")
    assert result.returncode == 0, result.stderr
    validate_regime(f"{HERE}:EnvBand")  # registered here too, whatever ran before
    assert result.stdout.strip() == make_instance(4810, "EnvBand").to_json()


def test_a_schedule_and_a_record_round_trip() -> None:
    validate_regime(f"{HERE}:EnvLate")
    instance = make_instance(4810, "EnvLate")
    [event] = instance.schedule
    assert event.step == 3 and instance.changes == ()
    # the record is kept as plain JSON: the tuple became a list
    assert instance.record == {"spring": [3, list(event.changes[0].pos)]}
    data = json.loads(instance.to_json())
    assert data["spring"] == instance.record["spring"]
    assert Instance.from_dict(data) == instance
    assert regime_of("EnvLate").windows(instance.drawn) == (3,)  # nothing stale at the start
    assert instance.grid_after(2) == instance.g0 and instance.grid_after(3) == instance.final_grid


@pytest.mark.parametrize(
    ("drawn", "message"),
    [
        (Drawn(changes=(Change(0, 0, Cell.FROZEN, Cell.HOLE),)), r"changes \(0,0\), which is S or G"),
        (Drawn(changes=(Change(7, 7, Cell.FROZEN, Cell.HOLE),)), r"changes \(7,7\), which is S or G"),
        (Drawn(changes=(Change(8, 1, Cell.FROZEN, Cell.HOLE),)), r"changes \(8,1\), off the 8x8 grid"),
        (Drawn(changes=(Change(0, 1, Cell.FROZEN, Cell.FROZEN),)), r"from F to F: a change flips F and H"),
        (Drawn(changes=(Change(0, 1, Cell.HOLE, Cell.FROZEN),)), r"changes \(0,1\) from H, but it is F then"),
        (Drawn(schedule=(Event(0, ()),)), r"schedules an event at step 0: steps are integers from 1, increasing"),
        (Drawn(schedule=(Event(5, ()), Event(5, ()))), r"event at step 5: steps are integers from 1"),
        (Drawn(changes=[]), r"gave pre-episode changes that are not a tuple of spatialstale.env.Change"),  # type: ignore[arg-type]
        (Drawn(record={"seed": 1}), r"records seed: keys of its own, other than changes, g0, memory"),
        (Drawn(record={"when": {1, 2}}), r"gave a record that is not plain JSON"),
        ("not a draw", r"must return a spatialstale.env.Drawn; got str"),
    ],
)
def test_a_draw_that_breaks_the_rules_fails_with_one_line(drawn: Drawn, message: str) -> None:
    from spatialstale.env._regime import checked

    g0 = make_instance(4810, "none").g0
    assert g0[0][1] == "F"
    with pytest.raises(RegimeError, match=message) as error:
        checked(bad(drawn)(), drawn, g0, "seed 4810, n=8")
    assert str(error.value).startswith("regime EnvBad: its draw ") and str(error.value).endswith("(seed 4810, n=8)")
    assert "\n" not in str(error.value)


def test_a_draw_that_blocks_every_path_fails() -> None:
    from spatialstale.env._regime import checked

    g0 = make_instance(4810, "none").g0
    thaw_all = Drawn(changes=tuple(flip(g0, (r, c)) for r, row in enumerate(g0) for c, x in enumerate(row) if x == "F"))
    with pytest.raises(RegimeError, match="leaves no path from S to G after its pre-episode changes"):
        checked(bad(thaw_all)(), thaw_all, g0, "here")
    blocked = Drawn(schedule=(Event(4, thaw_all.changes),))
    with pytest.raises(RegimeError, match="leaves no path from S to G after its event at step 4"):
        checked(bad(blocked)(), blocked, g0, "here")


class EnvRaises(ChangeRegime):
    name = "EnvRaises"

    def draw(self, g0: Grid, rng: Stream) -> Drawn:
        raise ZeroDivisionError("spring\nnever came")


class EnvAbstract(ChangeRegime):
    name = "EnvAbstract"


class EnvClash(EnvBand):
    name = "l3"


class EnvTwin(EnvBand):
    name = "EnvBand"


class EnvNeedsArgs(EnvBand):
    name = "EnvNeedsArgs"

    def __init__(self, k: int) -> None:
        self.k = k


class EnvNotARegime:
    name = "EnvNotARegime"

    def draw(self, g0: Grid, rng: Stream) -> Drawn:
        return Drawn()


class EnvBadName(EnvBand):
    name = "Env-Bad"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("ss_no_such_regimes:Band", "regime: plug-in 'ss_no_such_regimes:Band' cannot be imported: ModuleNotFound"),
        (f"{HERE}:Missing", f"regime: plug-in '{HERE}:Missing' not found: module '{HERE}' has no 'Missing'"),
        (f"{HERE}:bad", "is not a class; got function"),
        (f"{HERE}:EnvNotARegime", "is not a change regime: subclass spatialstale.env.ChangeRegime"),
        (f"{HERE}:EnvAbstract", "does not implement draw(self, g0, rng)"),
        (f"{HERE}:EnvClash", "is named 'l3', a built-in regime's name; give it another name"),
        (f"{HERE}:EnvTwin", f"is named 'EnvBand', as the regime {HERE}:EnvBand is; give it another name"),
        (f"{HERE}:EnvNeedsArgs", "cannot be constructed with no arguments: TypeError"),
        (f"{HERE}:EnvBadName", "needs a class attribute name of letters, digits and underscores"),
        ("Spring", "regime must be one of L1, L2, L3, MA (or none), an installed plug-in's name or module:Class"),
    ],
)
def test_a_bad_plugin_fails_with_one_line(spec: str, message: str) -> None:
    validate_regime(f"{HERE}:EnvBand")  # resolved first, for the twin
    with pytest.raises(RegimeError, match=re.escape(message)) as error:
        validate_regime(spec)
    assert "\n" not in str(error.value)


def test_a_draw_that_raises_names_the_regime_the_seed_and_the_size() -> None:
    validate_regime(f"{HERE}:EnvRaises")
    with pytest.raises(RegimeError) as error:
        make_instance(4810, "EnvRaises", 6)
    assert str(error.value) == "regime EnvRaises: its draw raised ZeroDivisionError: spring never came (seed 4810, n=6)"
