from __future__ import annotations

import math

import pytest
from native_data import DATA

from fmbench.native import median, profile_metric, profile_metrics, read_evaluation, sample_variance

PROMPT_PASS = "FoundationModelsBench Prompt Pass"
CONSTRAINT_SCORE = "FoundationModelsBench Constraint Score"


def test_ignore_rows_do_not_lower_a_score_mean() -> None:
    # Scores 1.0, 0.5, (ignore), 0.75: counting the ignore row as 0 would give 0.5625.
    profile = profile_metric(read_evaluation(DATA / "baseline.xcevalresult"), CONSTRAINT_SCORE)
    assert profile.count == 4
    assert profile.ignored == 1
    assert profile.scored == 3
    assert profile.numeric_count == 3
    assert profile.mean == pytest.approx(0.75)


def test_pass_fail_metric_has_counts_and_a_pass_rate_but_no_mean() -> None:
    profile = profile_metric(read_evaluation(DATA / "baseline.xcevalresult"), PROMPT_PASS)
    assert (profile.count, profile.passed, profile.failed, profile.ignored) == (4, 1, 2, 1)
    assert profile.numeric_count == 0, "Booleans are not numeric values"
    assert profile.mean is None and profile.median is None
    assert profile.pass_rate == pytest.approx(1 / 3), "the ignore row stays out; pass=false is a fail"
    assert profile.to_dict()["passRate"] == pytest.approx(1 / 3)


def test_median_is_the_middle_and_variance_is_the_sample_variance() -> None:
    profile = profile_metric(read_evaluation(DATA / "baseline.xcevalresult"), CONSTRAINT_SCORE)
    assert profile.median == 0.75
    assert profile.variance == pytest.approx(((0.25**2) + 0 + (0.25**2)) / 2)
    assert profile.standard_deviation == pytest.approx(math.sqrt(0.125 / 2))
    assert (profile.minimum, profile.maximum) == (0.5, 1.0)


def test_median_of_an_even_count_averages_the_two_middle_values() -> None:
    assert median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert median([5.0]) == 5.0
    assert median([]) is None


def test_sample_variance_divides_by_n_minus_one_and_is_zero_for_one_value() -> None:
    assert sample_variance([1.0, 2.0, 3.0, 4.0]) == pytest.approx(5 / 3)
    assert sample_variance([7.0]) == 0.0
    assert sample_variance([]) is None


def test_rationales_are_distinct_with_counts() -> None:
    profile = profile_metric(read_evaluation(DATA / "baseline.xcevalresult"), PROMPT_PASS)
    assert [(r.rationale, r.count) for r in profile.rationales] == [
        ("failed: Contains “12”", 2),
        ("no checks", 1),
    ]


def test_profiles_are_sorted_by_metric_name() -> None:
    profiles = profile_metrics(read_evaluation(DATA / "baseline.xcevalresult"))
    assert [p.name for p in profiles] == [CONSTRAINT_SCORE, PROMPT_PASS]


def test_metric_with_only_ignore_rows_has_no_mean() -> None:
    evaluation = read_evaluation(DATA / "baseline.xcevalresult")
    evaluation.rows = [evaluation.rows[2]]
    profile = profile_metric(evaluation, CONSTRAINT_SCORE)
    assert profile.numeric_count == 0
    assert profile.mean is None and profile.median is None and profile.variance is None
