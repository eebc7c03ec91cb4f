"""Compare two evaluations' summary metrics, and check gates on the candidate.

Pairing: summary entries are paired by identity (name, group, operation
type, source metric, occurrence), so a name that repeats in different
groups, or repeats within one group, is compared entry by entry and never
mixed up. Entries without a partner are listed per side.

Direction: the comparison itself never assumes higher is better. A verdict
(``better``/``worse``/``unchanged``) is given only where a direction policy
is stated for the metric (see :data:`DEFAULT_DIRECTIONS`; callers may pass
their own) and only for operations whose value moves with the metric
(mean, median, minimum, maximum). Everything else gets no verdict.

Gates: ``"<metric> [<group>] [delta] <op> <number>"`` with ``>=``, ``<=``,
``>``, ``<``, ``==`` or ``!=`` (equality within 1e-9 relative). xceval's
grammar, a summary display name, an operator and a number with or without
spaces (``"Mean of Accuracy>=0.9"``), is the same rule without group or delta. The metric is the
summary display name (or, if no display name matches, the source metric
column). The rule is evaluated on the candidate's value, or with ``delta``
on candidate − baseline. When several summary entries match, only the
``mean`` entries are used and every one of them must satisfy the rule; when
several match and none is a mean, the gate is an error. A rule naming a
metric the candidate does not have is an error, never a pass.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .errors import ArtifactError, GateRuleError
from .model import Evaluation, Identified, SummaryMetric
from .reader import DEFAULT_LIMITS, ReadLimits, read_evaluation

Direction = Literal["higher", "lower"]
Verdict = Literal["better", "worse", "unchanged"]
GateStatus = Literal["pass", "fail", "error"]

DEFAULT_DIRECTIONS: Mapping[str, Direction] = {
    "FoundationModelsBench Execution Success": "higher",
    "FoundationModelsBench Prompt Pass": "higher",
    "FoundationModelsBench Constraint Score": "higher",
    "FoundationModelsBench Safety Pass": "higher",
    "FoundationModelsBench Tool Calls Pass": "higher",
    "FoundationModelsBench Tool Calls Percentage": "higher",
    "FoundationModelsBench Output Tokens Per Second": "higher",
    "FoundationModelsBench Duration Seconds": "lower",
    "FoundationModelsBench TTFT Seconds": "lower",
    "FoundationModelsBench Peak Resident Memory MiB": "lower",
}
"""The benchmark's stated policy. Metrics not listed get no better/worse verdict."""

DIRECTIONAL_OPERATIONS = frozenset({"mean", "median", "minimum", "maximum"})
"""Operations whose value moves in the metric's direction (not variance etc.)."""

OPERATORS: Mapping[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    "==": lambda left, right: math.isclose(left, right, rel_tol=1e-9, abs_tol=1e-12),
    "!=": lambda left, right: not math.isclose(left, right, rel_tol=1e-9, abs_tol=1e-12),
}

_RULE = re.compile(
    r"^\s*(?P<name>.+?)"
    r"(?:\s*\[(?P<group>[^\]]*)\])?"
    r"(?:\s+(?P<delta>delta))?"
    r"\s*(?P<op>>=|<=|==|!=|>|<)\s*"
    r"(?P<value>\S+)\s*$"
)


@dataclass(frozen=True)
class MetricDelta(Identified):
    """One summary metric present on both sides."""

    name: str
    group: str | None
    operation_type: str | None
    source_metric: str | None
    occurrence: int
    baseline: float | None
    candidate: float | None
    delta: float | None
    relative_delta: float | None
    direction: Direction | None
    verdict: Verdict | None

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.identity_dict(),
            "baseline": self.baseline,
            "candidate": self.candidate,
            "delta": self.delta,
            "relativeDelta": self.relative_delta,
            "direction": self.direction,
            "verdict": self.verdict,
        }


@dataclass(frozen=True)
class GateRule:
    text: str
    metric: str
    group: str | None
    on_delta: bool
    operator: str
    threshold: float

    def holds(self, value: float) -> bool:
        return OPERATORS[self.operator](value, self.threshold)


@dataclass(frozen=True)
class GateOutcome:
    rule: GateRule
    status: GateStatus
    observed: tuple[float, ...]
    message: str

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule.text,
            "status": self.status,
            "observed": list(self.observed),
            "message": self.message,
        }


@dataclass
class Comparison:
    baseline: Evaluation
    candidate: Evaluation
    paired: list[MetricDelta]
    baseline_only: list[SummaryMetric]
    candidate_only: list[SummaryMetric]
    gates: list[GateOutcome] = field(default_factory=list)

    @property
    def gates_passed(self) -> bool:
        """True when every gate passed (and vacuously when there are none)."""
        return all(outcome.passed for outcome in self.gates)

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": _side(self.baseline),
            "candidate": _side(self.candidate),
            "paired": [delta.to_dict() for delta in self.paired],
            "baselineOnly": [entry.to_dict() for entry in self.baseline_only],
            "candidateOnly": [entry.to_dict() for entry in self.candidate_only],
            "gates": [outcome.to_dict() for outcome in self.gates],
            "gatesPassed": self.gates_passed,
        }


def _side(evaluation: Evaluation) -> dict[str, Any]:
    return {
        "source": evaluation.source_name,
        "line": evaluation.line,
        "sha256": evaluation.sha256,
        "evaluationInfo": evaluation.info,
        "isJudge": evaluation.is_judge,
    }


def parse_gate(text: str) -> GateRule:
    """Parse ``"FoundationModelsBench Prompt Pass >= 0.9"`` (see the module doc)."""
    match = _RULE.match(text)
    if not match:
        raise GateRuleError(
            f"gate {text!r}: expected '<metric> [delta] <op> <number>' with op one of >=, <=, >, <, ==, !="
        )
    try:
        threshold = float(match["value"])
    except ValueError:
        raise GateRuleError(f"gate {text!r}: {match['value']!r} is not a number") from None
    if not math.isfinite(threshold):
        raise GateRuleError(f"gate {text!r}: the threshold must be a finite number")
    group = match["group"].strip() if match["group"] is not None else None
    return GateRule(
        text=text.strip(),
        metric=match["name"].strip(),
        group=group or None,
        on_delta=match["delta"] is not None,
        operator=match["op"],
        threshold=threshold,
    )


def _direction(entry: SummaryMetric, directions: Mapping[str, Direction]) -> Direction | None:
    if entry.operation_type not in DIRECTIONAL_OPERATIONS:
        return None
    if entry.source_metric and entry.source_metric in directions:
        return directions[entry.source_metric]
    return directions.get(entry.name)


def _verdict(delta: float | None, direction: Direction | None) -> Verdict | None:
    if delta is None or direction is None:
        return None
    if delta == 0:
        return "unchanged"
    improved = delta > 0 if direction == "higher" else delta < 0
    return "better" if improved else "worse"


def pair_summaries(
    baseline: Iterable[SummaryMetric],
    candidate: Iterable[SummaryMetric],
    directions: Mapping[str, Direction] = DEFAULT_DIRECTIONS,
) -> tuple[list[MetricDelta], list[SummaryMetric], list[SummaryMetric]]:
    """Pair entries by identity: (paired deltas, baseline only, candidate only)."""
    base_by_identity = {entry.identity: entry for entry in baseline}
    candidate_entries = list(candidate)
    candidate_identities = {entry.identity for entry in candidate_entries}
    paired: list[MetricDelta] = []
    candidate_only: list[SummaryMetric] = []
    for entry in candidate_entries:
        base = base_by_identity.get(entry.identity)
        if base is None:
            candidate_only.append(entry)
            continue
        delta = relative = None
        if base.value is not None and entry.value is not None:
            delta = entry.value - base.value
            relative = delta / abs(base.value) if base.value != 0 else None
        direction = _direction(entry, directions)
        paired.append(
            MetricDelta(
                name=entry.name,
                group=entry.group,
                operation_type=entry.operation_type,
                source_metric=entry.source_metric,
                occurrence=entry.occurrence,
                baseline=base.value,
                candidate=entry.value,
                delta=delta,
                relative_delta=relative,
                direction=direction,
                verdict=_verdict(delta, direction),
            )
        )
    baseline_only = [
        entry for key, entry in base_by_identity.items() if key not in candidate_identities
    ]
    return paired, baseline_only, candidate_only


def _select(rule: GateRule, entries: Sequence[SummaryMetric]) -> list[SummaryMetric] | str:
    """The candidate entries a rule applies to, or the reason there are none."""
    matching = [e for e in entries if e.name == rule.metric]
    if not matching:
        matching = [e for e in entries if e.source_metric == rule.metric]
    if rule.group is not None:
        matching = [e for e in matching if e.group == rule.group]
    if not matching:
        where = f" in group {rule.group!r}" if rule.group is not None else ""
        return f"unknown metric {rule.metric!r}{where}: the candidate has no such summary entry"
    if len(matching) > 1:
        means = [e for e in matching if e.operation_type == "mean"]
        if not means:
            return f"{len(matching)} summary entries match {rule.metric!r} and none is a mean; name a group"
        matching = means
    return matching


def evaluate_gate(
    rule: GateRule, candidate: Sequence[SummaryMetric], paired: Sequence[MetricDelta]
) -> GateOutcome:
    """Evaluate one rule on the candidate's summary (or on the deltas)."""
    selected = _select(rule, candidate)
    if isinstance(selected, str):
        return GateOutcome(rule, "error", (), selected)
    observed: list[float] = []
    by_identity = {delta.identity: delta for delta in paired}
    for entry in selected:
        if rule.on_delta:
            pair = by_identity.get(entry.identity)
            if pair is None:
                return GateOutcome(
                    rule,
                    "error",
                    tuple(observed),
                    f"{entry.label}: no baseline entry to take a delta from",
                )
            value = pair.delta
        else:
            value = entry.value
        if value is None:
            return GateOutcome(rule, "error", tuple(observed), f"{entry.label}: no numeric value")
        observed.append(value)
    failing = [value for value in observed if not rule.holds(value)]
    subject = "delta" if rule.on_delta else "value"
    shown = ", ".join(f"{value:.6g}" for value in observed)
    if failing:
        return GateOutcome(
            rule,
            "fail",
            tuple(observed),
            f"{subject} {shown} does not satisfy {rule.operator} {rule.threshold:g}",
        )
    return GateOutcome(
        rule,
        "pass",
        tuple(observed),
        f"{subject} {shown} satisfies {rule.operator} {rule.threshold:g}",
    )


def compare_evaluations(
    baseline: Evaluation,
    candidate: Evaluation,
    *,
    gates: Sequence[str | GateRule] = (),
    directions: Mapping[str, Direction] = DEFAULT_DIRECTIONS,
) -> Comparison:
    """Pair the summaries, state verdicts where a policy exists, evaluate gates.

    Raises :class:`GateRuleError` when a rule's text cannot be parsed, and
    :class:`ArtifactError` when one side is a model-judge artifact and the
    other is not (judge scores are secondary evidence, always kept apart).
    """
    if baseline.is_judge != candidate.is_judge:
        judge = candidate if candidate.is_judge else baseline
        raise ArtifactError(
            judge.path,
            "holds model-judge scores and the other side does not: compare like with like",
            line=judge.line,
        )
    rules = [parse_gate(rule) if isinstance(rule, str) else rule for rule in gates]
    paired, baseline_only, candidate_only = pair_summaries(
        baseline.summary, candidate.summary, directions
    )
    outcomes = [evaluate_gate(rule, candidate.summary, paired) for rule in rules]
    return Comparison(baseline, candidate, paired, baseline_only, candidate_only, outcomes)


def compare_files(
    baseline: Path | str,
    candidate: Path | str,
    *,
    gates: Sequence[str] = (),
    limits: ReadLimits = DEFAULT_LIMITS,
) -> Comparison:
    """Read one evaluation from each file and compare them (see :func:`compare_evaluations`)."""
    rules = [parse_gate(rule) for rule in gates]  # a bad rule fails before any file is read
    return compare_evaluations(read_evaluation(baseline, limits), read_evaluation(candidate, limits), gates=rules)
