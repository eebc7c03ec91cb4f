"""The benchmark's own Markdown summary of a run, and the JSON summary fmbench prints.

The legacy layout is the runner's, line for line (the published example's
``.md`` is the reference). The current layout adds what the current format
records: configuration, task success, p90s, failures and safety.
"""

from __future__ import annotations

from typing import Any

from fmbench import display as d
from fmbench import vocabulary as vocab
from fmbench.analysis import RunAnalysis

_NR = d.NOT_RECORDED


def _v(text: str | None) -> str:
    return d.or_not_recorded(text)


def _environment_lines(a: RunAnalysis) -> list[str]:
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
    if a.record.generation == "current":
        lines.insert(5, f"- Locale: {_v(env.localeIdentifier)}")
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
        lines.append(
            f"| {_cell(f.title)} | {_v(d.percent(f.prompt_pass_rate))} | {_v(d.percent(f.mean_constraint_score))} "
            f"| {_v(d.seconds(f.time_to_first_token.median, space=False))} "
            f"| {_v(d.rate(f.output_tokens_per_second.median))} |"
        )
    lines.append("")
    lines += _environment_lines(a)
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _current_markdown(a: RunAnalysis) -> str:
    r = a.record
    samples = "all" if r.sample_limit is None else str(r.sample_limit)
    seed = _NR if r.random_seed is None else str(r.random_seed)
    lines = [
        "# Foundation Models Bench",
        "",
        f"- Suite: {vocab.label('suite', r.suite)}",
        f"- Model: {vocab.label('route', r.route)}",
        f"- Session: {_v(vocab.label('sessionMode', r.session_mode))}",
        f"- Reasoning: {_v(vocab.label('reasoningLevel', r.reasoning_level))}",
        f"- Fallback: {_v(vocab.label('fallbackMode', r.fallback_mode))}",
        f"- Connectivity: {_v(vocab.label('connectivity', r.connectivity))}",
        f"- Warmups: {r.warmup_count}",
        f"- Repetitions: {r.repetitions}",
        f"- Samples per scenario: {samples}",
        f"- Randomized order: {_v(d.yes_no(r.randomized_order))} (seed {seed})",
        f"- Context size: {_v(d.count(r.model_context_size))}",
    ]
    if r.quota_before or r.quota_after:
        before = vocab.label("quotaStatus", r.quota_before.status) if r.quota_before else None
        after = vocab.label("quotaStatus", r.quota_after.status) if r.quota_after else None
        lines.append(f"- Quota: {_v(before)} before, {_v(after)} after")
    lines += [
        f"- Started: {d.iso(r.started_at)}",
        f"- Ended: {d.iso(r.ended_at)}",
        f"- Failures: {len(r.measured_failures)} measured, {len(r.warmup_failures)} during warmup",
        "",
        "| Scenario | Task success | Prompt pass | Failure rate | Constraint score | Median TTFT | p90 TTFT "
        "| Median output tok/s | p90 output tok/s | Peak memory |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for f in a.figures:
        lines.append(
            f"| {_cell(f.title)} | {_v(d.percent(f.task_success))} | {_v(d.percent(f.prompt_pass_rate))} "
            f"| {_v(d.percent(f.failure_rate))} | {_v(d.percent(f.mean_constraint_score))} "
            f"| {_v(d.seconds(f.time_to_first_token.median, space=False))} "
            f"| {_v(d.seconds(f.time_to_first_token.p90, space=False))} "
            f"| {_v(d.rate(f.output_tokens_per_second.median))} | {_v(d.rate(f.output_tokens_per_second.p90))} "
            f"| {_v(d.mebibytes(f.peak_memory.maximum))} |"
        )
    safety = [f for f in a.figures if f.safety_trial_count]
    if safety:
        lines += [
            "",
            "## Safety",
            "",
            "| Scenario | Safety trials | Safety pass | Critical failures | Guardrail violations | Refusals |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for f in safety:
            lines.append(
                f"| {_cell(f.title)} | {f.safety_trial_count} | {_v(d.percent(f.safety_pass_rate))} "
                f"| {f.critical_safety_failure_count} | {f.guardrail_violation_count} | {f.refusal_count} |"
            )
    if r.measured_failures:
        lines += ["", "## Failures", ""]
        for fail in r.measured_failures:
            lines.append(f"- {fail.scenario_id} #{fail.iteration} ({_v(fail.kind)}): {_cell(fail.message)}")
    lines.append("")
    lines += _environment_lines(a)
    return "\n".join(lines)


def markdown_summary(a: RunAnalysis) -> str:
    """The runner's Markdown summary for the run's generation."""
    if a.record.generation == "legacy":
        return _legacy_markdown(a)
    return _current_markdown(a)


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
        "sessionMode": r.session_mode,
        "reasoningLevel": r.reasoning_level,
        "fallbackMode": r.fallback_mode,
        "connectivity": r.connectivity,
        "randomizedOrder": r.randomized_order,
        "randomSeed": r.random_seed,
        "modelContextSize": r.model_context_size,
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
    return {"run": run, "scenarios": [f.to_summary() for f in a.figures]}


def text_summary(a: RunAnalysis) -> str:
    """A terminal-friendly summary: conditions, verdict with reasons, and the scenario table."""
    r = a.record
    env = r.environment
    lines = [
        f"{r.file_name}  (run {r.run_id}, {r.generation} generation)",
        f"  {env.deviceName} · {_v(env.hardwareModel)} · {env.systemName} {env.systemVersion} "
        f"build {_v(r.os_build)} · {vocab.label('route', r.route)} · {vocab.label('suite', r.suite)}",
        f"  revision {a.revision.revision_id or 'unknown'} ({a.revision.status}, by {a.revision.basis})",
        f"  verdict: {a.verdict.label}",
    ]
    if a.scoring and a.scoring.statement:
        lines.insert(3, f"  summaries {a.scoring.statement}")
    lines += [f"    - {x.message}" for x in a.verdict.reasons]
    lines += [f"    ! stored summary differs: {m}" for m in a.mismatches]
    lines.append("")
    header = ("scenario", "task", "prompt", "fail", "constraint", "ttft p50", "ttft p90", "tok/s p50", "tok/s p90")
    rows = [
        (
            f.scenario_id,
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
