"""Pydantic models of the portable run file, both format generations.

The runner is Swift: optionals are absent (``null`` is read as absent), enums
that carry values are one-key objects, typed values are ``{"string": {"_0": …}}``
and so on. The models are strict where data would be wrong (a string where a
number belongs) and tolerant where the format may grow: unknown keys are kept
in ``model_extra`` and enum-like strings are kept as data (``vocabulary`` says
which values are known, so the reader can flag the rest).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict, FailFast, Field

UINT64_MAX = 2**64 - 1
COUNT_MAX = 2**63 - 1
"""Counts and iterations are Swift ``Int``: signed 64-bit, stored exactly (BIGINT)."""
MEASUREMENT_MAX = 1e15
"""No duration (31 million years in seconds) or rate is this large; below it every figure stays finite."""

Seconds = Annotated[float, Field(ge=0, le=MEASUREMENT_MAX)]
ClockSeconds = Annotated[float, Field(ge=-MEASUREMENT_MAX, le=MEASUREMENT_MAX)]
"""A difference of two wall-clock readings: a clock step can make it negative (kept, and flagged)."""
Rate = Annotated[float, Field(ge=0, le=MEASUREMENT_MAX)]
Count = Annotated[int, Field(ge=0, le=COUNT_MAX)]
UInt64 = Annotated[int, Field(ge=0, le=UINT64_MAX)]


def _one_case(value: dict[str, Any]) -> dict[str, Any]:
    """A Swift enum with associated values is an object with exactly one key."""
    if len(value) != 1:
        raise ValueError(
            f"expected an enum case: an object with exactly one key, found {len(value)} keys"
        )
    (payload,) = value.values()
    if not isinstance(payload, dict):
        raise ValueError("expected the enum case's associated values as an object")
    return value


SwiftEnum = Annotated[dict[str, Any], AfterValidator(_one_case)]
"""``{"case": {associated values}}`` — checks, output modes and typed values."""


SwiftEnums = Annotated[dict[str, SwiftEnum], FailFast()]
"""Named enum cases (tool arguments, final-state values), checked up to the first that is not one."""


class _Model(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", allow_inf_nan=False)


class Environment(_Model):
    deviceName: str
    systemName: str
    systemVersion: str
    systemBuild: str | None = None
    localeIdentifier: str | None = None
    hardwareModel: str | None = None
    cpuModel: str | None = None
    cpuCores: Count | None = None
    gpuModel: str | None = None
    totalMemory: UInt64 | None = None
    thermalState: str | None = None
    lowPowerModeEnabled: bool | None = None
    foundationModelsBenchCommit: str | None = Field(
        default=None, validation_alias=AliasChoices("foundationModelsBenchCommit", "appBenchCommit")
    )
    """Files written before July 2026 name it ``appBenchCommit``: the same field."""
    timestamp: datetime | None = None


class QuotaSnapshot(_Model):
    status: str
    isApproachingLimit: bool | None = None
    isLimitReached: bool | None = None
    resetDate: datetime | None = None


class CheckResult(_Model):
    label: str
    passed: bool
    detail: str | None = None


class Grade(_Model):
    checks: Annotated[list[CheckResult], FailFast()]


class ToolCall(_Model):
    name: str
    arguments: SwiftEnums = Field(default_factory=dict)


class FinalState(_Model):
    values: SwiftEnums = Field(default_factory=dict)


class Metrics(_Model):
    startedAt: datetime | None = None
    endedAt: datetime | None = None
    duration: ClockSeconds
    timeToFirstToken: ClockSeconds | None = None
    decodeDuration: Seconds | None = None
    inputTokenCount: Count | None = None
    outputTokenCount: Count | None = None
    firstStreamUpdateTokenCount: Count | None = None
    tokenCountSource: str | None = None
    outputTokensPerSecond: Rate | None = None
    outputCharactersPerSecond: Rate | None = None
    streamUpdateCount: Count | None = None
    maximumStreamUpdateGap: ClockSeconds | None = None
    reasoningTokenCount: Count | None = None
    contextSize: Count | None = None
    contextUtilization: Rate | None = None
    startingResidentMemoryBytes: UInt64 | None = None
    peakObservedResidentMemoryBytes: UInt64 | None = None
    endingResidentMemoryBytes: UInt64 | None = None
    startingThermalState: str | None = None
    endingThermalState: str | None = None
    worstObservedThermalState: str | None = None


class Sample(_Model):
    id: str
    prompt: str
    checks: Annotated[list[SwiftEnum], FailFast()] = Field(default_factory=list)
    visualFixture: str | None = None
    safetyExpectation: str | None = None


class Distribution(_Model):
    count: Count
    minimum: float | None = None
    median: float | None = None
    mean: float | None = None
    p90: float | None = None
    maximum: float | None = None
    standardDeviation: float | None = None


class StoredSummary(_Model):
    id: str
    title: str | None = None
    category: str | None = None
    trialCount: Count | None = None
    failureCount: Count | None = None
    failureRate: float | None = None
    promptPassRate: float | None = None
    meanConstraintScore: float | None = None
    safetyTrialCount: Count | None = None
    safetyPassRate: float | None = None
    guardrailViolationCount: Count | None = None
    refusalCount: Count | None = None
    criticalSafetyFailureCount: Count | None = None
    duration: Distribution | None = None
    timeToFirstToken: Distribution | None = None
    outputTokensPerSecond: Distribution | None = None
    peakObservedResidentMemoryBytes: Distribution | None = None


class Trial(_Model):
    """A measured trial of the current generation."""

    id: str
    scenarioID: str
    scenarioTitle: str
    category: str
    sample: Sample
    requestedModel: str
    executedModel: str
    iteration: Count
    usedFallback: bool = False
    fallbackReason: str | None = None
    offlineSuccess: bool | None = None
    toolCalls: Annotated[list[ToolCall], FailFast()] = Field(default_factory=list)
    finalState: FinalState | None = None
    safetyOutcome: str | None = None
    safetyDetail: str | None = None
    response: str
    grade: Grade
    metrics: Metrics
    environment: Environment | None = None


class Failure(_Model):
    """A request that produced no response (current generation)."""

    id: str
    scenarioID: str
    sampleID: str | None = None
    iteration: Count
    kind: str | None = None
    message: str
    toolCalls: Annotated[list[ToolCall] | None, FailFast()] = None
    finalState: FinalState | None = None


class CurrentRun(_Model):
    suite: str
    model: str
    warmupCount: Count
    repetitions: Count
    sampleLimit: Count | None = None
    sessionMode: str
    reasoningLevel: str | None = None
    fallbackMode: str | None = None
    connectivity: str | None = None
    randomizedOrder: bool | None = None
    randomSeed: UInt64 | None = None
    modelContextSize: Count | None = None
    quotaBefore: QuotaSnapshot | None = None
    quotaAfter: QuotaSnapshot | None = None
    startedAt: datetime
    endedAt: datetime
    environment: Environment
    trials: Annotated[list[Trial], FailFast()]
    """Every array of a run stops at its first invalid element (``FailFast``), and every object of enum cases at
    its first bad value, so no shape of file makes more than a few errors an element; the reader collects the
    problems of the trials, failures and summaries again a slice of elements at a time."""
    failures: Annotated[list[Failure], FailFast()] = Field(default_factory=list)
    summaries: Annotated[list[StoredSummary], FailFast()] = Field(default_factory=list)


class LegacyScenario(_Model):
    id: str
    title: str
    summary: str | None = None
    category: str
    inspiredBy: Annotated[list[str], FailFast()] = Field(default_factory=list)
    instructions: str | None = None
    prompt: str
    outputMode: SwiftEnum | None = None
    maximumResponseTokens: Count | None = None
    checks: Annotated[list[SwiftEnum], FailFast()] = Field(default_factory=list)


class LegacyTrial(_Model):
    id: str
    iteration: Count
    model: str
    scenario: LegacyScenario
    response: str
    grade: Grade
    metrics: Metrics
    environment: Environment | None = None


class LegacyFailure(_Model):
    id: str
    iteration: Count
    message: str
    scenarioID: str
    kind: str | None = None


class LegacyRun(_Model):
    suite: str
    model: str
    warmupCount: Count
    repetitions: Count
    startedAt: datetime
    endedAt: datetime
    environment: Environment
    trials: Annotated[list[LegacyTrial], FailFast()]
    failures: Annotated[list[LegacyFailure], FailFast()] = Field(default_factory=list)
    summaries: Annotated[list[StoredSummary], FailFast()] = Field(default_factory=list)


RunDocument = CurrentRun | LegacyRun
