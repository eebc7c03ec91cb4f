"""The unpaired quantile interval without resampling: each side's variance from its samples' shares at or below
its quantile, checked against the same sums worked out with numpy, and the sides it applies to."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
from scipy.stats import t as student

from fmbench.analysis import clustered_quantile, stats

SIDE = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [2.5, 3.5, 7.0], [0.5, 8.0, 9.0]]


def test_a_sides_variance_is_its_samples_share_spread_over_the_density_squared() -> None:
    found = clustered_quantile.quantile_variance(SIDE, 0.5)
    values = np.sort(np.ravel(SIDE))
    k = math.ceil(0.5 * 12) - 1  # nearest rank: the 6th of 12 values, 3.5
    below = np.array([sum(v <= values[k] for v in c) for c in SIDE])
    share = float(np.mean(values <= values[k]))
    reach = math.ceil(math.sqrt(12))  # 4 ranks either side
    lo, hi = k - reach, k + reach
    density = (hi - lo) / 12 / (values[hi] - values[lo])
    expected = 4 / 3 * float(np.sum((below - share * 3) ** 2)) / 144 / density**2
    assert found is not None and found[1] == 4 and math.isclose(found[0], expected)


def test_the_interval_is_students_t_about_the_exact_difference_with_welchs_degrees_of_freedom() -> None:
    other = [[v + 1.5 for v in c] for c in SIDE] + [[2.0, 4.0, 6.0]]
    low, high = clustered_quantile.difference_interval(SIDE, other, 0.5, 0.95) or (0.0, 0.0)
    (vb, gb), (vc, gc) = (clustered_quantile.quantile_variance(s, 0.5) or (0.0, 0) for s in (SIDE, other))
    freedom = (vb + vc) ** 2 / (vb**2 / (gb - 1) + vc**2 / (gc - 1))
    half = float(student.ppf(0.975, freedom)) * math.sqrt(vb + vc)
    exact = float(np.sort(np.ravel(other))[math.ceil(0.5 * 15) - 1] - np.sort(np.ravel(SIDE))[5])
    assert math.isclose((low + high) / 2, exact) and math.isclose((high - low) / 2, half)


def test_a_side_of_one_sample_or_no_spread_at_its_quantile_has_no_variance() -> None:
    assert clustered_quantile.quantile_variance([[1.0, 2.0, 3.0]], 0.5) is None
    assert clustered_quantile.quantile_variance([[1.0] * 5, [1.0] * 5], 0.5) is None


def test_only_unpaired_sides_of_one_run_and_enough_samples_take_it() -> None:
    run = [[float(i + j) for j in range(4)] for i in range(12)]
    assert clustered_quantile.unpaired([run], [run], 0.9, 0.95, stats.FLOOR_SAMPLES) is not None
    assert clustered_quantile.unpaired([run, run], [run], 0.9, 0.95, stats.FLOOR_SAMPLES) is None  # several runs
    assert clustered_quantile.unpaired([run[:9]], [run], 0.9, 0.95, stats.FLOOR_SAMPLES) is None  # nine samples
    interval = stats.cluster_bootstrap_quantile_difference([run], [run], 0.9)
    assert interval is not None and interval.method == clustered_quantile.METHOD


def test_the_density_in_a_tail_against_normal_scores_is_the_normal_density_where_the_spacing_overstates_it() -> None:
    # Values exactly at the normal scores of their ranks (Blom's): the density at the p90 rank is the standard
    # normal's there.
    # The plain spacing (the share of ranks between the values √N either side over their distance) takes the
    # quantile function's curvature in a tail for a lower density: about 5 % lower at p90 of 400 values.
    normal = NormalDist()
    ordered = [normal.inv_cdf((i + 0.625) / 400.25) for i in range(400)]
    k = math.ceil(0.9 * 400) - 1
    exact = normal.pdf(ordered[k])
    assert math.isclose(clustered_quantile.density_at(ordered, k) or 0.0, exact, rel_tol=1e-12)
    spacing = clustered_quantile.density_at(ordered, k, scores=False) or 0.0
    assert 0.93 < spacing / exact < 0.96
    # At the median the two agree; equal values either side have no density.
    middle = clustered_quantile.density_at(ordered, 199) or 0.0
    assert math.isclose(middle, clustered_quantile.density_at(ordered, 199, scores=False) or 0.0, rel_tol=0.01)
    assert clustered_quantile.density_at([1.0] * 50, 45) is None


def test_the_paired_interval_takes_the_density_against_normal_scores_and_a_few_samples_floor_the_spacing() -> None:
    run = [[float(i + j) for j in range(4)] for i in range(12)]
    ordered = sorted(v for s in run for v in s)
    k = math.ceil(0.9 * len(ordered)) - 1
    below = [sum(v <= ordered[k] for v in s) / 4 for s in run]
    spread = sum(4 * p * (1 - p) * 4 / 3 for p in below)
    density = clustered_quantile.density_at(ordered, k) or 0.0
    assert math.isclose(stats.trial_noise_variance([run], 0.9, True, True), spread / 48 / 48 / density / density)
    # A few samples' floor keeps the plain spacing.
    plain = clustered_quantile.density_at(ordered, k, scores=False) or 0.0
    assert math.isclose(stats.trial_noise_variance([run], 0.9, True), spread / 48 / 48 / plain / plain)
