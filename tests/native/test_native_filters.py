from __future__ import annotations

import json

from click.testing import CliRunner
from native_data import DATA

from fmbench.native import compare_files, parse_gate
from fmbench.native.cli import native

STRUCTURED = DATA / "structured.xcevalresult"


def _run(*args: object):
    return CliRunner().invoke(native, [str(arg) for arg in args])


def _record_ids(*args: object) -> list[str]:
    result = _run("samples", STRUCTURED, "--jsonl", *args)
    assert result.exit_code == 0, result.output
    return [json.loads(line)["recordID"] for line in result.output.splitlines()]


def test_samples_only_failures_keeps_fail_and_false_pass_rows() -> None:
    assert _record_ids("--only-failures") == ["S-2", "S-3"]


def test_samples_metric_keeps_rows_with_that_column() -> None:
    assert _record_ids("--metric", "Latency") == ["S-1", "S-2", "S-3", "S-5"]
    assert _record_ids("--metric", "Latency", "--only-failures") == []


def test_samples_kind_filters_by_metric_kind() -> None:
    assert _record_ids("--kind", "fail") == ["S-2", "S-3"], "a pass whose value is false is a fail"
    assert _record_ids("--kind", "pass", "--metric", "Accuracy") == ["S-1", "S-5", "S-6", "S-7"]
    assert _record_ids("--kind", "score") == ["S-1", "S-2", "S-3", "S-5"]
    assert _record_ids("--kind", "ignore") == ["S-4"]


def test_samples_kind_refuses_an_unknown_kind() -> None:
    result = _run("samples", STRUCTURED, "--kind", "maybe")
    assert result.exit_code == 2
    assert "Invalid value for '--kind'" in result.output


def test_inspect_raw_json_prints_the_stored_bytes_exactly() -> None:
    for name in ("structured.xcevalresult", "baseline.xcevalresult"):
        result = CliRunner().invoke(native, ["inspect", str(DATA / name), "--raw-json"])
        assert result.exit_code == 0, result.output
        assert result.stdout_bytes == (DATA / name).read_bytes()


def test_inspect_raw_json_of_a_bad_document_is_one_line_naming_it() -> None:
    result = _run("inspect", DATA / "malformed" / "bad-input.xcevalresult", "--raw-json")
    assert result.exit_code == 1
    assert result.output.strip().endswith("bad-input.xcevalresult: results[2].Input: not JSON (Expecting value at line 1 column 1)")


def test_inspect_summary_only_has_metadata_and_aggregates_without_profiles() -> None:
    result = _run("inspect", STRUCTURED, "--summary-only", "--json")
    assert result.exit_code == 0, result.output
    [document] = json.loads(result.output)["documents"]
    assert "profiles" not in document
    assert document["rowCount"] == 7
    assert [entry["name"] for entry in document["summary"]] == ["Mean of Accuracy", "Median of Latency"]
    text = _run("inspect", STRUCTURED, "--summary-only").output
    assert "Mean of Accuracy mean(Accuracy): 0.6667" in text
    assert "metrics" not in text


def test_gates_accept_xcevals_grammar_without_spaces() -> None:
    rule = parse_gate("Mean of Accuracy>=0.9")
    assert (rule.metric, rule.operator, rule.threshold, rule.on_delta) == ("Mean of Accuracy", ">=", 0.9, False)
    comparison = compare_files(
        STRUCTURED, STRUCTURED, gates=["Mean of Accuracy>=0.5", "Median of Latency!=2.5", "Median of Latency<3"]
    )
    assert [outcome.status for outcome in comparison.gates] == ["pass", "fail", "pass"]


def test_inspect_raw_json_stands_alone() -> None:
    result = _run("inspect", STRUCTURED, "--raw-json", "--summary-only")
    assert result.exit_code == 2
    assert "--raw-json prints the stored document alone" in result.output
