from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from native_data import DATA, example_run_file

from fmbench.native.cli import native
from fmbench.native.errors import PipelineError
from fmbench.native.pipeline import load_pipeline, run_pipeline, xcode_available

PIPELINES = DATA / "pipelines"


def _settings(work: Path) -> dict[str, str]:
    return {"WORK": str(work), "PYTHON": sys.executable, "DATA": str(DATA), "NAME": "nightly"}


def _invoke(manifest: str, settings: dict[str, str], *extra: str):
    args = ["pipeline", str(PIPELINES / manifest), *extra]
    for key, value in settings.items():
        args += ["--set", f"{key}={value}"]
    return CliRunner().invoke(native, args)


def test_set_substitutes_commands_environment_and_paths(tmp_path: Path) -> None:
    config = load_pipeline(PIPELINES / "passes.pipeline.json", _settings(tmp_path))
    assert config.working_directory == tmp_path
    assert config.artifacts_directory == tmp_path / "analysis"
    assert config.baseline == DATA / "structured.xcevalresult"
    [step] = config.steps
    assert step.command[0] == sys.executable
    assert step.command[-1] == f"{DATA}/structured.xcevalresult"
    assert step.environment == {"PRODUCER_NOTE": "copied for nightly"}


def test_a_variable_without_a_value_is_named_with_its_place(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    del settings["NAME"]
    with pytest.raises(PipelineError, match=r"steps\[0\]\.environment\.PRODUCER_NOTE: \$\{NAME\} has no value; pass --set NAME=VALUE"):
        load_pipeline(PIPELINES / "passes.pipeline.json", settings)


def test_a_passing_pipeline_writes_xcevals_analysis_files(tmp_path: Path) -> None:
    result = _invoke("passes.pipeline.json", _settings(tmp_path))
    assert result.exit_code == 0, result.output
    assert result.output.startswith("PASS structured-passes")
    analysis = tmp_path / "analysis"
    assert sorted(p.name for p in analysis.iterdir()) == [
        "comparison.json",
        "failures.jsonl",
        "gates.json",
        "inspect.json",
        "logs",
        "metrics.json",
        "pipeline-report.json",
        "report.json",
        "result.xcevalresult",
    ]
    assert (analysis / "result.xcevalresult").read_bytes() == (DATA / "structured.xcevalresult").read_bytes()
    assert (analysis / "logs" / "01-produce-results.stdout.log").read_text() == "copied for nightly\n"
    failures = [json.loads(line) for line in (analysis / "failures.jsonl").read_text().splitlines()]
    assert [row["recordID"] for row in failures] == ["S-2", "S-3"]
    report = json.loads((analysis / "pipeline-report.json").read_text())
    assert report["passed"] is True and report["errors"] == []
    assert [gate["status"] for gate in report["gates"]] == ["pass", "pass"]
    assert set(report["outputs"]) >= {"result", "inspect", "report", "metrics", "failures", "comparison", "gates"}
    comparison = json.loads((analysis / "comparison.json").read_text())
    assert [gate["status"] for gate in comparison["gates"]] == ["pass", "pass"]


def test_a_failing_gate_exits_1_and_still_writes_the_report(tmp_path: Path) -> None:
    result = _invoke("gate-fails.pipeline.json", _settings(tmp_path))
    assert result.exit_code == 1
    assert "gate FAIL: Mean of Accuracy>=0.9: value 0.6667 does not satisfy >= 0.9" in result.output
    assert "Error: 1 of 1 gates did not pass" in result.output
    report = json.loads((tmp_path / "analysis" / "pipeline-report.json").read_text())
    assert report["passed"] is False


def test_a_failing_step_stops_the_pipeline_and_exits_1(tmp_path: Path) -> None:
    outcome = run_pipeline(PIPELINES / "failing-step.pipeline.json", _settings(tmp_path))
    assert not outcome.passed
    assert [(step.name, step.status) for step in outcome.steps] == [("broken producer", 3)]
    assert not (tmp_path / "ran").exists(), "the step after a failure never runs"
    assert "step 'broken producer' exited with status 3" in outcome.errors[0]
    assert _invoke("failing-step.pipeline.json", _settings(tmp_path), "--force").exit_code == 1


def test_a_step_that_runs_too_long_is_stopped(tmp_path: Path) -> None:
    manifest = tmp_path / "slow.pipeline.json"
    manifest.write_text(
        json.dumps(
            {
                "schemaVersion": "xceval.pipeline/v1",
                "name": "slow",
                "resultsPath": "results",
                "steps": [{"name": "sleep", "command": [sys.executable, "-c", "import time; time.sleep(30)"]}],
            }
        ),
        encoding="utf-8",
    )
    outcome = run_pipeline(manifest, step_timeout=0.5)
    assert outcome.steps[0].timed_out
    assert "timed out after 0.5 s" in outcome.errors[0]


def test_an_existing_analysis_folder_is_kept_without_force(tmp_path: Path) -> None:
    (tmp_path / "analysis").mkdir()
    result = _invoke("passes.pipeline.json", _settings(tmp_path))
    assert result.exit_code == 1
    assert "already exists; pass --force to replace it" in result.output


@pytest.mark.skipif(xcode_available(), reason="this machine has Xcode")
def test_a_manifest_requiring_xcode_is_refused_in_one_line(tmp_path: Path) -> None:
    unset = _invoke("requires-xcode.pipeline.json", {})
    assert unset.exit_code == 1
    assert "requiresEvaluationsXcode:" in unset.output, "refused before its unset ${WORK} is noticed"
    result = _invoke("requires-xcode.pipeline.json", {"WORK": str(tmp_path)})
    assert result.exit_code == 1
    [line] = result.output.strip().splitlines()
    assert line.startswith("Error: ") and "requires-xcode.pipeline.json: requiresEvaluationsXcode:" in line
    assert "does not have" in line
    assert list(tmp_path.iterdir()) == [], "nothing is written"
    config = load_pipeline(PIPELINES / "requires-xcode.pipeline.json", {"WORK": str(tmp_path)}, check_xcode=False)
    assert config.requires_xcode and config.xcode == "/Applications/Xcode-beta.app"


def test_an_unknown_schema_version_is_one_line_naming_file_and_place() -> None:
    result = CliRunner().invoke(native, ["pipeline", str(PIPELINES / "unknown-schema.pipeline.json")])
    assert result.exit_code == 1
    [line] = result.output.strip().splitlines()
    assert line.endswith(
        "unknown-schema.pipeline.json: schemaVersion: unknown schema version 'xceval.pipeline/v9';"
        " this fmbench reads 'xceval.pipeline/v1' (upgrade fmbench for a newer one)"
    )


def test_a_steps_free_manifest_replays_a_benchmark_run_file_first(tmp_path: Path) -> None:
    run = example_run_file()
    result = _invoke("replay-run.pipeline.json", {"WORK": str(tmp_path), "RUN": str(run)})
    assert result.exit_code == 0, result.output
    analysis = tmp_path / "analysis"
    assert (analysis / f"{run.stem}.replay.xcevalresult").is_file()
    report = json.loads((analysis / "report.json").read_text())
    assert any(m["name"] == "FoundationModelsBench Prompt Pass" for m in report["metrics"])
    assert all(d["kind"] for issue in report["issues"] for d in issue["differences"])
    assert not any(issue["differences"] for issue in report["issues"]), "an empty Expected is no expectation"
