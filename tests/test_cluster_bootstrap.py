"""The cluster bootstrap: samples resampled before the trials within them, runs before samples where a side
has several; seeded from a digest of its inputs, so the same data always gives the same interval."""

from __future__ import annotations

import random
from typing import Any

import pytest

from fmbench.analysis import clustered_quantile, stats


def _side(rng: random.Random, *, centre: float, samples: int, reps: int, sample_sd: float, trial_sd: float,
          runs: int = 1, run_sd: float = 0.0) -> list[list[list[float]]]:
    out = []
    for _ in range(runs):
        run_shift = rng.gauss(0, run_sd)
        run = []
        for _ in range(samples):
            level = centre + run_shift + rng.gauss(0, sample_sd)
            run.append([level + rng.gauss(0, trial_sd) for _ in range(reps)])
        out.append(run)
    return out


def _flat(side: list[list[list[float]]]) -> list[float]:
    return [v for run in side for sample in run for v in sample]


def _width(interval: stats.Interval | None) -> float:
    assert interval is not None
    return interval.high - interval.low


def test_the_same_inputs_give_the_same_interval_and_other_inputs_another() -> None:
    # Nine samples a side: fewer than FLOOR_SAMPLES, so unpaired sides of one run are still resampled.
    rng = random.Random(3)
    a = _side(rng, centre=0.4, samples=9, reps=20, sample_sd=0.05, trial_sd=0.01)
    b = _side(rng, centre=0.4, samples=9, reps=20, sample_sd=0.05, trial_sd=0.01)
    first = stats.cluster_bootstrap_quantile_difference(a, b, 0.5)
    again = stats.cluster_bootstrap_quantile_difference([list(r) for r in a], b, 0.5)
    assert first == again  # seeded from a digest of the values, not from the clock or a counter
    b[0][0][0] += 1.0
    assert stats.cluster_bootstrap_quantile_difference(a, b, 0.5) != first


def test_repetitions_of_few_samples_are_not_treated_as_independent_draws() -> None:
    # Ten samples that differ a lot, each repeated 20 times with little noise: the 200 trials carry about
    # ten values' worth of information, so the interval must be far wider than an independent-trials one.
    rng = random.Random(7)
    a = _side(rng, centre=0.4, samples=10, reps=20, sample_sd=0.05, trial_sd=0.005)
    b = _side(rng, centre=0.4, samples=10, reps=20, sample_sd=0.05, trial_sd=0.005)
    clustered = stats.cluster_bootstrap_quantile_difference(a, b, 0.5)
    independent = stats.bootstrap_quantile_difference(_flat(a), _flat(b), 0.5)
    assert _width(clustered) > 4 * _width(independent)


def test_several_runs_a_side_are_resampled_first_so_run_to_run_variation_widens_the_interval() -> None:
    # The same samples and trials with and without a shift per run: the runs are drawn first, so their
    # spread shows in the interval.
    kwargs = {"centre": 0.4, "samples": 10, "reps": 10, "sample_sd": 0.01, "trial_sd": 0.01, "runs": 4}
    varied = [_side(random.Random(seed), run_sd=0.05, **kwargs) for seed in (11, 12)]
    steady = [_side(random.Random(seed), run_sd=0.0, **kwargs) for seed in (11, 12)]
    by_run = stats.cluster_bootstrap_quantile_difference(*varied, 0.5)
    alike = stats.cluster_bootstrap_quantile_difference(*steady, 0.5)
    assert by_run is not None and by_run.method == stats.CLUSTER_METHOD
    assert _width(by_run) > 2 * _width(alike)


def test_a_clear_shift_is_detected_and_its_interval_covers_it() -> None:
    rng = random.Random(5)
    a = _side(rng, centre=0.40, samples=25, reps=20, sample_sd=0.02, trial_sd=0.02)
    b = _side(rng, centre=0.50, samples=25, reps=20, sample_sd=0.02, trial_sd=0.02)
    interval = stats.cluster_bootstrap_quantile_difference(a, b, 0.9, confidence=0.99)
    assert interval is not None and interval.sign == 1
    assert interval.low < 0.1 < interval.high
    assert interval.method == clustered_quantile.METHOD  # unpaired sides of one run and 25 samples


def test_unpaired_sides_of_several_runs_keep_the_cluster_bootstrap() -> None:
    rng = random.Random(5)
    a = _side(rng, centre=0.40, samples=25, reps=5, sample_sd=0.02, trial_sd=0.02, runs=2, run_sd=0.01)
    b = _side(rng, centre=0.50, samples=25, reps=5, sample_sd=0.02, trial_sd=0.02, runs=2, run_sd=0.01)
    interval = stats.cluster_bootstrap_quantile_difference(a, b, 0.9)
    assert interval is not None and interval.method == stats.CLUSTER_METHOD


def test_too_few_values_on_a_side_give_no_interval() -> None:
    assert stats.cluster_bootstrap_quantile_difference([[[1.0, 2.0]], [[3.0, 4.0]]], [[[1.0] * 10]], 0.5) is None
    assert stats.cluster_bootstrap_quantile_difference([], [[[1.0] * 10]], 0.5) is None


def _outcomes(rates: list[float], reps: int) -> list[list[list[float]]]:
    """One run whose samples pass ``rate`` of their ``reps`` trials each (0/1 outcomes)."""
    return [[[1.0 if i < round(rate * reps) else 0.0 for i in range(reps)] for rate in rates]]


def test_a_rates_interval_widens_when_repetitions_share_a_sample() -> None:
    # The same 200 outcomes a side (same rates), once as 200 independent samples of one trial and once as
    # 10 samples of 20 repetitions whose outcomes hang together (some samples always pass, others never).
    baseline_rates = [1.0] * 6 + [0.0] * 4
    candidate_rates = [1.0] * 5 + [0.0] * 5
    clustered = stats.cluster_bootstrap_mean_difference(_outcomes(baseline_rates, 20), _outcomes(candidate_rates, 20))
    independent = stats.cluster_bootstrap_mean_difference(
        [[[v] for v in _flat(_outcomes(baseline_rates, 20))]], [[[v] for v in _flat(_outcomes(candidate_rates, 20))]]
    )
    assert clustered is not None and independent is not None
    assert clustered.method == independent.method == stats.CLUSTER_MEAN_METHOD
    assert _width(clustered) > 2 * _width(independent)
    assert clustered.low < -0.1 < clustered.high  # both cover the true difference of rates
    assert independent.low < -0.1 < independent.high
    # Deterministic: the same outcomes give the same interval after the memo is cleared.
    again = stats.cluster_bootstrap_mean_difference(_outcomes(baseline_rates, 20), _outcomes(candidate_rates, 20))
    assert again == clustered


def test_a_rate_interval_of_the_cluster_bootstrap_stays_within_minus_one_and_one() -> None:
    interval = stats.cluster_bootstrap_mean_difference(_outcomes([1.0] * 5, 20), _outcomes([0.0] * 5, 20))
    assert interval is not None
    assert interval.low == interval.high == -1.0
    assert interval.excludes_zero


# Intervals the seeded draws give (the draws are part of what a published interval is): uneven runs and samples,
# tied values, 0/1 outcomes. Pinned again when the draw stopped drawing trials again inside each drawn sample
# (resample_store.ALGORITHM 2) and the interval took the few-clusters factor √(G / (G − 1)) and the trials' noise as
# its floor.
_UNEVEN = [[[0.38, 0.54, 0.6, 0.45], [0.37, 0.49, 0.55, 0.61], [0.38, 0.37, 0.57], [0.55, 0.65, 0.6, 0.49, 0.47]],
           [[0.81, 0.52, 0.47, 0.44], [0.56, 0.56]]]
_EVEN = [[[0.41551344030281046, 0.4437841653374633, 0.47730920054356135, 0.5192397421410584],
          [0.5596802123673348, 0.4709816120933704, 0.2710218729526836, 0.520172466620027],
          [0.3080302875398475, 0.432858288897039, 0.302620351584162, 0.4502100642933085],
          [0.3721434470402953, 0.47138861679060395, 0.7800308194821386, 0.44513944091181734],
          [0.5342323952682728, 0.3176674728301232, 0.4211945960299968, 0.5162485319580344]]]
_OUTCOMES_A = [[[1.0, 1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [0.0, 1.0, 1.0, 0.0], [1.0, 0.0, 1.0, 1.0],
                [1.0, 0.0, 1.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0]]]
_OUTCOMES_B = [[[1.0, 1.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0], [1.0, 0.0, 1.0, 1.0], [1.0, 1.0, 0.0, 0.0],
                [1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0]]]


def test_the_seeded_resamples_give_the_intervals_their_algorithm_gives() -> None:
    median = stats.cluster_bootstrap_quantile_difference(_UNEVEN, _EVEN, 0.5, confidence=0.99)
    p90 = stats.cluster_bootstrap_quantile_difference(_UNEVEN, _EVEN, 0.9, confidence=0.99)
    rate = stats.cluster_bootstrap_mean_difference(_OUTCOMES_A, _OUTCOMES_B)
    mean = stats.cluster_bootstrap_mean_difference(_UNEVEN, _EVEN)
    assert median is not None and (median.low, median.high) == (-0.17439225205867942, 0.024671133882314067)
    assert p90 is not None and (p90.low, p90.high) == (-0.31565748868707694, 0.255424296930427)
    assert rate is not None and (rate.low, rate.high) == (-0.2994838242999639, 0.21615049096663064)
    assert mean is not None and (mean.low, mean.high) == (-0.14315778388582712, -0.010630178992668111)


def test_the_trials_of_a_drawn_sample_are_not_drawn_again() -> None:
    # Every sample passes one trial of two on each side: whichever samples a resample draws, its rate is 0.5, so the
    # interval of these ten samples is a point. Drawing the trials again inside each sample would add their noise a
    # second time (the samples' means already hold it).
    half = [[[1.0, 0.0] for _ in range(stats.FLOOR_SAMPLES)]]
    other = [[[0.0, 1.0] for _ in range(stats.FLOOR_SAMPLES)]]
    assert (stats.resampled_means(half) == 0.5).all()
    interval = stats.cluster_bootstrap_mean_difference(half, other)
    assert interval is not None and interval.low == interval.high == 0.0
    # Below FLOOR_SAMPLES samples the interval is never narrower than the trials' own noise: 9 samples of 2 trials
    # a side, each trial of variance 1/4.
    few = stats.cluster_bootstrap_mean_difference([half[0][:9]], [other[0][:9]])
    assert few is not None
    assert few.high == pytest.approx(-few.low) == pytest.approx(1.959964 * (0.25 / 18 + 0.25 / 18) ** 0.5)


def test_the_runs_of_a_side_that_repeat_its_samples_draw_them_together() -> None:
    # Two runs of the same five samples on each side, sample effects shared by the runs: a joint draw keeps the
    # sample-to-sample spread, so the interval is as wide as one run's (independent draws per run would halve it).
    effects = [0.1, 0.3, 0.5, 0.7, 0.9]
    one = [[[e, e] for e in effects]]
    two = [[[e, e] for e in effects], [[e, e] for e in effects]]
    ids = [[f"s{i}" for i in range(5)]]
    shifted = [[[e + 0.05 for e in s] for s in run] for run in two]
    single = stats.cluster_bootstrap_mean_difference(one, [[[e + 0.05, e + 0.05] for e in effects]],
                                                     samples=(ids, [["t" + i for i in ids[0]]]))
    joint = stats.cluster_bootstrap_mean_difference(two, shifted, samples=(ids * 2, [["t" + i for i in ids[0]]] * 2))
    assert single is not None and joint is not None and not single.paired and not joint.paired
    assert _width(joint) > 0.8 * _width(single)


def test_one_sample_gives_the_trials_noise_alone_and_few_samples_a_widened_spread() -> None:
    one = [[[0.1, 0.2, 0.3, 0.4, 0.5, 0.6]]]
    # Nothing to resample between samples: the interval is the trials' own noise about the difference.
    interval = stats.cluster_bootstrap_mean_difference(one, one)
    assert interval is not None
    assert interval.high == pytest.approx(-interval.low) == pytest.approx(
        1.959964 * (2 * stats.trial_noise_variance(one)) ** 0.5)
    assert stats.trial_noise_variance(one) == pytest.approx(0.175 / 36)  # Σ (v − mean)² / N²
    # G / (G − 1) for the variance the bootstrap of G samples sees.
    assert stats.few_clusters_factor(25) == pytest.approx((25 / 24) ** 0.5)
    assert stats.few_clusters_factor(2) == pytest.approx(2**0.5)


def _every_draw(side: list[list[list[float]]]) -> tuple[Any, Any, Any]:
    """``(values, drawn, valid)`` of every resample of a side, its blocks put together."""
    import numpy as np

    resamples = stats._resample(side, stats._side_digest(side))
    drawn = np.empty((stats.RESAMPLES, resamples.width), dtype=np.int64)
    valid = np.ones((stats.RESAMPLES, resamples.width), dtype=bool)
    for start, stop, block, kept in resamples.blocks():
        drawn[start:stop] = block
        if kept is not None:
            valid[start:stop] = kept
    return resamples.values, drawn, valid


def _uneven(rng: random.Random, runs: int, samples: int, trials: int, *, ties: bool = False) -> list[list[list[float]]]:
    """Runs of up to ``samples`` samples of up to ``trials`` trials (a drawn resample then has empty slots); the
    first run holds ``samples`` samples and each run's first sample ``trials`` trials, so a resample's row has
    ``runs * samples * trials`` slots."""
    def value() -> float:
        return float(rng.choice([1, 2, 3, 5])) if ties else rng.gauss(10, 3)

    return [
        [[value() for _ in range(trials if s == 0 else rng.randint(max(1, trials - 3), trials))]
         for s in range(samples if r == 0 else rng.randint(1, samples))]
        for r in range(runs)
    ]


@pytest.mark.parametrize(
    ("runs", "samples", "trials", "ties"),
    [
        (1, 6, 4, False),  # rows of 24 slots
        (1, 25, 20, True),  # 500
        (1, 25, 40, False),  # 1,000
        (1, 3, 341, True),  # 1,023
        (2, 25, 40, False),  # 2,000
        (3, 4, 90, True),  # several runs drawn first
    ],
)
def test_a_resampled_quantile_is_the_nearest_rank_value_of_what_the_resample_drew(
    runs: int, samples: int, trials: int, ties: bool
) -> None:
    # Recompute the quantiles from the drawn slots by sorting the values themselves (the definition),
    # against the ranks the resampling sorts, for short and long rows, with and without ties.
    import numpy as np

    side = _uneven(random.Random(runs * 1000 + samples * 10 + trials), runs, samples, trials, ties=ties)
    values, drawn, valid = _every_draw(side)
    assert drawn.shape[1] == runs * samples * trials
    picked = np.where(valid, values[drawn], np.inf)
    picked.sort(axis=1)
    counts = valid.sum(axis=1)
    fast = stats.resampled_quantiles(side, (0.5, 0.9))
    for row, q in enumerate((0.5, 0.9)):
        index = np.maximum(np.ceil(q * counts).astype(np.int64) - 1, 0)
        assert np.array_equal(fast[row], picked[np.arange(len(counts)), index])
    means = stats.resampled_means(side)
    assert np.allclose(means, np.where(valid, values[drawn], 0).sum(axis=1) / counts, rtol=1e-12)


def test_drawing_a_block_of_resamples_at_a_time_draws_what_drawing_them_all_at_once_draws(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import numpy as np

    side = _uneven(random.Random(7), 2, 12, 30)
    outcomes = [[[float(v > 10) for v in sample] for sample in run] for run in side]
    results = []
    for block in (7, 1000, 1 << 30):  # a few slots (one resample a block), several resamples, every resample
        monkeypatch.setattr(stats, "BLOCK_SLOTS", block)
        results.append((stats.resampled_quantiles(side, (0.5, 0.9)), stats.resampled_means(side),
                        stats.resampled_means(outcomes), _every_draw(side)[1]))
    for other in results[1:]:
        for a, b in zip(results[0], other, strict=True):
            assert np.array_equal(a, b)
