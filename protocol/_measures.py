"""The measures a task reports, as pure declarations: a score value that counts
(:class:`Count`), a rate of two sums of them (:class:`Rate`, :class:`Combined`) and a
task's metric over its samples (:class:`TaskMetric`).

``spatialstale.scorers`` declares every task's measures with them (``_rates``); an
extension declares those it adds (``_seams.Scores``), which the scorers list beside the
others, so the docs' table of metrics covers both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SAMPLES = "samples"
"""The count of the samples themselves (1 a sample): the denominator of a share of
samples, such as ``limit_rate`` or navigation's ``success``."""


@dataclass(frozen=True)
class Count:
    """A score value that counts: the unit it counts in, and what one of them is."""

    key: str
    unit: str
    meaning: str


def _total(values: Sequence[Mapping[str, Any]], keys: tuple[str, ...]) -> float:
    total = 0.0
    for value in values:
        for key in keys:
            if key == SAMPLES:
                total += 1
            elif isinstance(value.get(key), int | float) and not math.isnan(value[key]):
                total += float(value[key])
    return total


@dataclass(frozen=True)
class Rate:
    """``numerator / denominator``: each the sum of the score values it names.

    A sample's rate divides its own counts; pooled over samples, the summed counts.
    0/0 is NaN, unless ``clean`` names a count: then 1.0 when that count is 0 too
    (nothing to get wrong at all), else 0.0 (precision and recall's empty-set rule).
    ``bounded`` rates lie in [0, 1] (both sides count one unit, the numerator a part
    of the denominator); the others are means, such as steps per successful episode.
    """

    name: str
    numerator: tuple[str, ...]
    denominator: tuple[str, ...]
    clean: str | None = None
    bounded: bool = True

    def of(self, value: Mapping[str, Any]) -> float:
        """The rate of one sample's score values."""
        return self.over([value])

    def over(self, values: Sequence[Mapping[str, Any]]) -> float:
        """The rate of the samples' summed counts."""
        den = _total(values, self.denominator)
        if den:
            return _total(values, self.numerator) / den
        if self.clean is None:
            return math.nan
        return 1.0 if _total(values, (self.clean,)) == 0 else 0.0

    @property
    def keys(self) -> tuple[str, ...]:
        """Every count it reads."""
        return (*self.numerator, *self.denominator, *((self.clean,) if self.clean else ()))


@dataclass(frozen=True)
class Combined:
    """A value made of two rates: ``f1`` (their harmonic mean, 0.0 when both are 0) or
    ``mean`` (the mean of those that are not NaN; NaN when neither is defined)."""

    name: str
    parts: tuple[Rate, Rate]
    how: str

    def _combine(self, a: float, b: float) -> float:
        if self.how == "f1":
            return 2 * a * b / (a + b) if a + b > 0 else 0.0
        defined = [x for x in (a, b) if not math.isnan(x)]
        return sum(defined) / len(defined) if defined else math.nan

    def of(self, value: Mapping[str, Any]) -> float:
        """The value of one sample's rates."""
        return self._combine(*(part.of(value) for part in self.parts))

    def over(self, values: Sequence[Mapping[str, Any]]) -> float:
        """The value of the rates pooled over the samples."""
        return self._combine(*(part.over(values) for part in self.parts))

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(k for part in self.parts for k in part.keys)


Measure = Rate | Combined

POOLED, MEAN, SD = "pooled", "mean", "sd"


@dataclass(frozen=True)
class TaskMetric:
    """A metric of a task: ``measure`` pooled over the samples' summed counts
    (``pooled``), or the mean (``mean``) or sample standard deviation (``sd``, ddof=1)
    over the samples of each one's value (NaN left out; Inspect's ``mean`` and ``std``).
    ``only`` names the option (or the extension, ``_seams``) that adds it; None: always."""

    name: str
    measure: Measure
    over: str = POOLED
    only: str | None = None
