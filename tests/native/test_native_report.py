from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from native_data import DATA

from fmbench.native import read_evaluation
from fmbench.native.cli import native
from fmbench.native.differences import differences, evaluation_issues
from fmbench.native.reports import report_path

STRUCTURED = DATA / "structured.xcevalresult"


def _run(*args: object):
    return CliRunner().invoke(native, [str(arg) for arg in args])


def _paths(found: list) -> list[tuple[str, str]]:
    return [(d.path, d.kind) for d in found]


def test_json_encoded_structured_values_are_compared_at_json_paths_keys_sorted() -> None:
    [first, *_] = evaluation_issues(read_evaluation(STRUCTURED))
    assert first.record_id == "S-1"
    assert first.failed_metrics == ()
    assert _paths(list(first.differences)) == [
        ("$.author.name", "value-mismatch"),
        ("$.extra", "unexpected-in-subject"),
        ('$["odd key"]', "type-mismatch"),
        ("$.tags", "array-count-mismatch"),
        ("$.tags[1]", "value-mismatch"),
        ("$.tags[2]", "missing-from-subject"),
        ("$.year", "missing-from-subject"),
    ]


def test_an_absent_side_has_no_entry_rather_than_null() -> None:
    [first, *_] = evaluation_issues(read_evaluation(STRUCTURED))
    by_path = {d.path: d.to_dict() for d in first.differences}
    assert by_path["$.year"] == {"path": "$.year", "kind": "missing-from-subject", "expected": 2026}
    assert by_path["$.extra"] == {"path": "$.extra", "kind": "unexpected-in-subject", "subject": True}


def test_encoded_array_against_encoded_array_reports_count_then_missing_item() -> None:
    assert _paths(differences("[1, 2]", "[1, 2, 3]")) == [
        ("$", "array-count-mismatch"),
        ("$[2]", "missing-from-subject"),
    ]
    assert _paths(differences([1, 2, 9], [1, 2])) == [
        ("$", "array-count-mismatch"),
        ("$[2]", "unexpected-in-subject"),
    ]


def test_plain_strings_stay_strings() -> None:
    assert _paths(differences("no", "yes")) == [("$", "value-mismatch")]
    assert differences("{not json", "{not json") == []
    assert _paths(differences("{not json", {"a": 1})) == [("$", "type-mismatch")]


@pytest.mark.parametrize("expected", [None, ""], ids=["null", "empty string"])
def test_missing_null_or_empty_expected_has_no_differences(expected: object) -> None:
    assert differences("anything at all", expected) == []


def test_issues_list_failed_rows_and_rows_with_differences_only() -> None:
    issues = evaluation_issues(read_evaluation(STRUCTURED))
    assert [(i.index, i.failed_metrics, len(i.differences)) for i in issues] == [
        (0, (), 7),
        (1, ("Accuracy",), 0),  # structured Expected equal to the response: no difference
        (2, ("Accuracy",), 0),  # a pass with false fails; the empty Expected is no expectation
        (4, (), 2),
        (5, (), 1),
    ]


def test_report_profiles_follow_xceval_and_label_the_pass_rate() -> None:
    [report] = report_path(STRUCTURED).reports
    profiles = {p.name: p for p in report.profiles}
    assert list(profiles) == ["Accuracy", "Latency"]
    accuracy, latency = profiles["Accuracy"], profiles["Latency"]
    assert (accuracy.passed, accuracy.failed, accuracy.ignored, accuracy.numeric_count) == (4, 2, 1, 0)
    assert accuracy.mean is None
    assert accuracy.pass_rate == pytest.approx(4 / 6)
    assert latency.median == 2.5, "the mean of the two middle values of 1, 2, 3, 4"
    assert latency.variance == pytest.approx(5 / 3), "sample variance"


def test_report_cli_json_has_metrics_issues_and_the_empty_expected_note() -> None:
    result = _run("report", STRUCTURED, "--json")
    assert result.exit_code == 0, result.output
    [report] = json.loads(result.output)["reports"]
    assert [m["name"] for m in report["metrics"]] == ["Accuracy", "Latency"]
    assert report["metrics"][0]["passRate"] == pytest.approx(4 / 6)
    assert report["issues"][0]["differences"][2] == {
        "path": '$["odd key"]',
        "kind": "type-mismatch",
        "subject": 1,
        "expected": "1",
    }
    assert any('compares an empty string' in note for note in report["notes"])


def test_report_cli_text_names_paths_kinds_and_pass_rate() -> None:
    result = _run("report", STRUCTURED)
    assert result.exit_code == 0, result.output
    assert "Accuracy: n=7 pass=4 fail=2 ignore=1 score=0 pass rate=66.7% values=0" in result.output
    assert "missing-from-subject at $.tags[2]: subject absent, expected \"d\"" in result.output
    assert "#1 S-2  failed: Accuracy" in result.output
    assert "xceval compares an empty string" in result.output


def test_report_of_a_truncated_document_is_one_line_naming_file_and_place() -> None:
    result = _run("report", DATA / "malformed" / "truncated.xcevalresult")
    assert result.exit_code == 1
    [line] = result.output.strip().splitlines()
    assert line.startswith("Error: ") and "truncated.xcevalresult: not JSON (" in line
    assert "at line 70 column" in line


def test_report_of_a_batch_reads_the_good_documents_and_names_each_bad_one() -> None:
    result = _run("report", DATA / "malformed")
    assert result.exit_code == 1
    assert "good.xcevalresult" in result.stdout
    assert "bad-input.xcevalresult: results[2].Input: not JSON" in result.stderr
    assert "truncated.xcevalresult: not JSON" in result.stderr
