"""The smallest change a compared figure could detect, and how much more data a smaller one would need.

A verdict of "no detectable change" says the interval holds zero; it does not say whether the runs could have
seen a change that matters. Each compared figure therefore carries its **smallest detectable change**: half the
width of the interval it already has, ``(high − low) / 2``, in the figure's unit. An interval of that width
placed around an estimate farther than that from zero would exclude zero, so a change smaller than it cannot be
told from no change at the comparison's confidence (the level the interval was computed at, Bonferroni-adjusted
like the verdict).

Where the verdict is "no detectable change" and the smallest detectable change is larger than the practical
threshold (:mod:`fmbench.analysis.tolerance`: in points for rates, relative to the baseline for latency,
throughput and memory), the runs were too few to tell a change of that size from none.
:func:`too_few_to_tell` says so, with the data that would bring it down to the threshold: an interval's width
shrinks as ``1/√n``, so with the variation observed it takes ``(smallest detectable / threshold)²`` times the
runs, and the trials, per side.
"""

from __future__ import annotations

import math

from fmbench.analysis import figure_catalog as fc
from fmbench.analysis import tolerance as tol
from fmbench.analysis.stats import Interval

DEFINITION = (
    "The smallest detectable change of a figure is half the width of its interval, (high − low) / 2: a change "
    "smaller than that cannot be told from no change at the interval's confidence."
)


def smallest_detectable_change(interval: Interval | None) -> float | None:
    """Half the interval's width, in the figure's unit; ``None`` where the figure has no interval."""
    if interval is None:
        return None
    return (interval.high - interval.low) / 2


def detectable_text(unit: str, change: float | None) -> str | None:
    """``±14.0 pp``, ``±0.031 s``: a smallest detectable change as a reader sees it."""
    if change is None:
        return None
    return "±" + fc.format_change(unit, change).lstrip("+")


def data_factor(change: float, baseline: float | None, unit: str, tolerance: tol.Tolerance) -> float | None:
    """How many times the data per side would bring ``change`` down to the practical threshold (above 1 when the
    change is above it); ``None`` when a relative threshold has no baseline to be relative to."""
    threshold, relative = tolerance.for_unit(unit)
    if relative:
        if not baseline:
            return None
        change = change / abs(baseline)
    if threshold <= 0:
        return None
    return (change / threshold) ** 2


def _counts(needed: tuple[int, int], now: tuple[int, int], noun: str) -> str:
    if needed[0] == needed[1] and now[0] == now[1]:
        return f"{needed[0]:,} {noun} per side (now {now[0]:,})"
    return f"{needed[0]:,} {noun} on the baseline and {needed[1]:,} on the candidate (now {now[0]:,} and {now[1]:,})"


def too_few_to_tell(
    verdict: str,
    change: float | None,
    baseline: float | None,
    unit: str,
    tolerance: tol.Tolerance,
    *,
    runs: tuple[int, int],
    trials: tuple[int, int],
) -> str | None:
    """The sentence a "no detectable change" carries when the runs were too few to tell a change of the practical
    threshold's size from none, or ``None`` (another verdict, no interval, or one that could see such a change).

    ``runs`` and ``trials``: how many runs and how many values of the figure each side (baseline, candidate) had."""
    if verdict != "no detectable change" or change is None:
        return None
    factor = data_factor(change, baseline, unit, tolerance)
    if factor is None or factor <= 1:
        return None
    relative = tolerance.for_unit(unit)[1]
    size = detectable_text(unit, change)
    if relative and baseline:
        size = f"{size} ({abs(change / baseline) * 100:.1f}% of the baseline)"

    def scaled(pair: tuple[int, int]) -> tuple[int, int]:
        # rounded first, so that 500 × 7.84 is 3,920 whatever the last bit of the factor
        return math.ceil(round(pair[0] * factor, 6)), math.ceil(round(pair[1] * factor, 6))

    return (
        f"Too few runs to tell: the smallest change this comparison could detect is {size}, above the practical "
        f"threshold of {tolerance.describe(unit)}. With the variation observed, about {factor:.1f}× the data per "
        f"side would bring it to the threshold (an interval's width shrinks as 1/√n): about "
        f"{_counts(scaled(runs), runs, 'runs')}, or {_counts(scaled(trials), trials, 'trials')}."
    )
