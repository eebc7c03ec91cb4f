"""Per-metric profiles of an evaluation's rows.

A profile counts the rows of one metric column by kind and describes the
values that enter aggregates: a pass counts 1, a fail 0, a score its number.
``ignore`` rows (and rows with no usable value) are counted but kept out of
every aggregate, so they never lower a mean.

The median and p90 are nearest-rank: the sorted value at index
``ceil(q * n) - 1``. Variance and standard deviation are population figures
(divide by n).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fmbench import figures

from .model import Evaluation


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
    other: int
    numeric_count: int
    mean: float | None
    median: float | None
    p90: float | None
    minimum: float | None
    maximum: float | None
    variance: float | None
    standard_deviation: float | None
    evaluator_kinds: tuple[str, ...] = ()
    rationales: tuple[RationaleCount, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "count": self.count,
            "pass": self.passed,
            "fail": self.failed,
            "ignore": self.ignored,
            "other": self.other,
            "numericCount": self.numeric_count,
            "mean": self.mean,
            "median": self.median,
            "p90": self.p90,
            "minimum": self.minimum,
            "maximum": self.maximum,
            "variance": self.variance,
            "standardDeviation": self.standard_deviation,
            "evaluatorKinds": list(self.evaluator_kinds),
            "rationales": [{"rationale": r.rationale, "count": r.count} for r in self.rationales],
        }


def nearest_rank(sorted_values: Sequence[float], quantile: float) -> float | None:
    """fmbench's nearest rank (:func:`fmbench.figures.nearest_rank`) of already sorted values; ``None`` for none."""
    return figures.nearest_rank(sorted_values, quantile) if sorted_values else None


def profile_metric(evaluation: Evaluation, name: str) -> MetricProfile:
    """Profile one metric column across the evaluation's rows."""
    count = passed = failed = ignored = other = 0
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
            rationales[metric.rationale] = rationales.get(metric.rationale, 0) + 1
        if metric.ignored:
            ignored += 1
            continue
        if metric.fails:
            failed += 1
        elif metric.passes:
            passed += 1
        elif metric.kind != "score":
            other += 1
        number = metric.numeric
        if number is not None and math.isfinite(number):
            values.append(number)

    ordered = sorted(values)
    mean = variance = None
    if values:
        mean = math.fsum(values) / len(values)
        variance = math.fsum((value - mean) ** 2 for value in values) / len(values)
    ranked = sorted(rationales.items(), key=lambda item: -item[1])  # stable: first seen wins ties
    return MetricProfile(
        name=name,
        count=count,
        passed=passed,
        failed=failed,
        ignored=ignored,
        other=other,
        numeric_count=len(values),
        mean=mean,
        median=nearest_rank(ordered, 0.5),
        p90=nearest_rank(ordered, 0.9),
        minimum=ordered[0] if ordered else None,
        maximum=ordered[-1] if ordered else None,
        variance=variance,
        standard_deviation=math.sqrt(variance) if variance is not None else None,
        evaluator_kinds=tuple(kinds),
        rationales=tuple(RationaleCount(text, n) for text, n in ranked),
    )


def profile_metrics(evaluation: Evaluation) -> list[MetricProfile]:
    """One profile per metric column, in display order."""
    return [profile_metric(evaluation, name) for name in evaluation.metric_names]
