"""Ranks with ties and the quality × speed Pareto front (fmbench.analysis.ranking)."""

from __future__ import annotations

import pytest

from fmbench.analysis.ranking import pareto_front, percentile_bounds, rank


def _ranks(values: dict[str, float | None], tied_pairs: set[tuple[str, str]], better: str = "lower") -> list[tuple[str, int | None, bool]]:
    placed = rank(list(values), values.__getitem__, better, lambda a, b: (a, b) in tied_pairs)  # type: ignore[arg-type]
    return [(p.item, p.rank, p.tied) for p in placed]


def test_entries_are_ranked_best_first_and_lower_is_better_for_latency() -> None:
    assert _ranks({"slow": 0.5, "fast": 0.2, "mid": 0.3}, set()) == [
        ("fast", 1, False), ("mid", 2, False), ("slow", 3, False)]


def test_higher_is_better_for_a_rate() -> None:
    assert [r[0] for r in _ranks({"a": 0.5, "b": 0.9}, set(), better="higher")] == ["b", "a"]


def test_two_tied_neighbours_share_a_rank_and_the_next_keeps_its_place() -> None:
    assert _ranks({"a": 0.2, "b": 0.21, "c": 0.5}, {("a", "b")}) == [("a", 1, True), ("b", 1, True), ("c", 3, False)]


def test_a_tie_carries_down_a_chain_of_neighbours() -> None:
    ranked = _ranks({"a": 0.20, "b": 0.21, "c": 0.22, "d": 0.9}, {("a", "b"), ("b", "c")})
    assert ranked == [("a", 1, True), ("b", 1, True), ("c", 1, True), ("d", 4, False)]


def test_only_neighbours_are_asked_whether_they_are_tied() -> None:
    asked: list[tuple[str, str]] = []
    values = {"a": 0.1, "b": 0.2, "c": 0.3}
    rank(list(values), values.__getitem__, "lower", lambda x, y: asked.append((x, y)) or False)  # type: ignore[func-returns-value]
    assert asked == [("a", "b"), ("b", "c")]


def test_an_entry_without_a_value_is_not_ranked_and_comes_last() -> None:
    assert _ranks({"none": None, "a": 0.3}, set()) == [("a", 1, False), ("none", None, False)]


def test_the_pareto_front_keeps_every_point_no_other_beats_on_both() -> None:
    points = [
        (0.20, 0.80),  # fastest: on the front
        (0.30, 0.95),  # slower but better: on the front
        (0.35, 0.90),  # beaten by (0.30, 0.95) on both
        (0.30, 0.95),  # equal to a front point: nothing beats it strictly, so on the front too
        (None, 0.99),  # no latency: never on the front, beats nothing
    ]
    assert pareto_front(points) == [True, True, False, True, False]


def test_a_point_beaten_on_one_figure_and_equal_on_the_other_is_behind_the_front() -> None:
    assert pareto_front([(0.2, 0.9), (0.2, 0.8), (0.3, 0.9)]) == [True, False, False]


def test_the_interval_of_resamples_takes_the_comparisons_percentile_rule() -> None:
    import numpy as np

    from fmbench.analysis import stats

    values = [float(i) for i in range(1, 201)]
    low, high = percentile_bounds(list(reversed(values)), 0.95)
    assert 5.0 <= low <= 6.0 and 195.0 <= high <= 196.0
    same = stats._percentile_interval(np.array(values), 0.95, "")  # the rule of a difference's interval
    assert (low, high) == (same.low, same.high)
    with pytest.raises(ValueError):
        percentile_bounds([], 0.95)
