from __future__ import annotations

import math

import pytest
from native_data import DATA

from fmbench.native import nearest_rank, profile_metric, profile_metrics, read_evaluation

PROMPT_PASS = "FoundationModelsBench Prompt Pass"
CONSTRAINT_SCORE = "FoundationModelsBench Constraint Score"


def test_ignore_rows_do_not_lower_a_score_mean() -> None:
    # Scores 1.0, 0.5, (ignore), 0.75: counting the ignore row as 0 would give 0.5625.
    profile = profile_metric(read_evaluation(DATA / "baseline.xcevalresult"), CONSTRAINT_SCORE)
    assert profile.count == 4
    assert profile.ignored == 1
    assert profile.numeric_count == 3
    assert profile.mean == pytest.approx(0.75)


def test_pass_fail_metric_counts_pass_as_one_and_fail_as_zero() -> None:
    profile = profile_metric(read_evaluation(DATA / "baseline.xcevalresult"), PROMPT_PASS)
    assert (profile.count, profile.passed, profile.failed, profile.ignored) == (4, 1, 2, 1)
    assert profile.mean == pytest.approx(1 / 3), "the ignore row stays out; pass=false is a fail"


def test_median_is_nearest_rank_and_variance_is_population() -> None:
    profile = profile_metric(read_evaluation(DATA / "baseline.xcevalresult"), CONSTRAINT_SCORE)
    assert profile.median == 0.75
    assert profile.variance == pytest.approx(((0.25**2) + 0 + (0.25**2)) / 3)
    assert profile.standard_deviation == pytest.approx(math.sqrt(0.125 / 3))
    assert (profile.minimum, profile.maximum) == (0.5, 1.0)


def test_nearest_rank_takes_the_lower_middle_of_an_even_count() -> None:
    assert nearest_rank([1.0, 2.0, 3.0, 4.0], 0.5) == 2.0
    assert nearest_rank([1.0, 2.0, 3.0, 4.0, 5.0], 0.9) == 5.0
    assert nearest_rank([], 0.5) is None


def test_rationales_are_distinct_with_counts() -> None:
    profile = profile_metric(read_evaluation(DATA / "baseline.xcevalresult"), PROMPT_PASS)
    assert [(r.rationale, r.count) for r in profile.rationales] == [
        ("failed: Contains “12”", 2),
        ("no checks", 1),
    ]


def test_profiles_follow_column_ordering() -> None:
    profiles = profile_metrics(read_evaluation(DATA / "baseline.xcevalresult"))
    assert [p.name for p in profiles] == [PROMPT_PASS, CONSTRAINT_SCORE]


def test_metric_with_only_ignore_rows_has_no_mean() -> None:
    evaluation = read_evaluation(DATA / "baseline.xcevalresult")
    evaluation.rows = [evaluation.rows[2]]
    profile = profile_metric(evaluation, CONSTRAINT_SCORE)
    assert profile.numeric_count == 0
    assert profile.mean is None and profile.median is None and profile.variance is None
