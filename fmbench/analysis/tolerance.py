"""The practical threshold, and the verdict a compared figure's interval allows (publishing rules §10).

A verdict never says more than the interval:

- **better** / **worse**: the interval lies beyond zero (it excludes zero) **and** the point estimate lies beyond
  the practical threshold, read with the figure's better direction (as asv's ``--factor`` does);
- **within tolerance**: the whole interval lies inside ±threshold, its bounds included: an equivalence statement
  (two one-sided tests at the interval's level), never a point estimate's;
- **inconclusive**: anything else. The interval holds zero and reaches past the threshold, or it excludes zero
  with the point inside the threshold but a bound past it: the runs cannot tell a change of the threshold's size
  from none, so the figure carries its smallest detectable change and what would narrow it
  (:mod:`fmbench.analysis.detectable`). Nothing inconclusive is called unchanged.

The threshold is relative for latency, throughput and memory (5 % of the baseline by default; the interval is read
relative to the baseline too) and in percentage points for rates (5 by default). The project file sets the
thresholds under ``[publishing.practical_change]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from fmbench.analysis.stats import Interval

Verdict = Literal["better", "worse", "within tolerance", "inconclusive"]

VERDICT_MEANINGS: dict[str, str] = {
    "better": "the interval lies beyond zero and the change passes the practical threshold, in the better direction",
    "worse": "the interval lies beyond zero and the change passes the practical threshold, in the worse direction",
    "within tolerance": "the whole interval lies inside the practical threshold: any change is smaller than it",
    "inconclusive": "the interval reaches past the practical threshold without lying beyond zero and the threshold: "
                    "these runs cannot tell a change of that size from none",
}
"""Each verdict in a reader's words, as the methodology page and ``compare --json`` state them."""


class _Setting(Protocol):
    latency: float
    throughput: float
    memory: float
    rates: float


@dataclass(frozen=True)
class Tolerance:
    latency: float = 0.05
    """Relative, for times (TTFT, duration)."""
    throughput: float = 0.05
    """Relative, for tokens and characters per second."""
    memory: float = 0.05
    """Relative, for peak memory."""
    rates: float = 5.0
    """Percentage points, for pass and success rates and for scores on 0–1."""

    @classmethod
    def of(cls, setting: _Setting) -> Tolerance:
        """From the project's ``practical_change`` setting (any object with the same four fields)."""
        return cls(
            latency=float(setting.latency),
            throughput=float(setting.throughput),
            memory=float(setting.memory),
            rates=float(setting.rates),
        )

    def for_unit(self, unit: str) -> tuple[float, bool]:
        """``(threshold, relative)`` for a figure's unit: relative fractions, or points on a 0–1 scale."""
        if unit in ("rate", "score"):
            return self.rates / 100, False
        if unit == "seconds":
            return self.latency, True
        if unit == "bytes":
            return self.memory, True
        return self.throughput, True

    def describe(self, unit: str) -> str:
        """The tolerance as readers see it: ``±5%`` or ``±5 points``."""
        threshold, relative = self.for_unit(unit)
        if relative:
            return f"±{threshold * 100:g}%"
        return f"±{threshold * 100:g} points"


DEFAULT_TOLERANCE = Tolerance()


def judge(
    interval: Interval,
    delta: float,
    relative_delta: float | None,
    unit: str,
    better: Literal["higher", "lower"],
    tolerance: Tolerance = DEFAULT_TOLERANCE,
    *,
    baseline: float | None = None,
) -> Verdict:
    """The verdict ``interval`` allows (see the module's text). ``baseline``: the baseline's value, which a relative
    threshold reads the interval against; without one (or at zero) no interval is known to lie within a relative
    threshold, and a change beyond zero counts as past it."""
    threshold, relative = tolerance.for_unit(unit)
    scale: float | None = 1.0
    if relative:
        scale = abs(baseline) if baseline else None
    if relative:
        size = abs(relative_delta) if relative_delta is not None else float("inf")
    else:
        size = abs(delta)
    if interval.sign and size > threshold:
        went_up = interval.sign > 0
        return "better" if went_up == (better == "higher") else "worse"
    if scale is not None and -threshold <= interval.low / scale and interval.high / scale <= threshold:
        return "within tolerance"
    return "inconclusive"
