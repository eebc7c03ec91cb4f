"""The practical threshold: how large a detectable change must be to be called better or worse.

As asv's ``--factor`` does, a change is better or worse only when its
interval excludes zero **and** its point estimate exceeds a stated threshold:
relative for latency, throughput and memory (5 % by default), in percentage
points for rates (5 by default). A detectable change below the threshold is
"within tolerance". The project file sets the thresholds under
``[publishing.practical_change]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from fmbench.analysis.stats import Interval

Verdict = Literal["better", "worse", "within tolerance", "no detectable change"]


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
) -> Verdict:
    """Better or worse only when the interval excludes zero and the change passes the threshold."""
    if not interval.sign:
        return "no detectable change"
    threshold, relative = tolerance.for_unit(unit)
    size = abs(delta) if not relative else (abs(relative_delta) if relative_delta is not None else float("inf"))
    if size <= threshold:
        return "within tolerance"
    went_up = interval.sign > 0
    return "better" if went_up == (better == "higher") else "worse"
