"""A judged run as columns, one table at a time, ready for a bulk insert."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from fmbench.analysis.figures import Distribution, trial_figures
from fmbench.analysis.policy import worst_thermal_state
from fmbench.analysis.run import ANALYSIS_VERSION, RunAnalysis
from fmbench.runfile.models import FinalState, QuotaSnapshot, ToolCall
from fmbench.runfile.names import visible
from fmbench.runfile.record import TrialRecord

Columns = dict[str, list[Any]]


def utc(value: datetime | None) -> datetime | None:
    """Stored as naive UTC."""
    if value is None:
        return None
    offset = value.utcoffset()
    if offset is None:
        return value
    if not offset:
        return value.replace(tzinfo=None)
    return value.astimezone(UTC).replace(tzinfo=None)


def _json(value: Any) -> str:
    """The text every JSON column holds."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _quota(prefix: str, q: QuotaSnapshot | None) -> dict[str, Any]:
    return {
        f"{prefix}_status": q.status if q else None,
        f"{prefix}_approaching": q.isApproachingLimit if q else None,
        f"{prefix}_reached": q.isLimitReached if q else None,
        f"{prefix}_reset": utc(q.resetDate) if q else None,
    }


def run_row(a: RunAnalysis, ingested_at: datetime | None) -> dict[str, Any]:
    """The ``runs`` row (``ingested_at`` may be left ``None`` and set when it is written)."""
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
        "device_name": visible(env.deviceName),  # the name as shown: invisible characters as <U+XXXX>
        "system_name": env.systemName,
        "system_version": env.systemVersion,
        "system_build": env.systemBuild,
        "os_build": r.os_build,
        "os_generation": r.os_generation,
        "locale": env.localeIdentifier,
        "hardware_model": None if env.hardwareModel is None else visible(env.hardwareModel),
        "cpu_model": env.cpuModel,
        "cpu_cores": env.cpuCores,
        "gpu_model": env.gpuModel,
        "total_memory": env.totalMemory,
        "thermal_state": env.thermalState,
        "worst_thermal_state": worst_thermal_state(r),
        "low_power_mode": env.lowPowerModeEnabled,
        "benchmark_commit": env.foundationModelsBenchCommit,
        "environment_timestamp": utc(env.timestamp),
        "is_simulator": a.simulator.is_simulator if a.simulator else False,
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
        "analysis_version": ANALYSIS_VERSION,
        "scoring_rules": a.scoring.explained_by.name if a.scoring and a.scoring.explained_by else None,
        "scoring_statement": a.scoring.statement if a.scoring else None,
        "simulator_evidence": a.simulator.evidence if a.simulator else None,
    }


def _columns(rows: list[dict[str, Any]]) -> Columns:
    if not rows:
        return {}
    return {key: [row[key] for row in rows] for key in rows[0]}


_Texts = tuple[list[dict[str, Any]], str, list[tuple[str | None, str | None]]]


class _DefinitionTexts:
    """The JSON text of a trial's check definitions, written once per sample.

    Trials of one sample repeat the same definitions; a cached text is reused
    only when the definitions are equal to the ones it was written from. The
    whole list is its definitions' texts joined as ``json.dumps`` joins them.
    A run's trials are looked up once for both tables that hold the texts.
    """

    def __init__(self) -> None:
        self._memo: dict[tuple[str, str], _Texts] = {}
        self._of: tuple[list[TrialRecord], list[_Texts]] | None = None

    def _entry(self, t: TrialRecord) -> _Texts:
        key = (t.scenario_id, t.sample_id)
        hit = self._memo.get(key)
        if hit is not None and hit[0] == t.check_definitions:
            return hit
        texts = [_json(d) for d in t.check_definitions]
        entry = (
            t.check_definitions,
            "[" + ", ".join(texts) + "]",
            [(next(iter(d)), text) if d else (None, None) for d, text in zip(t.check_definitions, texts, strict=True)],
        )
        self._memo[key] = entry
        return entry

    def of(self, trials: list[TrialRecord]) -> list[_Texts]:
        """Each trial's entry, in order (worked out once for this list of trials)."""
        if self._of is None or self._of[0] is not trials:
            self._of = (trials, [self._entry(t) for t in trials])
        return self._of[1]


def run_columns(a: RunAnalysis) -> dict[str, Columns]:
    """Every child table of a run, by name (the same as each of :data:`TABLES` alone, sharing work)."""
    texts = _DefinitionTexts()
    out = {}
    for table, build in TABLES:
        if build is trial_columns:
            out[table] = trial_columns(a, texts)
        elif build is check_columns:
            out[table] = check_columns(a, texts)
        else:
            out[table] = build(a)
    return out


def trial_columns(a: RunAnalysis, texts: _DefinitionTexts | None = None) -> Columns:
    trials = a.record.trials
    n = len(trials)
    figs = a.trial_figures if len(a.trial_figures) == n else tuple(trial_figures(t) for t in trials)
    metrics = [t.metrics for t in trials]
    texts = texts or _DefinitionTexts()
    return {
        "run_id": [a.record.run_id] * n,
        "ordinal": [t.ordinal for t in trials],
        "trial_id": [t.id for t in trials],
        "scenario_id": [t.scenario_id for t in trials],
        "scenario_title": [t.scenario_title for t in trials],
        "category": [t.category for t in trials],
        "sample_id": [t.sample_id for t in trials],
        "prompt": [t.prompt for t in trials],
        "instructions": [t.instructions for t in trials],
        "check_definitions_json": [e[1] for e in texts.of(trials)],
        "safety_expectation": [t.safety_expectation for t in trials],
        "visual_fixture": [t.visual_fixture for t in trials],
        "requested_model": [t.requested_model for t in trials],
        "executed_model": [t.executed_model for t in trials],
        "iteration": [t.iteration for t in trials],
        "used_fallback": [t.used_fallback for t in trials],
        "fallback_reason": [t.fallback_reason for t in trials],
        "offline_success": [t.offline_success for t in trials],
        "safety_outcome": [t.safety_outcome for t in trials],
        "safety_detail": [t.safety_detail for t in trials],
        "response": [t.response for t in trials],
        "started_at": [m.startedAt for m in metrics],  # made naive UTC by to_arrow, like utc()
        "ended_at": [m.endedAt for m in metrics],
        "duration": [m.duration for m in metrics],
        "time_to_first_token": [m.timeToFirstToken for m in metrics],
        "decode_duration": [m.decodeDuration for m in metrics],
        "input_token_count": [m.inputTokenCount for m in metrics],
        "output_token_count": [m.outputTokenCount for m in metrics],
        "first_update_token_count": [m.firstStreamUpdateTokenCount for m in metrics],
        "token_count_source": [m.tokenCountSource for m in metrics],
        "output_tokens_per_second": [m.outputTokensPerSecond for m in metrics],
        "output_chars_per_second": [m.outputCharactersPerSecond for m in metrics],
        "stream_update_count": [m.streamUpdateCount for m in metrics],
        "maximum_stream_update_gap": [m.maximumStreamUpdateGap for m in metrics],
        "reasoning_token_count": [m.reasoningTokenCount for m in metrics],
        "context_size": [m.contextSize for m in metrics],
        "context_utilization": [m.contextUtilization for m in metrics],
        "starting_memory_bytes": [m.startingResidentMemoryBytes for m in metrics],
        "peak_memory_bytes": [m.peakObservedResidentMemoryBytes for m in metrics],
        "ending_memory_bytes": [m.endingResidentMemoryBytes for m in metrics],
        "starting_thermal_state": [m.startingThermalState for m in metrics],
        "ending_thermal_state": [m.endingThermalState for m in metrics],
        "worst_thermal_state": [m.worstObservedThermalState for m in metrics],
        "environment_thermal_state": [t.environment.thermalState if t.environment else None for t in trials],
        "environment_low_power_mode": [t.environment.lowPowerModeEnabled if t.environment else None for t in trials],
        "environment_timestamp": [t.environment.timestamp if t.environment else None for t in trials],
        "check_count": [len(t.checks) for t in trials],
        "checks_passed": [f.checks_passed for f in figs],
        "constraint_score": [f.constraint_score for f in figs],
        "prompt_pass": [f.prompt_pass for f in figs],
        "safety_pass": [f.safety_pass for f in figs],
        "task_passed": [f.task_passed for f in figs],
        "extra_json": [_json(_trial_extra(t)) if t.extra or t.metrics.__pydantic_extra__ else None for t in trials],
    }


def _trial_extra(t: Any) -> dict[str, Any]:
    extra = dict(t.extra)
    if t.metrics.model_extra:
        extra["metrics"] = dict(t.metrics.model_extra)
    return extra


def _padded(definitions: list[tuple[str | None, str | None]], n: int) -> list[tuple[str | None, str | None]]:
    """A trial's ``n`` checks' definitions: more results than definitions leave the rest without one."""
    if len(definitions) == n:
        return definitions
    return (definitions + [(None, None)] * n)[:n]


def check_columns(a: RunAnalysis, texts: _DefinitionTexts | None = None) -> Columns:
    trials = a.record.trials
    texts = texts or _DefinitionTexts()
    graded = [(t, e) for t, e in zip(trials, texts.of(trials), strict=True) if t.checks]
    if not graded:
        return {}
    checks = [c for t, _ in graded for c in t.checks]
    definitions = [d for t, e in graded for d in _padded(e[2], len(t.checks))]
    return {
        "run_id": [a.record.run_id] * len(checks),
        "trial_ordinal": [t.ordinal for t, _ in graded for _ in t.checks],
        "ordinal": [i for t, _ in graded for i in range(len(t.checks))],
        "label": [c.label for c in checks],
        "passed": [c.passed for c in checks],
        "detail": [c.detail for c in checks],
        "check_case": [d[0] for d in definitions],
        "definition_json": [d[1] for d in definitions],
    }


def _owned(a: RunAnalysis) -> list[tuple[str, int, list[ToolCall] | None, FinalState | None]]:
    """Trials, then failures, as (owner, ordinal, tool calls, final state)."""
    out: list[tuple[str, int, list[ToolCall] | None, FinalState | None]] = [
        ("trial", t.ordinal, t.tool_calls, t.final_state) for t in a.record.trials if t.tool_calls or t.final_state
    ]
    out += [("failure", f.ordinal, f.tool_calls, f.final_state) for f in a.record.failures if f.tool_calls or f.final_state]
    return out


def tool_call_columns(a: RunAnalysis) -> Columns:
    out: Columns = {k: [] for k in ("owner", "owner_ordinal", "ordinal", "name", "arguments_json")}
    for owner, ordinal, calls, _ in _owned(a):
        for i, call in enumerate(calls or ()):
            out["owner"].append(owner)
            out["owner_ordinal"].append(ordinal)
            out["ordinal"].append(i)
            out["name"].append(call.name)
            out["arguments_json"].append(_json(call.arguments))
    if not out["owner"]:
        return {}
    return {"run_id": [a.record.run_id] * len(out["owner"]), **out}


def final_state_columns(a: RunAnalysis) -> Columns:
    out: Columns = {k: [] for k in ("owner", "owner_ordinal", "key", "value_kind", "value_json")}
    for owner, ordinal, _, state in _owned(a):
        if state is None:
            continue
        for key, value in state.values.items():
            out["owner"].append(owner)
            out["owner_ordinal"].append(ordinal)
            out["key"].append(key)
            out["value_kind"].append(next(iter(value)))
            out["value_json"].append(_json(value))
    if not out["owner"]:
        return {}
    return {"run_id": [a.record.run_id] * len(out["owner"]), **out}


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
            for i, p in enumerate(a.flags)
        ]
    )


def annotation_row(a: RunAnalysis, content: bytes, ingested_at: datetime | None) -> dict[str, Any] | None:
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
