"""Evaluations artifacts in the database: ingest, idempotence, linking and agreement."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from native_data import DATA

from fmbench.ingest import ingest_paths, writable
from fmbench.native import write_replay
from fmbench.native.cli import native
from fmbench.native.linking import RunReplay, relink, replay_for_run
from fmbench.native.store import ingest_artifacts
from fmbench.storage.db import connect

RUNS = Path(__file__).resolve().parents[1] / "data" / "runs"
PURPOSE = RUNS / "purpose-current.json"
EDITED = RUNS / "purpose-hand-edited.json"
P = "FoundationModelsBench "
PROMPT_PASS = P + "Prompt Pass"
CONSTRAINT = P + "Constraint Score"
SUMMARY_TABLES = ("evaluations", "evaluation_rows", "evaluation_metric_values")


def _count(db: Path, table: str) -> int:
    with connect(db, read_only=True) as con:
        row = con.execute(f"SELECT count(*) FROM {table}").fetchone()
    return int(row[0]) if row else 0


def _run_id(db: Path, file_name: str = PURPOSE.name) -> str:
    with connect(db, read_only=True) as con:
        row = con.execute("SELECT run_id FROM runs WHERE file_name = ?", [file_name]).fetchone()
    assert row is not None
    return str(row[0])


def _replay(db: Path, run_id: str) -> RunReplay:
    with connect(db, read_only=True) as con:
        found = replay_for_run(con, run_id)
    assert found is not None
    return found


def _edited_replay(tmp_path: Path, edit: Any, name: str = "planted.xcevalresult") -> Path:
    """The replay of the purpose run, changed by ``edit(document)`` and written as ``name``."""
    document = json.loads(write_replay(PURPOSE, tmp_path / "replay").read_text(encoding="utf-8"))
    edit(document)
    target = tmp_path / "edited" / name
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps(document, indent=2, sort_keys=True), encoding="utf-8")
    return target


@pytest.mark.parametrize("artifact_first", [True, False], ids=["artifact-first", "run-first"])
def test_rows_link_to_their_trials_in_either_order(
    tmp_path: Path, db_path: Path, artifact_first: bool
) -> None:
    artifact = write_replay(PURPOSE, tmp_path / "replay")
    if artifact_first:
        outcome = ingest_artifacts([artifact], db_path).outcomes[0]
        assert (outcome.status, outcome.row_count, outcome.linked_row_count) == ("ingested", 11, 0)
        ingest_paths([PURPOSE], db_path)
    else:
        ingest_paths([PURPOSE], db_path)
        outcome = ingest_artifacts([artifact], db_path).outcomes[0]
        assert (outcome.status, outcome.linked_row_count) == ("ingested", 11)
    run_id = _run_id(db_path)
    with connect(db_path, read_only=True) as con:
        links = con.execute(
            "SELECT r.record_id, r.linked_run_id, r.linked_owner, "
            "coalesce(t.trial_id, f.failure_id) FROM evaluation_rows AS r "
            "LEFT JOIN trials AS t ON r.linked_owner = 'trial' "
            "  AND t.run_id = r.linked_run_id AND t.ordinal = r.linked_ordinal "
            "LEFT JOIN failures AS f ON r.linked_owner = 'failure' "
            "  AND f.run_id = r.linked_run_id AND f.ordinal = r.linked_ordinal "
            "ORDER BY r.row_index"
        ).fetchall()
    assert len(links) == 11, "10 trials and 1 measured failure; the warmup failure is not replayed"
    assert all(run == run_id and record == linked for record, run, _, linked in links)
    assert [owner for *_, owner, _ in links].count("failure") == 1
    assert links[-1][0] == "F-1"


def test_reingesting_the_same_bytes_adds_nothing_and_keeps_them(
    tmp_path: Path, db_path: Path
) -> None:
    artifact = write_replay(PURPOSE, tmp_path / "replay")
    ingest_artifacts([artifact], db_path)
    before = {table: _count(db_path, table) for table in SUMMARY_TABLES}
    copy = tmp_path / "copy" / "renamed.xcevalresult"
    copy.parent.mkdir()
    shutil.copy(artifact, copy)
    report = ingest_artifacts([artifact, copy], db_path)
    assert [o.status for o in report.outcomes] == ["duplicate", "duplicate"]
    assert report.ok
    assert {table: _count(db_path, table) for table in SUMMARY_TABLES} == before
    with connect(db_path, read_only=True) as con:
        stored = con.execute("SELECT content, file_name, line FROM evaluations").fetchone()
    assert stored is not None
    assert bytes(stored[0]) == artifact.read_bytes()
    assert stored[1:] == (artifact.name, None), "the file name only, never its folder"


def test_a_bad_artifact_is_reported_and_the_others_land(tmp_path: Path, db_path: Path) -> None:
    batch = tmp_path / "batch"
    batch.mkdir()
    shutil.copy(DATA / "malformed" / "bad-input.xcevalresult", batch)
    shutil.copy(DATA / "malformed" / "mixed.jsonl", batch)
    write_replay(PURPOSE, batch)
    report = ingest_artifacts([batch], db_path)
    by_place = {o.location: o for o in report.outcomes}
    assert {place: o.status for place, o in by_place.items()} == {
        "bad-input.xcevalresult": "error",
        "mixed.jsonl line 1": "ingested",
        "mixed.jsonl line 3": "error",
        "mixed.jsonl line 4": "error",
        "mixed.jsonl line 5": "ingested",
        "purpose-current.xcevalresult": "ingested",
    }
    message = by_place["bad-input.xcevalresult"].message
    assert "bad-input.xcevalresult: results[2].Input: not JSON" in message
    assert message.endswith("fix or remove it and ingest it again")
    assert "mixed.jsonl line 3: " in by_place["mixed.jsonl line 3"].message
    assert not report.ok
    assert _count(db_path, "evaluations") == 3
    with connect(db_path, read_only=True) as con:
        keys = con.execute(
            "SELECT evaluation_key, sha256, line, content FROM evaluations "
            "WHERE file_name = 'mixed.jsonl' ORDER BY line"
        ).fetchall()
    lines = (batch / "mixed.jsonl").read_text(encoding="utf-8").split("\n")
    assert [(key, line) for key, _, line, _ in keys] == [
        (f"{keys[0][1]}:1", 1),
        (f"{keys[0][1]}:5", 5),
    ]
    assert [bytes(content).decode() for *_, content in keys] == [lines[0], lines[4]]


def test_a_replay_of_the_purpose_run_agrees_with_fmbench_on_every_trial(
    tmp_path: Path, db_path: Path
) -> None:
    ingest_paths([PURPOSE], db_path)
    ingest_artifacts([write_replay(PURPOSE, tmp_path / "replay")], db_path)
    run_id = _run_id(db_path)
    replay = _replay(db_path, run_id)
    assert replay.disagreements == ()
    assert replay.unlinked_row_count == 0
    [artifact] = replay.artifacts
    assert (artifact.linked_row_count, artifact.source_matches_run, artifact.is_judge) == (
        11,
        True,
        False,
    )
    with connect(db_path, read_only=True) as con:
        trials = con.execute(
            "SELECT trial_id, check_count, prompt_pass, constraint_score FROM trials "
            "WHERE run_id = ?",
            [run_id],
        ).fetchall()
    agreements = {a.record_id: a for a in replay.agreements if a.owner == "trial"}
    assert set(agreements) == {trial_id for trial_id, *_ in trials}
    for trial_id, checks, passed, score in trials:
        agreement = agreements[trial_id]
        prompt_pass, constraint = agreement.figure(PROMPT_PASS), agreement.figure(CONSTRAINT)
        assert prompt_pass is not None and constraint is not None
        assert prompt_pass.agrees and constraint.agrees and agreement.agrees
        assert prompt_pass.replay is passed, "a trial without checks fails its prompt pass in both"
        if checks:
            assert constraint.replay == pytest.approx(score)
        else:
            assert (prompt_pass.replay_kind, constraint.replay_kind) == ("fail", "ignore")
            assert score is None
    [failure] = [a for a in replay.agreements if a.owner == "failure"]
    execution = failure.figure("Execution Success")
    assert execution is not None and execution.replay is False and execution.fmbench is False


def _plant_prompt_pass_failure(document: dict[str, Any]) -> None:
    row = document["results"][0]
    row[PROMPT_PASS] = {
        "evaluatorKind": "custom",
        "kind": "fail",
        "value": False,
        "rationale": "planted: the reminder has no time",
    }


def test_a_planted_disagreement_is_reported(tmp_path: Path, db_path: Path) -> None:
    ingest_paths([PURPOSE], db_path)
    ingest_artifacts([_edited_replay(tmp_path, _plant_prompt_pass_failure)], db_path)
    replay = _replay(db_path, _run_id(db_path))
    [disagreement] = replay.disagreements
    assert disagreement.message == (
        "row 0 (trial 00000000…): replay says Prompt Pass fails "
        "(planted: the reminder has no time); fmbench's recomputation passes it"
    )
    assert (disagreement.metric, disagreement.replay, disagreement.fmbench) == (
        PROMPT_PASS,
        False,
        True,
    )
    flagged = [a for a in replay.agreements if not a.agrees]
    assert [(a.row_index, a.record_id) for a in flagged] == [
        (0, "00000000-0000-4000-8000-000000000001")
    ]


def test_ignore_rows_stay_out_of_aggregates(tmp_path: Path, db_path: Path) -> None:
    ingest_paths([PURPOSE], db_path)
    ingest_artifacts([write_replay(PURPOSE, tmp_path / "replay")], db_path)
    with connect(db_path, read_only=True) as con:
        kinds = con.execute(
            "SELECT kind, count(*), count(aggregate_value), count(value_bool), avg(aggregate_value) "
            "FROM evaluation_metric_values WHERE metric = ? GROUP BY kind ORDER BY kind",
            [PROMPT_PASS],
        ).fetchall()
        mean = con.execute(
            "SELECT avg(aggregate_value) FROM evaluation_metric_values WHERE metric = ?",
            [PROMPT_PASS],
        ).fetchone()
    assert kinds == [("fail", 7, 7, 7, 0.0), ("ignore", 1, 0, 0, None), ("pass", 3, 3, 3, 1.0)]
    assert mean == (0.3,), "3 passes and 7 fails; the ignored failure row is not a zero"
    [artifact] = _replay(db_path, _run_id(db_path)).artifacts
    profile = {p.name: p for p in artifact.profiles}[PROMPT_PASS]
    assert (profile.count, profile.ignored, profile.passed, profile.failed) == (11, 1, 3, 7)
    assert profile.pass_rate == 0.3, "3 passes and 7 fails; the ignored failure row is not a zero"
    assert (profile.numeric_count, profile.mean) == (0, None), "a pass/fail value is not numeric"


def test_the_named_source_run_wins_when_ids_repeat_across_runs(
    tmp_path: Path, db_path: Path
) -> None:
    ingest_paths([PURPOSE, EDITED], db_path)
    ingest_artifacts([write_replay(EDITED, tmp_path / "replay")], db_path)
    edited = _run_id(db_path, EDITED.name)
    with connect(db_path, read_only=True) as con:
        assert replay_for_run(con, _run_id(db_path)) is None
    assert _replay(db_path, edited).artifacts[0].linked_row_count == 11


def test_an_id_shared_by_two_runs_without_a_source_stays_unlinked(
    tmp_path: Path, db_path: Path
) -> None:
    def forget_source(document: dict[str, Any]) -> None:
        del document["evaluationInfo"]["Source SHA-256"]

    ingest_paths([PURPOSE], db_path)
    ingest_artifacts([_edited_replay(tmp_path, forget_source)], db_path)
    assert _replay(db_path, _run_id(db_path)).artifacts[0].linked_row_count == 11
    ingest_paths([EDITED], db_path)  # the same trial ids: the links become ambiguous
    with connect(db_path, read_only=True) as con:
        linked = con.execute("SELECT count(linked_run_id) FROM evaluation_rows").fetchone()
        assert replay_for_run(con, _run_id(db_path)) is None
    assert linked == (0,)


def test_relink_changes_nothing_when_links_are_current(tmp_path: Path, db_path: Path) -> None:
    ingest_paths([PURPOSE], db_path)
    ingest_artifacts([write_replay(PURPOSE, tmp_path / "replay")], db_path)
    with writable(db_path) as con:
        assert relink(con) == 0
        con.execute("UPDATE evaluation_rows SET linked_run_id = NULL WHERE row_index = 3")
        assert relink(con) == 1


def test_a_model_judge_artifact_is_secondary_and_never_compared(
    tmp_path: Path, db_path: Path
) -> None:
    def judge(document: dict[str, Any]) -> None:
        rows = []
        for row in document["results"][:3]:
            rows.append(
                {
                    "Input": row["Input"],
                    "Response": row["Response"],
                    "Helpfulness": {"evaluatorKind": "modelJudge", "kind": "score", "value": 4},
                }
            )
        document["results"] = rows
        document["summary"] = [
            {"Helpfulness": {"operation": {"metric": "Helpfulness", "type": "mean"}, "value": 4}}
        ]

    ingest_paths([PURPOSE], db_path)
    ingest_artifacts(
        [write_replay(PURPOSE, tmp_path / "replay"), _edited_replay(tmp_path, judge, "judge.json")],
        db_path,
    )
    replay = _replay(db_path, _run_id(db_path))
    assert [(a.file_name, a.is_judge, a.evidence) for a in replay.artifacts] == [
        ("purpose-current.xcevalresult", False, "primary"),
        ("judge.json", True, "secondary"),
    ]
    assert replay.judge[0].linked_row_count == 3
    assert {a.file_name for a in replay.agreements} == {"purpose-current.xcevalresult"}
    assert replay.judge[0].profiles[0].mean == 4.0


def test_cli_ingest_prints_a_table_and_exits_1_when_a_document_errored(
    tmp_path: Path, db_path: Path
) -> None:
    artifact = write_replay(PURPOSE, tmp_path / "replay")
    result = CliRunner().invoke(
        native,
        [
            "ingest",
            str(artifact),
            str(DATA / "malformed" / "not-json.xcevalresult"),
            "--db",
            str(db_path),
        ],
    )
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["status", "document", "kind", "rows", "linked", "detail"]
    assert any(line.startswith("error") and "not-json.xcevalresult" in line for line in lines)
    assert any(line.startswith("ingested") and "deterministic  11" in line for line in lines)
    assert lines[-1] == "1 ingested, 0 skipped as duplicates, 1 errored"

    again = CliRunner().invoke(native, ["ingest", str(artifact), "--db", str(db_path)])
    assert again.exit_code == 0, again.output
    assert again.output.splitlines()[-1] == "0 ingested, 1 skipped as duplicates, 0 errored"


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _fixture_corpus() -> tuple[Path, Path]:
    from fmbench.fixtures.make_replays import RUN_NAME

    run, replays = FIXTURES / "runs" / RUN_NAME, FIXTURES / "replays"
    if not run.is_file() or not replays.is_dir():
        pytest.skip("the fixture corpus or its replays are not generated yet")
    return run, replays


def test_the_fixture_replays_are_current() -> None:
    from fmbench.fixtures.make_replays import main

    _fixture_corpus()
    assert main(["--check"]) == 0, "run python fixtures/make_replays.py"


def test_the_fixture_replays_link_to_their_run_with_one_planted_disagreement(
    db_path: Path,
) -> None:
    run, replays = _fixture_corpus()
    assert ingest_artifacts([replays], db_path).ok
    ingest_paths([run], db_path)
    replay = _replay(db_path, _run_id(db_path, run.name))
    assert [(a.is_judge, a.linked_row_count == a.row_count) for a in replay.artifacts] == [
        (False, True),
        (True, True),
    ]
    [disagreement] = replay.disagreements
    assert disagreement.metric == PROMPT_PASS
    assert (disagreement.replay, disagreement.fmbench) == (False, True)
    assert replay.unlinked_row_count == 0
    judge = replay.judge[0]
    assert {p.name for p in judge.profiles} == {"Helpfulness", "Clarity", "Completeness"}
