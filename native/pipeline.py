"""Run an xceval pipeline manifest (``xceval.pipeline/v1``) without Xcode where none is needed.

The manifest (JSON) holds ``schemaVersion``, ``name``, ``workingDirectory``
(default ``.``, relative to the manifest's folder), ``artifactsDirectory``
(default ``.xceval/pipeline``), ``resultsPath``, ``steps`` (each
``{name, command: [..], environment}``), ``selection`` (``evaluationID``,
``resultID``), ``baseline``, ``gates``, ``requiresEvaluationsXcode`` and
``xcode``. Other paths are relative to the working directory.

Steps run in order, each an argument list (never through a shell), with the
step's environment over the inherited one and a timeout; the first failing
step stops the pipeline. ``${KEY}`` in commands, environment values and
paths is replaced by ``--set KEY=VALUE``. Then the one selected result is
analysed into the artifacts folder with xceval's file names:
``result.xcevalresult``, ``inspect.json``, ``report.json``,
``metrics.json``, ``failures.jsonl``, ``logs/NN-step.stdout.log`` and
``.stderr.log``, ``comparison.json`` (with a baseline), ``gates.json`` (with
gates) and ``pipeline-report.json`` listing everything.

A manifest without steps whose ``resultsPath`` is a FoundationModelsBench
run file is replayed first (:func:`fmbench.native.replay.build_replay`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fmbench.errors import FmbenchError
from fmbench.runfile.reader import DEFAULT_MAX_BYTES
from fmbench.runfile.user_files import UnreadableFile, read_bytes

from .compare import GateOutcome, compare_evaluations, evaluate_gate, parse_gate
from .differences import evaluation_issues
from .errors import GateRuleError, PipelineError
from .json_text import load_json
from .model import Evaluation
from .reader import ARTIFACT_SUFFIX, JSON_LINES_SUFFIX, read_artifacts, read_evaluation
from .replay import build_replay
from .reports import inspect_path, report_evaluation

SCHEMA_VERSION = "xceval.pipeline/v1"
DEFAULT_STEP_TIMEOUT = 1800.0
"""Seconds a step may run before it is stopped and counted as failed."""

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_KNOWN_KEYS = frozenset(
    {
        "schemaVersion",
        "name",
        "workingDirectory",
        "artifactsDirectory",
        "resultsPath",
        "steps",
        "selection",
        "baseline",
        "gates",
        "requiresEvaluationsXcode",
        "xcode",
    }
)


@dataclass(frozen=True)
class Step:
    name: str
    command: tuple[str, ...]
    environment: dict[str, str]


@dataclass(frozen=True)
class PipelineConfig:
    path: Path
    name: str
    working_directory: Path
    artifacts_directory: Path
    results_path: Path
    steps: tuple[Step, ...]
    evaluation_id: str | None
    result_id: str | None
    baseline: Path | None
    gates: tuple[str, ...]
    requires_xcode: bool
    xcode: str | None


def parse_settings(assignments: Sequence[str]) -> dict[str, str]:
    """``["MODEL=onDevice"]`` to ``{"MODEL": "onDevice"}``; a malformed one raises :class:`PipelineError`."""
    settings: dict[str, str] = {}
    for assignment in assignments:
        key, equals, value = assignment.partition("=")
        if not equals or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise PipelineError(f"--set {assignment!r}: expected KEY=VALUE")
        settings[key] = value
    return settings


class _Manifest:
    def __init__(self, path: Path, settings: Mapping[str, str]) -> None:
        self.path = path
        self.settings = settings

    def error(self, where: str, message: str) -> PipelineError:
        return PipelineError(f"{self.path}: {where}: {message}")

    def text(self, value: Any, where: str, *, required: bool = False) -> str | None:
        if value is None:
            if required:
                raise self.error(where, "missing; it is required")
            return None
        if not isinstance(value, str) or (required and not value.strip()):
            raise self.error(where, "must be a non-empty string")
        return self.substitute(value, where)

    def substitute(self, value: str, where: str) -> str:
        def replace(match: re.Match[str]) -> str:
            key = match.group(1)
            if key not in self.settings:
                raise self.error(where, f"${{{key}}} has no value; pass --set {key}=VALUE")
            return self.settings[key]

        return _VARIABLE.sub(replace, value)


def load_pipeline(
    path: Path | str, settings: Mapping[str, str] | None = None, *, check_xcode: bool = True
) -> PipelineConfig:
    """Read and check a manifest; every problem is one :class:`PipelineError` naming the file and place.

    A manifest that requires Xcode is refused first on a machine without it
    (``check_xcode=False`` reads it anyway).
    """
    path = Path(path)
    manifest = _Manifest(path, settings or {})
    data = _read_manifest(path)
    _check_manifest_keys(manifest, data, check_xcode=check_xcode)
    name = manifest.text(data.get("name"), "name", required=True) or ""
    working = path.parent / (manifest.text(data.get("workingDirectory"), "workingDirectory") or ".")
    artifacts = working / (
        manifest.text(data.get("artifactsDirectory"), "artifactsDirectory") or ".xceval/pipeline"
    )
    results = working / (manifest.text(data.get("resultsPath"), "resultsPath", required=True) or "")
    baseline_text = manifest.text(data.get("baseline"), "baseline")
    steps = _manifest_steps(manifest, data.get("steps", []))
    selection = data.get("selection") or {}
    if not isinstance(selection, dict):
        raise manifest.error("selection", "must be an object")
    gates = _manifest_gates(manifest, data.get("gates", []) or [])
    requires = data.get("requiresEvaluationsXcode", False)
    if not isinstance(requires, bool):
        raise manifest.error("requiresEvaluationsXcode", "must be true or false")
    return PipelineConfig(
        path=path,
        name=name,
        working_directory=working,
        artifacts_directory=artifacts,
        results_path=results,
        steps=steps,
        evaluation_id=manifest.text(selection.get("evaluationID"), "selection.evaluationID"),
        result_id=manifest.text(selection.get("resultID"), "selection.resultID"),
        baseline=working / baseline_text if baseline_text else None,
        gates=gates,
        requires_xcode=requires,
        xcode=manifest.text(data.get("xcode"), "xcode"),
    )


def _read_manifest(path: Path) -> dict[str, Any]:
    """The manifest's JSON object; a file that cannot be read, is not UTF-8 or not a JSON object is a
    :class:`PipelineError` naming it."""
    try:
        data = load_json(read_bytes(path, DEFAULT_MAX_BYTES).decode("utf-8-sig"))
    except UnreadableFile as error:  # a FIFO, a device, or past the limit
        raise PipelineError(str(error)) from None
    except OSError as error:
        raise PipelineError(f"{path}: cannot read ({error.strerror})") from None
    except UnicodeDecodeError as error:
        raise PipelineError(f"{path}: not UTF-8 text (byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise PipelineError(
            f"{path}: not JSON ({error.msg} at line {error.lineno} column {error.colno})"
        ) from None
    if not isinstance(data, dict):
        raise PipelineError(f"{path}: not a JSON object: not a pipeline manifest")
    return data


def _check_manifest_keys(manifest: _Manifest, data: dict[str, Any], *, check_xcode: bool) -> None:
    """Refuse a manifest of another schema version, one that needs Xcode where there is none (when
    ``check_xcode``), and one with a key the schema does not have."""
    version = data.get("schemaVersion")
    if version != SCHEMA_VERSION:
        raise manifest.error(
            "schemaVersion",
            f"unknown schema version {version!r}; this fmbench reads {SCHEMA_VERSION!r}"
            " (upgrade fmbench for a newer one)",
        )
    if data.get("requiresEvaluationsXcode") is True and check_xcode and not xcode_available():
        raise manifest.error(
            "requiresEvaluationsXcode",
            "this pipeline needs Xcode with the Evaluations framework (macOS), which this machine"
            " does not have; run it with xceval on a Mac",
        )
    unknown = sorted(set(data) - _KNOWN_KEYS)
    if unknown:
        raise manifest.error(unknown[0], f"unknown key in a {SCHEMA_VERSION} manifest")


def _manifest_steps(manifest: _Manifest, steps_data: Any) -> tuple[Step, ...]:
    """The manifest's ``steps``, each with a unique name, a non-empty command and an environment of strings,
    ``${KEY}`` replaced in its command and environment."""
    if not isinstance(steps_data, list):
        raise manifest.error("steps", "must be an array")
    steps: list[Step] = []
    seen: set[str] = set()
    for index, item in enumerate(steps_data):
        where = f"steps[{index}]"
        if not isinstance(item, dict):
            raise manifest.error(where, "must be an object")
        step_name = manifest.text(item.get("name"), f"{where}.name", required=True) or ""
        if step_name in seen:
            raise manifest.error(f"{where}.name", f"step name {step_name!r} is used twice")
        seen.add(step_name)
        command = item.get("command")
        if (
            not isinstance(command, list)
            or not command
            or not all(isinstance(part, str) and part.strip() for part in command)
        ):
            raise manifest.error(f"{where}.command", "must be a non-empty array of non-empty strings")
        environment = item.get("environment", {}) or {}
        if not isinstance(environment, dict) or not all(
            isinstance(value, str) for value in environment.values()
        ):
            raise manifest.error(f"{where}.environment", "must be an object of strings")
        steps.append(
            Step(
                step_name,
                tuple(
                    manifest.substitute(part, f"{where}.command[{i}]") for i, part in enumerate(command)
                ),
                {
                    str(key): manifest.substitute(value, f"{where}.environment.{key}")
                    for key, value in environment.items()
                },
            )
        )
    return tuple(steps)


def _manifest_gates(manifest: _Manifest, gates: Any) -> tuple[str, ...]:
    """The manifest's ``gates``: an array of strings, each a gate rule :func:`parse_gate` reads."""
    if not isinstance(gates, list) or not all(isinstance(gate, str) for gate in gates):
        raise manifest.error("gates", "must be an array of strings")
    for index, gate in enumerate(gates):
        try:
            parse_gate(gate)
        except GateRuleError as error:
            raise manifest.error(f"gates[{index}]", str(error)) from None
    return tuple(gates)


def xcode_available() -> bool:
    """Whether this machine can run Xcode's Evaluations tools (macOS with ``xcrun``)."""
    return sys.platform == "darwin" and shutil.which("xcrun") is not None


@dataclass
class StepOutcome:
    name: str
    command: tuple[str, ...]
    status: int | None
    timed_out: bool
    stdout_path: Path
    stderr_path: Path

    @property
    def passed(self) -> bool:
        return self.status == 0 and not self.timed_out

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "command": list(self.command),
            "status": self.status,
            "timedOut": self.timed_out,
            "standardOutputPath": str(self.stdout_path),
            "standardErrorPath": str(self.stderr_path),
        }


@dataclass
class PipelineOutcome:
    config: PipelineConfig
    steps: list[StepOutcome] = field(default_factory=list)
    selected: Evaluation | None = None
    gates: list[GateOutcome] = field(default_factory=list)
    outputs: dict[str, Path] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.errors

    def to_dict(self) -> dict[str, Any]:
        selected = self.selected
        return {
            "schemaVersion": "xceval.pipeline-report/v1",
            "name": self.config.name,
            "manifestPath": str(self.config.path),
            "workingDirectory": str(self.config.working_directory),
            "resultsPath": str(self.config.results_path),
            "artifactsDirectory": str(self.config.artifacts_directory),
            "steps": [step.to_dict() for step in self.steps],
            "artifact": None
            if selected is None
            else {
                "evaluationID": selected.evaluation_id,
                "resultID": selected.result_id,
                "source": str(selected.path),
                "line": selected.line,
            },
            "gates": [gate.to_dict() for gate in self.gates],
            "outputs": {key: str(path) for key, path in sorted(self.outputs.items())},
            "passed": self.passed,
            "errors": self.errors,
        }

    def to_text(self) -> str:
        lines = [f"{'PASS' if self.passed else 'FAIL'} {self.config.name}", f"Steps: {len(self.steps)}"]
        if self.selected is not None:
            lines.append(
                f"Evaluation: {self.selected.evaluation_id or 'not recorded'}"
                f" ({self.selected.result_id or 'not recorded'})"
            )
        for gate in self.gates:
            lines.append(f"gate {gate.status.upper()}: {gate.rule.text}: {gate.message}")
        lines.append(f"Artifacts: {self.config.artifacts_directory}")
        lines.extend(f"Error: {error}" for error in self.errors)
        return "\n".join(lines)


def _write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def _log_prefix(index: int, name: str) -> str:
    return f"{index + 1:02d}-" + (re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "step")


def _run_steps(config: PipelineConfig, outcome: PipelineOutcome, timeout: float) -> None:
    logs = config.artifacts_directory / "logs"
    for index, step in enumerate(config.steps):
        prefix = _log_prefix(index, step.name)
        stdout_path, stderr_path = logs / f"{prefix}.stdout.log", logs / f"{prefix}.stderr.log"
        status: int | None = None
        timed_out = False
        with stdout_path.open("wb") as stdout, stderr_path.open("wb") as stderr:
            try:
                completed = subprocess.run(
                    list(step.command),
                    cwd=config.working_directory,
                    env={**os.environ, **step.environment},
                    stdout=stdout,
                    stderr=stderr,
                    timeout=timeout,
                    check=False,
                )
                status = completed.returncode
            except subprocess.TimeoutExpired:
                timed_out = True
            except OSError as error:
                stderr.write(f"cannot start {step.command[0]!r}: {error.strerror}\n".encode())
        result = StepOutcome(step.name, step.command, status, timed_out, stdout_path, stderr_path)
        outcome.steps.append(result)
        outcome.outputs[f"log:{step.name}:stdout"] = stdout_path
        outcome.outputs[f"log:{step.name}:stderr"] = stderr_path
        if not result.passed:
            reason = (
                f"timed out after {timeout:g} s"
                if timed_out
                else ("could not start" if status is None else f"exited with status {status}")
            )
            outcome.errors.append(f"step {step.name!r} {reason} (log: {stderr_path})")
            return


def _is_run_file(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() not in (ARTIFACT_SUFFIX, JSON_LINES_SUFFIX)


def _select(config: PipelineConfig, results: Path) -> Evaluation:
    read = read_artifacts([results])
    if read.errors:
        raise PipelineError(f"{config.path}: resultsPath: {read.errors[0]}")
    chosen = [
        ev
        for ev in read.documents
        if (config.evaluation_id is None or ev.evaluation_id == config.evaluation_id)
        and (config.result_id is None or ev.result_id == config.result_id)
    ]
    if not chosen:
        raise PipelineError(f"{config.path}: selection: no result under {results} matches it")
    if len(chosen) > 1:
        raise PipelineError(
            f"{config.path}: selection: {len(chosen)} results under {results} match;"
            " name an evaluationID or resultID"
        )
    return chosen[0]


def _results(config: PipelineConfig, outcome: PipelineOutcome) -> Path:
    """The results to analyse: ``resultsPath``, or the replay of a run file there when there are no steps."""
    results = config.results_path
    if config.steps or not _is_run_file(results):
        return results

    try:
        content = read_bytes(results, DEFAULT_MAX_BYTES)
    except UnreadableFile as error:
        raise PipelineError(str(error)) from None
    replay = build_replay(content, source=results)
    written = config.artifacts_directory / f"{results.stem}.replay{ARTIFACT_SUFFIX}"
    _write_json(written, replay)
    outcome.outputs["replay"] = written
    return written


def _analyse(config: PipelineConfig, outcome: PipelineOutcome, results: Path) -> None:
    folder = config.artifacts_directory
    selected = _select(config, results)
    outcome.selected = selected
    result_path = folder / "result.xcevalresult"
    if selected.line is None:
        shutil.copyfile(selected.path, result_path)
    else:
        line = selected.path.read_text(encoding="utf-8-sig").split("\n")[selected.line - 1]
        _write_json(result_path, json.loads(line))
    outcome.outputs["result"] = result_path

    inspection = inspect_path(result_path).inspections[0]
    _write_json(folder / "inspect.json", inspection.to_dict())
    outcome.outputs["inspect"] = folder / "inspect.json"
    report = report_evaluation(selected)
    _write_json(folder / "report.json", report.to_dict())
    outcome.outputs["report"] = folder / "report.json"
    _write_json(folder / "metrics.json", {"metrics": [p.to_dict() for p in report.profiles]})
    outcome.outputs["metrics"] = folder / "metrics.json"
    issues = {issue.index: issue for issue in evaluation_issues(selected)}
    with (folder / "failures.jsonl").open("w", encoding="utf-8") as stream:
        for row in selected.rows:
            if row.failed_metrics:
                line_body = {
                    "evaluationID": selected.evaluation_id,
                    "resultID": selected.result_id,
                    **row.to_dict(),
                    "issues": issues[row.index].to_dict() if row.index in issues else None,
                }
                stream.write(json.dumps(line_body, sort_keys=True, ensure_ascii=False) + "\n")
    outcome.outputs["failures"] = folder / "failures.jsonl"

    if config.baseline is not None:
        try:
            baseline = read_evaluation(config.baseline)
            comparison = compare_evaluations(baseline, selected, gates=config.gates)
        except FmbenchError as error:
            raise PipelineError(f"{config.path}: baseline: {error}") from None
        outcome.gates = list(comparison.gates)
        _write_json(folder / "comparison.json", comparison.to_dict())
        outcome.outputs["comparison"] = folder / "comparison.json"
    else:
        outcome.gates = [evaluate_gate(parse_gate(gate), selected.summary, []) for gate in config.gates]
    if config.gates:
        _write_json(folder / "gates.json", {"gates": [gate.to_dict() for gate in outcome.gates]})
        outcome.outputs["gates"] = folder / "gates.json"
    failed = [gate for gate in outcome.gates if not gate.passed]
    if failed:
        outcome.errors.append(f"{len(failed)} of {len(outcome.gates)} gates did not pass")


def run_pipeline(
    path: Path | str,
    settings: Mapping[str, str] | None = None,
    *,
    step_timeout: float = DEFAULT_STEP_TIMEOUT,
    force: bool = False,
) -> PipelineOutcome:
    """Run the manifest at ``path`` and write its analysis folder; see the module doc.

    Raises :class:`PipelineError` for a manifest that cannot run (before any
    step runs, nothing is written). A failing step or gate is recorded in the
    outcome (``passed`` false), with ``pipeline-report.json`` written.
    """
    config = load_pipeline(path, settings)
    folder = config.artifacts_directory
    if folder.exists():
        if not force:
            raise PipelineError(
                f"{config.path}: artifactsDirectory: {folder} already exists; pass --force to replace it"
            )
        shutil.rmtree(folder)
    (folder / "logs").mkdir(parents=True)
    outcome = PipelineOutcome(config)
    _run_steps(config, outcome, step_timeout)
    if outcome.passed:
        try:
            _analyse(config, outcome, _results(config, outcome))
        except FmbenchError as error:
            outcome.errors.append(str(error))
    outcome.outputs["pipelineReport"] = folder / "pipeline-report.json"
    _write_json(folder / "pipeline-report.json", outcome.to_dict())
    return outcome
