"""Intervals on differences between a baseline and a candidate.

- **Quantiles in comparisons** (median and p90 of TTFT and of output
  tokens/s): a *cluster bootstrap* (:func:`cluster_bootstrap_quantile_difference`).
  The repetitions of one sample are not independent draws: what varies from
  one comparison to the next is which samples (and, where a side has
  several, which runs) it measured. So each resample draws, with
  replacement, the side's runs (when it has several), then within each drawn
  run its samples, and takes every trial of each drawn sample as measured;
  the trials are not drawn again inside a sample, which would add their
  noise a second time (an interval 1.3 to 1.6 times the real spread). It
  then takes the nearest-rank quantile of what it drew. Where a side's runs
  all ran the same samples, the samples are drawn once per resample for
  every run of the side (a sample is one cluster across the runs that
  repeat it). ``benchmarks/coverage.py`` measures the result against
  simulated pairs with a known change: coverage and width at the stated
  confidence. An exact form is not tractable; the resamples are Monte Carlo, vectorized
  with numpy, seeded from a digest of the side's values (a page stays a
  function of its data) and kept per side by the caller's
  :class:`~fmbench.comparison.resample_store.Resamples`, so every comparison that
  shares a run reuses its resamples: in memory, and across processes in
  the resample store beside the database, which gives back the same bits.

- **Paired by sample.** Where both sides ran the same samples (every run of either side holds exactly one set
  of sample ids, :func:`pairings`), the figure's change is the change on those samples: they differ far more than
  trials of one sample do, but both sides share them. In a comparison (``on_shared_samples``), with one run a side
  and every sample repeated, only the trials' noise moves it: the interval is normal about the exact difference, the
  variance the trials' noise gives it (:func:`_paired_noise_interval`); resampling the shared samples let the make-up
  move both sides' quantiles, and widened paired quantiles' intervals 1.1 times (coverage 98 to 99 % at 95 %,
  ``benchmarks/coverage.py``). Elsewhere (a leaderboard, several runs a side, a sample of one trial, or fewer
  than :data:`FLOOR_SAMPLES` samples) the sample ids are drawn once per resample for both sides and every run
  drawn (runs still per side), seeded from a digest of the sorted sample ids alone, so a side's paired resamples
  are a function of its values, its sample ids and that set: kept and reused like the unpaired ones, under a
  digest of their own. Sides that do not share their sample ids stay unpaired (:attr:`Interval.paired`); the
  pairing is in :mod:`fmbench.analysis.pairing`.

- **Quantiles over independent trials**, for reference: the exact
  *percentile bootstrap* of the difference candidate − baseline. A
  resample draws ``n`` trials with replacement from each side independently,
  takes the nearest-rank quantile of each (the definition in
  :mod:`fmbench.analysis.figures`), and subtracts. The interval is the ``α/2`` and
  ``1 − α/2`` quantiles (nearest rank: the smallest value whose cumulative
  probability reaches the level) of the resampled differences.

  The bootstrap distribution is computed **exactly** rather than sampled, so
  the interval is the limit of infinitely many resamples: no random seed, no
  Monte Carlo error, and the far tails a family-wise level needs are as
  precise as the 95 % ones. The value at 1-based rank ``k`` of a size-``n``
  resample of the sorted values ``x[0] ≤ … ≤ x[n−1]`` is ``x[I]``, where
  ``I`` is the ``k``-th smallest of ``n`` indices drawn uniformly from
  ``0 … n−1``, and ``P(I ≤ j) = P(Binomial(n, (j+1)/n) ≥ k)`` (scipy's
  binomial survival function). The
  two sides' distributions (probability below 1e-15 in a tail is folded into
  the last value kept) are combined pair by pair into the distribution of
  the difference. It depends only on ``(n, k)``, so it is cached.

- **Rates and means in comparisons** (task success, completed prompt pass,
  mean constraint score): the same cluster bootstrap
  (:func:`cluster_bootstrap_mean_difference`) on the difference of means.
  A rate is the mean of each trial's 0/1 outcome (in task success a failed
  attempt is a 0, grouped under its sample), so repetitions of one sample
  that share an outcome widen the interval as they should.

- **Proportions and means over independent trials**, for reference:
  Newcombe's hybrid score interval for a difference of two independent
  proportions (his method 10), built from the two Wilson score intervals,
  and a normal interval on a difference of means with each side's variance
  σ²/n (a Welch-type interval). Comparisons no longer use them.

A change is *detectable* when the interval excludes zero (a bound exactly on
zero is not enough). Too few values on a side give no interval at all.
"""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

from fmbench.analysis import clustered_quantile
from fmbench.analysis.figures import nearest_rank
from fmbench.analysis.pairing import (
    Clusters,
    Pairing,
    SampleIds,
    paired_digest,
    pairings,
    shared_draw,
)

if TYPE_CHECKING:
    from fmbench.analysis.kept_resamples import KeptResamples as Resamples

DEFAULT_CONFIDENCE = 0.95
MIN_BOOTSTRAP_VALUES = 5
"""A side with fewer recorded values gets no bootstrap interval (it would be a point)."""
FLOOR_SAMPLES = 10
"""Below this many samples the spread between them is too rough an estimate to stand alone: the interval is never
narrower than the trials' noise. From it on, the samples' spread holds that noise already (a floor on top of it
made paired intervals of 25 samples 1.2 times too wide in ``benchmarks/coverage.py``)."""
TAIL = 1e-15
"""Probability in a tail of a rank's bootstrap distribution that is folded into the last value kept."""

BOOTSTRAP_METHOD = "exact percentile bootstrap of the difference of nearest-rank quantiles"
NEWCOMBE_METHOD = "Newcombe hybrid score interval (Wilson score intervals of each side)"
MEAN_METHOD = "normal interval on the difference of means (Welch-type, population variance / n)"


@dataclass(frozen=True, slots=True)
class Interval:
    """An interval on candidate − baseline, at ``confidence``, computed by ``method``."""

    low: float
    high: float
    confidence: float
    method: str
    paired: bool = False
    """Both sides' sample ids were drawn jointly (the sides ran the same samples); ``False``: each side alone."""

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
        return {"low": self.low, "high": self.high, "confidence": self.confidence, "method": self.method,
                "paired": self.paired}


def z_value(confidence: float) -> float:
    """The two-sided standard normal critical value for ``confidence`` (1.96 for 95 %)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence}")
    return NormalDist().inv_cdf(1 - (1 - confidence) / 2)


def quantile_rank(n: int, q: float) -> int:
    """The 1-based rank :func:`fmbench.analysis.figures.nearest_rank` picks among ``n`` values."""
    return nearest_rank(range(1, n + 1), q)


def rank_distribution(n: int, k: int) -> tuple[int, tuple[float, ...]]:
    """``(first, probabilities)``: the chance that the rank-``k`` value of a size-``n`` bootstrap
    resample is the sorted sample's ``x[first + i]``, for each ``i``.

    Indices whose whole tail holds less than :data:`TAIL` are folded into the first and last kept.
    """
    if not 1 <= k <= n:
        raise ValueError(f"rank {k} of {n} values")
    # slow to import (scipy): only the exact bootstrap needs it
    from scipy.stats import binom

    known: dict[int, float] = {}

    def at_most(j: int) -> float:  # P(I <= j) = P(Binomial(n, (j + 1) / n) >= k)
        if j < 0:
            return 0.0
        if j >= n - 1:
            return 1.0
        if j not in known:
            known[j] = float(binom.sf(k - 1, n, (j + 1) / n))
        return known[j]

    first = last = k - 1
    while first > 0 and at_most(first - 1) > TAIL:
        first -= 1
    while last < n - 1 and 1.0 - at_most(last) > TAIL:
        last += 1
    probabilities = [at_most(first)]
    probabilities += [max(at_most(j) - at_most(j - 1), 0.0) for j in range(first + 1, last)]
    if last > first:
        probabilities.append(max(1.0 - at_most(last - 1), 0.0))
    return first, tuple(probabilities)


def _atoms(values: Sequence[float], q: float) -> list[tuple[float, float]]:
    """The bootstrap distribution of a sample's nearest-rank ``q`` quantile: ``(value, probability)``."""
    ordered = sorted(values)
    first, probabilities = rank_distribution(len(ordered), quantile_rank(len(ordered), q))
    atoms: list[tuple[float, float]] = []
    for offset, p in enumerate(probabilities):
        value = ordered[first + offset]
        if atoms and atoms[-1][0] == value:
            atoms[-1] = (value, atoms[-1][1] + p)
        elif p > 0:
            atoms.append((value, p))
    return atoms


def bootstrap_quantile_difference(
    baseline: Sequence[float],
    candidate: Sequence[float],
    q: float,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Interval | None:
    """Exact percentile bootstrap interval on quantile_q(candidate) − quantile_q(baseline).

    ``None`` when either side has fewer than :data:`MIN_BOOTSTRAP_VALUES` values.
    """
    if min(len(baseline), len(candidate)) < MIN_BOOTSTRAP_VALUES:
        return None
    z_value(confidence)  # validates the level
    return _bootstrap_quantile_difference(baseline, candidate, q, confidence)


def _bootstrap_quantile_difference(
    baseline: Sequence[float], candidate: Sequence[float], q: float, confidence: float
) -> Interval:
    differences = sorted(
        (vc - vb, pc * pb) for vb, pb in _atoms(baseline, q) for vc, pc in _atoms(candidate, q)
    )
    alpha = 1 - confidence
    low_level, high_level = alpha / 2, 1 - alpha / 2
    low = high = differences[-1][0]
    cumulative = 0.0
    found_low = False
    for value, p in differences:
        cumulative += p
        if not found_low and cumulative >= low_level:
            low, found_low = value, True
        if cumulative >= high_level:
            high = value
            break
    return Interval(low=low, high=high, confidence=confidence, method=BOOTSTRAP_METHOD)


def wilson_interval(successes: int, n: int, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval for one proportion (scipy's ``binomtest(...).proportion_ci(method="wilson")``)."""
    if n <= 0:
        raise ValueError("a proportion of no trials has no interval")
    z_value(confidence)  # validates the level
    # slow to import (scipy): only this reference interval needs it
    from scipy.stats import binomtest

    found = binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return max(0.0, float(found.low)), min(1.0, float(found.high))


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


# --- the cluster bootstrap --------------------------------------------------------------

RESAMPLES = 4000
"""Monte Carlo resamples per side. Beyond a family-wise level's far tail, the interval reaches the
extreme resampled values: it is then wider, never narrower, than the level asks."""
CLUSTER_METHOD = (
    f"cluster bootstrap of the difference of nearest-rank quantiles ({RESAMPLES:,} Monte Carlo resamples per side, "
    "seeded from a digest of the values: runs resampled first where a side has several, then samples, "
    "each drawn sample with all its trials as measured)"
)
_CLUSTER_DRAW = (
    f"{RESAMPLES:,} Monte Carlo resamples per side, seeded from a digest of the values: runs resampled first "
    "where a side has several, then samples, each drawn sample with all its trials as measured"
)
CLUSTER_RATE_METHOD = (
    f"cluster bootstrap of the difference of rates (each trial a 0/1 outcome, a failed attempt a 0; {_CLUSTER_DRAW})"
)
CLUSTER_MEAN_METHOD = f"cluster bootstrap of the difference of means ({_CLUSTER_DRAW})"


def _side_digest(side: Clusters) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    h.update(struct.pack("<I", len(side)))
    for run in side:
        h.update(struct.pack("<I", len(run)))
        for sample in run:
            h.update(struct.pack(f"<I{len(sample)}d", len(sample), *sample))
    return h.digest()


def _cluster_count(side: Clusters) -> int:
    return sum(len(sample) for run in side for sample in run)


BLOCK_SLOTS = 1 << 17
"""How many slots a block of resamples holds at most: the trials are drawn, indexed and reduced a block of
resamples at a time, in buffers the processor's cache holds and that are reused from block to block."""


@dataclass(frozen=True)
class _Resamples:
    """:data:`RESAMPLES` cluster-bootstrap resamples of one side's values, drawn a block at a time.

    Runs are drawn with replacement (when there are several), then, within each drawn run, as many
    samples as it holds; each drawn sample brings all its trials, as measured. Each resample is a row
    of ``width`` slots; :meth:`blocks` yields, for consecutive rows ``start:stop``, ``drawn`` (each slot the
    index in ``values`` of the value there) and ``valid`` (which slots hold a value, ``None``
    when all do: a drawn run with fewer samples, or a drawn sample with fewer trials, than the most any
    holds leaves the rest empty). The draw is seeded from a digest of the values, so the same side
    always gives the same resamples.
    """

    values: Any
    width: int
    n_trials: Any  # (resamples, runs, samples) as doubles: each drawn sample's trial count
    offsets: Any  # (resamples, runs, samples): where each drawn sample's values start in ``values``
    kept: Any  # (resamples, runs * samples): the drawn samples' trial counts, 0 where no sample was drawn; or None

    @property
    def rows_per_block(self) -> int:
        """How many resamples a block holds (at least one, however wide a row)."""
        return max(1, min(self.n_trials.shape[0], BLOCK_SLOTS // self.width))

    def blocks(self) -> Iterator[tuple[int, int, Any, Any]]:
        """``(start, stop, drawn, valid)`` per block of rows; ``drawn`` and ``valid`` are reused buffers, valid
        until the next block is drawn."""
        # slow to import (numpy): only the resampling needs it
        import numpy as np

        b, shape = self.n_trials.shape[0], self.n_trials.shape[1:]
        trials = self.width // math.prod(shape)
        rows = self.rows_per_block
        # Every trial of a drawn sample is taken as it is (the trials are not drawn again): slot ``t`` of a drawn
        # sample holds its ``t``-th value. A slot past a sample's count is marked empty in ``valid``; its index is
        # kept inside ``values`` so that the look-up stays in bounds.
        in_sample = np.arange(trials, dtype=np.int32)
        last = len(self.values) - 1
        drawn = np.empty((rows, *shape, trials), dtype=np.int32)
        valid = None if self.kept is None else np.empty((rows, self.width), dtype=bool)
        in_row = None if self.kept is None else np.tile(in_sample.astype(self.kept.dtype), math.prod(shape))
        for start in range(0, b, rows):
            stop = min(b, start + rows)
            n = stop - start
            d = drawn[:n]
            np.add(self.offsets[start:stop, ..., None], in_sample, out=d)
            np.minimum(d, last, out=d)
            if valid is None:
                yield start, stop, d.reshape(n, -1), None
            else:
                # One comparison of whole rows (broadcasting over a short last axis costs several times as much).
                v = valid[:n]
                np.greater(np.repeat(self.kept[start:stop], trials, axis=1), in_row, out=v)
                yield start, stop, d.reshape(n, -1), v


def _resample(side: Clusters, digest: bytes, pairing: Pairing | None = None) -> _Resamples:
    """One side's resamples (see :class:`_Resamples`): the runs and samples drawn now, the trials block by block.

    ``pairing``: the samples are not drawn from the side's generator but taken from :func:`shared_draw` (the same
    sample ids in every run drawn, on both sides)."""
    # slow to import (numpy): only the resampling needs it
    import numpy as np

    runs = [[sample for sample in run if len(sample)] for run in side]
    runs = [run for run in runs if run]
    rng = np.random.Generator(np.random.PCG64(int.from_bytes(digest, "little")))
    n_runs = len(runs)
    samples_per_run = np.array([len(run) for run in runs])
    sample_offsets = np.concatenate([[0], np.cumsum(samples_per_run)[:-1]])
    flat_samples = [sample for run in runs for sample in run]
    trials_per_sample = np.array([len(s) for s in flat_samples])
    trial_offsets = np.concatenate([[0], np.cumsum(trials_per_sample)[:-1]]).astype(np.int32)
    values = _flat_values(side)  # the empty samples left out above hold no value, so the order is the same
    max_samples, max_trials = int(samples_per_run.max()), int(trials_per_sample.max())

    b = RESAMPLES
    if n_runs > 1:
        run_pick = rng.integers(0, n_runs, size=(b, n_runs))
    else:
        run_pick = np.zeros((b, 1), dtype=np.int64)
    n_samples = samples_per_run[run_pick]  # (b, runs)
    if pairing is None:
        slot = rng.random((b, run_pick.shape[1], max_samples))
        slot *= n_samples[..., None]
        slot = slot.astype(np.int64)
    else:  # every run holds each shared sample once: the shared draw's samples, where each drawn run holds them
        positions = np.array(pairing.positions, dtype=np.int64)  # (runs, samples)
        slot = positions[run_pick[..., None], shared_draw(pairing.shared, b)[:, None, :]]
    sample_valid = np.arange(max_samples) < n_samples[..., None]
    np.minimum(slot, n_samples[..., None] - 1, out=slot)
    sample_pick = sample_offsets[run_pick][..., None] + slot
    n_trials = trials_per_sample[sample_pick]  # (b, runs, samples)
    kept = None  # every slot holds a value
    if max_trials != int(trials_per_sample.min()) or max_samples != int(samples_per_run.min()):
        kept = np.where(sample_valid, n_trials, 0).astype(_index_type(max_trials)).reshape(b, -1)
    return _Resamples(
        values=values, width=run_pick.shape[1] * max_samples * max_trials,
        n_trials=n_trials.astype(np.float64), offsets=trial_offsets[sample_pick], kept=kept,
    )


def _index_type(largest: int) -> Any:
    """The smallest integer type that holds ``0 .. largest`` (inclusive)."""
    # slow to import (numpy): only the resampling needs it
    import numpy as np

    return np.int16 if largest < np.iinfo(np.int16).max else np.int32




def _flat_values(side: Clusters) -> Any:
    """A side's values in one array, in the order :func:`_resample` indexes them."""
    # slow to import (numpy): only the resampling needs it
    import numpy as np

    return np.fromiter(
        (v for run in side for sample in run for v in sample), dtype=np.float64, count=_cluster_count(side)
    )


def _stored_quantiles(store: Any, digest: bytes, qs: tuple[float, ...], values: Any) -> Any:
    """The resampled quantiles of a stored entry (indices into the sorted values), or ``None``."""
    # slow to import (numpy): only the resampling needs it
    import numpy as np

    arrays = store.load(digest, qs, len(values), RESAMPLES)
    if arrays is None or len(arrays) != 1 or arrays[0].dtype.kind != "i" or arrays[0].size != len(qs) * RESAMPLES:
        return None
    picked = arrays[0]
    if len(picked) and (int(picked.min()) < 0 or int(picked.max()) >= len(values)):
        return None  # a quantile is always a drawn value: an index past them is not an entry to trust
    return np.sort(values)[picked].reshape(len(qs), RESAMPLES)


def resampled_quantiles(
    side: Clusters, qs: tuple[float, ...] = (0.5, 0.9), kept: Resamples | None = None,
    pairing: Pairing | None = None,
) -> Any:
    """The nearest-rank quantiles ``qs`` of :data:`RESAMPLES` cluster-bootstrap resamples of one side.

    An array of shape ``(len(qs), RESAMPLES)`` (see :func:`_resample` for how a resample is drawn),
    kept by a digest of the values in ``kept`` (the caller's memory and store,
    :class:`~fmbench.comparison.resample_store.Resamples`) when it is given. A resample's quantile is found among the ranks of
    the values it drew (equal values share a rank), sorted as small integers: the same value as sorting
    the values. ``pairing``: the samples of the shared draw (:func:`pairings`), kept under a digest of their own.
    """
    # slow to import (numpy): only the resampling needs it
    import numpy as np

    digest = _side_digest(side) if pairing is None else paired_digest(_side_digest(side), pairing)
    found = None if kept is None else kept.recall(digest, qs)
    if found is not None:
        return found
    store = None if kept is None else kept.store
    if store is not None:
        found = _stored_quantiles(store, digest, qs, _flat_values(side))
        if found is not None:
            kept.remember(digest, qs, found)  # type: ignore[union-attr]
            return found
    resamples = _resample(side, digest) if pairing is None else _resample(side, digest, pairing)
    values = resamples.values
    ordered = np.sort(values)
    empty = len(values)  # the rank of an empty slot: after every value
    rank = np.searchsorted(ordered, values, side="left").astype(_index_type(empty))  # of the first value equal to each
    ranks = np.empty((RESAMPLES, resamples.width), dtype=rank.dtype)
    counts = np.full(RESAMPLES, resamples.width)
    for start, stop, drawn, valid in resamples.blocks():
        block = ranks[start:stop]
        np.take(rank, drawn, out=block)
        if valid is not None:
            np.copyto(block, empty, where=~valid)
            counts[start:stop] = valid.sum(axis=1)
        block.sort(axis=1)  # while the block is in the cache
    # The nearest-rank k-th smallest of each row (k from 1; the empty slots sort after every value).
    ks = np.stack([np.maximum(np.ceil(q * counts).astype(np.int64), 1) for q in qs], axis=1)
    picked = np.ascontiguousarray(np.take_along_axis(ranks, ks - 1, axis=1).T)
    out = np.append(ordered, np.inf)[picked]
    if store is not None:
        store.save(digest, qs, len(values), RESAMPLES, [picked])
    if kept is not None:
        kept.remember(digest, qs, out, drawn=True)
    return out


def _binary(values: Any) -> bool:
    return bool(((values == 0.0) | (values == 1.0)).all())


def _stored_means(store: Any, digest: bytes, values: Any) -> Any:
    """The resampled means of a stored entry (a rate's whole sums and counts, else the means), or ``None``."""
    # slow to import (numpy): only the resampling needs it
    import numpy as np

    arrays = store.load(digest, "mean", len(values), RESAMPLES)
    if arrays is None:
        return None
    if _binary(values):
        if len(arrays) != 2 or arrays[0].dtype.kind != "i" or arrays[1].dtype.kind != "i":
            return None
        sums, counts = arrays[0].astype(np.int64), arrays[1].astype(np.int64)
        if len(sums) != RESAMPLES or len(counts) not in (1, RESAMPLES) or (counts <= 0).any():
            return None
        if (sums < 0).any() or (sums > counts).any():
            return None
        return sums / (int(counts[0]) if len(counts) == 1 else counts)
    if len(arrays) != 1 or arrays[0].dtype.kind != "f" or len(arrays[0]) != RESAMPLES:
        return None
    return arrays[0].copy()


def _smallest_int(array: Any) -> Any:
    # slow to import (numpy): only the resampling needs it
    import numpy as np

    return array.astype(np.int16 if int(array.max(initial=0)) < np.iinfo(np.int16).max else np.int32)


def resampled_means(side: Clusters, kept: Resamples | None = None, pairing: Pairing | None = None) -> Any:
    """The means of :data:`RESAMPLES` cluster-bootstrap resamples of one side (a rate, where the values
    are 0/1 outcomes), kept by a digest of the values in ``kept`` when it is given (as
    :func:`resampled_quantiles`). The same resamples as :func:`resampled_quantiles`
    draws for the same values (and ``pairing``)."""
    # slow to import (numpy): only the resampling needs it
    import numpy as np

    digest = _side_digest(side) if pairing is None else paired_digest(_side_digest(side), pairing)
    found = None if kept is None else kept.recall(digest, "mean")
    if found is not None:
        return found
    store = None if kept is None else kept.store
    if store is not None:
        found = _stored_means(store, digest, _flat_values(side))
        if found is not None:
            kept.remember(digest, "mean", found)  # type: ignore[union-attr]
            return found
    resamples = _resample(side, digest) if pairing is None else _resample(side, digest, pairing)
    values = resamples.values
    binary = _binary(values)
    # 0/1 outcomes: their sums are whole numbers, exact in any order, so they are counted on bytes.
    source = values.astype(np.uint8) if binary else values
    dtype: Any = np.int64 if binary else np.float64
    sums = np.empty(RESAMPLES, dtype=dtype)
    counts = np.full(RESAMPLES, resamples.width)
    uneven = False
    picked = np.empty((resamples.rows_per_block, resamples.width), dtype=source.dtype)
    for start, stop, drawn, valid in resamples.blocks():
        block = picked[: stop - start]
        np.take(source, drawn, out=block)
        if valid is not None:
            uneven = True
            np.copyto(block, 0, where=~valid)
            counts[start:stop] = valid.sum(axis=1)
        sums[start:stop] = block.sum(axis=1, dtype=dtype)
    if not uneven:
        counts = np.array([resamples.width])
        out = sums / resamples.width
    else:
        out = sums / counts
    if store is not None:
        arrays = [_smallest_int(sums), _smallest_int(counts)] if binary else [out]
        store.save(digest, "mean", len(values), RESAMPLES, arrays)
    if kept is not None:
        kept.remember(digest, "mean", out, drawn=True)
    return out


def few_clusters_factor(clusters: int) -> float:
    """How much a percentile interval over ``clusters`` resampled samples is widened: ``√(G / (G − 1))``.

    The bootstrap of ``G`` clusters sees their spread with ``G`` in the denominator, not the ``G − 1`` of an unbiased
    variance; the factor corrects it (1.02 at 25 samples, 1.41 at 2). One sample has no spread to correct (every
    resample is that sample): 1, and the interval is the trials' noise alone (the floor of
    :func:`_percentile_interval`). ``benchmarks/coverage.py`` measures the coverage it gives at 25 samples."""
    if clusters < 2:
        return 1.0
    return math.sqrt(clusters / (clusters - 1))


def _bessel(n: int, unbiased: bool) -> float:
    return n / (n - 1) if unbiased and n > 1 else (0.0 if unbiased else 1.0)


def trial_noise_variance(side: Clusters, q: float | None = None, unbiased: bool = False, scores: bool = False
                         ) -> float:
    """The variance a side's figure would have from its trials' noise alone, the samples held as they are: of its
    mean (``q`` ``None``), ``Σ n·s² / N²`` over its (run, sample) cells of ``n`` trials and variance ``s²``; or of its
    nearest-rank ``q`` quantile ``Q``, the same of whether each value is at most ``Q``, over the density at ``Q``
    squared (the density from the values ``√N`` ranks either side of ``Q``, :func:`clustered_quantile.density_at`).
    0 where the values show none. ``unbiased``: each cell's variance with ``n − 1`` in its denominator (a cell of one
    trial shows none). ``scores``: the density against the ranks' normal scores (the paired interval's, calibrated
    in ``benchmarks/coverage.py``); a few samples' floor keeps the plain spacing, the wider in a tail."""
    cells = [list(sample) for run in side for sample in run if len(sample)]
    total = sum(len(c) for c in cells)
    if total == 0:
        return 0.0
    if q is None:
        spread = 0.0
        for c in cells:
            m = sum(c) / len(c)
            spread += sum((v - m) ** 2 for v in c) * _bessel(len(c), unbiased)
        return spread / total / total
    ordered = sorted(v for c in cells for v in c)
    k = quantile_rank(total, q) - 1
    at = ordered[k]
    spread = 0.0
    for c in cells:
        p = sum(v <= at for v in c) / len(c)
        spread += len(c) * p * (1 - p) * _bessel(len(c), unbiased)
    density = clustered_quantile.density_at(ordered, k, scores)
    return 0.0 if density is None else spread / total / total / density / density


def _percentile_interval(
    differences: Any, confidence: float, method: str, paired: bool = False, clusters: int | None = None,
    floor: float = 0.0,
) -> Interval:
    """The ``α/2`` and ``1 − α/2`` nearest-rank percentiles of the resampled differences; ``clusters``: how many
    samples the resamples drew, which widens the interval about the resamples' median by
    :func:`few_clusters_factor`. ``floor``: a variance the interval never shows less of when it rests on fewer than
    :data:`FLOOR_SAMPLES` samples (the trials' noise, :func:`trial_noise_variance`): each bound is then at least
    ``z·√floor`` from the median, so a few samples whose differences happen to agree never make a point of it."""
    # slow to import (numpy): only the resampling needs it
    import numpy as np

    differences = np.sort(differences)
    alpha = 1 - confidence
    n = len(differences)
    low = float(differences[min(max(math.ceil(alpha / 2 * n) - 1, 0), n - 1)])
    high = float(differences[min(max(math.ceil((1 - alpha / 2) * n) - 1, 0), n - 1)])
    if clusters is not None:
        factor = few_clusters_factor(clusters)
        centre = float(differences[(n - 1) // 2])
        low, high = centre - factor * (centre - low), centre + factor * (high - centre)
    if floor > 0 and (clusters is None or clusters < FLOOR_SAMPLES):
        centre = float(differences[(n - 1) // 2])
        reach = z_value(confidence) * math.sqrt(floor)
        low, high = min(low, centre - reach), max(high, centre + reach)
    return Interval(low=low, high=high, confidence=confidence, method=method, paired=paired)


def _sample_count(side: Clusters, pairing: Pairing | None) -> int:
    """How many samples a resample of the side draws: the shared ones once, else every run's that hold a value."""
    if pairing is not None:
        return len(pairing.shared)
    return sum(1 for run in side for sample in run if len(sample))


def _clusters(baseline: Clusters, candidate: Clusters, pb: Pairing | None, pc: Pairing | None, paired: bool) -> int:
    """The samples the interval's spread rests on: the shared ones where paired, else the smaller side's."""
    if paired and pb is not None:
        return len(pb.shared)
    return min(_sample_count(baseline, pb), _sample_count(candidate, pc))


def _sample_draws(
    baseline: Clusters, candidate: Clusters, samples: tuple[SampleIds, SampleIds] | None
) -> tuple[Pairing | None, Pairing | None, bool]:
    """How each side draws its samples: ``(baseline's, candidate's, paired)``. Sides that share their samples take
    one draw together (paired); otherwise a side of several runs that all ran the same samples draws them once for
    all its runs (its own :class:`Pairing` with itself); any other side draws each run's samples alone (``None``)."""
    if samples is None:
        return None, None, False
    both = pairings(baseline, candidate, *samples)
    if both is not None:
        return both[0], both[1], True

    def alone(side: Clusters, ids: SampleIds) -> Pairing | None:
        own = pairings(side, side, ids, ids) if len(side) > 1 else None
        return None if own is None else own[0]

    return alone(baseline, samples[0]), alone(candidate, samples[1]), False


PAIRED_NOISE_METHOD = (
    "normal interval on the change on the samples both sides ran, from the variance their trials' noise gives it "
    "(one run a side, every sample repeated; the samples held as they are)"
)


def _paired_noise_interval(baseline: Clusters, candidate: Clusters, q: float | None, confidence: float
                           ) -> Interval | None:
    """Sides paired by sample, one run each, every one of at least :data:`FLOOR_SAMPLES` samples repeated: the change
    on those samples varies only with the trials' noise, so the interval is normal about the exact difference with
    that variance (each sample's own, unbiased, :func:`trial_noise_variance`). ``None`` otherwise, or where the
    trials show no noise."""
    runs = [[[s for s in run if len(s)] for run in side] for side in (baseline, candidate)]
    runs = [[run for run in side if run] for side in runs]
    if any(len(side) != 1 or len(side[0]) < FLOOR_SAMPLES or any(len(s) < 2 for s in side[0]) for side in runs):
        return None  # several runs, a sample of one trial, or too few samples to stand for the workload
    variance = trial_noise_variance(baseline, q, True, True) + trial_noise_variance(candidate, q, True, True)
    if not variance > 0:
        return None
    b, c = (sorted(v for s in side[0] for v in s) for side in runs)
    d = math.fsum(c) / len(c) - math.fsum(b) / len(b) if q is None else nearest_rank(c, q) - nearest_rank(b, q)
    half = z_value(confidence) * math.sqrt(variance)
    return Interval(low=d - half, high=d + half, confidence=confidence, method=PAIRED_NOISE_METHOD, paired=True)


def cluster_bootstrap_mean_difference(
    baseline: Clusters,
    candidate: Clusters,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    method: str = CLUSTER_MEAN_METHOD,
    kept: Resamples | None = None,
    samples: tuple[SampleIds, SampleIds] | None = None,
    on_shared_samples: bool = False,
) -> Interval | None:
    """Percentile interval on mean(candidate) − mean(baseline) from the cluster bootstrap.

    For a rate, the values are each trial's 0/1 outcome. ``None`` when either side has fewer than
    :data:`MIN_BOOTSTRAP_VALUES` values; resample ``i`` of one side is paired with resample ``i`` of
    the other. ``samples``: the sides' sample ids (baseline's, candidate's); where they share them
    (:func:`pairings`) each resample draws the samples once for both sides. ``on_shared_samples``: the interval is on
    the change on the samples both sides ran (a comparison's), so paired sides may take :func:`_paired_noise_interval`.
    """
    if min(_cluster_count(baseline), _cluster_count(candidate)) < MIN_BOOTSTRAP_VALUES:
        return None
    z_value(confidence)  # validates the level
    pb, pc, paired = _sample_draws(baseline, candidate, samples)
    found = _paired_noise_interval(baseline, candidate, None, confidence) if paired and on_shared_samples else None
    if found is not None:
        return found
    clusters = _clusters(baseline, candidate, pb, pc, paired)
    differences = resampled_means(candidate, kept, pc) - resampled_means(baseline, kept, pb)
    floor = trial_noise_variance(baseline) + trial_noise_variance(candidate) if clusters < FLOOR_SAMPLES else 0.0
    return _percentile_interval(differences, confidence, method, paired, clusters, floor)


def cluster_bootstrap_quantile_difference(
    baseline: Clusters,
    candidate: Clusters,
    q: float,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    together: tuple[float, ...] = (),
    kept: Resamples | None = None,
    samples: tuple[SampleIds, SampleIds] | None = None,
    on_shared_samples: bool = False,
) -> Interval | None:
    """Percentile interval on quantile_q(candidate) − quantile_q(baseline) from the cluster bootstrap.

    ``None`` when either side has fewer than :data:`MIN_BOOTSTRAP_VALUES` values. The two sides'
    resamples are independent; resample ``i`` of one is paired with resample ``i`` of the other.
    ``together``: the quantiles (``q`` among them) the caller takes of the same values, worked out from
    one set of resamples and memoized together (a figure catalog's median and p90); else ``q`` alone.
    ``samples``, ``on_shared_samples``: as :func:`cluster_bootstrap_mean_difference` takes them. Unpaired sides of
    one run each and enough samples take :func:`clustered_quantile.unpaired` instead (no resampling)."""
    if min(_cluster_count(baseline), _cluster_count(candidate)) < MIN_BOOTSTRAP_VALUES:
        return None
    z_value(confidence)  # validates the level
    row = (qs := together if q in together else (q,)).index(q)
    pb, pc, paired = _sample_draws(baseline, candidate, samples)
    found = _paired_noise_interval(baseline, candidate, q, confidence) if paired and on_shared_samples else None
    bounds = None if paired else clustered_quantile.unpaired(baseline, candidate, q, confidence, FLOOR_SAMPLES)
    if (found := found or (Interval(*bounds, confidence, clustered_quantile.METHOD) if bounds else None)) is not None:
        return found
    clusters = _clusters(baseline, candidate, pb, pc, paired)
    differences = resampled_quantiles(candidate, qs, kept, pc)[row] - resampled_quantiles(baseline, qs, kept, pb)[row]
    floor = 0.0
    if clusters < FLOOR_SAMPLES:  # only a few samples' interval takes the floor (see _percentile_interval)
        floor = trial_noise_variance(baseline, q) + trial_noise_variance(candidate, q)
    return _percentile_interval(differences, confidence, CLUSTER_METHOD, paired, clusters, floor)
