from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from native_data import DATA, example_run_file

from fmbench.native.cli import native

PROMPT_PASS = "FoundationModelsBench Prompt Pass"
TTFT = "FoundationModelsBench TTFT Seconds"


def _run(*args: str):
    return CliRunner().invoke(native, [str(arg) for arg in args])


def test_native_group_is_named_for_the_core_cli_to_attach() -> None:
    assert native.name == "native"
    assert set(native.commands) == {
        "inspect", "samples", "report", "compare", "replay", "ingest",
        "validate", "list", "convert", "pipeline",
    }


def test_inspect_json_lists_metadata_summary_and_profiles() -> None:
    result = _run("inspect", DATA / "baseline.xcevalresult", "--json")
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert body["errors"] == []
    [document] = body["documents"]
    assert document["evaluationInfo"]["Model"] == "onDevice"
    assert document["extra"] == {"futureField": {"addedIn": "Xcode 28"}}
    profiles = {p["name"]: p for p in document["profiles"]}
    assert profiles["FoundationModelsBench Constraint Score"]["mean"] == 0.75
    assert len(document["summary"]) == 7


def test_inspect_text_names_rows_and_rationales() -> None:
    result = _run("inspect", DATA / "baseline.xcevalresult")
    assert result.exit_code == 0, result.output
    assert "rows         4" in result.output
    assert "2 x failed: Contains “12”" in result.output
    assert "Pass Rate [Quality] mean(FoundationModelsBench Prompt Pass) #2: 0.6" in result.output


def test_inspect_of_malformed_artifact_is_a_one_line_error_naming_it() -> None:
    result = _run("inspect", DATA / "malformed" / "bad-input.xcevalresult")
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("Error: ")
    assert lines[0].endswith(
        "bad-input.xcevalresult: results[2].Input: not JSON (Expecting value at line 1 column 1)"
    )


def test_samples_jsonl_gives_one_normalized_row_per_line() -> None:
    result = _run("samples", DATA / "batch.jsonl", "--jsonl")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert len(rows) == 12
    assert {row["line"] for row in rows} == {1, 2, 3}
    assert rows[0]["recordID"] == "T-1"
    assert rows[0]["response"]["value"] == {"title": "Call Dr. Lee"}
    assert rows[2]["metrics"][PROMPT_PASS] == {
        "evaluatorKind": "custom",
        "kind": "ignore",
        "rationale": "no checks",
        "value": None,
    }


def test_samples_text_keeps_going_past_bad_lines_and_exits_non_zero() -> None:
    result = _run("samples", DATA / "malformed" / "mixed.jsonl")
    assert result.exit_code == 1
    assert "mixed.jsonl line 1 #0 T-1  Prompt Pass=pass  Constraint Score=1" in result.output
    assert "mixed.jsonl line 5 #3 T-4" in result.output
    assert 'line 3: no "results" array' in result.output
    assert "2 artifacts could not be read" in result.output


def test_compare_with_passing_gate_exits_zero() -> None:
    result = _run(
        "compare",
        DATA / "baseline.xcevalresult",
        DATA / "candidate.xcevalresult",
        "--gate",
        f"{PROMPT_PASS} >= 0.9",
    )
    assert result.exit_code == 0, result.output
    assert "gate PASS" in result.output
    assert (
        "Pass Rate [Quality] mean(FoundationModelsBench Prompt Pass) #2: 0.6 -> 1  delta +0.4"
        in result.output
    )


def test_compare_with_failing_gate_exits_non_zero() -> None:
    result = _run(
        "compare",
        DATA / "baseline.xcevalresult",
        DATA / "candidate.xcevalresult",
        "--gate",
        f"{PROMPT_PASS} >= 0.9",
        "--gate",
        f"{TTFT} delta <= 0.05",
    )
    assert result.exit_code == 1
    assert "gate FAIL" in result.output
    assert "1 of 2 gates did not pass" in result.output


def test_compare_gate_on_unknown_metric_exits_non_zero() -> None:
    result = _run(
        "compare",
        DATA / "baseline.xcevalresult",
        DATA / "candidate.xcevalresult",
        "--gate",
        "Nope >= 0",
    )
    assert result.exit_code == 1
    assert "gate ERROR" in result.output and "unknown metric 'Nope'" in result.output


def test_compare_json_reports_gates() -> None:
    result = _run(
        "compare",
        DATA / "baseline.xcevalresult",
        DATA / "candidate.xcevalresult",
        "--json",
        "--gate",
        f"{TTFT} delta <= 0.05",
    )
    assert result.exit_code == 1
    body = json.loads(result.stdout)
    assert body["gatesPassed"] is False
    assert body["gates"][0]["status"] == "fail"
    assert [entry["name"] for entry in body["baselineOnly"]] == ["Baseline Only"]


def test_compare_with_unparseable_gate_is_a_usage_error() -> None:
    result = _run(
        "compare",
        DATA / "baseline.xcevalresult",
        DATA / "candidate.xcevalresult",
        "--gate",
        "Prompt ~ 1",
    )
    assert result.exit_code == 2
    assert "--gate" in result.output


def test_compare_of_malformed_artifact_is_a_one_line_error() -> None:
    result = _run(
        "compare", DATA / "malformed" / "no-results.xcevalresult", DATA / "candidate.xcevalresult"
    )
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f'Error: {DATA / "malformed" / "no-results.xcevalresult"}: no "results" array: not an evaluation result'
    ]


def test_replay_command_writes_the_artifact(tmp_path: Path) -> None:
    example_run = example_run_file()
    result = _run("replay", example_run, "--output", tmp_path / "out")
    assert result.exit_code == 0, result.output
    written = Path(result.output.strip())
    assert written == tmp_path / "out" / f"{example_run.stem}.xcevalresult"
    assert written.is_file()


def test_replay_command_reports_a_broken_run_file_on_one_line(tmp_path: Path) -> None:
    source = tmp_path / "broken.json"
    source.write_text('{"trials": 3}', encoding="utf-8")
    result = _run("replay", source, "--output", tmp_path)
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: {source}: (top level): not a FoundationModelsBench run: expected an object with "
        "suite, model, environment, trials and the other run fields"
    )
