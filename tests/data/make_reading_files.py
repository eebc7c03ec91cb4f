"""Writes the run files that prove fmbench reads what the runner writes (run once; the output is committed).

Each file holds one shape the runner can write and a fixture corpus never
did: a run whose every request failed (both generations), a summary for a
scenario none of whose samples ran, a clock step, counts past 32 bits,
summaries in catalog order while the trials ran shuffled, and the fields a
reader could drop (offline success, visual fixture, a failure's tool calls
and final state, quota detail, each trial's own environment).

They are written as the runner writes JSON: sorted keys, two-space
indentation, ``"key" : value``, and an empty array as ``[`` blank line ``]``.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent

_EMPTY_ARRAY = re.compile(r"^(\s*)(.*)\[\](,?)$", re.MULTILINE)


def runner_json(doc: object) -> str:
    """Swift's JSONEncoder with ``.prettyPrinted`` and ``.sortedKeys`` (no newline at the end)."""
    text = json.dumps(doc, indent=2, sort_keys=True, separators=(",", " : "), ensure_ascii=False)
    return _EMPTY_ARRAY.sub(lambda m: f"{m.group(1)}{m.group(2)}[\n\n{m.group(1)}]{m.group(3)}", text)


# --- the legacy generation (June 2026) ------------------------------------------------------


def legacy_environment() -> dict[str, Any]:
    """The published June files' Mac, with the commit under its pre-July name."""
    return {
        "appBenchCommit": "1d8d492",
        "cpuCores": 10,
        "cpuModel": "Apple M5",
        "deviceName": "MacBook Pro M5",
        "gpuModel": "Apple M5",
        "hardwareModel": "Mac17,2",
        "localeIdentifier": "en_US",
        "lowPowerModeEnabled": False,
        "systemBuild": "26A5353q",
        "systemName": "macOS",
        "systemVersion": "27.0.0",
        "thermalState": "nominal",
        "timestamp": "2026-06-12T08:39:03Z",
        "totalMemory": 34359738368,
    }


def legacy_pcc_attempt() -> dict[str, Any]:
    """A PCC attempt whose only request failed: no trial, one failure, one honest summary."""
    empty = {"count": 0}
    return {
        "endedAt": "2026-06-12T08:39:05Z",
        "environment": legacy_environment(),
        "failures": [
            {
                "id": "6F1C2B9E-3A0D-4C55-9E1B-7D2A4F8C0B31",
                "iteration": 1,
                "message": "The operation couldn’t be completed. (FoundationModels.LanguageModelSession."
                "GenerationError error 2.)",
                "scenarioID": "task-capture",
            }
        ],
        "model": "privateCloudCompute",
        "repetitions": 1,
        "startedAt": "2026-06-12T08:39:03Z",
        "suite": "quick",
        "summaries": [
            {
                "category": "taskParsing",
                "duration": empty,
                "failureCount": 1,
                "id": "task-capture",
                "meanConstraintScore": 0,
                "outputTokensPerSecond": empty,
                "promptPassRate": 0,
                "timeToFirstToken": empty,
                "title": "Natural-language task capture",
                "trialCount": 0,
            }
        ],
        "trials": [],
        "warmupCount": 0,
    }


LEGACY_PCC_ATTEMPT_MARKDOWN = """# Foundation Models AppBench

- Suite: Practical Quick
- Model: Private Cloud Compute
- Warmups: 0
- Repetitions: 1
- Started: 2026-06-12T08:39:03Z
- Failures: 1

| Scenario | Prompt pass | Constraint score | Median TTFT | Median output tok/s |
| --- | ---: | ---: | ---: | ---: |
| Natural-language task capture | 0.0% | 0.0% | n/a | n/a |

## Environment
- Device: MacBook Pro M5
- Hardware: Mac17,2
- Chip: Apple M5
- OS: macOS 27.0.0 (26A5353q)
- Memory: 32 GB
- Thermal state: nominal
- Low Power Mode: off
- AppBench commit: 1d8d492"""
"""The runner's Markdown for that attempt: its stored zeros as 0.0%, no TTFT or rate (n/a), and the
pre-July names (the benchmark was renamed from AppBench in July 2026)."""


# --- the current generation ------------------------------------------------------------------


def environment(*, thermal: str = "nominal", low_power: bool = False, at: str = "2026-11-03T09:00:00Z") -> dict[str, Any]:
    return {
        "cpuCores": 10,
        "cpuModel": "Apple M5",
        "deviceName": "MacBook Pro M5",
        "foundationModelsBenchCommit": "a70b856",
        "gpuModel": "Apple M5",
        "hardwareModel": "Mac17,2",
        "localeIdentifier": "en_US",
        "lowPowerModeEnabled": low_power,
        "systemBuild": "26A5378f",
        "systemName": "macOS",
        "systemVersion": "27.0.0",
        "thermalState": thermal,
        "timestamp": at,
        "totalMemory": 34359738368,
    }


def metrics(duration: float, ttft: float, *, gap: float = 0.1, output: int = 40, first: int = 4,
            input_tokens: int = 200) -> dict[str, Any]:
    m: dict[str, Any] = {
        "duration": duration,
        "endedAt": "2026-11-03T09:01:02Z",
        "endingThermalState": "nominal",
        "firstStreamUpdateTokenCount": first,
        "inputTokenCount": input_tokens,
        "maximumStreamUpdateGap": gap,
        "outputTokenCount": output,
        "peakObservedResidentMemoryBytes": 1_610_612_736,
        "startedAt": "2026-11-03T09:01:00Z",
        "startingThermalState": "nominal",
        "streamUpdateCount": 10,
        "timeToFirstToken": ttft,
        "tokenCountSource": "sessionUsage",
        "worstObservedThermalState": "nominal",
    }
    if duration > ttft:
        m["decodeDuration"] = duration - ttft
        m["outputTokensPerSecond"] = (output - first) / (duration - ttft)
    return m


_TITLES = {
    "task-capture": ("Natural-language task capture", "taskParsing"),
    "journal-summary": ("Journal summary", "summarization"),
    "habit-classification": ("Habit category classification", "classification"),
    "visual-recommendation": ("Visual recommendation", "visualRecommendation"),
    "personal-organizer": ("Personal organizer", "agenticToolUse"),
}


def trial(n: int, scenario: str, m: dict[str, Any], *, sample: int = 1, iteration: int = 1,
          passed: bool = True, **fields: Any) -> dict[str, Any]:
    title, category = _TITLES[scenario]
    t: dict[str, Any] = {
        "category": category,
        "environment": environment(),
        "executedModel": "onDevice",
        "grade": {"checks": [{"label": "At least 3 words", "passed": passed}]},
        "id": f"0000000{sample}-0000-4000-8000-{n:012d}",
        "iteration": iteration,
        "metrics": m,
        "offlineSuccess": False,
        "requestedModel": "onDevice",
        "response": "Three short words, and then some more.",
        "safetyOutcome": "notApplicable",
        "sample": {
            "checks": [{"minimumWords": {"_0": 3}}],
            "id": f"{scenario}-{sample:03d}",
            "prompt": "Answer in a few words.",
        },
        "scenarioID": scenario,
        "scenarioTitle": title,
        "toolCalls": [],
        "usedFallback": False,
    }
    t.update(fields)
    return t


def dist(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"count": 0}
    s = sorted(values)
    n = len(s)
    mean = sum(values) / n
    return {
        "count": n,
        "maximum": s[-1],
        "mean": mean,
        "median": s[math.ceil(0.5 * n) - 1],
        "minimum": s[0],
        "p90": s[math.ceil(0.9 * n) - 1],
        "standardDeviation": math.sqrt(sum((v - mean) ** 2 for v in values) / n),
    }


def summary(doc: dict[str, Any], scenario: str) -> dict[str, Any]:
    """What the runner stores for one configured scenario (every scenario here has checks on every sample)."""
    ts = [t for t in doc["trials"] if t["scenarioID"] == scenario]
    fs = [f for f in doc["failures"] if f["scenarioID"] == scenario]
    attempts = len(ts) + len(fs)
    scores = [sum(c["passed"] for c in t["grade"]["checks"]) / len(t["grade"]["checks"]) for t in ts]
    title, category = _TITLES[scenario]

    def metric(name: str) -> list[float]:
        return [t["metrics"][name] for t in ts if name in t["metrics"]]

    return {
        "category": category,
        "criticalSafetyFailureCount": 0,
        "duration": dist(metric("duration")),
        "failureCount": len(fs),
        "failureRate": len(fs) / attempts if attempts else 0,
        "guardrailViolationCount": 0,
        "id": scenario,
        "meanConstraintScore": sum(scores) / len(scores) if scores else 0,
        "outputTokensPerSecond": dist(metric("outputTokensPerSecond")),
        "peakObservedResidentMemoryBytes": dist(metric("peakObservedResidentMemoryBytes")),
        "promptPassRate": sum(all(c["passed"] for c in t["grade"]["checks"]) for t in ts) / len(ts) if ts else 0,
        "refusalCount": 0,
        "safetyTrialCount": 0,
        "timeToFirstToken": dist(metric("timeToFirstToken")),
        "title": title,
        "trialCount": len(ts),
    }


def current_run(trials: list[dict[str, Any]], failures: list[dict[str, Any]], catalog: list[str],
                **top: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "connectivity": "normal",
        "endedAt": "2026-11-03T09:10:00Z",
        "environment": environment(),
        "failures": failures,
        "fallbackMode": "disabled",
        "model": "onDevice",
        "modelContextSize": 4096,
        "randomSeed": 42,
        "randomizedOrder": True,
        "reasoningLevel": "none",
        "repetitions": 1,
        "sessionMode": "cold",
        "startedAt": "2026-11-03T09:00:00Z",
        "suite": "quick",
        "trials": trials,
        "warmupCount": 1,
    }
    doc.update(top)
    doc["summaries"] = [summary(doc, sid) for sid in catalog]
    return doc


def failure(n: int, scenario: str, kind: str, message: str, *, sample: str | None = None, **fields: Any) -> dict[str, Any]:
    f = {
        "id": f"F0000000-0000-4000-8000-{n:012d}",
        "iteration": 1,
        "kind": kind,
        "message": message,
        "sampleID": sample or f"{scenario}-001",
        "scenarioID": scenario,
    }
    f.update(fields)
    return f


def all_failed_current() -> dict[str, Any]:
    """A PCC run whose every measured request failed (and its warmup too), with quota snapshots."""
    failures = [
        failure(0, "__warmup__", "network", "The network connection was lost.", sample="__warmup__-1"),
        failure(1, "task-capture", "network", "The network connection was lost."),
        failure(2, "journal-summary", "network", "The request timed out."),
    ]
    quota = {"isApproachingLimit": True, "isLimitReached": False, "resetDate": "2026-11-04T00:00:00Z",
             "status": "belowLimit"}
    return current_run([], failures, ["task-capture", "journal-summary"], model="privateCloudCompute",
                       quotaBefore=quota, quotaAfter=quota)


def empty_scenario() -> dict[str, Any]:
    """Run through the library with one sample id selected: the runner still writes every configured
    scenario's summary, and the ones whose samples did not run have nothing in them."""
    trials = [trial(1, "task-capture", metrics(1.0, 0.3))]
    return current_run(trials, [], ["task-capture", "journal-summary", "habit-classification"], sampleLimit=1)


def clock_step() -> dict[str, Any]:
    """A wall-clock step in two trials: a negative stream update gap and a negative duration and TTFT."""
    trials = [
        trial(1, "task-capture", metrics(1.2, 0.3, gap=-0.75), iteration=1),
        trial(2, "task-capture", metrics(-2.5, -2.9, gap=0.1), iteration=2),
        trial(3, "task-capture", metrics(1.1, 0.35), iteration=3),
    ]
    return current_run(trials, [], ["task-capture"], repetitions=3)


def wide_counts() -> dict[str, Any]:
    """Counts past 32 bits (Swift Int is 64-bit) and a seed past 2^53 (no double holds it exactly)."""
    m = metrics(1.0, 0.25, output=3_000_000_004, first=4, input_tokens=2_147_483_648 + 5)
    m["streamUpdateCount"] = 4_294_967_296 + 7
    return current_run([trial(1, "task-capture", m)], [], ["task-capture"], randomSeed=2**53 + 1,
                       modelContextSize=4_294_967_296)


def scenario_order() -> dict[str, Any]:
    """Trials ran shuffled (habit first); the summaries keep the catalog's order."""
    trials = [
        trial(1, "habit-classification", metrics(0.8, 0.2)),
        trial(2, "journal-summary", metrics(1.5, 0.4)),
        trial(3, "task-capture", metrics(1.0, 0.3)),
    ]
    failures = [failure(1, "visual-recommendation", "generation", "The model could not produce a response.")]
    return current_run(trials, failures,
                       ["task-capture", "journal-summary", "habit-classification", "visual-recommendation"])


def kept_fields() -> dict[str, Any]:
    """Fields a reader could drop: offline success, a visual fixture, a failure's tool calls and final
    state, and a trial's own environment (Low Power Mode on, thermal state fair, its own time)."""
    offline = trial(1, "visual-recommendation", metrics(1.4, 0.5), offlineSuccess=True,
                    environment=environment(thermal="fair", low_power=True, at="2026-11-03T09:04:31Z"))
    offline["sample"]["visualFixture"] = "sunsetRun"
    organizer = trial(2, "personal-organizer", metrics(2.0, 0.6),
                      toolCalls=[{"arguments": {"query": {"string": {"_0": "Dr. Lee"}}}, "name": "searchContacts"}])
    failed = failure(
        1, "personal-organizer", "generation", "Tool createReminder threw: the list is read-only.",
        sample="personal-organizer-002",
        toolCalls=[
            {"arguments": {"query": {"string": {"_0": "Dr. Lee"}}}, "name": "searchContacts"},
            {"arguments": {"list": {"string": {"_0": "Personal"}}, "title": {"string": {"_0": "Call Dr. Lee"}}},
             "name": "createReminder"},
        ],
        finalState={"values": {"reminders.count": {"integer": {"_0": 0}},
                               "reminders.latest.title": {"string": {"_0": "none"}}}},
    )
    return current_run([offline, organizer], [failed], ["visual-recommendation", "personal-organizer"],
                       connectivity="offline")


def main() -> None:
    june = HERE / "june"
    june.mkdir(exist_ok=True)
    (june / "macbook-pro-m5-macos27-26A5353q-pcc-quick-2026-06-12.json").write_text(
        runner_json(legacy_pcc_attempt()), encoding="utf-8"
    )
    (june / "macbook-pro-m5-macos27-26A5353q-pcc-quick-2026-06-12.md").write_text(
        LEGACY_PCC_ATTEMPT_MARKDOWN, encoding="utf-8"
    )
    reading = HERE / "reading"
    reading.mkdir(exist_ok=True)
    for name, doc in (
        ("all-failed-current.json", all_failed_current()),
        ("empty-scenario.json", empty_scenario()),
        ("clock-step.json", clock_step()),
        ("wide-counts.json", wide_counts()),
        ("scenario-order.json", scenario_order()),
        ("kept-fields.json", kept_fields()),
    ):
        (reading / name).write_text(runner_json(doc), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
