"""A normal interval on the difference of two independent sides' quantiles, each side's values in clusters.

A side's values come in clusters (its samples, each of several trials). The share of its values at or below its
nearest-rank ``q`` quantile ``Q`` is a ratio of cluster sums, whose variance the clusters show directly:
``G / (G − 1) · Σ (a_g − F·n_g)² / N²`` over ``G`` clusters of ``n_g`` values, ``a_g`` of them at most ``Q``, ``F``
the share over all ``N``. ``Q``'s variance is that over the density at ``Q`` squared (the density from the values
``√N`` ranks either side of ``Q``, :func:`density_at`; the paired interval of
:func:`fmbench.analysis.stats.trial_noise_variance` measures them against normal scores). Unpaired sides
are independent, so the difference takes ``± t·√(v_b + v_c)`` about the exact difference, ``t`` Student's at the
Welch–Satterthwaite degrees of freedom (each side's ``G − 1``): a tail quantile's variance rests on the few samples
that reach the tail, and a normal quantile left the interval short there. Nothing is resampled.

It replaces the percentile cluster bootstrap for unpaired sides of one run and enough samples: that bootstrap of a
tail quantile over 25 samples saw 0.93 of its real spread (``benchmarks/coverage.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

from fmbench.analysis.figures import nearest_rank

_NORMAL = NormalDist()


def density_at(ordered: Sequence[float], k: int, scores: bool = True) -> float | None:
    """The density of sorted values at ``ordered[k]``, from the values ``√N`` ranks either side; ``None`` where they
    are equal. ``scores``: their spread measured against the normal scores of their ranks (Blom's, ``Φ⁻¹((i + ⅝) /
    (N + ¼))`` for the ``i``-th from 0, close to where the ``i``-th of ``N`` normal values lies on average, also at the
    ends), then carried back through the normal density there. The ranks either side of a tail quantile stretch unevenly (the
    quantile function curves there), so their spread over the share of ranks between them overstates the reciprocal
    of the density: at p90 of a normal by 5.5 % (and the variance by 11 %). Against normal scores that curvature is
    gone where the values are close to normal and much smaller where their tail is longer; at the median both agree.
    """
    total = len(ordered)
    reach = max(1, math.ceil(math.sqrt(total)))
    lo, hi = max(k - reach, 0), min(k + reach, total - 1)
    if ordered[hi] <= ordered[lo]:
        return None
    if not scores:
        return (hi - lo) / total / (ordered[hi] - ordered[lo])
    low, mid, high = (_NORMAL.inv_cdf((i + 0.625) / (total + 0.25)) for i in (lo, k, hi))
    return _NORMAL.pdf(mid) * (high - low) / (ordered[hi] - ordered[lo])


def quantile_variance(clusters: Sequence[Sequence[float]], q: float) -> tuple[float, int] | None:
    """The variance of the nearest-rank ``q`` quantile of the clusters' values pooled, the clusters drawn from a
    population, and the clusters it rests on; ``None`` with fewer than two clusters that hold a value or no spread about the quantile."""
    cells = [list(c) for c in clusters if len(c)]
    if len(cells) < 2:
        return None
    ordered = sorted(v for c in cells for v in c)
    total, groups = len(ordered), len(cells)
    k = max(math.ceil(q * total) - 1, 0)
    at = ordered[k]
    share = sum(v <= at for v in ordered) / total
    spread = math.fsum((sum(v <= at for v in c) - share * len(c)) ** 2 for c in cells)
    # The plain spacing, not against normal scores: with them unpaired p90 tokens/s held the truth 93.4 % of the time
    # (800 pairs, benchmarks/coverage.py): 25 samples' shares leave this variance short in a way the spacing's
    # overstatement in a tail happens to make up, and the Student's t interval was calibrated with it.
    density = density_at(ordered, k, scores=False)
    if density is None:
        return None
    return groups / (groups - 1) * spread / total / total / density / density, groups


def difference_interval(baseline: Sequence[Sequence[float]], candidate: Sequence[Sequence[float]], q: float,
                        confidence: float) -> tuple[float, float] | None:
    """``(low, high)`` on quantile_q(candidate) − quantile_q(baseline) of two independent sides' clusters; ``None``
    where a side's variance is (:func:`quantile_variance`)."""
    # slow to import (scipy): only this interval needs Student's t
    from scipy.stats import t as student

    found_b, found_c = quantile_variance(baseline, q), quantile_variance(candidate, q)
    if found_b is None or found_c is None:
        return None
    (vb, gb), (vc, gc) = found_b, found_c
    freedom = (vb + vc) ** 2 / (vb * vb / (gb - 1) + vc * vc / (gc - 1))
    d = nearest_rank(sorted(v for c in candidate for v in c), q) - nearest_rank(sorted(v for c in baseline for v in c), q)
    half = float(student.ppf(1 - (1 - confidence) / 2, freedom)) * math.sqrt(vb + vc)
    return d - half, d + half


METHOD = ("Student's t interval on the difference of nearest-rank quantiles, each side's variance from how many of "
          "each sample's trials lie at or below its quantile (sides of one run and ten or more samples each)")


def unpaired(baseline: Sequence[Sequence[Sequence[float]]], candidate: Sequence[Sequence[Sequence[float]]], q: float,
             confidence: float, min_samples: int) -> tuple[float, float] | None:
    """:func:`difference_interval` of unpaired sides (runs of samples of values) of one run each and at least
    ``min_samples`` samples holding a value; ``None`` for any other sides (they keep the cluster bootstrap)."""
    runs = [[s for s in side[0] if len(s)] if len(side) == 1 else [] for side in (baseline, candidate)]
    return difference_interval(*runs, q, confidence) if min(map(len, runs)) >= min_samples else None
