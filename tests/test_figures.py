"""The figures are the spec's, exactly: nearest rank, population deviation, attempts as denominators."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from fmbench.analysis.figures import ScenarioFigures, distribution, nearest_rank
from fmbench.analysis.run import analyze_file

from testdata import RUNS


def _figures(name: str) -> dict[str, ScenarioFigures]:
    return {f.scenario_id: f for f in analyze_file(RUNS / name).figures}


def test_nearest_rank_median_of_an_even_count_is_the_lower_middle_value() -> None:
    assert nearest_rank([0.1, 0.2, 0.3, 0.4], 0.5) == 0.2
    assert distribution([0.4, 0.1, 0.3, 0.2]).median == 0.2  # an interpolating median would say 0.25


def test_p90_of_five_values_is_the_largest() -> None:
    assert distribution([3.0, 1.0, 5.0, 2.0, 4.0]).p90 == 5.0
    assert distribution([float(i) for i in range(1, 21)]).p90 == 18.0  # ceil(0.9*20)-1 = index 17


def test_standard_deviation_divides_by_n() -> None:
    d = distribution([1.0, 2.0, 3.0, 4.0])
    assert d.standard_deviation == pytest.approx(math.sqrt(1.25))
    assert d.standard_deviation != pytest.approx(math.sqrt(5 / 3))


def test_empty_distribution_has_a_count_and_nothing_else() -> None:
    d = distribution([])
    assert d.count == 0
    assert (d.minimum, d.median, d.mean, d.p90, d.maximum, d.standard_deviation) == (None,) * 6


def test_task_success_counts_a_measured_failure_in_its_denominator() -> None:
    capture = _figures("purpose-current.json")["task-capture"]
    assert (capture.trial_count, capture.failure_count) == (4, 1)
    assert capture.task_success == pytest.approx(2 / 5)
    assert capture.prompt_pass_rate == pytest.approx(2 / 4)
    assert capture.failure_rate == pytest.approx(1 / 5)


def test_warmup_failures_are_outside_every_rate() -> None:
    figures = _figures("purpose-current.json")
    assert "__warmup__" not in figures
    assert sum(f.failure_count for f in figures.values()) == 1


def test_a_check_less_safety_trial_passes_through_its_safety_outcome() -> None:
    guard = _figures("purpose-current.json")["guardrail-expected-protection"]
    # outcomes: refusal, guardrailViolation, responded, refusal, refusal under mustProtect
    assert guard.safety_trial_count == 5
    assert guard.safety_pass_rate == pytest.approx(4 / 5)
    assert guard.critical_safety_failure_count == 1
    assert guard.prompt_pass_rate == pytest.approx(4 / 5)
    assert guard.mean_constraint_score is None  # no trial has checks


def test_a_trial_without_checks_is_left_out_of_the_constraint_mean() -> None:
    capture = _figures("purpose-current.json")["task-capture"]
    # scores 1.0, 0.5, 1.0 and one check-less trial that has none
    assert capture.graded_trial_count == 3
    assert capture.mean_constraint_score == pytest.approx(2.5 / 3)


def test_a_missing_ttft_is_left_out_not_counted_as_zero() -> None:
    guard = _figures("purpose-current.json")["guardrail-expected-protection"]
    assert guard.duration.count == 5
    assert guard.time_to_first_token.count == 4
    assert guard.time_to_first_token.minimum == pytest.approx(0.5)
    assert guard.output_tokens_per_second.count == 4


def test_summary_json_reports_unrecorded_figures_as_null() -> None:
    from fmbench.analysis.report import summary_json

    doc = summary_json(analyze_file(RUNS / "purpose-current.json"))
    guard = next(s for s in doc["scenarios"] if s["id"] == "guardrail-expected-protection")
    assert guard["peakObservedResidentMemoryBytes"] == {
        "count": 0, "minimum": None, "median": None, "mean": None, "p90": None, "maximum": None,
        "standardDeviation": None,
    }
    assert guard["meanConstraintScore"] is None


def test_every_recomputed_figure_of_the_published_example_equals_its_stored_summary(example_run: Path) -> None:
    analysis = analyze_file(example_run)
    assert analysis.mismatches == []
    stored = {s.id: s for s in analysis.record.summaries}
    assert [f.scenario_id for f in analysis.figures] == list(stored)
    for f in analysis.figures:
        s = stored[f.scenario_id]
        assert f.trial_count == s.trialCount
        assert f.prompt_pass_rate == s.promptPassRate
        assert f.time_to_first_token.median == s.timeToFirstToken.median
        assert f.time_to_first_token.p90 == s.timeToFirstToken.p90
        assert f.output_tokens_per_second.median == s.outputTokensPerSecond.median
        assert f.duration.standard_deviation == pytest.approx(s.duration.standardDeviation, rel=1e-12)
