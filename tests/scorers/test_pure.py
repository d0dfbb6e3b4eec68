import math

from hypothesis import given
from hypothesis import strategies as st

from spatialstale.scorers import Confusion, confusion, detection_breakdown

IDS = [f"mem_{i:03d}" for i in range(64)]


def prf1(predicted: set[str], truth: set[str]) -> tuple[float, float, float]:
    c = confusion(predicted, truth, predicted | truth)
    return c.precision, c.recall, c.f1


def test_prf1_hand_computed() -> None:
    p, r, f = prf1({"a", "b", "c"}, {"b", "c", "d", "e"})
    assert (p, r) == (2 / 3, 2 / 4)
    assert math.isclose(f, 2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))


def test_prf1_empty_set_rules() -> None:
    assert prf1(set(), set()) == (1.0, 1.0, 1.0)
    assert prf1(set(), {"a"}) == (0.0, 0.0, 0.0)
    assert prf1({"a"}, set()) == (0.0, 0.0, 0.0)
    assert prf1({"a"}, {"b"}) == (0.0, 0.0, 0.0)


def test_confusion_ignores_ids_outside_the_universe() -> None:
    c = confusion({"mem_000", "bogus"}, {"mem_000", "mem_001"}, IDS)
    assert c == Confusion(tp=1, fp=0, fn=1, tn=62)


@given(st.sets(st.sampled_from(IDS)), st.sets(st.sampled_from(IDS)))
def test_confusion_partitions_the_universe(predicted: set[str], truth: set[str]) -> None:
    c = confusion(predicted, truth, IDS)
    assert c.tp + c.fp + c.fn + c.tn == len(IDS)
    assert 0.0 <= c.f1 <= 1.0
    assert (c.f1 == 1.0) == (predicted == truth)


def test_pooling_sums_windows_before_f1() -> None:
    # Two L3 windows: F1 of the pooled counts, not the mean of per-window F1s.
    w1 = confusion({"mem_001"}, {"mem_001"}, IDS)
    w2 = confusion({"mem_002"}, {"mem_002", "mem_003", "mem_004"}, IDS)
    total = w1 + w2
    assert (total.tp, total.fp, total.fn) == (2, 0, 2)
    assert math.isclose(total.f1, 2 / 3)
    assert math.isclose((w1.f1 + w2.f1) / 2, 0.75)


def test_detection_breakdown_hand_computed() -> None:
    claims = {"mem_000": "SAFE", "mem_001": "SAFE", "mem_002": "DANGER", "mem_003": "DANGER"}
    # mem_001 thawed (SAFE, now hole), mem_002 froze (DANGER, now safe).
    window = {
        "flagged": ["mem_001", "mem_003"],
        "truth": ["mem_001", "mem_002"],
        "unanswered": ["mem_000"],
        "unknown_ids": ["mem_999"],
        "unparseable": 1,
        "calls": 2,
    }
    b = detection_breakdown([window, window], claims)
    assert b["confusion"] == Confusion(tp=2, fp=2, fn=2, tn=2)
    assert b["thaw"] == (2, 2)
    assert b["freeze"] == (0, 2)
    assert b["flags"] == {
        "SAFE_safe": {"flagged": 0, "total": 2},
        "SAFE_hole": {"flagged": 2, "total": 2},
        "DANGER_safe": {"flagged": 0, "total": 2},
        "DANGER_hole": {"flagged": 2, "total": 2},
    }
    assert (b["unanswered"], b["unknown_ids"], b["unparseable"], b["calls"], b["windows"]) == (2, 2, 2, 4, 2)
