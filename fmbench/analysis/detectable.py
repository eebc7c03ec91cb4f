"""The smallest change a compared figure could detect, and what would narrow its interval.

**Smallest detectable change.** An *inconclusive* verdict (:mod:`fmbench.analysis.tolerance`) says the interval
holds zero or reaches past the practical threshold; it does not say how large a change these runs could have seen.
Each compared figure therefore carries its smallest detectable change: the true change this comparison would
detect (its interval lying beyond zero) in :data:`POWER` (80 %) of repeats, at the comparison's own confidence (the
level its interval was computed at, Bonferroni-adjusted like the verdict). With the interval's standard error
``se = (high − low) / (2 z)``, it is ``(z + z_power) · se``: at 95 %, 1.43 times half the interval's width. Half the
width alone would be the change detected half of the time. ``benchmarks/coverage.py`` checks the 80 % by simulation.

**What would narrow it.** The variance of a compared figure comes from two places the data show: the trials of one
sample differ from each other (trial noise, which more repetitions of each sample, or more runs of the same samples,
average away), and the samples differ from each other (which only more samples average away; runs of the same
samples repeat the same samples). :func:`variance_split` estimates each part's share from the per-sample means and
within-sample variances (of the values for a rate or mean; of whether each value lies at or below the figure's
value for a quantile, the quantity a quantile's variance follows), of the differences per sample where the sides are
paired. To bring the smallest detectable change to the practical threshold the variance must fall by
``(smallest detectable / threshold)²``; :func:`advise` names the lever that does it
(repetitions, when trial noise carries enough of the variance that they can, else samples) and how many.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

from fmbench.analysis import figure_catalog as fc
from fmbench.analysis import tolerance as tol
from fmbench.analysis.pairing import Clusters, SampleIds
from fmbench.analysis.stats import Interval, z_value

POWER = 0.8
"""The chance that a true change of the smallest detectable size is detected."""

DEFINITION = (
    "The smallest detectable change of a figure is the true change this comparison would detect (its interval "
    "lying beyond zero) 80% of the time, at the comparison's confidence: (z + 0.84) times the interval's standard "
    "error, about 1.43 times half the interval's width at 95%. A smaller change may go unseen."
)


def smallest_detectable_change(interval: Interval | None) -> float | None:
    """The change detected with :data:`POWER` at the interval's confidence, in the figure's unit; ``None`` where the
    figure has no interval."""
    if interval is None:
        return None
    z = z_value(interval.confidence)
    return (interval.high - interval.low) / 2 * (z + NormalDist().inv_cdf(POWER)) / z


def detectable_text(unit: str, change: float | None) -> str | None:
    """``±14.0 pp``, ``±0.031 s``: a smallest detectable change as a reader sees it."""
    if change is None:
        return None
    return "±" + fc.format_change(unit, change).lstrip("+")


def data_factor(change: float, baseline: float | None, unit: str, tolerance: tol.Tolerance) -> float | None:
    """How many times the variance must fall to bring ``change`` down to the practical threshold (above 1 when the
    change is above it); ``None`` when a relative threshold has no baseline to be relative to."""
    threshold, relative = tolerance.for_unit(unit)
    if relative:
        if not baseline:
            return None
        change = change / abs(baseline)
    if threshold <= 0:
        return None
    return (change / threshold) ** 2


# --- where the variance comes from ------------------------------------------------------------------------------


def _per_sample(side: Clusters, ids: SampleIds | None, at: float | None) -> dict[object, list[float]]:
    """A side's values per sample (runs of the same sample pooled), as indicators of ``value <= at`` when ``at``."""
    out: dict[object, list[float]] = defaultdict(list)
    for r, run in enumerate(side):
        for s, sample in enumerate(run):
            key: object = ids[r][s] if ids is not None else (r, s)
            out[key].extend(float(v <= at) if at is not None else float(v) for v in sample)
    return {k: v for k, v in out.items() if v}


def _mean_var(values: list[float]) -> tuple[float, float]:
    n = len(values)
    m = sum(values) / n
    return m, (sum((v - m) ** 2 for v in values) / (n - 1) if n > 1 else 0.0)


def _spread(means: list[float]) -> float:
    """The variance across samples of their means (``n − 1`` in the denominator)."""
    if len(means) < 2:
        return 0.0
    m = sum(means) / len(means)
    return sum((x - m) ** 2 for x in means) / (len(means) - 1)


def variance_split(
    baseline: Clusters,
    candidate: Clusters,
    *,
    samples: tuple[SampleIds, SampleIds] | None = None,
    paired: bool = False,
    at: tuple[float, float] | None = None,
) -> float | None:
    """The share of a compared figure's variance that trial noise carries (0 to 1); the rest comes from the
    differences between samples. ``None`` when the data show no variance at all.

    ``samples``: each side's sample ids (runs of one sample are pooled); ``paired``: the interval drew the samples
    together, so the variance is that of the per-sample differences; ``at``: each side's value of a quantile
    figure, whose variance follows that of the share of values at or below it."""
    ids_b, ids_c = (None, None) if samples is None else samples
    b = _per_sample(baseline, ids_b, None if at is None else at[0])
    c = _per_sample(candidate, ids_c, None if at is None else at[1])
    if not b or not c:
        return None
    if paired and ids_b is not None and b.keys() == c.keys():
        shared = sorted(b, key=str)
        stats_b, stats_c = [_mean_var(b[k]) for k in shared], [_mean_var(c[k]) for k in shared]
        n = len(shared)
        total = _spread([mc - mb for (mb, _), (mc, _) in zip(stats_b, stats_c, strict=True)]) / n
        noise = sum(vb / len(b[k]) + vc / len(c[k])
                    for k, (_, vb), (_, vc) in zip(shared, stats_b, stats_c, strict=True)) / n / n
    else:
        total = noise = 0.0
        for side in (b, c):
            pieces = [(_mean_var(v), len(v)) for v in side.values()]
            n = len(pieces)
            total += _spread([m for (m, _), _ in pieces]) / n
            noise += sum(var / k for (_, var), k in pieces) / n / n
    if total <= 0:
        return None if noise <= 0 else 1.0
    return min(1.0, noise / total)


@dataclass(frozen=True)
class Advice:
    """What would bring a figure's smallest detectable change to the practical threshold."""

    repetitions: float | None
    """How many times the repetitions of each sample per side (more trials of each, or more runs of the same
    samples); ``None`` when no number of them can (the differences between samples alone keep it above)."""
    samples: float
    """How many times the samples per side (each repeated as often as now)."""
    noise_share: float
    """The share of the variance trial noise carries (:func:`variance_split`)."""

    @property
    def lever(self) -> Literal["repetitions", "samples"]:
        """Repetitions where they reach it (a suite's samples are fixed by its revision; runs are not), else samples."""
        return "repetitions" if self.repetitions is not None else "samples"


def advise(variance_factor: float, noise_share: float) -> Advice:
    """How to divide the variance by ``variance_factor``: repetitions divide only the trial noise's share
    (``noise_share``), so they reach it only when the samples' share is below ``1 / variance_factor``; samples divide
    all of it."""
    sample_part = 1.0 - noise_share
    repetitions = None
    if noise_share > 0 and sample_part < 1 / variance_factor:
        repetitions = noise_share / (1 / variance_factor - sample_part)
    return Advice(repetitions, variance_factor, noise_share)


def _per_side(needed: tuple[int, int], now: tuple[int, int], noun: str) -> str:
    if needed[0] == needed[1] and now[0] == now[1]:
        return f"{needed[0]:,} {noun} per side (now {now[0]:,})"
    return f"{needed[0]:,} {noun} on the baseline and {needed[1]:,} on the candidate (now {now[0]:,} and {now[1]:,})"


def _scaled(pair: tuple[int, int], factor: float) -> tuple[int, int]:
    # rounded first, so that 500 × 7.84 is 3,920 whatever the last bit of the factor
    return math.ceil(round(pair[0] * factor, 6)), math.ceil(round(pair[1] * factor, 6))


def too_few_to_tell(
    verdict: str,
    change: float | None,
    baseline: float | None,
    unit: str,
    tolerance: tol.Tolerance,
    *,
    runs: tuple[int, int],
    samples: tuple[int, int],
    repetitions: tuple[int, int],
    noise_share: float | None,
) -> str | None:
    """The sentence an inconclusive figure carries when its smallest detectable change is above the practical
    threshold, with the lever that would narrow it; ``None`` for another verdict, no interval, or one that could see
    a change of the threshold's size.

    ``runs``, ``samples`` and ``repetitions``: each side's (baseline, candidate) runs, samples and trials of a sample
    (the most common count); ``noise_share``: :func:`variance_split`, ``None`` when unknown (samples then)."""
    if verdict != "inconclusive" or change is None:
        return None
    factor = data_factor(change, baseline, unit, tolerance)
    if factor is None or factor <= 1:
        return None
    relative = tolerance.for_unit(unit)[1]
    size = detectable_text(unit, change)
    if relative and baseline:
        size = f"{size} ({abs(change / baseline) * 100:.1f}% of the baseline)"
    share = 0.0 if noise_share is None else noise_share
    advice = advise(factor, share)
    opening = (
        f"Too few to tell: the smallest change this comparison detects 80% of the time is {size}, above the "
        f"practical threshold of {tolerance.describe(unit)}. "
    )
    if noise_share is not None:
        opening += (f"Of its variance, about {share * 100:.0f}% is trial-to-trial noise within samples and "
                    f"{(1 - share) * 100:.0f}% the differences between samples. ")
    more_samples = _per_side(_scaled(samples, advice.samples), samples, "samples")
    if advice.repetitions is not None:
        return opening + (
            f"More repetitions would bring it to the threshold: about "
            f"{_per_side(_scaled(runs, advice.repetitions), runs, 'runs of the same samples')}, or "
            f"{_per_side(_scaled(repetitions, advice.repetitions), repetitions, 'trials of each sample')}; "
            f"or about {more_samples}."
        )
    return opening + (
        f"More runs or repetitions of the same samples cannot bring it to the threshold (the differences between "
        f"samples stay); about {more_samples} would."
    )
