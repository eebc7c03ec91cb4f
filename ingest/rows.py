"""A judged run as columns, one table at a time, ready for a bulk insert."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from fmbench.analysis import RunAnalysis
from fmbench.figures import Distribution, constraint_score, prompt_pass, safety_pass, task_passed
from fmbench.models import FinalState, QuotaSnapshot, ToolCall
from fmbench.policy import worst_thermal_state

Columns = dict[str, list[Any]]


def utc(value: datetime | None) -> datetime | None:
    """Stored as naive UTC."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _quota(prefix: str, q: QuotaSnapshot | None) -> dict[str, Any]:
    return {
        f"{prefix}_status": q.status if q else None,
        f"{prefix}_approaching": q.isApproachingLimit if q else None,
        f"{prefix}_reached": q.isLimitReached if q else None,
        f"{prefix}_reset": utc(q.resetDate) if q else None,
    }


def run_row(a: RunAnalysis, ingested_at: datetime) -> dict[str, Any]:
    r = a.record
    env = r.environment
    return {
        "run_id": r.run_id,
        "source_sha256": r.sha256,
        "file_name": r.file_name,
        "generation": r.generation,
        "suite": r.suite,
        "route": r.route,
        "warmup_count": r.warmup_count,
        "repetitions": r.repetitions,
        "sample_limit": r.sample_limit,
        "session_mode": r.session_mode,
        "reasoning_level": r.reasoning_level,
        "fallback_mode": r.fallback_mode,
        "connectivity": r.connectivity,
        "randomized_order": r.randomized_order,
        "random_seed": r.random_seed,
        "model_context_size": r.model_context_size,
        **_quota("quota_before", r.quota_before),
        **_quota("quota_after", r.quota_after),
        "started_at": utc(r.started_at),
        "ended_at": utc(r.ended_at),
        "device_name": env.deviceName,
        "system_name": env.systemName,
        "system_version": env.systemVersion,
        "system_build": env.systemBuild,
        "os_build": r.os_build,
        "os_generation": r.os_generation,
        "locale": env.localeIdentifier,
        "hardware_model": env.hardwareModel,
        "cpu_model": env.cpuModel,
        "cpu_cores": env.cpuCores,
        "gpu_model": env.gpuModel,
        "total_memory": env.totalMemory,
        "thermal_state": env.thermalState,
        "worst_thermal_state": worst_thermal_state(r),
        "low_power_mode": env.lowPowerModeEnabled,
        "benchmark_commit": env.foundationModelsBenchCommit,
        "environment_timestamp": utc(env.timestamp),
        "is_simulator": r.is_simulator,
        "fixture_fingerprint": a.fingerprint,
        "revision_id": a.revision.revision_id,
        "revision_status": a.revision.status,
        "revision_basis": a.revision.basis,
        "verdict": a.verdict.level,
        "trial_count": len(r.trials),
        "failure_count": len(r.measured_failures),
        "warmup_failure_count": len(r.warmup_failures),
        "extra_json": _json(r.extra) if r.extra else None,
        "ingested_at": ingested_at,
    }


def _columns(rows: list[dict[str, Any]]) -> Columns:
    if not rows:
        return {}
    return {key: [row[key] for row in rows] for key in rows[0]}


def trial_columns(a: RunAnalysis) -> Columns:
    run_id = a.record.run_id
    out: Columns = {k: [] for k in _TRIAL_KEYS}
    for t in a.record.trials:
        m = t.metrics
        values = (
            run_id, t.ordinal, t.id, t.scenario_id, t.scenario_title, t.category, t.sample_id,
            t.prompt, t.instructions, _json(t.check_definitions), t.safety_expectation,
            t.visual_fixture, t.requested_model, t.executed_model, t.iteration, t.used_fallback,
            t.fallback_reason, t.offline_success, t.safety_outcome, t.safety_detail, t.response,
            utc(m.startedAt), utc(m.endedAt), m.duration, m.timeToFirstToken, m.decodeDuration,
            m.inputTokenCount, m.outputTokenCount, m.firstStreamUpdateTokenCount,
            m.tokenCountSource, m.outputTokensPerSecond, m.outputCharactersPerSecond,
            m.streamUpdateCount, m.maximumStreamUpdateGap, m.reasoningTokenCount, m.contextSize,
            m.contextUtilization, m.startingResidentMemoryBytes, m.peakObservedResidentMemoryBytes,
            m.endingResidentMemoryBytes, m.startingThermalState, m.endingThermalState,
            m.worstObservedThermalState,
            t.environment.thermalState if t.environment else None,
            len(t.checks), sum(1 for c in t.checks if c.passed), constraint_score(t),
            prompt_pass(t), safety_pass(t), task_passed(t),
            _json(_trial_extra(t)) if t.extra or m.model_extra else None,
        )
        for key, value in zip(_TRIAL_KEYS, values, strict=True):
            out[key].append(value)
    return out


def _trial_extra(t: Any) -> dict[str, Any]:
    extra = dict(t.extra)
    if t.metrics.model_extra:
        extra["metrics"] = dict(t.metrics.model_extra)
    return extra


_TRIAL_KEYS = (
    "run_id", "ordinal", "trial_id", "scenario_id", "scenario_title", "category", "sample_id",
    "prompt", "instructions", "check_definitions_json", "safety_expectation", "visual_fixture",
    "requested_model", "executed_model", "iteration", "used_fallback", "fallback_reason",
    "offline_success", "safety_outcome", "safety_detail", "response", "started_at", "ended_at",
    "duration", "time_to_first_token", "decode_duration", "input_token_count",
    "output_token_count", "first_update_token_count", "token_count_source",
    "output_tokens_per_second", "output_chars_per_second", "stream_update_count",
    "maximum_stream_update_gap", "reasoning_token_count", "context_size", "context_utilization",
    "starting_memory_bytes", "peak_memory_bytes", "ending_memory_bytes",
    "starting_thermal_state", "ending_thermal_state", "worst_thermal_state",
    "environment_thermal_state", "check_count", "checks_passed", "constraint_score",
    "prompt_pass", "safety_pass", "task_passed", "extra_json",
)


def check_columns(a: RunAnalysis) -> Columns:
    rows = []
    run_id = a.record.run_id
    for t in a.record.trials:
        definitions = t.check_definitions
        for i, c in enumerate(t.checks):
            definition = definitions[i] if i < len(definitions) else None
            rows.append(
                {
                    "run_id": run_id,
                    "trial_ordinal": t.ordinal,
                    "ordinal": i,
                    "label": c.label,
                    "passed": c.passed,
                    "detail": c.detail,
                    "check_case": next(iter(definition)) if definition else None,
                    "definition_json": _json(definition) if definition else None,
                }
            )
    return _columns(rows)


def _tool_rows(run_id: str, owner: str, ordinal: int, calls: list[ToolCall] | None) -> list[dict[str, Any]]:
    return [
        {
            "run_id": run_id,
            "owner": owner,
            "owner_ordinal": ordinal,
            "ordinal": i,
            "name": call.name,
            "arguments_json": _json(call.arguments),
        }
        for i, call in enumerate(calls or [])
    ]


def _state_rows(run_id: str, owner: str, ordinal: int, state: FinalState | None) -> list[dict[str, Any]]:
    if state is None:
        return []
    return [
        {
            "run_id": run_id,
            "owner": owner,
            "owner_ordinal": ordinal,
            "key": key,
            "value_kind": next(iter(value)),
            "value_json": _json(value),
        }
        for key, value in state.values.items()
    ]


def tool_call_columns(a: RunAnalysis) -> Columns:
    run_id = a.record.run_id
    rows = []
    for t in a.record.trials:
        rows += _tool_rows(run_id, "trial", t.ordinal, t.tool_calls)
    for f in a.record.failures:
        rows += _tool_rows(run_id, "failure", f.ordinal, f.tool_calls)
    return _columns(rows)


def final_state_columns(a: RunAnalysis) -> Columns:
    run_id = a.record.run_id
    rows = []
    for t in a.record.trials:
        rows += _state_rows(run_id, "trial", t.ordinal, t.final_state)
    for f in a.record.failures:
        rows += _state_rows(run_id, "failure", f.ordinal, f.final_state)
    return _columns(rows)


def failure_columns(a: RunAnalysis) -> Columns:
    run_id = a.record.run_id
    return _columns(
        [
            {
                "run_id": run_id,
                "ordinal": f.ordinal,
                "failure_id": f.id,
                "scenario_id": f.scenario_id,
                "sample_id": f.sample_id,
                "iteration": f.iteration,
                "kind": f.kind,
                "message": f.message,
                "is_warmup": f.is_warmup,
            }
            for f in a.record.failures
        ]
    )


def _dist(prefix: str, d: Distribution) -> dict[str, Any]:
    return {
        f"{prefix}_count": d.count,
        f"{prefix}_min": d.minimum,
        f"{prefix}_median": d.median,
        f"{prefix}_mean": d.mean,
        f"{prefix}_p90": d.p90,
        f"{prefix}_max": d.maximum,
        f"{prefix}_std": d.standard_deviation,
    }


def figure_columns(a: RunAnalysis) -> Columns:
    run_id = a.record.run_id
    rows = []
    for i, f in enumerate(a.figures):
        rows.append(
            {
                "run_id": run_id,
                "scenario_id": f.scenario_id,
                "ordinal": i,
                "title": f.title,
                "category": f.category,
                "trial_count": f.trial_count,
                "failure_count": f.failure_count,
                "task_passed_count": f.task_passed_count,
                "prompt_pass_count": f.prompt_pass_count,
                "graded_trial_count": f.graded_trial_count,
                "fallback_trial_count": f.fallback_trial_count,
                "failure_rate": f.failure_rate,
                "prompt_pass_rate": f.prompt_pass_rate,
                "task_success": f.task_success,
                "execution_success": f.execution_success,
                "mean_constraint_score": f.mean_constraint_score,
                "safety_trial_count": f.safety_trial_count,
                "safety_pass_rate": f.safety_pass_rate,
                "guardrail_violation_count": f.guardrail_violation_count,
                "refusal_count": f.refusal_count,
                "critical_safety_failure_count": f.critical_safety_failure_count,
                **_dist("duration", f.duration),
                **_dist("ttft", f.time_to_first_token),
                **_dist("tps", f.output_tokens_per_second),
                **_dist("memory", f.peak_memory),
                **_dist("gap", f.maximum_stream_update_gap),
            }
        )
    return _columns(rows)


def summary_columns(a: RunAnalysis) -> Columns:
    run_id = a.record.run_id
    return _columns(
        [
            {
                "run_id": run_id,
                "ordinal": i,
                "scenario_id": s.id,
                "summary_json": s.model_dump_json(exclude_unset=True),
            }
            for i, s in enumerate(a.record.summaries)
        ]
    )


def mismatch_columns(a: RunAnalysis) -> Columns:
    run_id = a.record.run_id
    return _columns(
        [
            {
                "run_id": run_id,
                "scenario_id": m.scenario_id,
                "field": m.field,
                "stored_json": _json(m.stored),
                "recomputed_json": _json(m.recomputed),
            }
            for m in a.mismatches
        ]
    )


def reason_columns(a: RunAnalysis) -> Columns:
    run_id = a.record.run_id
    return _columns(
        [
            {"run_id": run_id, "ordinal": i, "level": r.level, "code": r.code, "message": r.message}
            for i, r in enumerate(a.verdict.reasons)
        ]
    )


def flag_columns(a: RunAnalysis) -> Columns:
    run_id = a.record.run_id
    return _columns(
        [
            {"run_id": run_id, "ordinal": i, "location": p.where, "message": p.message}
            for i, p in enumerate(a.record.flags)
        ]
    )


def annotation_row(a: RunAnalysis, content: bytes, ingested_at: datetime) -> dict[str, Any] | None:
    n = a.annotations
    if n is None:
        return None
    return {
        "run_id": a.record.run_id,
        "file_name": n.file_name,
        "sha256": n.sha256,
        "content": content,
        "connection": n.connection,
        "location": n.location,
        "entitlement": n.entitlement,
        "note": n.note,
        "corrections_json": _json([c.__dict__ for c in n.corrections]),
        "extra_json": _json(n.extra) if n.extra else None,
        "ingested_at": ingested_at,
    }


TABLES = (
    ("trials", trial_columns),
    ("check_results", check_columns),
    ("failures", failure_columns),
    ("tool_calls", tool_call_columns),
    ("final_state", final_state_columns),
    ("stored_summaries", summary_columns),
    ("summary_mismatches", mismatch_columns),
    ("scenario_figures", figure_columns),
    ("verdict_reasons", reason_columns),
    ("run_flags", flag_columns),
)
"""Child tables of a run, each filled from the analysis by one function."""
