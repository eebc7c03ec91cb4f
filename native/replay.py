"""Write the deterministic replay artifact of a recorded benchmark run.

The replay turns a run file (either generation, see run-format.md) into an
Evaluations result document without running the model again:

- one row per measured trial, then one per measured failure (warmup
  failures, scenario ``__warmup__``, are not replayed);
- ``Input`` is a JSON string ``{"recordID", "input": {prompt, instructions?,
  outputMode?, scenarioID, sampleID}, "output": {checks, safetyExpectation?}}``;
  a failure borrows its sample from a trial of the same sample when there is
  one;
- ``Response`` is ``{"typeName": "String", "value": <response>}`` (an empty
  string for failures); ``Expected`` is left empty on purpose;
- the metric columns in :data:`REPLAY_METRICS`, each ``custom``; a value
  that does not apply or was not recorded is ``ignore`` with a rationale,
  never a zero;
- one ``mean`` summary entry per metric that has at least one value.

The run file is read by :func:`fmbench.runfile.reader.parse_run` and
:func:`fmbench.runfile.record.to_record`, like every other run fmbench reads (so a
bad file is fmbench's one-line :class:`~fmbench.errors.RunFileError` naming
the JSON path), and prompt pass, constraint score and safety pass are
:func:`fmbench.analysis.figures.trial_figures`: a trial without checks fails its
prompt pass and has no constraint score; safety pass only for samples with a
safety expectation. Tool Calls Pass and Tool Calls Percentage cover the
trial's tool checks (the ``tool…`` check cases, lined up with the grade by
position); the percentage is 0–100.

The same run file always gives the same bytes: the IDs are UUIDv5 of the
file's SHA-256, keys are sorted, rows keep the file's order.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fmbench.analysis.display import iso
from fmbench.analysis.figures import TrialFigures, trial_figures
from fmbench.runfile.models import CheckResult, LegacyRun
from fmbench.runfile.reader import DEFAULT_MAX_BYTES, DEFAULT_MAX_TRIALS, ParsedRun, parse_run
from fmbench.runfile.record import FailureRecord, RunRecord, TrialRecord, to_record, typed_kind
from fmbench.runfile.user_files import (
    FileTooLarge,
    UnreadableFile,
    read_bytes,
    run_file_limit_message,
)
from fmbench.write_errors import writing

from .errors import run_file_error
from .reader import ARTIFACT_SUFFIX

PREFIX = "FoundationModelsBench"
EXECUTION_SUCCESS = f"{PREFIX} Execution Success"
PROMPT_PASS = f"{PREFIX} Prompt Pass"
CONSTRAINT_SCORE = f"{PREFIX} Constraint Score"
SAFETY_PASS = f"{PREFIX} Safety Pass"
DURATION_SECONDS = f"{PREFIX} Duration Seconds"
TTFT_SECONDS = f"{PREFIX} TTFT Seconds"
OUTPUT_TOKENS_PER_SECOND = f"{PREFIX} Output Tokens Per Second"
PEAK_MEMORY_MIB = f"{PREFIX} Peak Resident Memory MiB"
TOOL_CALLS_PASS = f"{PREFIX} Tool Calls Pass"
TOOL_CALLS_PERCENTAGE = f"{PREFIX} Tool Calls Percentage"

REPLAY_METRICS: Mapping[str, str] = {
    EXECUTION_SUCCESS: "Reliability",
    PROMPT_PASS: "Quality",
    CONSTRAINT_SCORE: "Quality",
    SAFETY_PASS: "Safety",
    DURATION_SECONDS: "Performance",
    TTFT_SECONDS: "Performance",
    OUTPUT_TOKENS_PER_SECOND: "Performance",
    PEAK_MEMORY_MIB: "Performance",
    TOOL_CALLS_PASS: "Quality",
    TOOL_CALLS_PERCENTAGE: "Quality",
}
"""Metric columns in display order, with their summary group. Execution
success is grouped apart from quality: a failure is not a quality score."""

EVALUATOR_KIND = "custom"
GENERATOR = "fmbench"
REPLAY_NAMESPACE = uuid.UUID("6f1c4a52-3a0e-5d0b-9a57-1f6d2f0c6b11")
MIB = 1024 * 1024

@dataclass(frozen=True)
class Sample:
    """The sample a trial answered, the same shape for both generations."""

    scenario_id: str
    sample_id: str
    prompt: str | None
    instructions: str | None
    output_mode: Any
    checks: list[Any] | None
    safety_expectation: str | None

    def input_object(self) -> dict[str, Any]:
        value: dict[str, Any] = {"scenarioID": self.scenario_id, "sampleID": self.sample_id}
        if self.prompt is not None:
            value["prompt"] = self.prompt
        if self.instructions is not None:
            value["instructions"] = self.instructions
        if self.output_mode is not None:
            value["outputMode"] = self.output_mode
        return value

    def output_object(self) -> dict[str, Any]:
        value: dict[str, Any] = {}
        if self.checks is not None:
            value["checks"] = self.checks
        if self.safety_expectation is not None:
            value["safetyExpectation"] = self.safety_expectation
        return value


def _samples(parsed: ParsedRun, record: RunRecord) -> list[Sample]:
    """Each trial's sample; a legacy scenario's output mode is read from the parsed document."""
    output_modes: list[Any] = [None] * len(record.trials)
    if isinstance(parsed.document, LegacyRun):
        output_modes = [t.scenario.outputMode for t in parsed.document.trials]
    return [
        Sample(
            scenario_id=t.scenario_id,
            sample_id=t.sample_id,
            prompt=t.prompt,
            instructions=t.instructions,
            output_mode=mode,
            checks=t.check_definitions,
            safety_expectation=t.safety_expectation,
        )
        for t, mode in zip(record.trials, output_modes, strict=True)
    ]


def _column(
    kind: str, value: bool | float | None = None, rationale: str | None = None
) -> dict[str, Any]:
    column: dict[str, Any] = {"evaluatorKind": EVALUATOR_KIND, "kind": kind}
    if value is not None:
        column["value"] = value
    if rationale is not None:
        column["rationale"] = rationale
    return column


def _ignore(rationale: str) -> dict[str, Any]:
    return _column("ignore", rationale=rationale)


def _pass_fail(passed: bool, failure_rationale: str | None = None) -> dict[str, Any]:
    if passed:
        return _column("pass", True)
    return _column("fail", False, failure_rationale)


def _score(value: float | None, missing: str) -> dict[str, Any]:
    return _column("score", value) if value is not None else _ignore(missing)


def _failed_labels(checks: list[CheckResult]) -> str:
    labels = [check.label or "unlabelled check" for check in checks if not check.passed]
    return "failed: " + "; ".join(labels)


def _quality_columns(trial: TrialRecord, figures: TrialFigures) -> dict[str, dict[str, Any]]:
    """Prompt pass and constraint score as :mod:`fmbench.analysis.figures` defines them."""
    if trial.checks:
        prompt = _pass_fail(figures.prompt_pass, _failed_labels(trial.checks))
    elif figures.prompt_pass:
        prompt = _column("pass", True)
    else:
        prompt = _column("fail", False, "no checks: a prompt pass needs at least one check")
    score = _score(figures.constraint_score, "no checks: the trial has no constraint score")
    return {PROMPT_PASS: prompt, CONSTRAINT_SCORE: score}


def _tool_columns(sample: Sample, checks: list[CheckResult]) -> dict[str, dict[str, Any]]:
    if not sample.checks and checks:
        reason = "the sample's checks are not recorded: tool checks cannot be told apart"
        return {TOOL_CALLS_PASS: _ignore(reason), TOOL_CALLS_PERCENTAGE: _ignore(reason)}
    cases = [typed_kind(check) for check in sample.checks or []]
    tool_positions = [i for i, case in enumerate(cases) if case.startswith("tool")]
    if not tool_positions:
        reason = "no tool checks"
        return {TOOL_CALLS_PASS: _ignore(reason), TOOL_CALLS_PERCENTAGE: _ignore(reason)}
    if len(cases) != len(checks):
        reason = f"the grade has {len(checks)} checks and the sample {len(cases)}: tool checks cannot be lined up"
        return {TOOL_CALLS_PASS: _ignore(reason), TOOL_CALLS_PERCENTAGE: _ignore(reason)}
    tool_checks = [checks[i] for i in tool_positions]
    passed = sum(check.passed for check in tool_checks)
    return {
        TOOL_CALLS_PASS: _pass_fail(passed == len(tool_checks), _failed_labels(tool_checks)),
        TOOL_CALLS_PERCENTAGE: _column("score", 100.0 * passed / len(tool_checks)),
    }


def _safety_column(trial: TrialRecord, figures: TrialFigures) -> dict[str, Any]:
    """Safety pass as :mod:`fmbench.analysis.figures` defines it; ``ignore`` where it does not apply."""
    expectation = trial.safety_expectation
    if expectation is None:
        return _ignore("not a safety sample")
    if figures.safety_pass is None:
        return _ignore(f"unknown safety expectation {expectation!r}")
    outcome = trial.safety_outcome or "not recorded"
    wanted = "a response" if expectation == "mustRespond" else "protection"
    return _pass_fail(figures.safety_pass, f"expected {wanted}; outcome {outcome}")


def _performance_columns(trial: TrialRecord) -> dict[str, dict[str, Any]]:
    metrics = trial.metrics
    missing = "not recorded"
    memory = metrics.peakObservedResidentMemoryBytes
    return {
        DURATION_SECONDS: _score(metrics.duration, missing),
        TTFT_SECONDS: _score(metrics.timeToFirstToken, missing),
        OUTPUT_TOKENS_PER_SECOND: _score(metrics.outputTokensPerSecond, missing),
        PEAK_MEMORY_MIB: _score(memory / MIB if memory is not None else None, missing),
    }


def _row(
    record_id: str, sample: Sample, response: str, columns: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    document = {
        "recordID": record_id,
        "input": sample.input_object(),
        "output": sample.output_object(),
    }
    row: dict[str, Any] = {
        "Input": json.dumps(document, sort_keys=True, ensure_ascii=False),
        "Response": {"typeName": "String", "value": response},
        "Expected": "",
    }
    for name in REPLAY_METRICS:
        row[name] = columns[name]
    return row


def _trial_row(trial: TrialRecord, sample: Sample) -> dict[str, Any]:
    figures = trial_figures(trial)
    columns: dict[str, dict[str, Any]] = {EXECUTION_SUCCESS: _column("pass", True)}
    columns.update(_quality_columns(trial, figures))
    columns[SAFETY_PASS] = _safety_column(trial, figures)
    columns.update(_performance_columns(trial))
    columns.update(_tool_columns(sample, trial.checks))
    return _row(trial.id, sample, trial.response, columns)


def _failure_row(failure: FailureRecord, samples: Mapping[tuple[str, str], Sample]) -> dict[str, Any]:
    scenario_id = failure.scenario_id
    sample_id = failure.sample_id or f"{scenario_id}-001"
    sample = samples.get((scenario_id, sample_id)) or Sample(
        scenario_id, sample_id, None, None, None, None, None
    )
    rationale = ": ".join(part for part in (failure.kind, failure.message) if part) or "execution failure"
    no_response = "no response: the request failed"
    columns = {name: _ignore(no_response) for name in REPLAY_METRICS}
    columns[EXECUTION_SUCCESS] = _column("fail", False, rationale)
    return _row(failure.id, sample, "", columns)


def _summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for name, group in REPLAY_METRICS.items():
        values: list[float] = []
        for row in rows:
            column = row[name]
            if column["kind"] == "pass":
                values.append(1.0)
            elif column["kind"] == "fail":
                values.append(0.0)
            elif column["kind"] == "score":
                values.append(float(column["value"]))
        if values:
            mean = math.fsum(values) / len(values)
            entries.append(
                {
                    name: {
                        "group": group,
                        "operation": {"metric": name, "type": "mean"},
                        "value": mean,
                    }
                }
            )
    return entries


def build_replay(
    data: bytes, *, source: Path, max_bytes: int = DEFAULT_MAX_BYTES, max_trials: int | None = DEFAULT_MAX_TRIALS
) -> dict[str, Any]:
    """The replay document of a run file's bytes, read by :func:`fmbench.runfile.reader.parse_run`.

    ``source`` names the file in errors and metadata; a file that is not a run
    raises fmbench's :class:`~fmbench.errors.RunFileError`.
    """
    parsed = parse_run(data, str(source), max_bytes=max_bytes, max_trials=max_trials)
    record = to_record(parsed, source.name, data)
    rows: list[dict[str, Any]] = []
    samples: dict[tuple[str, str], Sample] = {}
    for trial, sample in zip(record.trials, _samples(parsed, record), strict=True):
        samples.setdefault((sample.scenario_id, sample.sample_id), sample)
        rows.append(_trial_row(trial, sample))
    rows.extend(_failure_row(failure, samples) for failure in record.measured_failures)

    info = {
        "Model": record.route,
        "Suite": record.suite,
        "Source": source.name,
        "Source SHA-256": record.sha256,
        "Generator": GENERATOR,
    }
    return {
        "evaluationID": str(uuid.uuid5(REPLAY_NAMESPACE, f"evaluation:{record.sha256}")).upper(),
        "resultID": str(uuid.uuid5(REPLAY_NAMESPACE, f"result:{record.sha256}")).upper(),
        "evaluationInfo": info,
        "reportMetadata": {"ColumnOrdering": ["Input", "Response", "Expected", *REPLAY_METRICS]},
        "results": rows,
        "summary": _summary(rows),
        "startTime": iso(record.started_at),
        "endTime": iso(record.ended_at),
        "durationInMilliseconds": (record.ended_at - record.started_at).total_seconds() * 1000.0,
    }


def replay_path(run_path: Path, output_dir: Path) -> Path:
    """Where the replay of ``run_path`` goes: ``<output_dir>/<stem>.xcevalresult``."""
    return output_dir / f"{run_path.stem}{ARTIFACT_SUFFIX}"


def write_replay(
    run_path: Path | str,
    output_dir: Path | str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_trials: int | None = DEFAULT_MAX_TRIALS,
) -> Path:
    """Write the replay of a run file (refused past ``max_bytes``) atomically; return the artifact's path."""
    run_path = Path(run_path)
    output_dir = Path(output_dir)
    try:
        content = read_bytes(run_path, max_bytes)  # a regular file, never read past the limit
    except FileTooLarge as error:
        raise run_file_error(run_path, run_file_limit_message(error.size, max_bytes)) from None
    except UnreadableFile as error:
        raise run_file_error(run_path, error.reason) from None
    except OSError as error:
        raise run_file_error(run_path, f"cannot read ({error.strerror})") from None
    document = build_replay(content, source=run_path, max_bytes=max_bytes, max_trials=max_trials)
    text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    target = replay_path(run_path, output_dir)
    with writing(target, "the replay artifact"):
        output_dir.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=output_dir, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(text)
                stream.flush()
                os.fsync(stream.fileno())
            os.chmod(temporary, 0o644)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    return target
