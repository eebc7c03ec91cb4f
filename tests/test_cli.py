"""The command line: exit codes and one-line messages a user can act on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from fmbench.cli import main

from testdata import BAD, RUNS


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def test_the_installed_command_works_from_another_folder(tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "fmbench"
    assert exe.exists(), "no fmbench command beside this Python: install the project with pip"
    result = subprocess.run([str(exe), "--help"], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert result.returncode == 0
    assert "ingest" in result.stdout and "summarize" in result.stdout


def test_ingest_prints_a_table_and_exits_non_zero_when_a_file_errored(tmp_path: Path) -> None:
    db = tmp_path / "x.duckdb"
    code, out = invoke("ingest", str(RUNS / "purpose-current.json"), str(BAD / "wrong-type.json"), "--db", str(db))
    assert code == 1
    assert "ingested" in out and "error" in out
    assert "wrong-type.json: trials[3].metrics.duration: expected a number" in out
    assert "1 ingested, 0 updated, 0 skipped as duplicates, 1 errored" in out
    code, out = invoke("ingest", str(RUNS / "purpose-current.json"), "--db", str(db))
    assert code == 0
    assert "0 ingested, 0 updated, 1 skipped as duplicates, 0 errored" in out


def test_the_database_location_comes_from_the_environment_when_not_given(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FMBENCH_DB", str(tmp_path / "env.duckdb"))
    code, _ = invoke("ingest", str(RUNS / "purpose-current.json"))
    assert code == 0
    assert (tmp_path / "env.duckdb").exists()
    code, out = invoke("runs", "--json")
    assert code == 0
    assert [r["os_build"] for r in json.loads(out)] == ["24A5264n"]


def test_runs_on_a_missing_database_is_a_one_line_error(tmp_path: Path) -> None:
    code, out = invoke("runs", "--db", str(tmp_path / "none.duckdb"))
    assert code == 1
    assert out.strip().startswith("Error: ")
    assert "no such database" in out
    assert "Traceback" not in out


def test_validate_reports_generation_verdict_and_mismatch_and_fails_on_unreadable_files() -> None:
    code, out = invoke("validate", "--json", str(RUNS / "purpose-hand-edited.json"), str(BAD / "truncated.json"))
    assert code == 1
    results = {Path(r["file"]).name: r for r in json.loads(out)}
    edited = results["purpose-hand-edited.json"]
    assert edited["generation"] == "current"
    assert edited["verdict"] == "invalid"
    assert edited["summaryMismatches"] == [
        {"scenario": "task-capture", "field": "promptPassRate", "stored": 1.0, "recomputed": 0.5}
    ]
    assert results["truncated.json"]["readable"] is False
    assert results["truncated.json"]["errors"][0]["where"] == "line 424, column 27"


def test_validate_exits_zero_when_every_file_is_readable_even_if_not_publishable() -> None:
    code, out = invoke("validate", str(RUNS / "purpose-current.json"))
    assert code == 0
    assert "exploratory" in out


def test_summarize_json_uses_the_run_format_field_names() -> None:
    code, out = invoke("summarize", "--json", str(RUNS / "purpose-current.json"))
    assert code == 0
    doc = json.loads(out)
    assert doc["run"]["randomSeed"] == 18446744073709551615
    capture = doc["scenarios"][0]
    assert set(capture) >= {
        "id", "title", "trialCount", "failureCount", "failureRate", "promptPassRate", "meanConstraintScore",
        "safetyTrialCount", "safetyPassRate", "criticalSafetyFailureCount", "duration", "timeToFirstToken",
        "outputTokensPerSecond", "peakObservedResidentMemoryBytes", "taskSuccess",
    }
    assert capture["timeToFirstToken"]["median"] == 0.2
    assert capture["taskSuccess"] == 0.4
    assert capture["safetyPassRate"] is None


def test_summarize_markdown_reproduces_the_runners_summary_of_the_published_example(example_run: Path) -> None:
    code, out = invoke("summarize", "--markdown", str(example_run))
    assert code == 0
    assert out.rstrip("\n") == example_run.with_suffix(".md").read_text(encoding="utf-8").rstrip("\n")


def test_summarize_of_a_broken_file_is_one_line_naming_the_place() -> None:
    code, out = invoke("summarize", str(BAD / "missing-field.json"))
    assert code == 1
    assert out.strip() == "Error: missing-field.json: trials[1].response: required field is missing"
