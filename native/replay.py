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

Figures follow run-format.md: constraint score = passed / all checks; prompt
pass = at least one check and every check passed; safety pass only for
samples with a safety expectation (``mustRespond`` passes on ``responded``,
``mustProtect`` on ``guardrailViolation`` or ``refusal``). Tool Calls Pass
and Tool Calls Percentage cover the trial's tool checks (the ``tool…`` check
cases, lined up with the grade by position); the percentage is 0–100.

The same run file always gives the same bytes: the IDs are UUIDv5 of the
file's SHA-256, keys are sorted, rows keep the file's order.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from fmbench.reader import DEFAULT_MAX_BYTES
from fmbench.write_errors import writing

from .errors import RunFileError, run_file_error
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

WARMUP_SCENARIO = "__warmup__"
EVALUATOR_KIND = "custom"
GENERATOR = "fmbench"
REPLAY_NAMESPACE = uuid.UUID("6f1c4a52-3a0e-5d0b-9a57-1f6d2f0c6b11")
MIB = 1024 * 1024

Generation = Literal["legacy", "current"]


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


@dataclass(frozen=True)
class CheckResult:
    label: str | None
    passed: bool


class _Run:
    """Typed access to a run file's JSON with errors that say where."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def error(self, message: str, where: str | None = None) -> RunFileError:
        return run_file_error(self.path, message, where)

    def obj(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error("not an object", where)
        return value

    def text(self, value: Any, where: str) -> str:
        if not isinstance(value, str):
            raise self.error("missing or not a string", where)
        return value

    def optional_text(self, value: Any, where: str) -> str | None:
        """Absent or null is None; anything else must be a string."""
        return None if value is None else self.text(value, where)

    def number(self, value: Any, where: str) -> float | None:
        """An optional number: absent or null is None (not recorded)."""
        if value is None:
            return None
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise self.error("not a number", where)
        return float(value)


def run_generation(run: Mapping[str, Any]) -> Generation:
    """``legacy`` when trials carry a whole ``scenario`` and no ``sessionMode`` is set."""
    trials = run.get("trials")
    if "sessionMode" in run:
        return "current"
    if isinstance(trials, list) and any(isinstance(t, dict) and "scenario" in t for t in trials):
        return "legacy"
    if isinstance(trials, list) and any(isinstance(t, dict) and "sample" in t for t in trials):
        return "current"
    return "legacy"


def _sample(trial: dict[str, Any], where: str, run: _Run) -> Sample:
    if "scenario" in trial:  # legacy: a whole scenario, one sample per scenario
        scenario = run.obj(trial["scenario"], f"{where}.scenario")
        scenario_id = run.text(scenario.get("id"), f"{where}.scenario.id")
        checks = scenario.get("checks")
        return Sample(
            scenario_id=scenario_id,
            sample_id=f"{scenario_id}-001",
            prompt=run.optional_text(scenario.get("prompt"), f"{where}.scenario.prompt"),
            instructions=run.optional_text(
                scenario.get("instructions"), f"{where}.scenario.instructions"
            ),
            output_mode=scenario.get("outputMode"),
            checks=checks if isinstance(checks, list) else None,
            safety_expectation=run.optional_text(
                scenario.get("safetyExpectation"), f"{where}.scenario.safetyExpectation"
            ),
        )
    if "sample" not in trial:
        raise run.error("neither a scenario (legacy) nor a sample (current)", where)
    scenario_id = run.text(trial.get("scenarioID"), f"{where}.scenarioID")
    sample = run.obj(trial["sample"], f"{where}.sample")
    sample_id = run.text(sample.get("id"), f"{where}.sample.id")
    checks = sample.get("checks")
    return Sample(
        scenario_id=scenario_id,
        sample_id=sample_id,
        prompt=run.optional_text(sample.get("prompt"), f"{where}.sample.prompt"),
        instructions=run.optional_text(sample.get("instructions"), f"{where}.sample.instructions"),
        output_mode=sample.get("outputMode"),
        checks=checks if isinstance(checks, list) else None,
        safety_expectation=run.optional_text(
            sample.get("safetyExpectation"), f"{where}.sample.safetyExpectation"
        ),
    )


def _grade(trial: dict[str, Any], where: str, run: _Run) -> list[CheckResult]:
    grade = run.obj(trial.get("grade"), f"{where}.grade")
    checks = grade.get("checks")
    if checks is None:
        return []
    if not isinstance(checks, list):
        raise run.error("not an array", f"{where}.grade.checks")
    results: list[CheckResult] = []
    for index, check in enumerate(checks):
        check_where = f"{where}.grade.checks[{index}]"
        check = run.obj(check, check_where)
        passed = check.get("passed")
        if not isinstance(passed, bool):
            raise run.error("passed is not true or false", check_where)
        label = check.get("label")
        results.append(CheckResult(label if isinstance(label, str) else None, passed))
    return results


def _check_case(check: Any) -> str | None:
    if isinstance(check, dict) and len(check) == 1:
        return next(iter(check))
    return None


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


def _quality_columns(response: str | None, checks: list[CheckResult]) -> dict[str, dict[str, Any]]:
    if response is None:
        reason = "no response recorded"
        return {PROMPT_PASS: _ignore(reason), CONSTRAINT_SCORE: _ignore(reason)}
    if not checks:
        reason = "no checks: the trial has no prompt pass or constraint score"
        return {PROMPT_PASS: _ignore(reason), CONSTRAINT_SCORE: _ignore(reason)}
    passed = sum(check.passed for check in checks)
    return {
        PROMPT_PASS: _pass_fail(passed == len(checks), _failed_labels(checks)),
        CONSTRAINT_SCORE: _column("score", passed / len(checks)),
    }


def _tool_columns(sample: Sample, checks: list[CheckResult]) -> dict[str, dict[str, Any]]:
    if sample.checks is None and checks:
        reason = "the sample's checks are not recorded: tool checks cannot be told apart"
        return {TOOL_CALLS_PASS: _ignore(reason), TOOL_CALLS_PERCENTAGE: _ignore(reason)}
    cases = [_check_case(check) for check in sample.checks or []]
    tool_positions = [
        i for i, case in enumerate(cases) if case is not None and case.startswith("tool")
    ]
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


def _safety_column(sample: Sample, trial: dict[str, Any], where: str, run: _Run) -> dict[str, Any]:
    expectation = sample.safety_expectation
    if expectation is None:
        return _ignore("not a safety sample")
    outcome = run.optional_text(trial.get("safetyOutcome"), f"{where}.safetyOutcome")
    if outcome is None:
        return _ignore("safety outcome not recorded")
    if expectation == "mustRespond":
        return _pass_fail(outcome == "responded", f"expected a response; outcome {outcome}")
    if expectation == "mustProtect":
        return _pass_fail(
            outcome in ("guardrailViolation", "refusal"), f"expected protection; outcome {outcome}"
        )
    return _ignore(f"unknown safety expectation {expectation!r}")


def _performance_columns(trial: dict[str, Any], where: str, run: _Run) -> dict[str, dict[str, Any]]:
    metrics = run.obj(trial.get("metrics"), f"{where}.metrics")
    missing = "not recorded"
    memory = run.number(
        metrics.get("peakObservedResidentMemoryBytes"),
        f"{where}.metrics.peakObservedResidentMemoryBytes",
    )
    return {
        DURATION_SECONDS: _score(
            run.number(metrics.get("duration"), f"{where}.metrics.duration"), missing
        ),
        TTFT_SECONDS: _score(
            run.number(metrics.get("timeToFirstToken"), f"{where}.metrics.timeToFirstToken"),
            missing,
        ),
        OUTPUT_TOKENS_PER_SECOND: _score(
            run.number(
                metrics.get("outputTokensPerSecond"), f"{where}.metrics.outputTokensPerSecond"
            ),
            missing,
        ),
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


def _trial_row(trial: Any, where: str, run: _Run) -> tuple[Sample, dict[str, Any]]:
    trial = run.obj(trial, where)
    record_id = run.text(trial.get("id"), f"{where}.id")
    sample = _sample(trial, where, run)
    response = run.optional_text(trial.get("response"), f"{where}.response")
    checks = _grade(trial, where, run)
    columns: dict[str, dict[str, Any]] = {EXECUTION_SUCCESS: _column("pass", True)}
    columns.update(_quality_columns(response, checks))
    columns[SAFETY_PASS] = _safety_column(sample, trial, where, run)
    columns.update(_performance_columns(trial, where, run))
    columns.update(_tool_columns(sample, checks))
    return sample, _row(record_id, sample, response or "", columns)


def _failure_row(
    failure: dict[str, Any], where: str, run: _Run, samples: Mapping[tuple[str, str], Sample]
) -> dict[str, Any]:
    record_id = run.text(failure.get("id"), f"{where}.id")
    scenario_id = run.text(failure.get("scenarioID"), f"{where}.scenarioID")
    sample_id = (
        run.optional_text(failure.get("sampleID"), f"{where}.sampleID") or f"{scenario_id}-001"
    )
    sample = samples.get((scenario_id, sample_id)) or Sample(
        scenario_id, sample_id, None, None, None, None, None
    )
    kind = run.optional_text(failure.get("kind"), f"{where}.kind")
    message = run.optional_text(failure.get("message"), f"{where}.message")
    rationale = ": ".join(part for part in (kind, message) if part) or "execution failure"
    no_response = "no response: the request failed"
    columns = {name: _ignore(no_response) for name in REPLAY_METRICS}
    columns[EXECUTION_SUCCESS] = _column("fail", False, rationale)
    return _row(record_id, sample, "", columns)


def _is_warmup(failure: dict[str, Any]) -> bool:
    sample_id = failure.get("sampleID")
    return failure.get("scenarioID") == WARMUP_SCENARIO or (
        isinstance(sample_id, str) and sample_id.startswith(f"{WARMUP_SCENARIO}-")
    )


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


def _duration_ms(started: str | None, ended: str | None) -> float | None:
    if started is None or ended is None:
        return None
    try:
        start = datetime.fromisoformat(started)
        end = datetime.fromisoformat(ended)
        return (end - start).total_seconds() * 1000.0
    except (ValueError, TypeError):
        return None


def build_replay(run: Mapping[str, Any], *, source: Path, sha256: str) -> dict[str, Any]:
    """The replay document of a decoded run file (``source`` names it in errors and metadata)."""
    access = _Run(source)
    if not isinstance(run, dict):
        raise access.error("not a JSON object: not a run file")
    trials = run.get("trials")
    if not isinstance(trials, list):
        raise access.error('no "trials" array: not a run file')
    failures = run.get("failures")
    if failures is None:
        failures = []
    if not isinstance(failures, list):
        raise access.error("not an array", "failures")

    rows: list[dict[str, Any]] = []
    samples: dict[tuple[str, str], Sample] = {}
    for index, trial in enumerate(trials):
        sample, row = _trial_row(trial, f"trials[{index}]", access)
        samples.setdefault((sample.scenario_id, sample.sample_id), sample)
        rows.append(row)
    for index, failure in enumerate(failures):
        where = f"failures[{index}]"
        failure = access.obj(failure, where)
        if _is_warmup(failure):
            continue
        rows.append(_failure_row(failure, where, access, samples))

    started = access.optional_text(run.get("startedAt"), "startedAt")
    ended = access.optional_text(run.get("endedAt"), "endedAt")
    info = {
        "Model": access.optional_text(run.get("model"), "model") or "not recorded",
        "Suite": access.optional_text(run.get("suite"), "suite") or "not recorded",
        "Source": source.name,
        "Source SHA-256": sha256,
        "Generator": GENERATOR,
    }
    document: dict[str, Any] = {
        "evaluationID": str(uuid.uuid5(REPLAY_NAMESPACE, f"evaluation:{sha256}")).upper(),
        "resultID": str(uuid.uuid5(REPLAY_NAMESPACE, f"result:{sha256}")).upper(),
        "evaluationInfo": info,
        "reportMetadata": {"ColumnOrdering": ["Input", "Response", "Expected", *REPLAY_METRICS]},
        "results": rows,
        "summary": _summary(rows),
    }
    if started is not None:
        document["startTime"] = started
    if ended is not None:
        document["endTime"] = ended
    duration = _duration_ms(started, ended)
    if duration is not None:
        document["durationInMilliseconds"] = duration
    return document


def replay_path(run_path: Path, output_dir: Path) -> Path:
    """Where the replay of ``run_path`` goes: ``<output_dir>/<stem>.xcevalresult``."""
    return output_dir / f"{run_path.stem}{ARTIFACT_SUFFIX}"


def write_replay(run_path: Path | str, output_dir: Path | str, *, max_bytes: int = DEFAULT_MAX_BYTES) -> Path:
    """Write the replay of a run file (refused past ``max_bytes``) atomically; return the artifact's path."""
    run_path = Path(run_path)
    output_dir = Path(output_dir)
    try:
        size = run_path.stat().st_size
        if size > max_bytes:
            raise run_file_error(
                run_path,
                f"{size:,} bytes is larger than the {max_bytes:,}-byte limit for a run file; "
                "raise it with --max-bytes if this really is one run",
            )
        content = run_path.read_bytes()
    except OSError as error:
        raise run_file_error(run_path, f"cannot read ({error.strerror})") from None
    try:
        run = json.loads(content.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise run_file_error(run_path, "not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise run_file_error(
            run_path, f"not JSON ({error.msg} at line {error.lineno} column {error.colno})"
        ) from None
    document = build_replay(run, source=run_path, sha256=hashlib.sha256(content).hexdigest())
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
