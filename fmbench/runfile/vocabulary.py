"""The run format's enumerations: known values and the labels readers see.

Values outside these sets are kept as data and flagged, never rejected: the
format grows (a new category, a new failure kind) faster than readers do.
"""

from __future__ import annotations

import re

SUITES: dict[str, str] = {
    "quick": "Practical Quick",
    "full": "Practical Full",
    "agentic": "Agentic Tools",
    "guardrails": "Safety Guardrails",
    "performance": "Synthetic Performance",
    "context": "Context Limits",
}

ROUTES: dict[str, str] = {
    "onDevice": "On-device",
    "privateCloudCompute": "Private Cloud Compute",
}
SESSION_MODES = {"cold": "Cold session", "warm": "Warm reused session"}
REASONING_LEVELS = {"none": "Default", "light": "Light", "moderate": "Moderate", "deep": "Deep"}
FALLBACK_MODES = {"disabled": "Disabled", "onDevice": "Fall back on-device"}
CONNECTIVITY = {"normal": "Normal", "offline": "Offline (verified no network path)"}
THERMAL_STATES = {
    "nominal": "Nominal",
    "fair": "Fair",
    "serious": "Serious",
    "critical": "Critical",
    "unknown": "Unknown",
}
THERMAL_ORDER = {"nominal": 0, "fair": 1, "serious": 2, "critical": 3}
PUBLISHABLE_THERMAL = frozenset({"nominal", "fair"})
QUOTA_STATUSES = {"belowLimit": "Below limit", "limitReached": "Limit reached", "unknown": "Unknown"}
SAFETY_OUTCOMES = {
    "notApplicable": "Not applicable",
    "responded": "Responded",
    "guardrailViolation": "Guardrail violation",
    "refusal": "Refusal",
}
SAFETY_EXPECTATIONS = {"mustRespond": "Must respond", "mustProtect": "Must protect"}
TOKEN_COUNT_SOURCES = {
    "sessionUsage": "Session usage",
    "systemTokenizer": "System tokenizer",
    "characterEstimate": "Character estimate",
}
CATEGORIES = {
    "taskParsing": "Task parsing",
    "summarization": "Summarization",
    "classification": "Classification",
    "workoutGeneration": "Workout generation",
    "groundedExplanation": "Grounded explanation",
    "exerciseSubstitution": "Exercise substitution",
    "documentQuestionAnswering": "Document question answering",
    "citationExtraction": "Citation extraction",
    "creativeWriting": "Creative writing",
    "visualRecommendation": "Visual recommendation",
    "agenticToolUse": "Agentic tool use",
    "guardrailExpectedResponse": "Guardrail: expected response",
    "guardrailExpectedProtection": "Guardrail: expected protection",
    "syntheticThroughput": "Synthetic throughput",
    "contextLimits": "Context limits",
    # legacy generation only
    "structuredRecommendation": "Structured recommendation",
    "groundedQuestionAnswering": "Grounded question answering",
}
FAILURE_KINDS = {
    "guardrail": "Guardrail",
    "refusal": "Refusal",
    "contextLimit": "Context limit",
    "quota": "Quota",
    "network": "Network",
    "availability": "Availability",
    "generation": "Generation",
}
STATE_CHECKS = frozenset({"stateEquals", "stateContains"})
TRAJECTORY_CHECKS = frozenset(
    {"toolCalled", "toolNotCalled", "toolArgumentEquals", "toolArgumentContains", "toolCallSequence"}
)

WARMUP_SCENARIO = "__warmup__"
OS27_ONLY_SCENARIOS = frozenset({"visual-recommendation"})

VOCABULARIES: dict[str, dict[str, str]] = {
    "suite": SUITES,
    "route": ROUTES,
    "sessionMode": SESSION_MODES,
    "reasoningLevel": REASONING_LEVELS,
    "fallbackMode": FALLBACK_MODES,
    "connectivity": CONNECTIVITY,
    "thermalState": THERMAL_STATES,
    "quotaStatus": QUOTA_STATUSES,
    "safetyOutcome": SAFETY_OUTCOMES,
    "safetyExpectation": SAFETY_EXPECTATIONS,
    "tokenCountSource": TOKEN_COUNT_SOURCES,
    "category": CATEGORIES,
    "failureKind": FAILURE_KINDS,
}


def label(vocabulary: str, value: str | None) -> str | None:
    """The reader-facing label of a value; an unknown value in words (``spatialReasoning``: "Spatial reasoning")."""
    if value is None:
        return None
    known = VOCABULARIES[vocabulary].get(value)
    return known if known is not None else in_words(value)


_CAMEL_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def in_words(value: str) -> str:
    """A camelCase value of the file as words, its first capitalized (``spatialReasoning``: "Spatial reasoning"); a
    value that is not camelCase as itself."""
    if not re.fullmatch(r"[a-z]+(?:[A-Z][a-z0-9]*)+", value):
        return value
    words = _CAMEL_HUMP.sub(" ", value).lower()
    return words[0].upper() + words[1:]


def is_known(vocabulary: str, value: str | None) -> bool:
    return value is None or value in VOCABULARIES[vocabulary]
