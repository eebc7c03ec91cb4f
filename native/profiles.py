"""Per-metric profiles of an evaluation's rows, as xceval computes them.

These are the Evaluations conventions (the artifacts spec, "Metric profiles
and reports"), deliberately not the benchmark's: fmbench's nearest-rank
median and population spread stay in :mod:`fmbench.analysis.figures` for benchmark
figures only.

- A metric's numeric values are its integer and floating-point values; a
  Boolean (a pass/fail value) is not numeric, so a pass/fail metric has
  counts and a **pass rate** (labelled as such) but no mean.
- failed: kind ``fail``, or kind ``pass`` with the JSON Boolean ``false``;
  passed: kind ``pass`` and not failed.
- median: of an even count, the mean of the two middle values.
- variance: the sample variance (n - 1; 0 for a single value); standard
  deviation its square root.
- Profiles are listed by metric name, sorted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .model import Evaluation, MetricValue


@dataclass(frozen=True)
class RationaleCount:
    rationale: str
    count: int


@dataclass(frozen=True)
class MetricProfile:
    name: str
    count: int
    passed: int
    failed: int
    ignored: int
    scored: int
    with_rationale: int
    numeric_count: int
    mean: float | None
    median: float | None
    minimum: float | None
    maximum: float | None
    variance: float | None
    standard_deviation: float | None
    evaluator_kinds: tuple[str, ...] = ()
    rationales: tuple[RationaleCount, ...] = field(default_factory=tuple)

    @property
    def pass_rate(self) -> float | None:
        """Passed over passed + failed (fmbench's addition, labelled as a pass rate); ``None`` without either."""
        judged = self.passed + self.failed
        return self.passed / judged if judged else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "count": self.count,
            "pass": self.passed,
            "fail": self.failed,
            "ignore": self.ignored,
            "score": self.scored,
            "rationaleCount": self.with_rationale,
            "passRate": self.pass_rate,
            "numericCount": self.numeric_count,
            "mean": self.mean,
            "median": self.median,
            "minimum": self.minimum,
            "maximum": self.maximum,
            "variance": self.variance,
            "standardDeviation": self.standard_deviation,
            "evaluatorKinds": list(self.evaluator_kinds),
            "rationales": [{"rationale": r.rationale, "count": r.count} for r in self.rationales],
        }


def numeric_value(metric: MetricValue) -> float | None:
    """The metric's value when it is an integer or floating-point number (never a Boolean)."""
    raw = metric.raw.get("value") if metric.raw else metric.value
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return None
    number = float(raw)
    return number if math.isfinite(number) else None


def median(values: Sequence[float]) -> float | None:
    """The middle value; of an even count, the mean of the two middle values."""
    if not values:
        return None
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def sample_variance(values: Sequence[float]) -> float | None:
    """Divide by n - 1; 0 for a single value; ``None`` for none."""
    if not values:
        return None
    if len(values) == 1:
        return 0.0
    mean = math.fsum(values) / len(values)
    return math.fsum((value - mean) ** 2 for value in values) / (len(values) - 1)


def profile_metric(evaluation: Evaluation, name: str) -> MetricProfile:
    """Profile one metric column across the evaluation's rows."""
    count = passed = failed = ignored = scored = with_rationale = 0
    values: list[float] = []
    kinds: dict[str, None] = {}
    rationales: dict[str, int] = {}
    for row in evaluation.rows:
        metric = row.metric(name)
        if metric is None:
            continue
        count += 1
        if metric.evaluator_kind:
            kinds.setdefault(metric.evaluator_kind, None)
        if metric.rationale:
            with_rationale += 1
            rationales[metric.rationale] = rationales.get(metric.rationale, 0) + 1
        if metric.fails:
            failed += 1
        elif metric.passes:
            passed += 1
        elif metric.kind == "score":
            scored += 1
        elif metric.ignored:
            ignored += 1
        number = numeric_value(metric)
        if number is not None:
            values.append(number)

    variance = sample_variance(values)
    ranked = sorted(rationales.items(), key=lambda item: -item[1])  # stable: first seen wins ties
    return MetricProfile(
        name=name,
        count=count,
        passed=passed,
        failed=failed,
        ignored=ignored,
        scored=scored,
        with_rationale=with_rationale,
        numeric_count=len(values),
        mean=math.fsum(values) / len(values) if values else None,
        median=median(values),
        minimum=min(values) if values else None,
        maximum=max(values) if values else None,
        variance=variance,
        standard_deviation=math.sqrt(variance) if variance is not None else None,
        evaluator_kinds=tuple(kinds),
        rationales=tuple(RationaleCount(text, n) for text, n in ranked),
    )


def profile_metrics(evaluation: Evaluation) -> list[MetricProfile]:
    """One profile per metric column, sorted by metric name."""
    return [profile_metric(evaluation, name) for name in sorted(evaluation.metric_names)]
