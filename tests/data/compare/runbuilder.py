"""Builds current-generation run files with chosen conditions and chosen trial noise.

The comparison and regression tests write pairs of runs that differ in
exactly what a test names (a seed, a warmup count, a session mode, the
fixture corpus, a known shift in TTFT) and ingest them into a fresh database.
Stored summaries are computed with fmbench's own figures and written in the
runner's shape, so a built run is never judged invalid by accident.

Noise is seeded: the same ``noise_seed`` gives the same trials, so a
candidate built with the baseline's seed and ``ttft_offset=0.2`` holds
exactly the baseline's trials shifted by 0.2 s.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from fmbench.analysis.run import analyze_bytes


@dataclass(frozen=True)
class Scenario:
    id: str
    title: str
    category: str
    samples: int = 2
    pass_rate: float = 0.8
    ttft: float = 0.30
    ttft_noise: float = 0.03
    tps: float = 40.0
    tps_noise: float = 2.0
    memory: int | None = 1_500_000_000
    """``None``: the runner recorded no memory for this scenario."""
    failures: int = 0
    """Measured attempts (the first ones) that produced no response."""
    prompt: str = "Do the thing."


SYNTHETIC = Scenario("synthetic-throughput", "Synthetic throughput", "syntheticThroughput", samples=2)
TASK_CAPTURE = Scenario("task-capture", "Natural-language task capture", "taskParsing", samples=25,
                        ttft=0.45, tps=35.0)
VISUAL = Scenario("visual-recommendation", "Visual recommendation", "visualRecommendation", samples=2,
                  ttft=0.60, tps=30.0)


@dataclass(frozen=True)
class RunSpec:
    hardware: str | None = "iPhone18,1"
    device: str = "iPhone 17 Pro"
    system: str = "iOS"
    version: str = "27.0"
    build: str | None = "24A5264n"
    route: str = "onDevice"
    suite: str = "performance"
    session: str = "cold"
    reasoning: str = "none"
    fallback: str = "disabled"
    connectivity: str = "normal"
    warmups: int = 5
    repetitions: int = 20
    sample_limit: int | None = None
    random_seed: int = 42
    randomized: bool = True
    context: int = 4096
    commit: str = "a70b856"  # a commit of the public registry's current revision (2026.07), rules D
    thermal: str = "nominal"
    started: datetime = datetime(2026, 11, 3, 9, 0, tzinfo=UTC)
    scenarios: tuple[Scenario, ...] = (SYNTHETIC, TASK_CAPTURE)
    noise_seed: int = 1
    ttft_offset: float = 0.0
    tps_offset: float = 0.0
    pass_rate_offset: float = 0.0
    token_source: str = "systemTokenizer"
    """Every trial's ``tokenCountSource``."""
    chars_per_token: float = 4.0
    """``outputCharactersPerSecond`` is the trial's tokens/s (before ``tps_offset``) times this."""
    fallback_every: int = 0
    """On a PCC run, every Nth trial fell back to the on-device model (0: none did)."""
    fallback_memory: int = 2_200_000_000
    """The peak memory of a trial that fell back (the on-device model is in the process)."""
    fallback_tps: float = 25.0

    def but(self, **changes: Any) -> RunSpec:
        return replace(self, **changes)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _environment(spec: RunSpec) -> dict[str, Any]:
    env: dict[str, Any] = {
        "cpuCores": 6,
        "cpuModel": "Apple A19 Pro",
        "deviceName": spec.device,
        "foundationModelsBenchCommit": spec.commit,
        "gpuModel": "Apple A19 Pro GPU",
        "localeIdentifier": "en_US",
        "lowPowerModeEnabled": False,
        "systemName": spec.system,
        "systemVersion": spec.version,
        "thermalState": spec.thermal,
        "timestamp": _iso(spec.started),
        "totalMemory": 12884901888,
    }
    if spec.hardware is not None:
        env["hardwareModel"] = spec.hardware
    if spec.build is not None:
        env["systemBuild"] = f"Version {spec.version} (Build {spec.build})" if spec.system == "iOS" else spec.build
    return env


def build_run(spec: RunSpec) -> dict[str, Any]:
    """The run document (without summaries)."""
    rng = random.Random(spec.noise_seed)
    env = _environment(spec)
    trials: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    clock = spec.started + timedelta(seconds=30)
    n = 0
    for sc in spec.scenarios:
        checks = [{"contains": {"_0": "Lee"}}, {"excludes": {"_0": "Smith"}}]
        for s in range(1, sc.samples + 1):
            sample = {"checks": checks, "id": f"{sc.id}-{s:03d}", "prompt": f"{sc.prompt} ({s})"}
            for it in range(1, spec.repetitions + 1):
                n += 1
                # Draw the noise for every attempt, so failures do not shift later trials' noise.
                ttft = max(0.01, rng.gauss(sc.ttft, sc.ttft_noise)) + spec.ttft_offset
                raw_tps = max(1.0, rng.gauss(sc.tps, sc.tps_noise))
                tps = raw_tps + spec.tps_offset
                passed = rng.random() < sc.pass_rate + spec.pass_rate_offset
                memory = (sc.memory or 0) + rng.randrange(0, 50_000_000)
                if (s - 1) * spec.repetitions + it <= sc.failures:
                    failures.append(
                        {"id": f"F-{n}", "iteration": it, "kind": "generation", "message": "The model stopped.",
                         "sampleID": sample["id"], "scenarioID": sc.id}
                    )
                    continue
                output_tokens = 60
                fell_back = spec.fallback_every > 0 and n % spec.fallback_every == 0
                if fell_back:
                    tps, memory = spec.fallback_tps, spec.fallback_memory
                decode = (output_tokens - 4) / tps
                duration = ttft + decode
                begin = clock
                clock += timedelta(seconds=2)
                trials.append(
                    {
                        "category": sc.category,
                        "environment": env,
                        "executedModel": "onDevice" if fell_back else spec.route,
                        "grade": {
                            "checks": [
                                {"label": "Contains “Lee”", "passed": True},
                                {"label": "Excludes “Smith”", "passed": passed}
                                | ({} if passed else {"detail": "Found “Smith”"}),
                            ]
                        },
                        "id": f"00000000-0000-4000-8000-{n:012d}",
                        "iteration": it,
                        "metrics": {
                            "decodeDuration": decode,
                            "duration": duration,
                            "endedAt": _iso(begin + timedelta(seconds=1)),
                            "endingThermalState": spec.thermal,
                            "firstStreamUpdateTokenCount": 4,
                            "inputTokenCount": 120,
                            "maximumStreamUpdateGap": 0.1,
                            "outputTokenCount": output_tokens,
                            "outputCharactersPerSecond": raw_tps * spec.chars_per_token,
                        "outputTokensPerSecond": tps,
                            "startedAt": _iso(begin),
                            "startingThermalState": spec.thermal,
                            "streamUpdateCount": 12,
                            "timeToFirstToken": ttft,
                            "tokenCountSource": spec.token_source,
                            "worstObservedThermalState": spec.thermal,
                        },
                        "offlineSuccess": False,
                        "requestedModel": spec.route,
                        "response": "Call Dr. Lee" + ("" if passed else " and Mr. Smith"),
                        "safetyOutcome": "notApplicable",
                        "sample": sample,
                        "scenarioID": sc.id,
                        "scenarioTitle": sc.title,
                        "toolCalls": [],
                        "usedFallback": fell_back,
                    }
                )
                if fell_back:
                    trials[-1]["fallbackReason"] = "Private Cloud Compute was unavailable."
                if sc.memory is not None:
                    trials[-1]["metrics"]["peakObservedResidentMemoryBytes"] = memory
    doc: dict[str, Any] = {
        "connectivity": spec.connectivity,
        "endedAt": _iso(clock + timedelta(seconds=5)),
        "environment": env,
        "failures": failures,
        "fallbackMode": spec.fallback,
        "model": spec.route,
        "modelContextSize": spec.context,
        "randomSeed": spec.random_seed,
        "randomizedOrder": spec.randomized,
        "reasoningLevel": spec.reasoning,
        "repetitions": spec.repetitions,
        "sessionMode": spec.session,
        "startedAt": _iso(spec.started),
        "suite": spec.suite,
        "summaries": [],
        "trials": trials,
        "warmupCount": spec.warmups,
    }
    if spec.sample_limit is not None:
        doc["sampleLimit"] = spec.sample_limit
    return doc


def _encode(doc: dict[str, Any]) -> bytes:
    return (json.dumps(doc, indent=2, sort_keys=True, separators=(",", " : "), ensure_ascii=False) + "\n").encode()


def _runner_summary(summary: dict[str, Any]) -> dict[str, Any]:
    """fmbench's recomputed summary in the runner's shape: absent members left out, empty rates 0."""
    out: dict[str, Any] = {}
    for key, value in summary.items():
        if key == "taskSuccess":
            continue
        if isinstance(value, dict):
            out[key] = {k: v for k, v in value.items() if v is not None}
        elif value is None:
            if key in ("promptPassRate", "meanConstraintScore"):
                out[key] = 0.0
        else:
            out[key] = value
    return out


def write_sidecar(run: Path, connection: str, location: str) -> Path:
    """The operator's sidecar beside a run: the network conditions of a PCC run."""
    path = run.with_name(run.name.removesuffix(".json") + ".meta.yaml")
    path.write_text(f"connection: {json.dumps(connection)}\nlocation: {json.dumps(location)}\n", encoding="utf-8")
    return path


def write_run(spec: RunSpec, folder: Path, name: str, *, hand_edited: bool = False) -> Path:
    """Write the run with stored summaries as the runner computes them; return its path.

    ``hand_edited`` changes the first stored prompt pass rate, as an edit by hand would:
    fmbench then judges the run invalid as evidence.
    """
    doc = build_run(spec)
    analysis = analyze_bytes(_encode(doc), f"{name}.json")
    doc["summaries"] = [_runner_summary(f.to_summary()) for f in analysis.figures]
    if hand_edited:
        doc["summaries"][0]["promptPassRate"] = 0.123
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_bytes(_encode(doc))
    return path
