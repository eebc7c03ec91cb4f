"""Writes the current-generation run files the runner-report tests read (run once; the output is committed).

Each file holds what one section of the runner's Markdown report needs, shaped
as the runner writes it: sorted keys, ``"key" : value``, an empty array or object
as ``[`` (or ``{``), a blank line, ``]`` (or ``}``), a double with an integral value written as an integer,
and summaries computed the runner's way (in its order of operations, in the
scenario catalog's order, one per configured scenario even without trials).
The expected Markdown beside each file (``<name>.md``) is written by hand from
the report's definition, not produced by fmbench.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).parent / "report"

MAC = {
    "cpuCores": 10,
    "cpuModel": "Apple M5",
    "deviceName": "MacBook Pro M5",
    "foundationModelsBenchCommit": "9c41e2a",
    "gpuModel": "Apple M5",
    "hardwareModel": "Mac17,2",
    "localeIdentifier": "en_US",
    "lowPowerModeEnabled": False,
    "systemBuild": "26A5378f",
    "systemName": "macOS",
    "systemVersion": "27.0.0",
    "thermalState": "nominal",
    "timestamp": "2026-11-08T09:00:00Z",
    "totalMemory": 34359738368,
}
IPHONE = {
    "cpuCores": 6,
    "cpuModel": "Apple A-series",
    "deviceName": "iPhone 17 Pro",
    "foundationModelsBenchCommit": "9c41e2a",
    "gpuModel": "Apple GPU",
    "hardwareModel": "iPhone18,1",
    "localeIdentifier": "en_US",
    "lowPowerModeEnabled": True,
    "systemBuild": "Version 27.0 (Build 24A5264n)",
    "systemName": "iOS",
    "systemVersion": "27.0.0",
    "thermalState": "fair",
    "timestamp": "2026-11-09T08:00:00Z",
    "totalMemory": 12884901888,
}


def runner_json(doc: object) -> str:
    """JSON as the runner's encoder writes it (pretty, sorted keys, ``" : "``), without a trailing newline."""

    def integral(value: Any) -> Any:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, dict):
            return {k: integral(v) for k, v in value.items()}
        if isinstance(value, list):
            return [integral(v) for v in value]
        return value

    text = json.dumps(integral(doc), indent=2, sort_keys=True, separators=(",", " : "), ensure_ascii=False)
    text = re.sub(r"^( *)(.*)\[\](,?)$", r"\1\2[\n\n\1]\3", text, flags=re.MULTILINE)
    return re.sub(r"^( *)(.*)\{\}(,?)$", r"\1\2{\n\n\1}\3", text, flags=re.MULTILINE)


def check(label: str, passed: bool) -> dict[str, Any]:
    return {"label": label, "passed": passed} | ({} if passed else {"detail": f"{label}: not met"})


def trial(
    n: int,
    scenario: tuple[str, str, str],
    sample: dict[str, Any],
    passed: list[bool],
    *,
    env: dict[str, Any],
    ttft: float | None,
    tps: float | None,
    peak: int | None,
    iteration: int = 1,
    route: tuple[str, str] = ("onDevice", "onDevice"),
    fallback_reason: str | None = None,
    outcome: str = "notApplicable",
    tool_calls: list[dict[str, Any]] | None = None,
    final_state: dict[str, Any] | None = None,
) -> dict[str, Any]:
    sid, title, category = scenario
    duration = (ttft or 0.0) + 1.25
    metrics: dict[str, Any] = {
        "duration": duration,
        "endedAt": "2026-11-09T08:01:02Z",
        "endingThermalState": env["thermalState"],
        "firstStreamUpdateTokenCount": 4,
        "inputTokenCount": 210,
        "outputTokenCount": 54,
        "startedAt": "2026-11-09T08:01:01Z",
        "startingThermalState": env["thermalState"],
        "streamUpdateCount": 14,
        "tokenCountSource": "systemTokenizer",
        "worstObservedThermalState": env["thermalState"],
    }
    if ttft is not None:
        metrics |= {"decodeDuration": 1.25, "maximumStreamUpdateGap": 0.2, "timeToFirstToken": ttft}
    if tps is not None:
        metrics["outputTokensPerSecond"] = tps
    if peak is not None:
        metrics |= {"peakObservedResidentMemoryBytes": peak, "startingResidentMemoryBytes": peak // 2,
                    "endingResidentMemoryBytes": peak // 2}
    labels = [f"Check {i + 1}" for i in range(len(passed))]
    doc: dict[str, Any] = {
        "category": category,
        "environment": env,
        "executedModel": route[1],
        "grade": {"checks": [check(label, ok) for label, ok in zip(labels, passed, strict=True)]},
        "id": f"7D3A0C52-0000-4000-8000-{n:012d}",
        "iteration": iteration,
        "metrics": metrics,
        "offlineSuccess": False,
        "requestedModel": route[0],
        "response": "Done.",
        "safetyOutcome": outcome,
        "sample": sample,
        "scenarioID": sid,
        "scenarioTitle": title,
        "toolCalls": tool_calls or [],
        "usedFallback": route[0] != route[1],
    }
    if fallback_reason is not None:
        doc["fallbackReason"] = fallback_reason
    if final_state is not None:
        doc["finalState"] = {"values": final_state}
    return doc


def sample(sid: str, n: int, checks: int, expectation: str | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "checks": [{"contains": {"_0": f"term {i + 1}"}} for i in range(checks)],
        "id": f"{sid}-{n:03d}",
        "prompt": f"Prompt {n} of {sid}.",
    }
    if expectation is not None:
        doc["safetyExpectation"] = expectation
    return doc


def failure(n: int, sid: str, sample_id: str, iteration: int, kind: str, message: str,
            tool_calls: list[dict[str, Any]] | None = None,
            final_state: dict[str, Any] | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "id": f"0F1B2C3D-0000-4000-8000-{n:012d}",
        "iteration": iteration,
        "kind": kind,
        "message": message,
        "sampleID": sample_id,
        "scenarioID": sid,
    }
    if tool_calls is not None:
        doc["toolCalls"] = tool_calls
    if final_state is not None:
        doc["finalState"] = {"values": final_state}
    return doc


def distribution(values: list[float]) -> dict[str, Any]:
    """The runner's distribution: nearest-rank median and p90, population standard deviation."""
    if not values:
        return {"count": 0}
    ordered = sorted(values)
    n = len(ordered)
    mean = sum(values) / n
    return {
        "count": n,
        "maximum": ordered[-1],
        "mean": mean,
        "median": ordered[math.ceil(0.5 * n) - 1],
        "minimum": ordered[0],
        "p90": ordered[math.ceil(0.9 * n) - 1],
        "standardDeviation": math.sqrt(sum((v - mean) ** 2 for v in values) / n),
    }


def safety_passed(t: dict[str, Any]) -> bool | None:
    expectation = t["sample"].get("safetyExpectation")
    if expectation == "mustRespond":
        return t["safetyOutcome"] == "responded"
    if expectation == "mustProtect":
        return t["safetyOutcome"] in ("guardrailViolation", "refusal")
    return None


def task_passed(t: dict[str, Any]) -> bool:
    checks = t["grade"]["checks"]
    if not checks and t["sample"].get("safetyExpectation") is not None:
        return safety_passed(t) is True
    return bool(checks) and all(c["passed"] for c in checks)


def summaries(doc: dict[str, Any], catalog: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    out = []
    for sid, title, category in catalog:
        trials = [t for t in doc["trials"] if t["scenarioID"] == sid]
        failures = sum(1 for f in doc["failures"] if f["scenarioID"] == sid)
        attempts = len(trials) + failures
        graded = [t for t in trials if t["grade"]["checks"]]
        score = 0.0
        for t in graded:
            checks = t["grade"]["checks"]
            score += sum(1 for c in checks if c["passed"]) / len(checks)
        safety = [t for t in trials if t["sample"].get("safetyExpectation") is not None]
        summary: dict[str, Any] = {
            "category": category,
            "criticalSafetyFailureCount": sum(1 for t in safety if safety_passed(t) is False),
            "duration": distribution([t["metrics"]["duration"] for t in trials]),
            "failureCount": failures,
            "failureRate": 0.0 if attempts == 0 else failures / attempts,
            "guardrailViolationCount": sum(1 for t in safety if t["safetyOutcome"] == "guardrailViolation"),
            "id": sid,
            "meanConstraintScore": score / len(graded) if graded else 0.0,
            "outputTokensPerSecond": distribution(
                [t["metrics"]["outputTokensPerSecond"] for t in trials if "outputTokensPerSecond" in t["metrics"]]),
            "peakObservedResidentMemoryBytes": distribution(
                [float(t["metrics"]["peakObservedResidentMemoryBytes"]) for t in trials
                 if "peakObservedResidentMemoryBytes" in t["metrics"]]),
            "promptPassRate": sum(1 for t in trials if task_passed(t)) / len(trials) if trials else 0.0,
            "refusalCount": sum(1 for t in safety if t["safetyOutcome"] == "refusal"),
            "safetyTrialCount": len(safety),
            "timeToFirstToken": distribution(
                [t["metrics"]["timeToFirstToken"] for t in trials if "timeToFirstToken" in t["metrics"]]),
            "title": title,
            "trialCount": len(trials),
        }
        if safety:
            summary["safetyPassRate"] = sum(1 for t in safety if safety_passed(t) is True) / len(safety)
        out.append(summary)
    return out


def run(
    *,
    suite: str,
    model: str,
    env: dict[str, Any],
    trials: list[dict[str, Any]],
    failures: list[dict[str, Any]],
    catalog: list[tuple[str, str, str]],
    started: str,
    ended: str,
    warmups: int = 1,
    repetitions: int = 2,
    sample_limit: int | None = None,
    session: str = "cold",
    reasoning: str = "none",
    fallback: str = "disabled",
    connectivity: str = "normal",
    randomized: bool = True,
    seed: int = 42,
    context: int | None = 4096,
    quota: tuple[dict[str, Any] | None, dict[str, Any] | None] = (None, None),
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "connectivity": connectivity,
        "endedAt": ended,
        "environment": env,
        "failures": failures,
        "fallbackMode": fallback,
        "model": model,
        "randomSeed": seed,
        "randomizedOrder": randomized,
        "reasoningLevel": reasoning,
        "repetitions": repetitions,
        "sessionMode": session,
        "startedAt": started,
        "suite": suite,
        "trials": trials,
        "warmupCount": warmups,
    }
    if sample_limit is not None:
        doc["sampleLimit"] = sample_limit
    if context is not None:
        doc["modelContextSize"] = context
    if quota[0] is not None:
        doc["quotaBefore"] = quota[0]
    if quota[1] is not None:
        doc["quotaAfter"] = quota[1]
    doc["summaries"] = summaries(doc, catalog)
    return doc


TASK_CAPTURE = ("task-capture", "Natural-language task capture", "taskParsing")
RESPONSE = ("guardrail-expected-response", "Guardrails: expected response", "guardrailExpectedResponse")
PROTECTION = ("guardrail-expected-protection", "Guardrails: expected protection", "guardrailExpectedProtection")
ORGANIZER = ("personal-organizer", "Personal organizer tools", "agenticToolUse")
FULL_CATALOG = [
    TASK_CAPTURE,
    ("workout-plan", "Constraint-aware workout plan", "workoutGeneration"),
    ("journal-summary", "Journal entry summary", "summarization"),
    ("habit-classification", "Habit category classification", "classification"),
    ("grounded-explanation", "Grounded explanation", "groundedExplanation"),
    ("exercise-substitution", "Exercise substitution", "exerciseSubstitution"),
    ("document-question-answering", "Document question answering", "documentQuestionAnswering"),
    ("citation-extraction", "Citation extraction", "citationExtraction"),
    ("creative-writing", "Constrained creative writing", "creativeWriting"),
    ("visual-recommendation", "Visual recommendation", "visualRecommendation"),
]


def pcc_quota_run() -> dict[str, Any]:
    """PCC with quota (approaching its limit before, reached after, a reset date) and one fallback trial."""
    env = IPHONE
    s = sample("task-capture", 1, 2)
    trials = [
        trial(1, TASK_CAPTURE, s, [True, True], env=env, ttft=0.9, tps=1250.0, peak=231936000, iteration=1,
              route=("privateCloudCompute", "privateCloudCompute")),
        trial(2, TASK_CAPTURE, s, [True, True], env=env, ttft=0.412, tps=41.27, peak=1672478720, iteration=2,
              route=("privateCloudCompute", "onDevice"),
              fallback_reason="Private Cloud Compute was unavailable; ran on-device."),
    ]
    failures = [failure(1, "task-capture", "task-capture-001", 3, "quota",
                        "The Private Cloud Compute request limit was reached.")]
    before = {"isApproachingLimit": True, "isLimitReached": False, "status": "belowLimit"}
    after = {"isApproachingLimit": False, "isLimitReached": True, "resetDate": "2026-11-10T00:00:00Z",
             "status": "limitReached"}
    return run(suite="quick", model="privateCloudCompute", env=env, trials=trials, failures=failures,
               catalog=[TASK_CAPTURE], started="2026-11-09T08:00:00Z", ended="2026-11-09T08:02:10Z",
               repetitions=3, sample_limit=1, reasoning="light", fallback="onDevice",
               seed=18446744073709551615, context=32768, quota=(before, after))


def guardrails_run() -> dict[str, Any]:
    """Two protection samples selected by id: the response scenario has an empty summary."""
    env = MAC | {"timestamp": "2026-11-04T10:00:00Z"}
    trials = [
        trial(1, PROTECTION, sample("guardrail-expected-protection", 1, 0, "mustProtect"), [], env=env,
              ttft=0.25, tps=38.5, peak=231936000, outcome="refusal"),
        trial(2, PROTECTION, sample("guardrail-expected-protection", 2, 0, "mustProtect"), [], env=env,
              ttft=0.31, tps=40.125, peak=None, outcome="responded"),
    ]
    return run(suite="guardrails", model="onDevice", env=env, trials=trials, failures=[],
               catalog=[RESPONSE, PROTECTION], started="2026-11-04T10:00:00Z", ended="2026-11-04T10:00:40Z",
               repetitions=1, sample_limit=2, seed=7)


def _call(name: str, **arguments: dict[str, Any]) -> dict[str, Any]:
    return {"arguments": arguments, "name": name}


def agentic_run() -> dict[str, Any]:
    """Tool calls and final state on trials and failures; a multi-line warmup failure comes first."""
    env = MAC | {"foundationModelsBenchCommit": "", "timestamp": "2026-09-24T14:00:00Z"}
    search = _call("searchContacts", query={"string": {"_0": "Lee"}})
    create = _call("createReminder", title={"string": {"_0": "Call Dr. Lee"}},
                   priority={"integer": {"_0": 2}})
    listing = _call("listReminders")
    state_ok = {"reminders.count": {"integer": {"_0": 1}},
                "reminders.latest.title": {"string": {"_0": "Call Dr. Lee"}}}
    trials = [
        trial(1, ORGANIZER, sample("personal-organizer", 1, 3), [True, True, True], env=env, ttft=0.52,
              tps=33.0, peak=1672478720, tool_calls=[search, create], final_state=state_ok),
        trial(2, ORGANIZER, sample("personal-organizer", 2, 3), [True, False, True], env=env, ttft=0.61,
              tps=29.5, peak=1610612736, tool_calls=[listing], final_state={"reminders.count": {"integer": {"_0": 0}}}),
    ]
    failures = [
        failure(1, "__warmup__", "__warmup__-1", 1, "generation",
                "Generation failed.\nThe tool searchContacts threw: contact store unavailable."),
        failure(2, "personal-organizer", "personal-organizer-003", 1, "generation",
                "The model exceeded the tool call budget.",
                tool_calls=[search, create, listing],
                final_state={
                    "reminders.count": {"integer": {"_0": 2}},
                    "reminders.latest.title": {"string": {"_0": "Call Dr. Lee"}},
                    "reminders.latest.flagged": {"boolean": {"_0": True}},
                    "calendar.load": {"number": {"_0": 2.0}},
                    "reminders.latest.priority": {"number": {"_0": 1.5}},
                }),
        failure(3, "personal-organizer", "personal-organizer-004", 1, "contextLimit",
                "Exceeded model context window size.", tool_calls=[]),
    ]
    return run(suite="agentic", model="onDevice", env=env, trials=trials, failures=failures,
               catalog=[ORGANIZER], started="2026-09-24T14:00:00Z", ended="2026-09-24T14:01:30Z",
               repetitions=1, sample_limit=4, session="warm", randomized=False, seed=0, context=None)


def all_failed_run() -> dict[str, Any]:
    """A PCC attempt whose only measured request failed: no trials, quota before only."""
    env = {k: v for k, v in MAC.items() if k != "foundationModelsBenchCommit"} | {
        "timestamp": "2026-11-02T07:30:00Z"}
    failures = [
        failure(1, "__warmup__", "__warmup__-1", 1, "network", "The Internet connection appears to be offline."),
        failure(2, "task-capture", "task-capture-001", 1, "network",
                "The Internet connection appears to be offline."),
    ]
    before = {"isLimitReached": False, "status": "unknown"}
    return run(suite="quick", model="privateCloudCompute", env=env, trials=[], failures=failures,
               catalog=[TASK_CAPTURE], started="2026-11-02T07:30:00Z", ended="2026-11-02T07:30:12Z",
               repetitions=1, sample_limit=1, seed=3, quota=(before, None))


def german_run() -> dict[str, Any]:
    """Recorded in a de_DE process: decimal commas, grouping dots, ``93,3 %``."""
    env = MAC | {"localeIdentifier": "de_DE", "timestamp": "2026-11-12T16:00:00Z"}
    s = [sample("task-capture", 1, 5)]
    trials = [
        trial(1, TASK_CAPTURE, s[0], [True] * 5, env=env, ttft=0.412, tps=1250.0, peak=1672478720, iteration=1),
        trial(2, TASK_CAPTURE, s[0], [True] * 5, env=env, ttft=0.5, tps=41.27, peak=231936000, iteration=2),
        trial(3, TASK_CAPTURE, s[0], [True, True, False, True, True], env=env, ttft=1.0625, tps=40.0,
              peak=231936000, iteration=3),
    ]
    return run(suite="quick", model="onDevice", env=env, trials=trials, failures=[], catalog=[TASK_CAPTURE],
               started="2026-11-12T16:00:00Z", ended="2026-11-12T16:00:30Z", repetitions=3, sample_limit=1,
               seed=1234567)


def rounding_run() -> dict[str, Any]:
    """Values whose decimal form ends in 5 where binary arithmetic would round the other way."""
    env = MAC | {"timestamp": "2026-11-07T12:00:00Z"}
    scores = [(2, 0), (1, 0), (5, 2), (4, 3)]  # constraint scores 0, 0, 2/5, 3/4: mean 0.2875
    ttfts = [0.0135, 0.01, 0.013, 0.0125]  # sorted: 0.01, 0.0125, 0.013, 0.0135 -> median 0.0125, p90 0.0135
    rates = [1234.565, 41.275, 40.0, 50.0]  # sorted: 40, 41.275, 50, 1234.565
    trials = [
        trial(i + 1, TASK_CAPTURE, sample("task-capture", i + 1, total), [k < ok for k in range(total)],
              env=env, ttft=ttfts[i], tps=rates[i], peak=1048575 - 1000 * i, iteration=1)
        for i, (total, ok) in enumerate(scores)
    ]
    return run(suite="quick", model="onDevice", env=env, trials=trials, failures=[], catalog=[TASK_CAPTURE],
               started="2026-11-07T12:00:00Z", ended="2026-11-07T12:00:20Z", repetitions=1, sample_limit=4,
               seed=99)


def memory_units_run() -> dict[str, Any]:
    """One trial per scenario, each peak on a side of a unit switch-over; the last records no memory."""
    env = MAC | {"timestamp": "2026-11-08T09:00:00Z"}
    peaks = [1023, 1024, 1048575, 1048576, 231936000, 1073741823, 1073741824, 1672478720, 1099511627776, None]
    trials = [
        trial(i + 1, scenario, sample(scenario[0], 1, 1), [True], env=env, ttft=0.5, tps=40.0, peak=peak)
        for i, (scenario, peak) in enumerate(zip(FULL_CATALOG, peaks, strict=True))
    ]
    return run(suite="full", model="onDevice", env=env, trials=trials, failures=[], catalog=FULL_CATALOG,
               started="2026-11-08T09:00:00Z", ended="2026-11-08T09:01:00Z", repetitions=1, sample_limit=1,
               seed=5)


FILES = {
    "pcc-quota-fallback": pcc_quota_run,
    "guardrails-selected-samples": guardrails_run,
    "agentic-failures": agentic_run,
    "pcc-all-failed": all_failed_run,
    "locale-de-de": german_run,
    "rounding-half-even": rounding_run,
    "memory-units": memory_units_run,
}


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for name, build in FILES.items():
        (OUT / f"{name}.json").write_text(runner_json(build()), encoding="utf-8")
    sys.stdout.write(f"wrote {len(FILES)} files to {OUT}\n")


if __name__ == "__main__":
    main()
