from __future__ import annotations

from dataclasses import replace

import pytest
from native_data import DATA

from fmbench.native import (
    ArtifactError,
    GateRuleError,
    SummaryMetric,
    compare_evaluations,
    compare_files,
    pair_summaries,
    parse_gate,
    read_evaluation,
)

PROMPT_PASS = "FoundationModelsBench Prompt Pass"
TTFT = "FoundationModelsBench TTFT Seconds"


def _compare(*gates: str):
    return compare_files(
        DATA / "baseline.xcevalresult", DATA / "candidate.xcevalresult", gates=gates
    )


def test_repeated_summary_names_are_paired_by_group_and_occurrence() -> None:
    comparison = _compare()
    pass_rates = [
        (d.group, d.occurrence, d.baseline, d.candidate)
        for d in comparison.paired
        if d.name == "Pass Rate"
    ]
    assert pass_rates == [
        ("Quality", 0, 0.5, 0.7),
        ("Safety", 0, 0.9, 0.8),
        ("Quality", 1, 0.6, 1.0),
    ]
    deltas = [d.delta for d in comparison.paired if d.name == "Pass Rate"]
    assert deltas == pytest.approx([0.2, -0.1, 0.4])


def test_delta_and_relative_delta_are_candidate_minus_baseline() -> None:
    [constraint] = [
        d for d in _compare().paired if d.name == "FoundationModelsBench Constraint Score"
    ]
    assert constraint.delta == pytest.approx(0.15)
    assert constraint.relative_delta == pytest.approx(0.15 / 0.75)


def test_relative_delta_is_none_when_baseline_is_zero() -> None:
    baseline = read_evaluation(DATA / "baseline.xcevalresult")
    candidate = read_evaluation(DATA / "candidate.xcevalresult")
    baseline.summary = [
        replace(entry, value=0.0) if entry.name == TTFT else entry for entry in baseline.summary
    ]
    [ttft] = [d for d in compare_evaluations(baseline, candidate).paired if d.name == TTFT]
    assert ttft.delta == pytest.approx(0.5)
    assert ttft.relative_delta is None


def test_unpaired_metrics_are_listed_on_each_side() -> None:
    comparison = _compare()
    assert [e.name for e in comparison.baseline_only] == ["Baseline Only"]
    assert [e.name for e in comparison.candidate_only] == ["Candidate Only"]


def test_direction_policy_gives_verdicts_only_where_stated() -> None:
    verdicts = {
        (d.name, d.group, d.occurrence): (d.direction, d.verdict) for d in _compare().paired
    }
    assert verdicts[(PROMPT_PASS, "Quality", 0)] == ("higher", "better")
    assert verdicts[(TTFT, "Performance", 0)] == ("lower", "worse")
    assert verdicts[("Pass Rate", "Quality", 0)] == ("higher", "better"), (
        "policy of its source metric"
    )


def test_no_verdict_without_a_stated_policy_or_for_spread_operations() -> None:
    def entry(name: str, operation: str, value: float) -> SummaryMetric:
        return SummaryMetric(name, None, operation, name, 0, value)

    paired, _, _ = pair_summaries(
        [entry("Latency p50", "mean", 1.0), entry(TTFT, "variance", 0.1), entry(TTFT, "mean", 0.4)],
        [entry("Latency p50", "mean", 2.0), entry(TTFT, "variance", 0.3), entry(TTFT, "mean", 0.3)],
    )
    assert [(d.name, d.operation_type, d.verdict) for d in paired] == [
        ("Latency p50", "mean", None),
        (TTFT, "variance", None),
        (TTFT, "mean", "better"),
    ]
    unstated, _, _ = pair_summaries(
        [entry(TTFT, "mean", 0.4)], [entry(TTFT, "mean", 0.3)], directions={}
    )
    assert unstated[0].verdict is None and unstated[0].delta == pytest.approx(-0.1)


def test_gate_on_candidate_value_passes() -> None:
    [outcome] = _compare(f"{PROMPT_PASS} >= 0.9").gates
    assert outcome.status == "pass"
    assert outcome.observed == (0.95,)


def test_delta_gate_fails_when_candidate_got_slower() -> None:
    comparison = _compare(f"{TTFT} delta <= 0.05")
    [outcome] = comparison.gates
    assert outcome.status == "fail"
    assert outcome.observed == pytest.approx((0.1,))
    assert not comparison.gates_passed


def test_gate_naming_unknown_metric_is_an_error_not_a_pass() -> None:
    comparison = _compare("FoundationModelsBench Nonexistent >= 0")
    [outcome] = comparison.gates
    assert outcome.status == "error"
    assert "unknown metric" in outcome.message
    assert not comparison.gates_passed


def test_gate_on_repeated_name_requires_every_mean_entry() -> None:
    # Pass Rate means on the candidate: 0.7 (Quality), 0.8 (Safety), 1.0 (Quality #2).
    assert _compare("Pass Rate >= 0.7").gates[0].status == "pass"
    assert _compare("Pass Rate >= 0.75").gates[0].status == "fail"
    assert _compare("Pass Rate [Safety] >= 0.75").gates[0].observed == (0.8,)


def test_gate_rule_parsing_accepts_every_operator() -> None:
    for op in (">=", "<=", ">", "<", "=="):
        rule = parse_gate(f"{PROMPT_PASS} {op} 0.5")
        assert (rule.metric, rule.operator, rule.threshold, rule.on_delta) == (
            PROMPT_PASS,
            op,
            0.5,
            False,
        )
    delta = parse_gate(f"{TTFT} delta <= 0.05")
    assert (delta.metric, delta.on_delta) == (TTFT, True)


@pytest.mark.parametrize(
    "text", ["Prompt Pass ~ 1", "Prompt Pass >= high", ">= 1", "Prompt Pass >= nan"]
)
def test_malformed_gate_rule_is_rejected(text: str) -> None:
    with pytest.raises(GateRuleError):
        parse_gate(text)


def test_judge_artifact_is_not_compared_with_a_deterministic_one() -> None:
    with pytest.raises(ArtifactError, match="model-judge"):
        compare_files(DATA / "baseline.xcevalresult", DATA / "exported" / "7B1D0E44-judge.json")
