"""A side's resamples asked for twice by one owner (a regression step, then its comparison page) are drawn once, and
kept by that owner only: no module of fmbench remembers them."""

from __future__ import annotations

import random

import pytest

from fmbench.analysis import stats
from fmbench.comparison.resample_store import Resamples


def _side(rng: random.Random, centre: float) -> list[list[list[float]]]:
    return [[[rng.lognormvariate(centre, 0.3) for _ in range(10)] for _ in range(8)] for _ in range(2)]


def test_the_same_side_gives_the_interval_computed_first_without_resampling_it_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(5)
    baseline, candidate = _side(rng, 0.0), _side(rng, 0.1)
    drawn: list[int] = []
    original = stats._resample

    def counting(side, digest):  # type: ignore[no-untyped-def]
        drawn.append(len(side))
        return original(side, digest)

    monkeypatch.setattr(stats, "_resample", counting)
    kept = Resamples()
    both = (0.5, 0.9)  # as compare asks for a source's quantiles: drawn together
    first = stats.cluster_bootstrap_quantile_difference(
        baseline, candidate, 0.5, confidence=0.99, together=both, kept=kept
    )
    assert len(drawn) == 2 and kept.drawn == 2
    again = stats.cluster_bootstrap_quantile_difference(
        [list(r) for r in baseline], candidate, 0.9, confidence=0.95, together=both, kept=kept
    )
    assert len(drawn) == 2  # the median and p90 of both sides were drawn together, and kept
    assert first == stats.cluster_bootstrap_quantile_difference(baseline, candidate, 0.5, confidence=0.99, together=both)
    assert len(drawn) == 4  # given nothing to keep them in, the sides are drawn again: nothing is global
    assert again == stats.cluster_bootstrap_quantile_difference(baseline, candidate, 0.9, confidence=0.95,
                                                                together=both, kept=Resamples())
    stats.cluster_bootstrap_mean_difference(baseline, candidate, kept=kept)
    assert kept.drawn == 4  # a mean is another result of each side


def test_an_owner_keeps_a_bounded_number_of_sides_in_memory() -> None:
    kept = Resamples()
    kept.MEMORY = 3
    for i in range(5):
        stats.resampled_means([[[float(i), 1.0, 2.0, 3.0, 4.0]]], kept)
    assert kept.drawn == 5 and len(kept._memory) == 3
    stats.resampled_means([[[4.0, 1.0, 2.0, 3.0, 4.0]]], kept)  # the newest is still there
    assert kept.drawn == 5
