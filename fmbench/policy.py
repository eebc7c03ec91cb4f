"""Which runs are evidence: publishable, exploratory or invalid, with every reason named.

The bar is the benchmark's own (publishing rules §4). Every rule a run misses
is listed; the verdict is the worst level among them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal

from fmbench import vocabulary as vocab
from fmbench.annotations import Annotations
from fmbench.figures import SummaryMismatch
from fmbench.record import RunRecord
from fmbench.simulator import SimulatorJudgement, judge_simulator

VerdictLevel = Literal["publishable", "exploratory", "invalid"]

MIN_WARMUPS = 5
MIN_REPETITIONS = 20
FULL_SAMPLE_COUNT = 25
"""Samples per practical workload since revision 2026.09."""

_PRACTICAL_EXCLUDED_CATEGORIES = frozenset(
    {
        "agenticToolUse",
        "guardrailExpectedResponse",
        "guardrailExpectedProtection",
        "syntheticThroughput",
        "contextLimits",
    }
)


@dataclass(frozen=True)
class Reason:
    level: VerdictLevel
    code: str
    message: str


@dataclass(frozen=True)
class Verdict:
    level: VerdictLevel
    reasons: tuple[Reason, ...]

    @property
    def label(self) -> str:
        return {"publishable": "Publishable", "exploratory": "Exploratory", "invalid": "Invalid as evidence"}[self.level]


def _thermal_states(run: RunRecord) -> list[str | None]:
    states: list[str | None] = [run.environment.thermalState]
    for t in run.trials:
        if t.environment is not None:
            states.append(t.environment.thermalState)
        m = t.metrics
        states += [s for s in (m.startingThermalState, m.endingThermalState, m.worstObservedThermalState) if s]
    return states


def _worst_thermal(states: list[str | None]) -> str | None:
    known = [s for s in states if s in vocab.THERMAL_ORDER]
    return max(known, key=vocab.THERMAL_ORDER.__getitem__) if known else None


def assess(
    run: RunRecord,
    mismatches: list[SummaryMismatch],
    annotations: Annotations | None = None,
    simulator: SimulatorJudgement | None = None,
) -> Verdict:
    reasons: list[Reason] = []
    simulator = simulator or judge_simulator(run.environment, annotations)

    def invalid(code: str, message: str) -> None:
        reasons.append(Reason("invalid", code, message))

    def exploratory(code: str, message: str) -> None:
        reasons.append(Reason("exploratory", code, message))

    # --- invalid as evidence -----------------------------------------------------
    if simulator.is_simulator:
        invalid(
            "simulator",
            f"Measured in a Simulator, not on a device ({simulator.evidence}): the Simulator's speed "
            "and memory are the host Mac's, not the device's.",
        )
    if run.os_build is None:
        invalid("no-os-build", "The run file records no OS build, and the OS build is the unit of every OS comparison.")
    if run.route == "privateCloudCompute":
        measured = run.measured_failures
        pcc_trials = [t for t in run.trials if t.executed_model == "privateCloudCompute"]
        if measured and not pcc_trials and all(f.kind == "availability" for f in measured):
            invalid(
                "pcc-entitlement",
                f"Every one of {len(measured)} PCC requests failed with an availability error before "
                "any output: the process most likely lacked the Private Cloud Compute entitlement.",
            )
        elif annotations is not None and annotations.entitlement_missing:
            invalid("pcc-entitlement", "The operator's annotation says the process lacked the PCC entitlement.")
    if mismatches:
        shown = "; ".join(str(m) for m in mismatches[:3])
        more = f" and {len(mismatches) - 3} more" if len(mismatches) > 3 else ""
        invalid(
            "summary-mismatch",
            f"The stored summaries disagree with the trials under every scoring rule set the benchmark has used "
            f"({shown}{more}): the file was edited by hand or written by a faulty runner, so it is not "
            "benchmark evidence.",
        )
    attempts: Counter[tuple[str, str]] = Counter()
    for t in run.trials:
        attempts[(t.scenario_id, t.sample_id)] += 1
    for f in run.measured_failures:
        attempts[(f.scenario_id, f.sample_id or f"{f.scenario_id}-001")] += 1
    short = sorted(key for key, n in attempts.items() if n < run.repetitions)
    if short:
        _scenario, sample = short[0]
        invalid(
            "missing-repetitions",
            f"The file declares {run.repetitions} repetitions, but {len(short)} sample(s) hold fewer "
            f"attempts (for example {sample} has {attempts[short[0]]}): measured requests are missing.",
        )

    # --- short of the publishing bar -------------------------------------------
    if not run.trials:
        exploratory(
            "no-measured-trial",
            "No measured trial: every measured request failed, so the run has failures to show but no "
            "latency, throughput or quality figure.",
        )
    if run.warmup_count < MIN_WARMUPS:
        exploratory("few-warmups", f"{run.warmup_count} warmup request(s); a publishable run has at least {MIN_WARMUPS}.")
    if run.repetitions < MIN_REPETITIONS:
        exploratory(
            "few-repetitions",
            f"{run.repetitions} repetition(s) per sample; a publishable run has at least {MIN_REPETITIONS}.",
        )
    if run.suite in vocab.PRACTICAL_SUITES:
        if run.sample_limit is not None:
            exploratory(
                "sample-limit",
                f"Sample limit {run.sample_limit}: only part of each practical workload's sample set ran "
                "(the quick suite runs one sample per workload).",
            )
        elif run.generation == "current":
            samples: dict[str, set[str]] = {}
            for t in run.trials:
                if t.category not in _PRACTICAL_EXCLUDED_CATEGORIES:
                    samples.setdefault(t.scenario_id, set()).add(t.sample_id)
            for f in run.measured_failures:
                if f.scenario_id in samples and f.sample_id:
                    samples[f.scenario_id].add(f.sample_id)  # attempted, though it failed
            partial = sorted(s for s, ids in samples.items() if len(ids) < FULL_SAMPLE_COUNT)
            if partial:
                exploratory(
                    "partial-samples",
                    f"{len(partial)} practical workload(s) ran fewer than {FULL_SAMPLE_COUNT} samples "
                    f"(for example {partial[0]}: {len(samples[partial[0]])}).",
                )
    states = _thermal_states(run)
    worst = _worst_thermal(states)
    if worst is not None and worst not in vocab.PUBLISHABLE_THERMAL:
        exploratory("thermal", f"The thermal state reached {worst}; a publishable run stays nominal or fair throughout.")
    elif run.environment.thermalState not in vocab.THERMAL_ORDER:
        exploratory("thermal-unknown", "The thermal state at the start of the run is not recorded, so it cannot be shown to stay nominal or fair.")

    level: VerdictLevel = "publishable"
    if any(r.level == "invalid" for r in reasons):
        level = "invalid"
    elif reasons:
        level = "exploratory"
    return Verdict(level, tuple(reasons))


def worst_thermal_state(run: RunRecord) -> str | None:
    """The worst thermal state seen anywhere in the run."""
    return _worst_thermal(_thermal_states(run))
