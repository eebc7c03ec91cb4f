"""An exact bootstrap interval asked for twice (a regression step, then its comparison page) is computed once."""

from __future__ import annotations

import random

import pytest

from fmbench import stats


def test_the_same_two_samples_give_the_interval_computed_first_without_computing_it_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(5)
    baseline = [rng.lognormvariate(0, 0.3) for _ in range(200)]
    candidate = [rng.lognormvariate(0.1, 0.3) for _ in range(180)]
    computed: list[float] = []
    original = stats._bootstrap_quantile_difference

    def counting(b, c, q, confidence):  # type: ignore[no-untyped-def]
        computed.append(q)
        return original(b, c, q, confidence)

    monkeypatch.setattr(stats, "_BOOTSTRAP_MEMO", {})
    monkeypatch.setattr(stats, "_bootstrap_quantile_difference", counting)
    first = stats.bootstrap_quantile_difference(baseline, candidate, 0.5, confidence=0.99)
    again = stats.bootstrap_quantile_difference(list(baseline), tuple(candidate), 0.5, confidence=0.99)
    assert again == first and computed == [0.5]
    assert first == original(baseline, candidate, 0.5, 0.99)
    stats.bootstrap_quantile_difference(baseline, candidate, 0.9, confidence=0.99)
    stats.bootstrap_quantile_difference(baseline, candidate, 0.5, confidence=0.95)
    stats.bootstrap_quantile_difference(candidate, baseline, 0.5, confidence=0.99)
    assert computed == [0.5, 0.9, 0.5, 0.5]  # another quantile, level or order is another interval
