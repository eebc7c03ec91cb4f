"""Which runs are evidence: publishable, exploratory or invalid, with every reason named.

The bar is the benchmark's own (publishing rules §4). Every rule a run misses
is listed; the verdict is the worst level among them.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from operator import attrgetter
from typing import Literal

from fmbench.analysis.figures import SummaryMismatch
from fmbench.analysis.plausibility import implausible_figures
from fmbench.analysis.revisions import Assignment
from fmbench.runfile import vocabulary as vocab
from fmbench.runfile.annotations import Annotations
from fmbench.runfile.catalog import catalog_sample_count
from fmbench.runfile.names import visible
from fmbench.runfile.record import RunRecord
from fmbench.runfile.simulator import SimulatorJudgement, judge_simulator

VerdictLevel = Literal["publishable", "exploratory", "invalid"]

MIN_WARMUPS = 5
MIN_REPETITIONS = 20
PCC_MIN_OS_GENERATION = 27
"""Private Cloud Compute needs OS 27: a PCC run on an earlier OS is not a PCC measurement."""
EARLIEST_PLAUSIBLE_START = datetime(2025, 6, 9, tzinfo=UTC)
"""No run can start before Apple announced the Foundation Models framework (WWDC, 9 June 2025)."""
CLOCK_LEEWAY = timedelta(days=1)
"""A run may end at most this far after the moment it is judged (a device clock a little ahead, a time zone)."""
DEVICE_NAME_FIELDS = ("deviceName", "environment.deviceName", "device_name")
"""The names a sidecar correction may give the device-name field."""

_HOST_NAME_PATTERNS = (
    (re.compile(r"\.local\.?$", re.IGNORECASE), "ends in .local, as a network host name does"),
    (re.compile(r"\w['’]s\b", re.IGNORECASE), "is a possessive, naming a person"),
    (
        re.compile(r"^[A-Za-z]+s-(?:MacBook|iMac|Mac|iPhone|iPad)\b", re.IGNORECASE),
        "follows the owner's-device host name pattern (Janes-MacBook-Pro)",
    ),
)
_MODEL_ID = re.compile(r"^[A-Za-z]+\d+,\d+$")
"""The runner's default device name when none is set: the hardware model id (``iPhone18,1``)."""


def host_name_reason(device_name: str | None, hardware_model: str | None = None) -> str | None:
    """Why a device name looks like a host name or names a person; ``None`` for a generic name.

    The runner's own default, the hardware model id, is generic.
    """
    if not device_name:
        return None
    name = device_name.strip()
    if name == hardware_model or _MODEL_ID.match(name):
        return None
    for pattern, why in _HOST_NAME_PATTERNS:
        if pattern.search(name):
            return why
    return None


def corrected_device_name(annotations: Annotations | None) -> str | None:
    """The device name an operator's sidecar correction gives, if it gives one."""
    if annotations is None:
        return None
    for c in annotations.corrections:
        if c.field in DEVICE_NAME_FIELDS and c.value.strip():
            return c.value.strip()
    return None


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


def _thermal_states(run: RunRecord) -> set[str | None]:
    """Every thermal state the run records, each once (a run of a thousand trials repeats a few); absent
    and unknown ones are left to :func:`_worst_thermal`, which reads only the known ones."""
    states: set[str | None] = {run.environment.thermalState}
    environments = [e for e in map(attrgetter("environment"), run.trials) if e is not None]
    states.update(map(attrgetter("thermalState"), environments))
    metrics = list(map(attrgetter("metrics"), run.trials))
    for name in ("startingThermalState", "endingThermalState", "worstObservedThermalState"):
        states.update(map(attrgetter(name), metrics))
    return states


def _worst_thermal(states: set[str | None]) -> str | None:
    known = [s for s in states if s in vocab.THERMAL_ORDER]
    return max(known, key=vocab.THERMAL_ORDER.__getitem__) if known else None


def assess(
    run: RunRecord,
    mismatches: list[SummaryMismatch],
    annotations: Annotations | None = None,
    simulator: SimulatorJudgement | None = None,
    revision: Assignment | None = None,
    registry_name: str = "revisions.yaml",
) -> Verdict:
    """Judge a run against the publishing bar: every rule it misses as a reason, the worst level as its verdict.

    ``revision``: the suite revision the run was assigned (``None``: not judged on it); one that is unknown
    makes the run exploratory, the reason naming its benchmark commit and ``registry_name``."""
    simulator = simulator or judge_simulator(run.environment, annotations)
    reasons = [
        *_invalid_reasons(run, mismatches, annotations, simulator),
        *_exploratory_reasons(run, annotations, revision, registry_name),
    ]
    level: VerdictLevel = "publishable"
    if any(r.level == "invalid" for r in reasons):
        level = "invalid"
    elif reasons:
        level = "exploratory"
    return Verdict(level, tuple(reasons))


def _invalid_reasons(
    run: RunRecord,
    mismatches: list[SummaryMismatch],
    annotations: Annotations | None,
    simulator: SimulatorJudgement,
) -> list[Reason]:
    """Every reason the run is invalid as evidence, in the order the publishing rules list them."""
    reasons: list[Reason] = []
    if simulator.is_simulator:
        reasons.append(Reason(
            "invalid",
            "simulator",
            f"Measured in a Simulator, not on a device ({simulator.evidence}): the Simulator's speed "
            "and memory are the host Mac's, not the device's.",
        ))
    if run.os_build is None:
        reasons.append(Reason(
            "invalid", "no-os-build", "The run file records no OS build, and the OS build is the unit of every OS comparison."
        ))
    if run.route == "privateCloudCompute":
        reasons.extend(_pcc_invalid_reasons(run, annotations))
    clock = implausible_clock(run.started_at, run.ended_at)
    if clock is not None:
        reasons.append(Reason("invalid", "implausible-clock", clock))
    for implausible in implausible_figures(run):
        reasons.append(Reason("invalid", implausible.code, implausible.message))
    if mismatches:
        reasons.append(_summary_mismatch_reason(mismatches))
    missing = _missing_repetitions_reason(run)
    if missing is not None:
        reasons.append(missing)
    return reasons


def _pcc_invalid_reasons(run: RunRecord, annotations: Annotations | None) -> list[Reason]:
    """Why a Private Cloud Compute run did not measure PCC: no entitlement, or an OS before PCC's."""
    reasons: list[Reason] = []
    measured = run.measured_failures
    pcc_trials = [t for t in run.trials if t.executed_model == "privateCloudCompute"]
    if measured and not pcc_trials and all(f.kind == "availability" for f in measured):
        reasons.append(Reason(
            "invalid",
            "pcc-entitlement",
            f"Every one of {len(measured)} PCC requests failed with an availability error before "
            "any output: the process most likely lacked the Private Cloud Compute entitlement.",
        ))
    elif annotations is not None and annotations.entitlement_missing:
        reasons.append(Reason(
            "invalid", "pcc-entitlement", "The operator's annotation says the process lacked the PCC entitlement."
        ))
    generation = run.os_generation
    if generation is not None and generation < PCC_MIN_OS_GENERATION:
        reasons.append(Reason(
            "invalid",
            "pcc-os26",
            f"A Private Cloud Compute run on OS {generation}: PCC requires OS {PCC_MIN_OS_GENERATION}, "
            "so these requests did not measure PCC.",
        ))
    return reasons


def _summary_mismatch_reason(mismatches: list[SummaryMismatch]) -> Reason:
    """The reason a file whose stored summaries disagree with its trials is invalid, naming the first three."""
    shown = "; ".join(str(m) for m in mismatches[:3])
    more = f" and {len(mismatches) - 3} more" if len(mismatches) > 3 else ""
    return Reason(
        "invalid",
        "summary-mismatch",
        f"The stored summaries disagree with the trials under every scoring rule set the benchmark has used "
        f"({shown}{more}): the file was edited by hand or written by a faulty runner, so it is not "
        "benchmark evidence.",
    )


def _missing_repetitions_reason(run: RunRecord) -> Reason | None:
    """The reason a run is invalid when a sample holds fewer attempts than the declared repetitions, else ``None``.

    Failed measured requests count as attempts."""
    attempts: Counter[tuple[str, str]] = Counter()
    for t in run.trials:
        attempts[(t.scenario_id, t.sample_id)] += 1
    for f in run.measured_failures:
        attempts[(f.scenario_id, f.sample_id or f"{f.scenario_id}-001")] += 1
    short = sorted(key for key, n in attempts.items() if n < run.repetitions)
    if not short:
        return None
    _scenario, sample = short[0]
    return Reason(
        "invalid",
        "missing-repetitions",
        f"The file declares {run.repetitions} repetitions, but {len(short)} sample(s) hold fewer "
        f"attempts (for example {sample} has {attempts[short[0]]}): measured requests are missing.",
    )


def _exploratory_reasons(
    run: RunRecord, annotations: Annotations | None, revision: Assignment | None, registry_name: str
) -> list[Reason]:
    """Every reason the run falls short of the publishing bar without being invalid, in the rules' order."""
    reasons = _protocol_reasons(run)
    if run.route == "privateCloudCompute":
        network = _pcc_network_reason(annotations)
        if network is not None:
            reasons.append(network)
    host = _device_name_reason(run, annotations)
    if host is not None:
        reasons.append(host)
    thermal = _thermal_reason(run)
    if thermal is not None:
        reasons.append(thermal)
    if revision is not None and revision.revision_id is None:
        reasons.append(Reason(
            "exploratory",
            "revision-unknown",
            unknown_revision_reason(run.environment.foundationModelsBenchCommit, registry_name),
        ))
    return reasons


def _protocol_reasons(run: RunRecord) -> list[Reason]:
    """How the run's protocol falls short: no measured trial, few warmups or repetitions, part of the
    sample set, an order not randomized or no seed."""
    reasons: list[Reason] = []
    if not run.trials:
        reasons.append(Reason(
            "exploratory",
            "no-measured-trial",
            "No measured trial: every measured request failed, so the run has failures to show but no "
            "latency, throughput or quality figure.",
        ))
    if run.warmup_count < MIN_WARMUPS:
        reasons.append(Reason(
            "exploratory",
            "few-warmups",
            f"{run.warmup_count} warmup request(s); a publishable run has at least {MIN_WARMUPS}.",
        ))
    if run.repetitions < MIN_REPETITIONS:
        reasons.append(Reason(
            "exploratory",
            "few-repetitions",
            f"{run.repetitions} repetition(s) per sample; a publishable run has at least {MIN_REPETITIONS}.",
        ))
    sampled = _sample_set_reason(run)
    if sampled is not None:
        reasons.append(sampled)
    if run.randomized_order is not True:
        what = (
            "The workload order was not randomized" if run.randomized_order is False
            else "The file does not record whether the workload order was randomized"
        )
        reasons.append(Reason("exploratory", "fixed-order", f"{what}; a publishable run shuffles it with a recorded seed."))
    if run.random_seed is None:
        reasons.append(Reason(
            "exploratory", "no-seed", "No random seed recorded: the order the workloads ran in cannot be reproduced."
        ))
    return reasons


def _sample_set_reason(run: RunRecord) -> Reason | None:
    """Why the run measured only part of the sample set (a sample limit, or workloads short of the catalog)."""
    if run.sample_limit is not None:
        return Reason(
            "exploratory",
            "sample-limit",
            f"Sample limit {run.sample_limit}: only part of each workload's sample set ran "
            "(the quick suite runs one sample per workload).",
        )
    if run.generation != "current":
        return None
    partial = _partial_workloads(run)
    if not partial:
        return None
    scenario, ran, full = partial[0]
    return Reason(
        "exploratory",
        "partial-samples",
        f"{len(partial)} workload(s) ran fewer samples than the benchmark's catalog holds "
        f"(for example {scenario}: {ran} of {full}); a publishable run measures the full sample set.",
    )


def _pcc_network_reason(annotations: Annotations | None) -> Reason | None:
    """Why a PCC run's network conditions are missing (connection type, approximate location), else ``None``."""
    missing = [
        what
        for what, value in (
            ("connection type", annotations.connection if annotations else None),
            ("approximate location", annotations.location if annotations else None),
        )
        if not (value or "").strip()
    ]
    if not missing:
        return None
    return Reason(
        "exploratory",
        "pcc-network",
        f"Network conditions not recorded: a PCC run is a service measurement and needs its "
        f"{' and '.join(missing)} in a sidecar (connection: and location: in <run>.meta.yaml).",
    )


def _device_name_reason(run: RunRecord, annotations: Annotations | None) -> Reason | None:
    """Why the device name (a sidecar's correction of it first) looks like a host name or a person's, else ``None``."""
    corrected = corrected_device_name(annotations)
    name = corrected if corrected is not None else run.environment.deviceName
    why = host_name_reason(name, run.environment.hardwareModel)
    if why is None:
        return None
    source = "corrected device name" if corrected is not None else "device name"
    return Reason(
        "exploratory",
        "host-name",
        f"The {source} “{visible(name)}” {why}: a publishable run names the device generically "
        "(“MacBook Pro M5”). A sidecar correction (field: deviceName) with a generic name clears this.",
    )


def _thermal_reason(run: RunRecord) -> Reason | None:
    """Why the run's thermal state does not show it nominal or fair throughout, else ``None``."""
    worst = _worst_thermal(_thermal_states(run))
    if worst is not None and worst not in vocab.PUBLISHABLE_THERMAL:
        return Reason(
            "exploratory", "thermal", f"The thermal state reached {worst}; a publishable run stays nominal or fair throughout."
        )
    if run.environment.thermalState not in vocab.THERMAL_ORDER:
        return Reason(
            "exploratory",
            "thermal-unknown",
            "The thermal state at the start of the run is not recorded, so it cannot be shown to stay nominal or fair.",
        )
    return None


def unknown_revision_reason(commit: str | None, registry_name: str) -> str:
    """Why a run whose suite revision is unknown is not publishable (publishing rules §4 and §7)."""
    where = (f"benchmark commit {commit} is in no revision of {registry_name}" if commit
             else f"the run records no benchmark commit and its fixture corpus is in no revision of {registry_name}")
    return (f"Suite revision unknown: {where}, so its pass rates cannot be placed next to other runs' "
            "(add the commit to the revision it belongs to).")


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def implausible_clock(started_at: datetime, ended_at: datetime, now: datetime | None = None) -> str | None:
    """Why a run's start and end cannot be real readings of a clock, or ``None`` if they can be.

    The bounds live here alone: not before :data:`EARLIEST_PLAUSIBLE_START`, not after ``now`` (the
    moment of judging) + :data:`CLOCK_LEEWAY`, and an end no earlier than the start.
    """
    start, end = _utc(started_at), _utc(ended_at)
    latest = (now or datetime.now(UTC)) + CLOCK_LEEWAY
    stamps = f"started {start.isoformat()}, ended {end.isoformat()}"
    if start < EARLIEST_PLAUSIBLE_START or end < EARLIEST_PLAUSIBLE_START:
        return (
            f"The run's clock is implausible ({stamps}): no run can predate the Foundation Models framework "
            f"({EARLIEST_PLAUSIBLE_START:%d %B %Y}), so its times are not evidence."
        )
    if start > latest or end > latest:
        return (
            f"The run's clock is implausible ({stamps}): it is dated after the moment it was judged, "
            "so its times are not evidence."
        )
    if end < start:
        return f"The run's clock is implausible ({stamps}): it ends before it starts, so its times are not evidence."
    return None


def _partial_workloads(run: RunRecord) -> list[tuple[str, int, int]]:
    """``(workload, samples attempted, catalog size)`` of each fixed-catalog workload short of its full set."""
    samples: dict[str, set[str]] = {}
    for t in run.trials:
        samples.setdefault(t.scenario_id, set()).add(t.sample_id)
    for f in run.measured_failures:
        if f.sample_id:
            samples.setdefault(f.scenario_id, set()).add(f.sample_id)  # attempted, though it failed
    partial = []
    for scenario in sorted(samples):
        full = catalog_sample_count(scenario)
        if full is not None and len(samples[scenario]) < full:
            partial.append((scenario, len(samples[scenario]), full))
    return partial


def worst_thermal_state(run: RunRecord) -> str | None:
    """The worst thermal state seen anywhere in the run."""
    return _worst_thermal(_thermal_states(run))
