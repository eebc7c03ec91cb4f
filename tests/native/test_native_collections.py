from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from native_data import DATA

from fmbench.native.cli import native
from fmbench.native.errors import ArtifactError
from fmbench.native.result_sets import convert, list_results
from fmbench.native.validation import validate_paths


def _run(*args: object):
    return CliRunner().invoke(native, [str(arg) for arg in args])


def test_validate_is_lenient_about_unknown_fields_and_names_them_as_notes() -> None:
    report = validate_paths([DATA / "baseline.xcevalresult"])
    assert report.ok
    assert [(f.severity, f.where, f.message) for f in report.findings] == [
        ("note", "futureField", "unknown top-level key"),
        ("note", "results[0].Notes", "unknown column (not a metric)"),
    ]
    result = _run("validate", DATA / "baseline.xcevalresult")
    assert result.exit_code == 0, result.output
    assert "note: " in result.output and "baseline.xcevalresult: futureField: unknown top-level key" in result.output
    assert "1 documents checked, 0 errors, 2 notes" in result.output


def test_validate_strict_makes_unknown_fields_errors_and_exits_1() -> None:
    result = _run("validate", DATA / "baseline.xcevalresult", "--strict")
    assert result.exit_code == 1
    assert "error: " in result.stderr
    assert "baseline.xcevalresult: results[0].Notes: unknown column (not a metric)" in result.stderr


def test_validate_names_each_bad_file_and_place_and_reads_the_rest() -> None:
    result = _run("validate", DATA / "malformed", "--json")
    assert result.exit_code == 1
    body = json.loads(result.output)
    errors = {(Path(f["file"]).name, f["line"], f["where"]) for f in body["findings"] if f["severity"] == "error"}
    assert errors == {
        ("bad-input.xcevalresult", None, "results[2].Input"),
        ("mixed.jsonl", 3, None),
        ("mixed.jsonl", 4, None),
        ("no-results.xcevalresult", None, None),
        ("not-json.xcevalresult", None, None),
        ("truncated.xcevalresult", None, None),
    }
    assert body["documents"] == 6, "every document that is JSON was checked"


def test_validate_names_an_unknown_metric_kind_as_a_note(tmp_path: Path) -> None:
    data = json.loads((DATA / "structured.xcevalresult").read_text(encoding="utf-8"))
    data["results"][0]["Accuracy"]["kind"] = "partial"
    path = tmp_path / "future.xcevalresult"
    path.write_text(json.dumps(data), encoding="utf-8")
    [finding] = validate_paths([path]).findings
    assert (finding.severity, finding.where, finding.message) == (
        "note",
        "results[0].Accuracy",
        "unknown metric kind 'partial'",
    )


def test_list_walks_a_folder_with_its_manifest() -> None:
    listing = list_results(DATA / "exported")
    assert listing.errors == []
    rows = sorted((Path(r.source).name, r.result_id, r.row_count, r.test_identifier) for r in listing.results)
    assert rows == [
        ("3F2A9C1E-quick.xcevalresult", "21111111-1111-4111-8111-111111111111", 4, "ReplayTests/testQuickSuite()"),
        ("7B1D0E44-judge.json", "65555555-5555-4555-8555-555555555555", 1, "ReplayTests/testJudge()"),
        ("unlisted.xcevalresult", "22222222-2222-4222-8222-222222222222", 4, None),
    ]


def test_list_cli_shows_ids_times_and_row_counts_of_a_collection() -> None:
    result = _run("list", DATA / "batch.jsonl", "--json")
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert [(r["line"], r["rowCount"]) for r in body["results"]] == [(1, 4), (2, 4), (3, 4)]
    assert body["results"][0]["startTime"] == "2026-06-12T08:37:34Z"
    text = _run("list", DATA / "batch.jsonl").output
    assert "batch.jsonl line 2" in text and "43333333-3333-4333-8333-333333333330" in text


def test_list_of_a_batch_with_bad_files_lists_the_good_and_fails() -> None:
    result = _run("list", DATA / "malformed")
    assert result.exit_code == 1
    assert "good.xcevalresult" in result.stdout
    assert "truncated.xcevalresult: not JSON" in result.stderr


def _documents(path: Path) -> list[dict]:
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [json.loads(path.read_text(encoding="utf-8"))]


def test_collection_to_folder_and_back_is_equal_as_json(tmp_path: Path) -> None:
    folder = tmp_path / "split"
    result = _run("convert", DATA / "batch.jsonl", folder)
    assert result.exit_code == 0, result.output
    originals = _documents(DATA / "batch.jsonl")
    names = sorted(p.name for p in folder.iterdir())
    assert names == sorted(f"{doc['resultID']}.xcevalresult" for doc in originals)
    joined = tmp_path / "joined.jsonl"
    assert _run("convert", folder, joined).exit_code == 0
    assert sorted(_documents(joined), key=lambda d: d["resultID"]) == sorted(originals, key=lambda d: d["resultID"])


def test_document_to_jsonl_and_back_is_equal_as_json(tmp_path: Path) -> None:
    lines = tmp_path / "one.jsonl"
    convert(DATA / "structured.xcevalresult", lines)
    assert len(lines.read_text(encoding="utf-8").splitlines()) == 1
    back = tmp_path / "back.xcevalresult"
    convert(lines, back)
    assert _documents(back) == _documents(DATA / "structured.xcevalresult")


def test_convert_refuses_several_results_into_one_document_and_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "one.xcevalresult"
    result = _run("convert", DATA / "batch.jsonl", target)
    assert result.exit_code == 1
    assert "batch.jsonl: holds 3 results" in result.output
    assert not target.exists()


def test_convert_of_a_bad_source_names_the_place_and_writes_nothing(tmp_path: Path) -> None:
    source = tmp_path / "in"
    source.mkdir()
    shutil.copy(DATA / "baseline.xcevalresult", source)
    shutil.copy(DATA / "malformed" / "bad-input.xcevalresult", source)
    with pytest.raises(ArtifactError, match=r"bad-input.xcevalresult: results\[2\].Input: not JSON"):
        convert(source, tmp_path / "out.jsonl")
    assert not (tmp_path / "out.jsonl").exists()
