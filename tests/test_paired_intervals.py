"""Intervals paired by sample: where both sides ran the same samples, each resample draws the sample ids once for
both, so the samples' shared difficulty no longer widens the interval; where they did not, the sides stay unpaired
and the comparison says so. The shared draw is seeded from the sample ids alone, so a side's paired resamples are
kept and reused like the unpaired ones, in memory and in the store, the same bits in another process."""

from __future__ import annotations

import hashlib
import json
import math
import random
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from fmbench.analysis import pairing, stats
from fmbench.cli import main
from fmbench.comparison import resample_store
from fmbench.comparison.resample_store import Resamples, ResampleStore

from testdata import compare_runbuilder

SAMPLES = 25
IDS = [[f"sample-{i:03d}" for i in range(SAMPLES)]]


def _two_runs(seed: int) -> tuple[tuple[list, list], tuple[list, list]]:
    """Two runs (one a side) drawn from the same distributions: 25 samples of different difficulty (each its own
    pass probability and TTFT), 20 trials each; per run, its 0/1 outcomes and its TTFTs."""
    rng = random.Random(seed)
    passing = [rng.uniform(0.3, 1.0) for _ in range(SAMPLES)]
    ttft = [rng.lognormvariate(-0.8, 0.15) for _ in range(SAMPLES)]

    def run() -> tuple[list, list]:
        outcomes = [[[1.0 if rng.random() < p else 0.0 for _ in range(20)] for p in passing]]
        latency = [[[t * rng.lognormvariate(0.0, 0.05) for _ in range(20)] for t in ttft]]
        return outcomes, latency

    return run(), run()


def _width(interval: stats.Interval | None) -> float:
    assert interval is not None
    return interval.high - interval.low


def test_on_heterogeneous_samples_both_sides_ran_the_paired_interval_is_narrower_than_the_unpaired() -> None:
    (a_pass, a_ttft), (b_pass, b_ttft) = _two_runs(3)
    unpaired_rate = stats.cluster_bootstrap_mean_difference(a_pass, b_pass, method=stats.CLUSTER_RATE_METHOD)
    paired_rate = stats.cluster_bootstrap_mean_difference(a_pass, b_pass, method=stats.CLUSTER_RATE_METHOD,
                                                          samples=(IDS, IDS), on_shared_samples=True)
    unpaired_ttft = stats.cluster_bootstrap_quantile_difference(a_ttft, b_ttft, 0.5)
    paired_ttft = stats.cluster_bootstrap_quantile_difference(a_ttft, b_ttft, 0.5, samples=(IDS, IDS),
                                                              on_shared_samples=True)
    for paired, unpaired in ((paired_rate, unpaired_rate), (paired_ttft, unpaired_ttft)):
        assert paired is not None and unpaired is not None
        assert paired.paired and not unpaired.paired
        assert paired.method == stats.PAIRED_NOISE_METHOD and unpaired.method != paired.method
        assert _width(paired) < 0.8 * _width(unpaired)
        assert paired.low < 0 < paired.high  # the same distributions: no change, paired or not
    assert paired_rate.to_json()["paired"] is True and unpaired_rate.to_json()["paired"] is False


def test_sides_whose_sample_ids_differ_stay_unpaired_and_give_the_unpaired_interval() -> None:
    (a_pass, _), (b_pass, _) = _two_runs(4)
    other = [[f"other-{i:03d}" for i in range(SAMPLES)]]
    fewer = [run[:-1] for run in b_pass]
    assert pairing.pairings(a_pass, b_pass, IDS, other) is None  # another suite's samples
    assert pairing.pairings(a_pass, fewer, IDS, [IDS[0][:-1]]) is None  # a sample the candidate lacks
    assert pairing.pairings(a_pass, [*a_pass, *b_pass], IDS, [*IDS, [*IDS[0][:-1], "extra"]]) is None  # a run's own
    emptied = [[*b_pass[0][:-1], []]]  # a sample that holds no value on one side is not one it ran
    assert pairing.pairings(a_pass, emptied, IDS, IDS) is None
    unpaired = stats.cluster_bootstrap_mean_difference(a_pass, b_pass)
    assert stats.cluster_bootstrap_mean_difference(a_pass, b_pass, samples=(IDS, other)) == unpaired
    with pytest.raises(ValueError, match="sample ids"):
        pairing.pairings(a_pass, b_pass, IDS, [IDS[0][:-1]])


def test_runs_that_list_the_shared_samples_in_another_order_are_paired_sample_by_sample() -> None:
    # Samples whose trials all pass or all fail: a resample's rate is then set by the samples it drew alone.
    rng = random.Random(5)
    outcome = [float(rng.random() < 0.7) for _ in range(SAMPLES)]
    side = [[[v] * 10 for v in outcome]]
    order = list(range(SAMPLES))
    random.Random(1).shuffle(order)
    shuffled = [[side[0][i] for i in order]]
    shuffled_ids = [[IDS[0][i] for i in order]]
    ((first, _), (second, _)) = (pairing.pairings(side, shuffled, IDS, shuffled_ids),
                                 pairing.pairings(shuffled, side, shuffled_ids, IDS))
    # each draws the same samples, wherever its run lists them
    assert np.array_equal(stats.resampled_means(side, pairing=first), stats.resampled_means(shuffled, pairing=second))
    assert stats.cluster_bootstrap_mean_difference(side, shuffled, samples=(IDS, shuffled_ids)) == stats.Interval(
        0.0, 0.0, stats.DEFAULT_CONFIDENCE, stats.CLUSTER_MEAN_METHOD, paired=True)


def test_the_sample_draw_is_seeded_from_the_shared_samples_so_a_side_s_resamples_serve_every_comparison() -> None:
    # two runs a side: a side of several runs is resampled (its runs carry variation the trials' noise does not)
    (a1, _), (a2, _) = _two_runs(6)
    (b1, _), (b2, _) = _two_runs(7)
    (c1, _), (c2, _) = _two_runs(8)
    a_pass, b_pass, c_pass = a1 + a2, b1 + b2, c1 + c2
    ids = IDS + IDS
    kept = Resamples()
    stats.cluster_bootstrap_mean_difference(a_pass, b_pass, samples=(ids, ids), kept=kept)
    assert kept.drawn == 2
    stats.cluster_bootstrap_mean_difference(a_pass, c_pass, samples=(ids, ids), kept=kept)
    assert kept.drawn == 3  # the baseline's paired resamples, drawn once, serve a comparison with another side
    stats.cluster_bootstrap_mean_difference(a_pass, c_pass, kept=kept)
    assert kept.drawn == 5  # unpaired resamples are others, kept apart
    draw = pairing.shared_draw(tuple(IDS[0]), stats.RESAMPLES)
    assert draw.shape == (stats.RESAMPLES, SAMPLES)
    again = pairing.shared_draw(tuple(IDS[0]), stats.RESAMPLES)
    assert np.array_equal(draw, again)  # a function of the sample ids alone


UNEVEN = [[[12.5, 3.25, 7.0], [1.5, 9.75], [4.0, 4.0, 8.5, 2.25]], [[6.0, 11.0], [3.5, 10.25], [2.0, 3.5, 10.25]]]
UNEVEN_IDS = [["a", "b", "c"], ["c", "a", "b"]]
"""Two runs of three shared samples, listed in other orders, of uneven trial counts and with ties."""
OUTCOMES = [[[1.0, 0.0, 1.0, 1.0], [0.0, 1.0], [1.0, 1.0]], [[1.0, 1.0, 1.0], [1.0, 0.0, 0.0, 1.0, 1.0], [0.0]]]
PAIRED_DRAWS_OF_ALGORITHM = {
    1: "9204a3b952afd4af935c357ecf4d5022ba19abc16053cbeec4043cd8be8a764e",
    2: "dd4bbfbbdc33d885f54cbf2178e778ef9e31755aceba65a87ce7bb30387fd4fc",
}
"""SHA-256 of the paired resamples of :data:`UNEVEN` and :data:`OUTCOMES` (see ``_paired_results``) that each version
of the draw gives (the unpaired draw is pinned in ``tests/test_resample_store.py``)."""


def _paired_results(kept: Resamples | None = None) -> list[bytes]:
    ids = [["a", "b", "c"], ["a", "b", "c"]]
    (pu, _), (po, _) = pairing.pairings(UNEVEN, UNEVEN, UNEVEN_IDS, UNEVEN_IDS), pairing.pairings(
        OUTCOMES, OUTCOMES, ids, ids)
    return [a.tobytes() for a in (stats.resampled_quantiles(UNEVEN, kept=kept, pairing=pu),
                                  stats.resampled_means(UNEVEN, kept, pu), stats.resampled_means(OUTCOMES, kept, po))]


def test_the_paired_draw_is_the_one_pinned_here() -> None:
    found = hashlib.sha256(b"".join(_paired_results())).hexdigest()
    assert PAIRED_DRAWS_OF_ALGORITHM.get(resample_store.ALGORITHM) == found, (
        "the paired draw changed: bump fmbench.comparison.resample_store.ALGORITHM (so no stored entry of the old "
        "draw is read) and pin the new draw's digest here"
    )


_SECOND_PROCESS = """
import sys
sys.path.insert(0, sys.argv[2])
from fmbench.comparison import resample_store
from fmbench.comparison.resample_store import Resamples, ResampleStore
import test_paired_intervals as t
kept = Resamples(ResampleStore(sys.argv[1]))
sys.stdout.write("|".join(r.hex() for r in t._paired_results(kept)) + f"|{kept.drawn}")
"""


def test_paired_resamples_kept_in_the_store_are_read_back_the_same_bits_in_another_process(tmp_path: Path) -> None:
    computed = _paired_results()
    store = ResampleStore(tmp_path / "store")
    first = Resamples(store)
    assert _paired_results(first) == computed and first.drawn == 3 and store.writes == 3
    out = subprocess.run([sys.executable, "-P", "-c", _SECOND_PROCESS, str(tmp_path / "store"), str(Path(__file__).parent)],
                         capture_output=True, text=True, check=True).stdout.split("|")
    assert [bytes.fromhex(x) for x in out[:-1]] == computed and out[-1] == "0"  # read, none drawn again
    # and the unpaired entries of the same values are others: asking for them draws them
    unpaired = Resamples(store)
    stats.resampled_means(UNEVEN, unpaired)
    assert unpaired.drawn == 1


# --- through compare --------------------------------------------------------------------------------------------


def test_compare_json_says_the_workload_whose_samples_differ_is_not_paired_and_the_other_is(tmp_path: Path) -> None:
    rb = compare_runbuilder()
    base = rb.RunSpec()
    fewer = replace(rb.TASK_CAPTURE, samples=20)  # the candidate ran 20 of the 25 task-capture samples
    candidate = base.but(build="24A5270a", noise_seed=2, scenarios=(rb.SYNTHETIC, fewer))
    a = rb.write_run(base, tmp_path, "a")
    b = rb.write_run(candidate, tmp_path, "b")
    result = CliRunner().invoke(main, ["compare", str(a), str(b), "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    by_id = {s["scenario_id"]: s for s in payload["scenarios"]}
    synthetic, task = by_id["synthetic-throughput"], by_id["task-capture"]
    assert synthetic["paired"] is True and synthetic["pairing"].startswith("paired by sample")
    assert task["paired"] is False and task["pairing"].startswith("not paired by sample")
    for scenario, paired in ((synthetic, True), (task, False)):
        intervals = [f["interval"] for f in scenario["figures"] if f["interval"] is not None]
        assert intervals and all(i["paired"] is paired for i in intervals)
    assert any("not in Natural-language task capture" in m for m in payload["methods"])


# --- one run a side: the trials' noise on the shared samples ----------------------------------------------------


def test_sides_paired_one_run_each_get_a_normal_interval_from_their_trials_noise_about_the_exact_difference() -> None:
    ids = [[f"s{i}" for i in range(stats.FLOOR_SAMPLES)]]
    baseline = [[[1.0, 0.0, 1.0, 1.0] for _ in ids[0]]]
    candidate = [[[1.0, 1.0, 0.0] for _ in ids[0]]]
    found = stats.cluster_bootstrap_mean_difference(baseline, candidate, samples=(ids, ids), on_shared_samples=True)
    # Each sample's variance with n - 1 below is 1.0 on either side: 10 / 40² and 10 / 30²; the rates 3/4 and 2/3.
    z, se = stats.z_value(stats.DEFAULT_CONFIDENCE), math.sqrt(10 / 40**2 + 10 / 30**2)
    assert found is not None and found.paired and found.method == stats.PAIRED_NOISE_METHOD
    assert (found.low, found.high) == pytest.approx((-1 / 12 - z * se, -1 / 12 + z * se))
    at_99 = stats.cluster_bootstrap_mean_difference(baseline, candidate, confidence=0.99, samples=(ids, ids),
                                                    on_shared_samples=True)
    assert at_99 is not None and at_99.high - at_99.low > found.high - found.low
    # a ranking's interval (on the workload the samples stand for, not on these samples) stays the paired bootstrap
    ranked = stats.cluster_bootstrap_mean_difference(baseline, candidate, samples=(ids, ids))
    assert ranked is not None and ranked.paired and ranked.method == stats.CLUSTER_MEAN_METHOD


def test_a_sample_of_one_trial_or_too_few_samples_leave_a_paired_interval_to_the_paired_bootstrap() -> None:
    ids = [[f"s{i}" for i in range(stats.FLOOR_SAMPLES)]]
    baseline = [[[1.0, 0.0, 1.0, 1.0] for _ in ids[0]]]
    candidate = [[[1.0, 1.0, 0.0] for _ in ids[0]]]
    one_trial = [[*candidate[0][:-1], [1.0]]]  # the last sample shows no trial noise to measure
    found = stats.cluster_bootstrap_mean_difference(baseline, one_trial, samples=(ids, ids), on_shared_samples=True)
    assert found is not None and found.paired and found.method == stats.CLUSTER_MEAN_METHOD
    few = [ids[0][:-1]]
    found = stats.cluster_bootstrap_mean_difference([baseline[0][:-1]], [candidate[0][:-1]], samples=(few, few),
                                                   on_shared_samples=True)
    assert found is not None and found.paired and found.method == stats.CLUSTER_MEAN_METHOD


def test_a_paired_quantile_interval_is_centred_on_the_exact_difference_of_nearest_rank_quantiles() -> None:
    (_, a_ttft), (_, b_ttft) = _two_runs(11)
    found = stats.cluster_bootstrap_quantile_difference(a_ttft, b_ttft, 0.9, samples=(IDS, IDS),
                                                       on_shared_samples=True)
    exact = stats.nearest_rank(sorted(v for s in b_ttft[0] for v in s), 0.9) - stats.nearest_rank(
        sorted(v for s in a_ttft[0] for v in s), 0.9)
    assert found is not None and found.method == stats.PAIRED_NOISE_METHOD
    assert (found.low + found.high) / 2 == pytest.approx(exact) and found.low < exact < found.high
