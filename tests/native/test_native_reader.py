from __future__ import annotations

import json
from pathlib import Path

import pytest
from native_data import DATA

from fmbench.native import (
    ArtifactError,
    read_artifacts,
    read_evaluation,
)

PROMPT_PASS = "FoundationModelsBench Prompt Pass"
CONSTRAINT_SCORE = "FoundationModelsBench Constraint Score"


def test_artifact_error_names_file_json_path_and_message() -> None:
    error = ArtifactError(
        Path("run.xcevalresult"),
        "not JSON (Expecting value at line 1 column 1)",
        where="results[2].Input",
    )
    assert (
        str(error)
        == "run.xcevalresult: results[2].Input: not JSON (Expecting value at line 1 column 1)"
    )


def test_artifact_error_names_line_of_json_lines_file() -> None:
    error = ArtifactError(
        Path("batch.jsonl"), 'no "results" array: not an evaluation result', line=3
    )
    assert str(error) == 'batch.jsonl line 3: no "results" array: not an evaluation result'


def test_document_metadata_rows_and_summary_are_read() -> None:
    evaluation = read_evaluation(DATA / "baseline.xcevalresult")
    assert evaluation.evaluation_id == "11111111-1111-4111-8111-111111111111"
    assert evaluation.start_time == "2026-06-12T08:37:34Z"
    assert evaluation.duration_ms == 25000.0
    assert evaluation.info == {"Model": "onDevice", "Suite": "quick"}
    assert evaluation.report_metadata["ColumnOrdering"][3] == PROMPT_PASS
    assert len(evaluation.rows) == 4
    assert len(evaluation.summary) == 7
    assert not evaluation.is_judge
    assert len(evaluation.sha256) == 64


def test_unknown_top_level_key_and_unknown_column_are_kept() -> None:
    evaluation = read_evaluation(DATA / "baseline.xcevalresult")
    assert evaluation.extra == {"futureField": {"addedIn": "Xcode 28"}}
    assert evaluation.rows[0].extra == {"Notes": "a column nobody documented"}


def test_input_is_decoded_a_second_time_and_gives_the_record_id() -> None:
    row = read_evaluation(DATA / "baseline.xcevalresult").rows[0]
    assert isinstance(row.input_raw, str)
    assert row.input["input"]["scenarioID"] == "journal-summary"
    assert row.record_id == "T-1"


def test_response_holding_json_encoded_value_is_decoded_and_raw_kept() -> None:
    rows = read_evaluation(DATA / "baseline.xcevalresult").rows
    structured, plain = rows[0].response, rows[1].response
    assert structured is not None and plain is not None
    assert structured.decoded and structured.value == {"title": "Call Dr. Lee"}
    assert structured.value_raw == '{"title": "Call Dr. Lee"}'
    assert not plain.decoded and plain.value == "It rained twice."


def test_pass_fail_ignore_and_score_kinds_are_read_with_rationales() -> None:
    rows = read_evaluation(DATA / "baseline.xcevalresult").rows
    passed, failed, ignored, pass_false = (row.metric(PROMPT_PASS) for row in rows)
    assert passed is not None and passed.passes and not passed.fails
    assert failed is not None and failed.fails and failed.rationale == "failed: Contains “12”"
    assert ignored is not None and ignored.ignored and ignored.numeric is None
    assert ignored.rationale == "no checks"
    assert pass_false is not None and pass_false.fails, "kind pass with value false is a failure"
    score = rows[1].metric(CONSTRAINT_SCORE)
    assert score is not None and score.kind == "score" and score.value == 0.5
    assert score.evaluator_kind == "custom"


def test_repeated_summary_identity_is_numbered_by_occurrence() -> None:
    summary = read_evaluation(DATA / "baseline.xcevalresult").summary
    pass_rates = [
        (s.group, s.source_metric, s.occurrence, s.value) for s in summary if s.name == "Pass Rate"
    ]
    assert pass_rates == [
        ("Quality", PROMPT_PASS, 0, 0.5),
        ("Safety", "FoundationModelsBench Safety Pass", 0, 0.9),
        ("Quality", PROMPT_PASS, 1, 0.6),
    ]


def test_json_lines_file_gives_one_document_per_line() -> None:
    result = read_artifacts([DATA / "batch.jsonl"])
    assert result.ok
    assert [doc.line for doc in result.documents] == [1, 2, 3]
    assert [doc.info["Batch"] for doc in result.documents] == ["1", "2", "3"]
    assert len({doc.sha256 for doc in result.documents}) == 1, "the hash is the whole file's"


def test_exported_folder_associates_manifest_test_and_attachment() -> None:
    result = read_artifacts([DATA / "exported"])
    assert result.errors == []
    by_name = {doc.source_name: doc for doc in result.documents}
    assert set(by_name) == {
        "3F2A9C1E-quick.xcevalresult",
        "7B1D0E44-judge.json",
        "unlisted.xcevalresult",
    }
    quick = by_name["3F2A9C1E-quick.xcevalresult"].manifest
    assert quick is not None
    assert quick.test_identifier == "ReplayTests/testQuickSuite()"
    assert quick.attachment_name == "Quick suite replay"
    judge = by_name["7B1D0E44-judge.json"]
    assert judge.manifest is not None
    assert judge.manifest.test_identifier == "ReplayTests/testJudge()"
    assert judge.manifest.attachment_name == "Judge scores"
    assert by_name["unlisted.xcevalresult"].manifest is None


def test_file_named_directly_gets_manifest_beside_it() -> None:
    evaluation = read_evaluation(DATA / "exported" / "3F2A9C1E-quick.xcevalresult")
    assert evaluation.manifest is not None
    assert evaluation.manifest.attachment_name == "Quick suite replay"


def test_judge_artifact_is_recognised_from_evaluator_kind_and_names() -> None:
    judge = read_evaluation(DATA / "exported" / "7B1D0E44-judge.json")
    assert judge.is_judge


def test_manifest_listing_a_missing_file_is_an_error_naming_the_manifest(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text(
        json.dumps(
            [
                {
                    "testIdentifier": "T/test()",
                    "attachments": [{"exportedFileName": "gone.xcevalresult"}],
                }
            ]
        ),
        encoding="utf-8",
    )
    result = read_artifacts([tmp_path])
    assert result.documents == []
    [error] = result.errors
    assert error.path.name == "manifest.json"
    assert "gone.xcevalresult" in str(error) and "[0].attachments[0]" in str(error)


def test_a_file_reached_twice_is_read_once() -> None:
    result = read_artifacts([DATA / "baseline.xcevalresult", DATA / "baseline.xcevalresult"])
    assert len(result.documents) == 1


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "not-json.xcevalresult",
            "not-json.xcevalresult: not JSON (Expecting value at line 1 column 1)",
        ),
        (
            "no-results.xcevalresult",
            'no-results.xcevalresult: no "results" array: not an evaluation result',
        ),
        (
            "bad-input.xcevalresult",
            "bad-input.xcevalresult: results[2].Input: not JSON (Expecting value at line 1 column 1)",
        ),
    ],
)
def test_malformed_artifact_error_names_file_and_place(name: str, expected: str) -> None:
    result = read_artifacts([DATA / "malformed" / name])
    assert result.documents == []
    [error] = result.errors
    assert error.path.name == name
    assert str(error).endswith(expected)


def test_malformed_json_lines_report_line_numbers_and_keep_good_lines() -> None:
    result = read_artifacts([DATA / "malformed" / "mixed.jsonl"])
    assert [doc.line for doc in result.documents] == [1, 5]
    assert [(error.line, error.message) for error in result.errors] == [
        (3, 'no "results" array: not an evaluation result'),
        (4, "not JSON (Expecting property name enclosed in double quotes at line 1 column 2)"),
    ]
    assert str(result.errors[0]).endswith(
        'mixed.jsonl line 3: no "results" array: not an evaluation result'
    )


def test_bad_files_do_not_stop_the_batch() -> None:
    result = read_artifacts([DATA / "malformed", DATA / "baseline.xcevalresult"])
    names = sorted(doc.location.rsplit("/", 1)[-1] for doc in result.documents)
    assert names == [
        "baseline.xcevalresult",
        "good.xcevalresult",
        "mixed.jsonl line 1",
        "mixed.jsonl line 5",
    ]
    assert sorted(error.path.name for error in result.errors) == [
        "bad-input.xcevalresult",
        "mixed.jsonl",
        "mixed.jsonl",
        "no-results.xcevalresult",
        "not-json.xcevalresult",
        "truncated.xcevalresult",
    ]


def test_missing_path_is_an_error_not_a_crash(tmp_path: Path) -> None:
    result = read_artifacts([tmp_path / "absent.xcevalresult"])
    assert result.documents == []
    assert result.errors[0].message == "no such file or folder"


def test_read_evaluation_raises_for_a_file_holding_several_results() -> None:
    with pytest.raises(ArtifactError, match="holds 3 evaluation results"):
        read_evaluation(DATA / "batch.jsonl")
