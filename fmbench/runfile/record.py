"""One shape for a run of either generation: what the rest of fmbench reads.

A legacy trial carries a whole scenario (one sample, ``<scenario>-001``); a
current trial carries a scenario id and a sample. Both become a
:class:`TrialRecord`. Fields a generation does not record stay ``None``: they
are shown as "not recorded", never given a default.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter
from typing import Any

from fmbench.errors import Problem
from fmbench.runfile import vocabulary as vocab
from fmbench.runfile.duplicate_keys import duplicate_key_notes
from fmbench.runfile.models import (
    CheckResult,
    CurrentRun,
    Environment,
    Failure,
    FinalState,
    LegacyFailure,
    LegacyRun,
    Metrics,
    QuotaSnapshot,
    StoredSummary,
    ToolCall,
)
from fmbench.runfile.names import normalize_names
from fmbench.runfile.reader import Generation, ParsedRun

_IOS_BUILD = re.compile(r"\(\s*Build\s+([0-9A-Za-z]+)\s*\)")
_BARE_BUILD = re.compile(r"^[0-9]{2}[A-Z][0-9]{1,5}[a-z]?$")


@dataclass(slots=True)
class TrialRecord:
    ordinal: int
    id: str
    scenario_id: str
    scenario_title: str
    category: str
    sample_id: str
    prompt: str
    instructions: str | None
    check_definitions: list[dict[str, Any]]
    safety_expectation: str | None
    visual_fixture: str | None
    requested_model: str
    executed_model: str
    iteration: int
    used_fallback: bool
    fallback_reason: str | None
    offline_success: bool | None
    tool_calls: list[ToolCall]
    final_state: FinalState | None
    safety_outcome: str | None
    safety_detail: str | None
    response: str
    checks: list[CheckResult]
    metrics: Metrics
    environment: Environment | None
    extra: dict[str, Any]


@dataclass(slots=True)
class FailureRecord:
    ordinal: int
    id: str
    scenario_id: str
    sample_id: str | None
    iteration: int
    kind: str | None
    message: str
    tool_calls: list[ToolCall] | None
    final_state: FinalState | None

    @property
    def is_warmup(self) -> bool:
        return self.scenario_id == vocab.WARMUP_SCENARIO


@dataclass(slots=True)
class RunRecord:
    generation: Generation
    file_name: str
    sha256: str
    size: int
    suite: str
    route: str
    warmup_count: int
    repetitions: int
    sample_limit: int | None
    session_mode: str | None
    reasoning_level: str | None
    fallback_mode: str | None
    connectivity: str | None
    randomized_order: bool | None
    random_seed: int | None
    model_context_size: int | None
    quota_before: QuotaSnapshot | None
    quota_after: QuotaSnapshot | None
    started_at: datetime
    ended_at: datetime
    environment: Environment
    trials: list[TrialRecord]
    failures: list[FailureRecord]
    summaries: list[StoredSummary]
    extra: dict[str, Any]
    flags: list[Problem] = field(default_factory=list)
    commit_key: str = "foundationModelsBenchCommit"
    """The key that named the benchmark commit: files written before July 2026 say ``appBenchCommit``."""

    @property
    def run_id(self) -> str:
        return run_id_for(self.sha256)

    @property
    def os_build(self) -> str | None:
        return parse_os_build(self.environment.systemBuild)

    @property
    def os_generation(self) -> int | None:
        return parse_os_generation(self.environment.systemVersion)

    @property
    def measured_failures(self) -> list[FailureRecord]:
        return [f for f in self.failures if not f.is_warmup]

    @property
    def warmup_failures(self) -> list[FailureRecord]:
        return [f for f in self.failures if f.is_warmup]


def run_id_for(sha256: str) -> str:
    """A run is named by its bytes: the first 12 hex digits of the file's SHA-256."""
    return sha256[:12]


def parse_os_build(system_build: str | None) -> str | None:
    """``26A5353q`` as is; iOS's ``Version 27.0 (Build 24A5264n)`` -> ``24A5264n``."""
    if system_build is None:
        return None
    text = system_build.strip()
    match = _IOS_BUILD.search(text)
    if match:
        return match.group(1)
    if _BARE_BUILD.match(text):
        return text
    return text or None


def parse_os_generation(system_version: str | None) -> int | None:
    """The OS generation is the major version: ``27.0.0`` -> 27."""
    if not system_version:
        return None
    match = re.match(r"\s*(?:Version\s+)?(\d+)", system_version)
    return int(match.group(1)) if match else None


def typed_value(value: dict[str, Any]) -> Any:
    """The payload of ``{"string": {"_0": "x"}}`` and friends."""
    ((_, payload),) = value.items()
    return payload.get("_0") if isinstance(payload, dict) else payload


def typed_kind(value: dict[str, Any]) -> str:
    return next(iter(value))


def fixture_fingerprint(trials: list[TrialRecord]) -> str | None:
    """A fingerprint of the fixture corpus a run measured: its scenario, sample and check definitions.

    Two runs with the same fingerprint were graded against the same tasks.
    """
    if not trials:
        return None
    definitions: dict[tuple[str, str], Any] = {}
    for t in trials:
        key = (t.scenario_id, t.sample_id)
        if key not in definitions:
            definitions[key] = {
                "scenario": t.scenario_id,
                "title": t.scenario_title,
                "category": t.category,
                "sample": t.sample_id,
                "prompt": t.prompt,
                "instructions": t.instructions,
                "checks": t.check_definitions,
                "safetyExpectation": t.safety_expectation,
                "visualFixture": t.visual_fixture,
            }
    canonical = json.dumps(
        [definitions[k] for k in sorted(definitions)], sort_keys=True, ensure_ascii=False
    )
    return "fx-" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def to_record(parsed: ParsedRun, file_name: str, data: bytes, sha256: str | None = None) -> RunRecord:
    """The run in one shape for both generations; ``sha256`` of ``data`` when the caller has it already."""
    sha = sha256 or hashlib.sha256(data).hexdigest()
    doc = parsed.document
    if isinstance(doc, CurrentRun):
        record = _from_current(doc, file_name, sha, len(data))
    else:
        assert isinstance(doc, LegacyRun)
        record = _from_legacy(doc, file_name, sha, len(data))
    record.environment, name_notes = normalize_names(record.environment)
    record.flags = _flags(record) + duplicate_key_notes(data, doc) + name_notes
    # The current key first: a file that has it names it in the run's environment, near its top, where the
    # search ends (searching the old key first read every byte of every current file).
    if b'"foundationModelsBenchCommit"' not in data and b'"appBenchCommit"' in data:
        record.commit_key = "appBenchCommit"
    return record


def _failures(failures: list[Failure] | list[LegacyFailure]) -> list[FailureRecord]:
    """Failures of either generation; the legacy one records no sample, tool calls or final state."""
    return [
        FailureRecord(
            ordinal=i,
            id=f.id,
            scenario_id=f.scenarioID,
            sample_id=getattr(f, "sampleID", None),
            iteration=f.iteration,
            kind=f.kind,
            message=f.message,
            tool_calls=getattr(f, "toolCalls", None),
            final_state=getattr(f, "finalState", None),
        )
        for i, f in enumerate(failures)
    ]


def _from_current(doc: CurrentRun, file_name: str, sha: str, size: int) -> RunRecord:
    # Positional, in TrialRecord's field order: a run has thousands of trials, and binding 26 keywords
    # cost a third more than the record itself. A trial's unknown keys are the model's own dict (not copied).
    trials = [
        TrialRecord(
            i, t.id, t.scenarioID, t.scenarioTitle, t.category,
            s.id, s.prompt, None, s.checks, s.safetyExpectation, s.visualFixture,  # sample .. visual_fixture
            t.requestedModel, t.executedModel, t.iteration, t.usedFallback, t.fallbackReason, t.offlineSuccess,
            t.toolCalls, t.finalState, t.safetyOutcome, t.safetyDetail, t.response,
            t.grade.checks, t.metrics, t.environment, t.__pydantic_extra__ or {},
        )
        for i, t in enumerate(doc.trials)
        for s in (t.sample,)
    ]
    failures = _failures(doc.failures)
    return RunRecord(
        generation="current",
        file_name=file_name,
        sha256=sha,
        size=size,
        suite=doc.suite,
        route=doc.model,
        warmup_count=doc.warmupCount,
        repetitions=doc.repetitions,
        sample_limit=doc.sampleLimit,
        session_mode=doc.sessionMode,
        reasoning_level=doc.reasoningLevel,
        fallback_mode=doc.fallbackMode,
        connectivity=doc.connectivity,
        randomized_order=doc.randomizedOrder,
        random_seed=doc.randomSeed,
        model_context_size=doc.modelContextSize,
        quota_before=doc.quotaBefore,
        quota_after=doc.quotaAfter,
        started_at=doc.startedAt,
        ended_at=doc.endedAt,
        environment=doc.environment,
        trials=trials,
        failures=failures,
        summaries=doc.summaries,
        extra=dict(doc.__pydantic_extra__ or {}),
    )


def _from_legacy(doc: LegacyRun, file_name: str, sha: str, size: int) -> RunRecord:
    trials = []
    for i, t in enumerate(doc.trials):
        s = t.scenario
        extra = dict(t.__pydantic_extra__ or {})
        trials.append(
            TrialRecord(
                ordinal=i,
                id=t.id,
                scenario_id=s.id,
                scenario_title=s.title,
                category=s.category,
                sample_id=f"{s.id}-001",
                prompt=s.prompt,
                instructions=s.instructions,
                check_definitions=s.checks,
                safety_expectation=None,
                visual_fixture=None,
                requested_model=t.model,
                executed_model=t.model,
                iteration=t.iteration,
                used_fallback=False,
                fallback_reason=None,
                offline_success=None,
                tool_calls=[],
                final_state=None,
                safety_outcome=None,
                safety_detail=None,
                response=t.response,
                checks=t.grade.checks,
                metrics=t.metrics,
                environment=t.environment,
                extra=extra,
            )
        )
    failures = _failures(doc.failures)
    return RunRecord(
        generation="legacy",
        file_name=file_name,
        sha256=sha,
        size=size,
        suite=doc.suite,
        route=doc.model,
        warmup_count=doc.warmupCount,
        repetitions=doc.repetitions,
        sample_limit=None,
        session_mode=None,
        reasoning_level=None,
        fallback_mode=None,
        connectivity=None,
        randomized_order=None,
        random_seed=None,
        model_context_size=None,
        quota_before=None,
        quota_after=None,
        started_at=doc.startedAt,
        ended_at=doc.endedAt,
        environment=doc.environment,
        trials=trials,
        failures=failures,
        summaries=doc.summaries,
        extra=dict(doc.__pydantic_extra__ or {}),
    )


def _unknown(where: str, vocabulary: str, value: str | None) -> Problem | None:
    if vocab.is_known(vocabulary, value):
        return None
    return Problem(where, f"unknown {vocabulary} {value!r} kept as data")


def _extra_keys(where: str, model: Any) -> list[Problem]:
    extra = getattr(model, "model_extra", None) or {}
    return [Problem(f"{where}.{k}" if where else k, "unknown key kept") for k in sorted(extra)]


_CLOCK_READINGS = (
    ("duration", "duration"),
    ("timeToFirstToken", "time to first token"),
    ("maximumStreamUpdateGap", "stream update gap"),
)
CLOCK_STEP_NOTE = "negative: a wall-clock step during the trial; kept as recorded and flagged"
_clock_readings = attrgetter(*(name for name, _ in _CLOCK_READINGS))


def clock_step_flags(run: RunRecord) -> list[Problem]:
    """Every negative duration, TTFT or stream update gap: differences of wall-clock readings that a
    clock step turned negative. They are kept (and enter the figures) as the runner wrote them."""
    out = []
    for t in run.trials:
        m = t.metrics
        if min(v or 0 for v in _clock_readings(m)) >= 0:
            continue  # nearly every trial: no reading to name
        for name, what in _CLOCK_READINGS:
            value = getattr(m, name)
            if value is not None and value < 0:
                out.append(Problem(f"trials[{t.ordinal}].metrics.{name}", f"{what} {value:g} s is {CLOCK_STEP_NOTE}"))
    return out


def _trials_flagged(trials: list[TrialRecord]) -> bool:
    """Whether any trial has an unknown key or value to flag (most runs have none: then the
    trials need not be walked one by one for their flags)."""
    if any(t.extra or t.metrics.__pydantic_extra__ for t in trials):
        return True
    values = (
        ("category", {t.category for t in trials}),
        ("safetyOutcome", {t.safety_outcome for t in trials}),
        ("route", {t.requested_model for t in trials} | {t.executed_model for t in trials}),
        ("tokenCountSource", {t.metrics.tokenCountSource for t in trials}),
    )
    return not all(vocab.is_known(vocabulary, value) for vocabulary, found in values for value in found)


def _flags(run: RunRecord) -> list[Problem]:
    """Everything the reader kept without understanding it: unknown keys and values."""
    flags: list[Problem] = []
    flags += [Problem(k, "unknown key kept") for k in sorted(run.extra)]
    flags += _extra_keys("environment", run.environment)
    for where, vocabulary, value in (
        ("suite", "suite", run.suite),
        ("model", "route", run.route),
        ("sessionMode", "sessionMode", run.session_mode),
        ("reasoningLevel", "reasoningLevel", run.reasoning_level),
        ("fallbackMode", "fallbackMode", run.fallback_mode),
        ("connectivity", "connectivity", run.connectivity),
        ("environment.thermalState", "thermalState", run.environment.thermalState),
    ):
        problem = _unknown(where, vocabulary, value)
        if problem:
            flags.append(problem)
    seen: set[tuple[str, str]] = set()
    for t in run.trials if _trials_flagged(run.trials) else ():
        base = f"trials[{t.ordinal}]"
        flags += [Problem(f"{base}.{k}", "unknown key kept") for k in sorted(t.extra)]
        flags += _extra_keys(f"{base}.metrics", t.metrics)
        for where, vocabulary, value in (
            ("category", "category", t.category),
            ("safetyOutcome", "safetyOutcome", t.safety_outcome),
            ("requestedModel", "route", t.requested_model),
            ("executedModel", "route", t.executed_model),
            ("metrics.tokenCountSource", "tokenCountSource", t.metrics.tokenCountSource),
        ):
            if not vocab.is_known(vocabulary, value) and (vocabulary, str(value)) not in seen:
                seen.add((vocabulary, str(value)))
                flags.append(Problem(f"{base}.{where}", f"unknown {vocabulary} {value!r} kept as data"))
    flags += clock_step_flags(run)
    for f in run.failures:
        if f.kind is not None and not vocab.is_known("failureKind", f.kind) and ("failureKind", f.kind) not in seen:
            seen.add(("failureKind", f.kind))
            flags.append(Problem(f"failures[{f.ordinal}].kind", f"unknown failure kind {f.kind!r} kept as data"))
    return flags
