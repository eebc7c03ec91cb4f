"""Intervals on differences between a baseline and a candidate, in plain Python.

Two kinds of figure, two methods:

- **Quantiles over trials** (median and p90 of TTFT and of output tokens/s):
  a *percentile bootstrap* of the difference candidate − baseline. Each
  resample draws ``n`` trials with replacement from each side independently,
  takes the nearest-rank quantile of each (the definition in
  :mod:`fmbench.figures`), and subtracts. The interval is the nearest-rank
  ``α/2`` and ``1 − α/2`` quantiles of the resampled differences.

  The resample is never materialized. The value at 1-based rank ``k`` of a
  size-``n`` resample of the sorted values ``x[0] ≤ … ≤ x[n−1]`` is
  ``x[I]``, where ``I`` is the ``k``-th smallest of ``n`` indices drawn
  uniformly from ``0 … n−1``. Draw index ``i`` as ``floor(U_i · n)`` with
  ``U_i`` uniform: the map is monotone, so ``I = floor(U_(k) · n)`` where
  ``U_(k)``, the ``k``-th order statistic of ``n`` uniforms, is
  ``Beta(k, n − k + 1)``. One Beta draw per side per resample therefore has
  exactly the distribution of "resample, sort, take rank ``k``", at O(1)
  instead of O(n log n). The drawn indices depend only on ``(n, k)``, the
  seed and the side, so they are cached and shared by every figure and
  scenario with the same trial count (deterministic: ``random.Random(seed)``).

- **Proportions** (task success, completed prompt pass): Newcombe's hybrid
  score interval for a difference of two independent proportions (his
  method 10), built from the two Wilson score intervals. It never leaves
  [−1, 1] and behaves at 0 % and 100 %.

- **Means** (mean constraint score): a normal interval on the difference of
  means with each side's variance σ²/n (population σ: the variance of the
  bootstrap distribution of a mean), i.e. a Welch-type interval.

A change is *detectable* when the interval excludes zero (a bound exactly on
zero is not enough). Too few values on a side give no interval at all.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

from fmbench.figures import nearest_rank

DEFAULT_CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 2_000
MAX_RESAMPLES = 50_000
"""Cap on bootstrap resamples (reached only for very high confidence levels)."""
MIN_TAIL_RESAMPLES = 20
"""At least this many resamples beyond each bound, so a high confidence level is resolved."""
DEFAULT_SEED = 20_260_611
MIN_BOOTSTRAP_VALUES = 5
"""A side with fewer recorded values gets no bootstrap interval (it would be a point)."""

BOOTSTRAP_METHOD = "percentile bootstrap of the difference of nearest-rank quantiles"
NEWCOMBE_METHOD = "Newcombe hybrid score interval (Wilson score intervals of each side)"
MEAN_METHOD = "normal interval on the difference of means (Welch-type, population variance / n)"


@dataclass(frozen=True, slots=True)
class Interval:
    """An interval on candidate − baseline, at ``confidence``, computed by ``method``."""

    low: float
    high: float
    confidence: float
    method: str

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0

    @property
    def sign(self) -> int:
        """+1 when the whole interval is above zero, −1 when below, 0 when it spans zero."""
        if self.low > 0:
            return 1
        if self.high < 0:
            return -1
        return 0

    def to_json(self) -> dict[str, float | str]:
        return {"low": self.low, "high": self.high, "confidence": self.confidence, "method": self.method}


def z_value(confidence: float) -> float:
    """The two-sided standard normal critical value for ``confidence`` (1.96 for 95 %)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence}")
    return NormalDist().inv_cdf(1 - (1 - confidence) / 2)


def resamples_for(confidence: float, resamples: int = DEFAULT_RESAMPLES) -> int:
    """Enough resamples that each tail beyond the interval holds ``MIN_TAIL_RESAMPLES`` draws."""
    tail = (1 - confidence) / 2
    needed = math.ceil(MIN_TAIL_RESAMPLES / tail) if tail > 0 else MAX_RESAMPLES
    return min(max(resamples, needed), MAX_RESAMPLES)


def quantile_rank(n: int, q: float) -> int:
    """The 1-based rank :func:`fmbench.figures.nearest_rank` picks among ``n`` values."""
    return nearest_rank(range(1, n + 1), q)


@lru_cache(maxsize=256)
def _order_statistic_indices(n: int, k: int, resamples: int, seed: int) -> tuple[int, ...]:
    """0-based indices: the rank-``k`` element of each of ``resamples`` bootstrap resamples of size ``n``."""
    rng = random.Random(seed)
    b = n - k + 1
    return tuple(min(int(rng.betavariate(k, b) * n), n - 1) for _ in range(resamples))


def bootstrap_quantile_difference(
    baseline: Sequence[float],
    candidate: Sequence[float],
    q: float,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Interval | None:
    """Percentile bootstrap interval on quantile_q(candidate) − quantile_q(baseline).

    ``None`` when either side has fewer than :data:`MIN_BOOTSTRAP_VALUES` values.
    """
    nb, nc = len(baseline), len(candidate)
    if min(nb, nc) < MIN_BOOTSTRAP_VALUES:
        return None
    count = resamples_for(confidence, resamples)
    xb, xc = sorted(baseline), sorted(candidate)
    ib = _order_statistic_indices(nb, quantile_rank(nb, q), count, seed)
    ic = _order_statistic_indices(nc, quantile_rank(nc, q), count, seed + 1)
    differences = [xc[j] - xb[i] for i, j in zip(ib, ic, strict=True)]
    alpha = 1 - confidence
    # Only the tails are needed: nearest-rank picks 0-based indices `lo` and `hi` of the sorted
    # differences, which are the (lo+1)-th smallest and the (count-hi)-th largest.
    lo = quantile_rank(count, alpha / 2) - 1
    hi = quantile_rank(count, 1 - alpha / 2) - 1
    return Interval(
        low=heapq.nsmallest(lo + 1, differences)[-1],
        high=heapq.nlargest(count - hi, differences)[-1],
        confidence=confidence,
        method=BOOTSTRAP_METHOD,
    )


def wilson_interval(successes: int, n: int, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval for one proportion."""
    if n <= 0:
        raise ValueError("a proportion of no trials has no interval")
    z = z_value(confidence)
    p = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe_difference(
    baseline_successes: int,
    baseline_n: int,
    candidate_successes: int,
    candidate_n: int,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Interval | None:
    """Newcombe's hybrid score interval on p_candidate − p_baseline; ``None`` if a side has no trials."""
    if baseline_n <= 0 or candidate_n <= 0:
        return None
    pb = baseline_successes / baseline_n
    pc = candidate_successes / candidate_n
    lb, ub = wilson_interval(baseline_successes, baseline_n, confidence)
    lc, uc = wilson_interval(candidate_successes, candidate_n, confidence)
    d = pc - pb
    return Interval(
        low=d - math.sqrt((pc - lc) ** 2 + (ub - pb) ** 2),
        high=d + math.sqrt((uc - pc) ** 2 + (pb - lb) ** 2),
        confidence=confidence,
        method=NEWCOMBE_METHOD,
    )


def mean_difference(
    baseline: Sequence[float],
    candidate: Sequence[float],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Interval | None:
    """Normal interval on mean(candidate) − mean(baseline); ``None`` below :data:`MIN_BOOTSTRAP_VALUES`."""
    nb, nc = len(baseline), len(candidate)
    if min(nb, nc) < MIN_BOOTSTRAP_VALUES:
        return None
    mb, mc = sum(baseline) / nb, sum(candidate) / nc
    vb = sum((v - mb) ** 2 for v in baseline) / nb
    vc = sum((v - mc) ** 2 for v in candidate) / nc
    half = z_value(confidence) * math.sqrt(vb / nb + vc / nc)
    d = mc - mb
    return Interval(low=d - half, high=d + half, confidence=confidence, method=MEAN_METHOD)
