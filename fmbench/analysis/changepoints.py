"""Changes over a build history: where one figure of a device moved, and which of many such changes to believe.

**The series.** For one device, configuration, suite revision, workload and figure, every OS build measured
is a column, in version order (:mod:`fmbench.analysis.os_builds`, never the date a build was measured), and
every sample of the workload a row: a cell holds the figure of that sample on that build (its median time to
first token, say, or its pass rate). A sample a build did not measure is an empty cell.

**Where it moved: E-divisive.** A change point is a build boundary: the builds before it against the builds
from it on. Each boundary is scored by the energy statistic of Matteson and James's E-divisive method, the
distance between the two sides' distributions (twice the mean distance between a value before and a value
after, less the mean distance within each side), scaled by ``n·m / (n + m)`` for ``n`` and ``m`` values a
side. A slow prompt and a quick one must not look like a change, so each cell is first taken less its
sample's mean over the builds being looked at: what is left is how far that sample sat above or below its
own level on that build, and a step shows as every sample's cells after it sitting higher than its cells
before. The boundary with the largest statistic is the candidate. Binary segmentation then looks again on
each side of a change found, until no side has a significant change left (or a bound on the number of change
points is reached); a boundary always falls between two builds, never inside one.

**Is it real: a permutation test that keeps the pairing.** If the figure did not move inside a stretch of
builds, each sample's values there could have come in any order of builds. The test shuffles each sample's
values across the builds of the stretch (each sample on its own, a missing cell staying missing), takes the
largest statistic of every shuffled history, and counts how often it reaches the observed one. Shuffles are
drawn until ten of them have reached it (Besag and Clifford's sequential test: p = 10 / shuffles drawn) or up
to a cap (p = (reached + 1) / cap), so a stretch that plainly did not move costs a few dozen shuffles and a
real change the full cap. Every draw comes from a generator seeded with the series' own key: the same
history always gives the same answer.

**How big.** A change's size compares the builds before it with the builds after it, up to the next change
points on either side, over the samples measured on both sides: each sample's level on a side (the mean of its
cells for a rate or a mean, the median for a latency or another quantile), then the same statistic over the
samples; its interval (95%) resamples the samples.

**Many series, one list.** A site tests many series and each test can be wrong by chance. The p-values of
every test of a list (every stretch tested, change or not) go through the Benjamini–Hochberg procedure
(``scipy.stats.false_discovery_control``), and a change is listed when its adjusted p-value is at most the
stated level (5% by default): on average at most that share of the listed changes is noise. The cap on
shuffles grows with the number of series so that a real change can still pass the strictest threshold
(``level / tests``). Sample-level changes (a prompt that now fails every trial) are a family of their own
with their own correction at the same level, so a long list of figures does not drown them or the reverse.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

import numpy as np

from fmbench.analysis.os_builds import in_version_order

DEFAULT_LEVEL = 0.05
"""The false-discovery rate a list of changes is controlled at unless a caller says otherwise."""

FIGURES = "figures"
"""The family of change points in figures' series."""
SAMPLES = "samples"
"""The family of sample-level changes (their own correction)."""

Statistic = Literal["mean", "median"]

METHOD = (
    "E-divisive change points over each series of OS builds in version order, each tested by shuffling every "
    "sample's values across builds; the Benjamini–Hochberg procedure over every test of the list"
)

T = TypeVar("T")


def method_statement(level: float = DEFAULT_LEVEL) -> str:
    """The sentence a list of changes states its method and level with."""
    return (
        f"Changes are dated to the build where a series moved (E-divisive change points, a permutation test "
        f"that keeps each sample's values together); the list controls its false-discovery rate at "
        f"{level:.0%} (Benjamini–Hochberg), sample-level changes separately at the same level."
    )


@dataclass(frozen=True, eq=False)
class Series:
    """One figure's history: ``values[sample, build]`` with the builds in version order (NaN: not measured)."""

    key: tuple[str, ...]
    """What the series is of (device, configuration, suite revision, workload, figure): it seeds the test."""
    builds: tuple[str, ...]
    values: np.ndarray
    statistic: Statistic = "median"
    """How a side's size is summarised: ``mean`` for rates and means, ``median`` for quantiles."""
    samples: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        values = np.asarray(self.values, dtype=float)
        if values.ndim != 2 or values.shape[1] != len(self.builds):
            raise ValueError(f"values must be samples × builds ({len(self.builds)} builds), not {values.shape}")
        if self.samples and len(self.samples) != values.shape[0]:
            raise ValueError(f"{len(self.samples)} sample names for {values.shape[0]} rows of values")
        object.__setattr__(self, "values", values)


def series_from_cells(
    key: tuple[str, ...],
    cells: Mapping[tuple[str, str], float | None],
    statistic: Statistic = "median",
) -> Series:
    """A :class:`Series` from ``{(sample, build): value}``: the builds in version order, the samples by name;
    a cell absent or ``None`` is not measured."""
    builds = tuple(b for b in in_version_order(b for _, b in cells) if b is not None)
    samples = tuple(sorted({s for s, _ in cells}))
    values = np.full((len(samples), len(builds)), np.nan)
    row = {s: i for i, s in enumerate(samples)}
    column = {b: j for j, b in enumerate(builds)}
    for (sample, build), value in cells.items():
        if value is not None:
            values[row[sample], column[build]] = value
    return Series(key, builds, values, statistic, samples)


@dataclass(frozen=True)
class Settings:
    """How hard the search looks (every field bounds work)."""

    split_level: float = DEFAULT_LEVEL
    """Binary segmentation looks on both sides of a candidate whose own p-value is at most this."""
    min_permutations: int = 999
    """The least cap on shuffles a test (the cap grows with the number of series, see the module's text)."""
    exceedances: int = 10
    """A test stops once this many shuffles reached the observed statistic."""
    max_change_points: int = 8
    """At most this many change points a series."""
    min_builds: int = 1
    """Each side of a change point holds at least this many builds."""
    confidence: float = 0.95
    """The confidence of a change's size interval."""
    resamples: int = 999
    seed: int = 20260701
    memory_cells: int = 1_000_000
    """At most this many (cell, build) numbers a batch of shuffles holds (shuffles are scored in batches that fit)."""


@dataclass(frozen=True)
class ChangePoint:
    """A candidate change: the series moved between ``previous_build`` and ``build``."""

    key: tuple[str, ...]
    build: str
    """The first build of the new level."""
    previous_build: str
    before: tuple[str, ...]
    """The builds compared on the old side (back to the previous change point)."""
    after: tuple[str, ...]
    """The builds compared on the new side (up to the next change point)."""
    statistic: Statistic
    before_value: float | None
    after_value: float | None
    delta: float | None
    """``after_value - before_value`` (``None`` when no sample was measured on both sides)."""
    interval: tuple[float, float] | None
    """The delta's interval from resampling the samples, at the settings' confidence."""
    samples: int
    """How many samples were measured on both sides."""
    energy: float
    """The scaled energy statistic at this boundary."""
    p_value: float
    permutations: int
    """How many shuffles the test drew."""

    @property
    def relative(self) -> float | None:
        """The delta as a share of the old level (``None`` when that is zero or unknown)."""
        if self.delta is None or not self.before_value:
            return None
        return self.delta / abs(self.before_value)

    def to_json(self) -> dict[str, Any]:
        return {
            "key": list(self.key),
            "build": self.build,
            "previous_build": self.previous_build,
            "before": list(self.before),
            "after": list(self.after),
            "statistic": self.statistic,
            "before_value": self.before_value,
            "after_value": self.after_value,
            "delta": self.delta,
            "relative": self.relative,
            "interval": None if self.interval is None else list(self.interval),
            "samples": self.samples,
            "energy": self.energy,
            "p_value": self.p_value,
            "permutations": self.permutations,
        }


@dataclass(frozen=True)
class SeriesResult:
    series: Series
    tests: tuple[ChangePoint, ...]
    """Every stretch tested, with its best boundary, in the order tested."""
    split_level: float = DEFAULT_LEVEL

    @property
    def change_points(self) -> tuple[ChangePoint, ...]:
        """The tested boundaries the segmentation split at (before any correction for the list), in build order."""
        order = {b: i for i, b in enumerate(self.series.builds)}
        found = [t for t in self.tests if t.p_value <= self.split_level]
        return tuple(sorted(found, key=lambda c: order[c.build]))


@dataclass(frozen=True)
class Hypothesis(Generic[T]):
    """One test of a list: what it is about, its p-value and its family."""

    subject: T
    p_value: float
    family: str = FIGURES


@dataclass(frozen=True)
class Decision(Generic[T]):
    subject: T
    p_value: float
    adjusted: float
    """Benjamini–Hochberg adjusted within its family."""
    family: str
    kept: bool
    """Listed: the adjusted p-value is at most the level."""


@dataclass(frozen=True)
class History:
    """Every test of a list of series, and what the list keeps at ``level``."""

    level: float
    decisions: tuple[Decision[ChangePoint], ...]
    samples: tuple[Decision[object], ...] = ()
    permutations: int = 0
    """The cap on shuffles each test had."""
    results: tuple[SeriesResult, ...] = field(default=(), repr=False)

    @property
    def change_points(self) -> tuple[Decision[ChangePoint], ...]:
        return tuple(d for d in self.decisions if d.kept)

    @property
    def sample_changes(self) -> tuple[Decision[object], ...]:
        return tuple(d for d in self.samples if d.kept)

    def to_json(self) -> dict[str, Any]:
        """The list's level, method and kept change points (each with its p-value adjusted in its family)."""
        return {
            "level": self.level,
            "method": METHOD,
            "statement": method_statement(self.level),
            "tests": len(self.decisions),
            "sample_tests": len(self.samples),
            "permutations": self.permutations,
            "change_points": [{**d.subject.to_json(), "adjusted_p_value": d.adjusted} for d in self.change_points],
        }


# --- the energy statistic ------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Stretch:
    """A stretch of builds ready to score: each measured cell's residual (its value less its sample's mean over
    the stretch), sorted, with the sample and build it came from."""

    residuals: np.ndarray
    """``(cells,)`` ascending."""
    sample: np.ndarray
    build: np.ndarray
    present: np.ndarray
    """``(samples, builds)``: which cells were measured."""
    counts: np.ndarray
    """``(builds,)``: measured cells a build (a shuffle keeps them)."""

    @classmethod
    def of(cls, values: np.ndarray) -> _Stretch:
        present = ~np.isnan(values)
        measured = present.sum(1, keepdims=True)
        means = np.where(present, values, 0.0).sum(1, keepdims=True) / np.maximum(measured, 1)
        sample, build = np.nonzero(present)
        residuals = (values - means)[sample, build]
        order = np.argsort(residuals, kind="stable")
        return cls(residuals[order], sample[order], build[order], present, present.sum(0))

    def energies(self, labels: np.ndarray, min_builds: int) -> np.ndarray:
        """The scaled energy statistic at every boundary ``min_builds … builds - min_builds`` for each history in
        ``labels`` (``(histories, cells)``: the build each sorted cell sits in): ``(histories, boundaries)``.

        In one dimension the distances need no pairs: ``g_1 ≤ … ≤ g_n`` sorted, the sum of ``g_j − g_i`` over
        the pairs ``i < j`` is the sum of ``g_i · (2i − 1 − n)``. With the cells sorted once, each boundary's
        sums within the builds before it and within the builds after it take one pass (``cells × boundaries``
        operations a history, not ``cells²``), and the distances across it are what is left of the sum over
        all cells."""
        width = self.counts.shape[0]
        cells = self.residuals.shape[0]
        t = np.arange(min_builds, width - min_builds + 1)
        before = labels[:, None, :] < t[None, :, None]
        counts = np.concatenate([[0], np.cumsum(self.counts)])
        n = counts[t].astype(float)
        m = cells - n
        r = self.residuals
        k = np.arange(1, cells + 1)
        everything = float(r @ (2 * k - 1 - cells))
        # Sums over the cells before the boundary (b = 1) and after it, each as a product with r, so that no
        # array of histories × boundaries × cells is made beyond the two below.
        b = before.astype(float)
        rank_b = np.cumsum(b, axis=-1)
        before_r = b @ r
        before_rank_r = (b * rank_b) @ r
        after_rank_r = float(r @ k) - b @ (r * k) - rank_b @ r + before_rank_r
        within_before = 2 * before_rank_r - (1 + n) * before_r
        within_after = 2 * after_rank_r - (1 + m) * (r.sum() - before_r)
        across = everything - within_before - within_after
        both = (n > 0) & (m > 0)
        n_, m_ = np.where(both, n, 1.0), np.where(both, m, 1.0)
        # The energy distance (a V-statistic: ordered pairs, so twice each within sum) times n·m/(n+m),
        # written without dividing by n·m twice.
        scaled = (2 * across - 2 * within_before * m_ / n_ - 2 * within_after * n_ / m_) / (n_ + m_)
        return np.where(both, scaled, 0.0)

    def observed(self) -> np.ndarray:
        return self.build[None, :]

    def shuffled(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """``count`` histories with each sample's measured cells shuffled among that sample's measured builds."""
        samples, width = self.present.shape
        keys = rng.random((count, samples, width))
        keys[:, ~self.present] = 2.0  # missing cells sort last and, the sort being stable, stay in place
        order = np.argsort(keys, axis=-1, kind="stable")
        places = np.broadcast_to(np.argsort(~self.present, axis=-1, kind="stable"), order.shape)
        index = np.empty_like(order)
        np.put_along_axis(index, places, order, axis=-1)
        # index[h, s, j]: the build whose value sits at build j in history h; a cell of build j moves to j' where
        # index[h, s, j'] == j.
        moved_to = np.empty_like(index)
        np.put_along_axis(moved_to, index, np.broadcast_to(np.arange(width), index.shape), axis=-1)
        return moved_to[:, self.sample, self.build]


def _permutation_p(stretch: _Stretch, observed: float, rng: np.random.Generator, cap: int, settings: Settings) -> tuple[float, int]:
    """Besag and Clifford's sequential permutation p-value of the largest boundary statistic, and shuffles drawn."""
    if observed <= 0:
        return 1.0, 0
    threshold = observed * (1 - 1e-9)
    per_shuffle = max(1, stretch.residuals.shape[0] * stretch.counts.shape[0])
    biggest = max(1, settings.memory_cells // per_shuffle)
    drawn, reached, batch = 0, 0, min(100, biggest)
    while drawn < cap:
        count = min(batch, cap - drawn)
        best = stretch.energies(stretch.shuffled(rng, count), settings.min_builds).max(-1)
        hits = np.cumsum(best >= threshold)
        if reached + hits[-1] >= settings.exceedances:
            stop = int(np.argmax(hits >= settings.exceedances - reached)) + 1
            return settings.exceedances / (drawn + stop), drawn + stop
        reached += int(hits[-1])
        drawn += count
        batch = min(batch * 2, biggest)
    return (reached + 1) / cap, drawn


# --- a series ------------------------------------------------------------------------------------------------


def _rng(seed: int, key: tuple[str, ...], stream: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32("\x1f".join(key).encode()), stream]))


def _summary(cells: np.ndarray, statistic: Statistic) -> np.ndarray:
    """The statistic over each row of ``cells`` (``(..., cells)``, NaN ignored)."""
    return np.nanmean(cells, axis=-1) if statistic == "mean" else np.nanmedian(cells, axis=-1)


def _size(
    series: Series, start: int, split: int, stop: int, rng: np.random.Generator, settings: Settings
) -> tuple[float | None, float | None, tuple[float, float] | None, int]:
    """Each side's level over the samples measured on both (the statistic of each sample's own statistic of its
    cells, so a sample's noise is summarised before the samples are), and the difference's interval from
    resampling those samples."""
    before, after = series.values[:, start:split], series.values[:, split:stop]
    paired = ~np.isnan(before).all(1) & ~np.isnan(after).all(1)
    k = int(paired.sum())
    if k == 0:
        return None, None, None, 0
    old, new = _summary(before[paired], series.statistic), _summary(after[paired], series.statistic)
    draw = rng.integers(0, k, size=(settings.resamples, k))
    deltas = _summary(new[draw], series.statistic) - _summary(old[draw], series.statistic)
    tail = (1 - settings.confidence) / 2
    low, high = np.quantile(deltas, [tail, 1 - tail])
    return float(_summary(old, series.statistic)), float(_summary(new, series.statistic)), (float(low), float(high)), k


def _test_stretch(
    series: Series, start: int, stop: int, rng: np.random.Generator, cap: int, settings: Settings
) -> tuple[int, float, float, int] | None:
    """The best boundary of builds ``start … stop - 1``: ``(split, energy, p-value, shuffles drawn)``."""
    values = series.values[:, start:stop]
    if stop - start < 2 * settings.min_builds or np.isnan(values).all():
        return None
    stretch = _Stretch.of(values)
    energies = stretch.energies(stretch.observed(), settings.min_builds)[0]
    best = int(np.argmax(energies))
    p, drawn = _permutation_p(stretch, float(energies[best]), rng, cap, settings)
    return start + settings.min_builds + best, float(energies[best]), p, drawn


def find_change_points(series: Series, settings: Settings | None = None, permutations: int | None = None) -> SeriesResult:
    """Every stretch of ``series`` the binary segmentation tested, each with its best boundary and p-value.

    A change point the segmentation split at is sized against its neighbours among them (the builds back to
    the one before and up to the next); a boundary that was not split at, against the stretch it was tested in.
    ``permutations`` caps the shuffles of one test (default: ``settings.min_permutations``)."""
    settings = settings or Settings()
    cap = max(permutations or settings.min_permutations, settings.exceedances)
    rng = _rng(settings.seed, series.key, 0)
    tested: list[tuple[int, int, int, float, float, int]] = []
    stretches = [(0, len(series.builds))]
    found = 0
    while stretches and found < settings.max_change_points:
        start, stop = stretches.pop(0)
        result = _test_stretch(series, start, stop, rng, cap, settings)
        if result is None:
            continue
        split, energy, p, drawn = result
        tested.append((start, split, stop, energy, p, drawn))
        if p <= settings.split_level:
            found += 1
            stretches += [(start, split), (split, stop)]
    bounds = sorted({0, len(series.builds), *(t[1] for t in tested if t[4] <= settings.split_level)})
    sizing = _rng(settings.seed, series.key, 1)
    tests = []
    for start, split, stop, energy, p, drawn in tested:
        if p <= settings.split_level:
            at = bounds.index(split)
            start, stop = bounds[at - 1], bounds[at + 1]
        before_value, after_value, interval, samples = _size(series, start, split, stop, sizing, settings)
        delta = None if before_value is None or after_value is None else after_value - before_value
        tests.append(ChangePoint(
            key=series.key, build=series.builds[split], previous_build=series.builds[split - 1],
            before=series.builds[start:split], after=series.builds[split:stop], statistic=series.statistic,
            before_value=before_value, after_value=after_value, delta=delta, interval=interval, samples=samples,
            energy=energy, p_value=p, permutations=drawn,
        ))
    return SeriesResult(series, tuple(tests), settings.split_level)


# --- a list of series ----------------------------------------------------------------------------------------


def control_false_discoveries(hypotheses: Sequence[Hypothesis[T]], level: float = DEFAULT_LEVEL) -> list[Decision[T]]:
    """Benjamini–Hochberg within each family of ``hypotheses`` at false-discovery rate ``level``, in the order
    given: a hypothesis is kept when its adjusted p-value is at most ``level``."""
    # scipy is slow to import, and only a list of changes needs it.
    from scipy.stats import false_discovery_control

    if not 0 < level < 1:
        raise ValueError(f"the false-discovery level must be between 0 and 1, not {level}")
    adjusted = [math.nan] * len(hypotheses)
    families: dict[str, list[int]] = {}
    for i, h in enumerate(hypotheses):
        families.setdefault(h.family, []).append(i)
    for members in families.values():
        found = false_discovery_control([hypotheses[i].p_value for i in members], method="bh")
        for i, a in zip(members, np.atleast_1d(found), strict=True):
            adjusted[i] = float(a)
    return [Decision(h.subject, h.p_value, a, h.family, a <= level) for h, a in zip(hypotheses, adjusted, strict=True)]


def permutation_cap(tests: int, level: float = DEFAULT_LEVEL, settings: Settings | None = None) -> int:
    """Shuffles a test may draw in a list of about ``tests`` tests: enough that the smallest p-value it can give,
    about 1 / cap, is half the strictest Benjamini–Hochberg threshold ``level / tests``."""
    settings = settings or Settings()
    return max(settings.min_permutations, math.ceil(2 * max(tests, 1) / level))


def changes_over_history(
    series: Iterable[Series],
    *,
    samples: Sequence[Hypothesis[object]] = (),
    level: float = DEFAULT_LEVEL,
    settings: Settings | None = None,
) -> History:
    """Every series tested for change points, and the list's false-discovery control at ``level``: the change
    points' tests as one family, ``samples`` (sample-level changes with their p-values) as another."""
    settings = settings or Settings()
    listed = list(series)
    cap = permutation_cap(sum(1 for s in listed if len(s.builds) >= 2 * settings.min_builds), level, settings)
    results = tuple(find_change_points(s, settings, cap) for s in listed)
    tests = [Hypothesis(t, t.p_value, FIGURES) for r in results for t in r.tests]
    decisions = control_false_discoveries(tests, level)
    sample_decisions = control_false_discoveries([Hypothesis(h.subject, h.p_value, SAMPLES) for h in samples], level)
    return History(level, tuple(decisions), tuple(sample_decisions), cap, results)
