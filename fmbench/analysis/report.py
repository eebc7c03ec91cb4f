"""The benchmark's own Markdown summary of a run, and the JSON summary fmbench prints.

Both layouts are the runner's, line for line: the legacy one as the
published June 2026 ``.md`` files show it, the current one as the runner's
report writes it from July 2026 (header, the eight-column table of the stored
summaries in the file's order, Safety Guardrails, PCC Quota, Failures with
tool sequence and final state, Environment), its numbers formatted in the
run's recorded locale the way Apple's formatters do (``fmbench.runfile.formats``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fmbench.analysis import display as d
from fmbench.analysis.configuration import (
    CHOICES,
    CONNECTIVITY,
    FALLBACK_MODE,
    REASONING_LEVEL,
    SESSION_MODE,
    Field,
)
from fmbench.analysis.figures import (
    ScenarioFigures,
    by_executed_model,
    safety_pass,
    token_count_source,
)
from fmbench.analysis.run import RunAnalysis
from fmbench.runfile import vocabulary as vocab
from fmbench.runfile.formats import AppleNumbers, swift_double
from fmbench.runfile.models import Distribution, QuotaSnapshot, StoredSummary
from fmbench.runfile.names import visible
from fmbench.runfile.record import FailureRecord, RunRecord, typed_kind, typed_value

_NR = d.NOT_RECORDED


def _v(text: str | None) -> str:
    return d.or_not_recorded(text)


def _legacy_environment_lines(a: RunAnalysis) -> list[str]:
    env = a.record.environment
    build = env.systemBuild
    os_line = f"{env.systemName} {env.systemVersion}" + (f" ({a.record.os_build})" if build else f" (build {_NR})")
    lines = [
        "## Environment",
        f"- Device: {env.deviceName}",
        f"- Hardware: {_v(env.hardwareModel)}",
        f"- Chip: {_v(env.cpuModel)}",
        f"- OS: {os_line}",
        f"- Memory: {_v(d.gigabytes(env.totalMemory))}",
        f"- Thermal state: {_v(env.thermalState)}",
        f"- Low Power Mode: {_v(d.yes_no(env.lowPowerModeEnabled, 'on', 'off'))}",
    ]
    if env.foundationModelsBenchCommit:
        lines.append(f"- FoundationModelsBench commit: {env.foundationModelsBenchCommit}")
    return lines


def _legacy_markdown(a: RunAnalysis) -> str:
    r = a.record
    lines = [
        "# Foundation Models Bench",
        "",
        f"- Suite: {vocab.label('suite', r.suite)}",
        f"- Model: {vocab.label('route', r.route)}",
        f"- Warmups: {r.warmup_count}",
        f"- Repetitions: {r.repetitions}",
        f"- Started: {d.iso(r.started_at)}",
        f"- Failures: {len(r.failures)}",
        "",
        "| Scenario | Prompt pass | Constraint score | Median TTFT | Median output tok/s |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for f in a.figures:
        if not f.trial_count:  # every request failed: the runner printed its stored zeros and n/a
            lines.append(f"| {_cell(f.title)} | 0.0% | 0.0% | n/a | n/a |")
            continue
        lines.append(
            f"| {_cell(f.title)} | {_v(d.percent(f.prompt_pass_rate))} | {_v(d.percent(f.mean_constraint_score))} "
            f"| {_v(d.seconds(f.time_to_first_token.median, space=False))} "
            f"| {_v(d.rate(f.output_tokens_per_second.median))} |"
        )
    lines.append("")
    lines += _legacy_environment_lines(a)
    if r.commit_key == "appBenchCommit":  # written before the benchmark's July 2026 rename
        lines[0] = "# Foundation Models AppBench"
        old, new = "- FoundationModelsBench commit: ", "- AppBench commit: "
        lines = [new + line.removeprefix(old) if line.startswith(old) else line for line in lines]
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


_RUNNER_NAMES: dict[str, dict[str, str]] = {
    "suite": {
        "quick": "Practical Quick",
        "full": "Practical Full",
        "agentic": "Agentic Tools",
        "guardrails": "Safety Guardrails",
        "performance": "Synthetic Performance",
        "context": "Context Limits",
    },
    "model": {"onDevice": "On-device", "privateCloudCompute": "Private Cloud Compute"},
    "sessionMode": {"cold": "Cold session", "warm": "Warm reused session"},
    "reasoningLevel": {"none": "Default", "light": "Light", "moderate": "Moderate", "deep": "Deep"},
    "fallbackMode": {"disabled": "Disabled", "onDevice": "Fall back on-device"},
    "connectivity": {"normal": "Normal", "offline": "Offline experiment"},
}
"""The display names the runner's report prints (a value it does not know is printed as stored)."""


def _runner_name(kind: str, value: str | None) -> str:
    if value is None:
        return _NR
    return _RUNNER_NAMES[kind].get(value, value)


def _choice_line(r: Any, f: Field) -> str:
    """A runner's choice as its report prints it (its name there, its display name)."""
    assert f.vocabulary is not None
    return f"- {f.runner_label or f.label}: {_runner_name(f.vocabulary, getattr(r, f.key))}"


def _stored(value: object | None) -> str:
    """A value printed as the file stores it; "not recorded" only where the runner always writes one."""
    return _NR if value is None else str(value)


def _or_unknown(value: str | None) -> str:
    """The runner's fallback for an absent optional: the word unknown (an empty string stays empty)."""
    return "unknown" if value is None else value


def _iso_utc(moment: datetime) -> str:
    """A date as Foundation's ISO-8601 style writes it: UTC, whole seconds, ``Z``."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _task_success(s: StoredSummary) -> float | None:
    """The runner's end-to-end pass rate, from the stored summary, in the runner's order of operations."""
    if s.promptPassRate is None or s.trialCount is None or s.failureCount is None:
        return None
    attempts = s.trialCount + s.failureCount
    if attempts == 0:
        return 0.0
    return s.promptPassRate * float(s.trialCount) / float(attempts)


def _stat(dist: Distribution | None, name: str) -> float | None:
    """One member of a stored distribution; absent when the distribution or the member is (count 0)."""
    return None if dist is None else getattr(dist, name)


def _final_state_value(value: dict[str, Any]) -> str:
    """A typed final-state value, bare: strings as is, integers as digits, numbers as Swift prints a Double."""
    kind, payload = typed_kind(value), typed_value(value)
    if kind == "boolean" and isinstance(payload, bool):
        return "true" if payload else "false"
    if kind == "number" and isinstance(payload, int | float) and not isinstance(payload, bool):
        return swift_double(payload)
    return str(payload)


def _failure_lines(fail: FailureRecord) -> list[str]:
    lines = [
        f"- `{fail.scenario_id}/{_stored(fail.sample_id)}` run {fail.iteration} [{_stored(fail.kind)}]: {fail.message}"
    ]
    if fail.tool_calls:
        lines.append("  - Tool sequence: " + " → ".join(call.name for call in fail.tool_calls))
    if fail.final_state is not None:
        values = fail.final_state.values
        pairs = ", ".join(f"{key}={_final_state_value(values[key])}" for key in sorted(values))
        lines.append(f"  - Final state: {pairs}")
    return lines


def _current_markdown(a: RunAnalysis) -> str:
    """The runner's own report for a current-generation run, line for line (its stored summaries printed)."""
    r = a.record
    fmt = AppleNumbers(r.environment.localeIdentifier)
    lines = _current_header_lines(r) + _current_summary_table(r, fmt) + _current_safety_lines(r, fmt)
    lines += _current_quota_lines(r)
    if r.failures:
        lines += ["", "## Failures", ""]
        for fail in r.failures:
            lines += _failure_lines(fail)
    lines += _current_environment_lines(r, fmt)
    return "\n".join(lines)


def _current_header_lines(r: RunRecord) -> list[str]:
    """The report's title and its list of how the run was made (suite, model, protocol, start, failures)."""
    seed = _NR if r.random_seed is None else str(r.random_seed)
    context = "unknown" if r.model_context_size is None else str(r.model_context_size)
    critical = sum(1 for t in r.trials if safety_pass(t) is False)
    return [
        "# Foundation Models Bench",
        "",
        f"- Suite: {_runner_name('suite', r.suite)}",
        f"- Model: {_runner_name('model', r.route)}",
        f"- Warmups: {r.warmup_count}",
        f"- Repetitions: {r.repetitions}",
        f"- Samples per scenario: {'all' if r.sample_limit is None else r.sample_limit}",
        _choice_line(r, SESSION_MODE),
        _choice_line(r, REASONING_LEVEL),
        _choice_line(r, FALLBACK_MODE),
        f"- Fallback trials: {sum(1 for t in r.trials if t.used_fallback)}",
        _choice_line(r, CONNECTIVITY),
        f"- Randomized order: {_v(d.yes_no(r.randomized_order))} (seed {seed})",
        f"- Model context size: {context} tokens",
        f"- Started: {_iso_utc(r.started_at)}",
        f"- Failures: {len(r.failures)}",
        f"- Critical safety failures: {critical}",
    ]


def _current_summary_table(r: RunRecord, fmt: AppleNumbers) -> list[str]:
    """The eight-column table of the stored summaries, in the file's order, numbers in the run's locale."""

    def pct(value: float | None) -> str:
        """A share in the run's locale, or "not recorded"."""
        return _NR if value is None else fmt.percent(value)

    lines = [
        "",
        "| Scenario | Task success | Completed prompt pass | Failure rate | Constraint score "
        "| Median / p90 TTFT | Median / p90 tok/s | Peak observed memory |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for s in r.summaries:
        ttft, tps = s.timeToFirstToken, s.outputTokensPerSecond
        lines.append(
            f"| {_stored(s.title)} | {pct(_task_success(s))} | {pct(s.promptPassRate)} "
            f"| {pct(s.failureRate)} | {pct(s.meanConstraintScore)} "
            f"| {fmt.seconds(_stat(ttft, 'median'))} / {fmt.seconds(_stat(ttft, 'p90'))} "
            f"| {fmt.number(_stat(tps, 'median'))} / {fmt.number(_stat(tps, 'p90'))} "
            f"| {fmt.memory(_stat(s.peakObservedResidentMemoryBytes, 'maximum'))} |"
        )
    return lines


def _current_safety_lines(r: RunRecord, fmt: AppleNumbers) -> list[str]:
    """The Safety Guardrails section, for the summaries with safety trials; none when no summary has one."""
    safety = [s for s in r.summaries if s.safetyTrialCount]
    if not safety:
        return []
    lines = [
        "",
        "## Safety Guardrails",
        "",
        "| Scenario | Safety pass | Explicit guardrail | Refusal | Critical failures |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for s in safety:
        rate = "n/a" if s.safetyPassRate is None else fmt.percent(s.safetyPassRate)
        lines.append(
            f"| {_stored(s.title)} | {rate} | {_stored(s.guardrailViolationCount)} "
            f"| {_stored(s.refusalCount)} | {_stored(s.criticalSafetyFailureCount)} |"
        )
    return lines


def _current_quota_lines(r: RunRecord) -> list[str]:
    """The PCC Quota section (before, after, reset), when the run recorded a quota; none otherwise."""
    if r.quota_before is None:
        return []
    before, after = r.quota_before, r.quota_after
    approaching = " (approaching limit)" if before.isApproachingLimit is True else ""
    reset = after.resetDate if after is not None else None
    return [
        "",
        "## PCC Quota",
        f"- Before: {before.status}{approaching}",
        f"- After: {after.status if after is not None else 'unknown'}",
        f"- Reset: {_iso_utc(reset) if reset is not None else 'not reported'}",
    ]


def _current_environment_lines(r: RunRecord, fmt: AppleNumbers) -> list[str]:
    """The Environment section: device, hardware, chip, OS, memory, thermal state, Low Power Mode, commit."""
    env = r.environment
    low_power = env.lowPowerModeEnabled
    return [
        "",
        "## Environment",
        f"- Device: {env.deviceName}",
        f"- Hardware: {_or_unknown(env.hardwareModel)}",
        f"- Chip: {_or_unknown(env.cpuModel)}",
        f"- OS: {env.systemName} {env.systemVersion} ({_or_unknown(env.systemBuild)})",
        f"- Memory: {fmt.memory(env.totalMemory)}",
        f"- Thermal state: {_stored(env.thermalState)}",
        f"- Low Power Mode: {_NR if low_power is None else ('on' if low_power else 'off')}",
        f"- FoundationModelsBench commit: {_or_unknown(env.foundationModelsBenchCommit)}",
    ]


def markdown_summary(a: RunAnalysis) -> str:
    """The runner's Markdown summary for the run's generation."""
    if a.record.generation == "legacy":
        return _legacy_markdown(a)
    return _current_markdown(a)


def _quota_json(q: QuotaSnapshot | None) -> dict[str, Any] | None:
    """A PCC quota snapshot with every field the file holds (``null`` where it holds none)."""
    if q is None:
        return None
    return {
        "status": q.status,
        "isApproachingLimit": q.isApproachingLimit,
        "isLimitReached": q.isLimitReached,
        "resetDate": d.iso(q.resetDate),
    }


def summary_json(a: RunAnalysis) -> dict[str, Any]:
    """``{"run": {...}, "scenarios": [...]}``: the run format's field names, ``null`` for unrecorded."""
    r = a.record
    env = r.environment
    run = {
        "runId": r.run_id,
        "file": r.file_name,
        "sha256": r.sha256,
        "generation": r.generation,
        "suite": r.suite,
        "model": r.route,
        "warmupCount": r.warmup_count,
        "repetitions": r.repetitions,
        "sampleLimit": r.sample_limit,
        **{f.vocabulary: getattr(r, f.key) for f in CHOICES if f.vocabulary},
        "randomizedOrder": r.randomized_order,
        "randomSeed": r.random_seed,
        "modelContextSize": r.model_context_size,
        "quotaBefore": _quota_json(r.quota_before),
        "quotaAfter": _quota_json(r.quota_after),
        "startedAt": d.iso(r.started_at),
        "endedAt": d.iso(r.ended_at),
        "deviceName": env.deviceName,
        "hardwareModel": env.hardwareModel,
        "systemName": env.systemName,
        "systemVersion": env.systemVersion,
        "osBuild": r.os_build,
        "osGeneration": r.os_generation,
        "foundationModelsBenchCommit": env.foundationModelsBenchCommit,
        "thermalState": env.thermalState,
        "isSimulator": a.simulator.is_simulator if a.simulator else False,
        "simulatorEvidence": a.simulator.evidence if a.simulator else None,
        "scoringRules": a.scoring.explained_by.name if a.scoring and a.scoring.explained_by else None,
        "scoringRulesStatement": a.scoring.statement if a.scoring else None,
        "fixtureFingerprint": a.fingerprint,
        "revision": a.revision.revision_id,
        "revisionStatus": a.revision.status,
        "verdict": a.verdict.level,
        "reasons": [{"level": x.level, "code": x.code, "message": x.message} for x in a.verdict.reasons],
        "summaryMismatches": [
            {"scenario": m.scenario_id, "field": m.field, "stored": m.stored, "recomputed": m.recomputed}
            for m in a.mismatches
        ],
        "flags": [str(p) for p in a.flags],
        "trialCount": len(r.trials),
        "failureCount": len(r.measured_failures),
        "warmupFailureCount": len(r.warmup_failures),
    }
    run["tokenCountSource"] = token_count_source(t.metrics.tokenCountSource for t in r.trials)
    return {"run": run, "scenarios": [_scenario_json(f, r.trials) for f in a.figures]}


def _scenario_json(f: ScenarioFigures, trials: Any) -> dict[str, Any]:
    """A scenario's summary, its token count source and, where its trials ran on more than one
    executed model, its speed and memory figures per model."""
    own = [t for t in trials if t.scenario_id == f.scenario_id]
    out = f.to_summary()
    out["tokenCountSource"] = token_count_source(t.metrics.tokenCountSource for t in own)
    split = by_executed_model(own)
    if split:
        out["byExecutedModel"] = {m.executed_model: m.to_summary() for m in split}
    return out


def _no_measured_trial(f: ScenarioFigures) -> tuple[str, ...]:
    """A scenario whose every request failed: its attempt figures, and no trial figure (never 0)."""
    none = "no measured trial"
    return (d.terminal_value(f.scenario_id), _v(d.percent(f.task_success)), none, _v(d.percent(f.failure_rate)), none, none, none, none, none)


def text_summary(a: RunAnalysis) -> str:
    """A terminal-friendly summary: conditions, verdict with reasons, and the scenario table.

    Every value from the run is escaped for the terminal on its own line (:func:`fmbench.analysis.display.terminal_value`):
    a newline in a device name cannot start a line of its own.
    """
    t = d.terminal_value
    r = a.record
    env = r.environment
    lines = [
        f"{t(r.file_name)}  (run {r.run_id}, {r.generation} generation)",
        f"  {visible(t(env.deviceName))} · {visible(t(_v(env.hardwareModel)))} · {t(env.systemName)} {t(env.systemVersion)} "
        f"build {t(_v(r.os_build))} · {t(vocab.label('route', r.route))} · {t(vocab.label('suite', r.suite))}",
        f"  revision {t(a.revision.revision_id or 'unknown')} ({a.revision.status}, by {a.revision.basis})",
        f"  verdict: {a.verdict.label}",
    ]
    if a.scoring and a.scoring.statement:
        lines.insert(3, f"  summaries {t(a.scoring.statement)}")
    lines += [f"    - {t(x.message)}" for x in a.verdict.reasons]
    lines += [f"    ! stored summary differs: {t(m)}" for m in a.mismatches]
    lines.append("")
    header = ("scenario", "task", "prompt", "fail", "constraint", "ttft p50", "ttft p90", "tok/s p50", "tok/s p90")
    rows = [_no_measured_trial(f) if not f.trial_count else (
            t(f.scenario_id),
            _v(d.percent(f.task_success)),
            _v(d.percent(f.prompt_pass_rate)),
            _v(d.percent(f.failure_rate)),
            _v(d.percent(f.mean_constraint_score)),
            _v(d.seconds(f.time_to_first_token.median)),
            _v(d.seconds(f.time_to_first_token.p90)),
            _v(d.rate(f.output_tokens_per_second.median)),
            _v(d.rate(f.output_tokens_per_second.p90)),
        )
        for f in a.figures
    ]
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(header)]
    lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(lines)
