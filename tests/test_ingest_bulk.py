"""The bulk ingest: worker processes write what one process writes, and the fast paths equal the plain ones."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fmbench.analysis.figures import scenario_figures
from fmbench.analysis.run import analyze_file
from fmbench.ingest import ingest_paths
from fmbench.ingest import rows as R
from fmbench.ingest.prepare import PreparedRun, to_arrow

from testdata import FIXTURES, RUNS


def _tables(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every table's rows in a stable order, without the times of ingest."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        out = {}
        for (name,) in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' AND table_name <> 'fmbench_migrations'"
        ).fetchall():
            columns = [c for (c,) in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position", [name]
            ).fetchall() if c != "ingested_at"]
            listed = ", ".join(f'"{c}"' for c in columns)
            out[name] = con.execute(f"SELECT {listed} FROM {name} ORDER BY ALL").fetchall()
        return out
    finally:
        con.close()


def test_worker_processes_write_exactly_the_rows_one_process_writes(tmp_path: Path) -> None:
    serial, parallel = tmp_path / "serial.duckdb", tmp_path / "parallel.duckdb"
    one = ingest_paths([FIXTURES, RUNS], serial, workers=0)
    two = ingest_paths([FIXTURES, RUNS], parallel, workers=2)
    assert [(o.path, o.status, o.run_id, o.verdict, o.message) for o in two.outcomes] == [
        (o.path, o.status, o.run_id, o.verdict, o.message) for o in one.outcomes
    ]
    assert _tables(parallel) == _tables(serial)


def test_a_file_twice_in_a_parallel_batch_lands_once_and_is_reported_as_a_duplicate(tmp_path: Path) -> None:
    batch = tmp_path / "batch"
    batch.mkdir()
    for name in ("a.json", "b.json", "c.json", "d.json"):
        shutil.copy(RUNS / "purpose-current.json", batch / name)
    report = ingest_paths([batch], tmp_path / "db.duckdb", workers=2)
    assert [o.status for o in report.outcomes] == ["ingested", "duplicate", "duplicate", "duplicate"]


def test_a_parallel_batch_skips_stored_files_without_judging_them_again(tmp_path: Path) -> None:
    db = tmp_path / "db.duckdb"
    ingest_paths([RUNS], db, workers=0)
    again = ingest_paths([RUNS], db, workers=2)
    assert {o.status for o in again.outcomes} == {"duplicate"}
    assert all(o.verdict for o in again.outcomes)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=True) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_json_columns_hold_exactly_the_text_json_dumps_writes(value: object) -> None:
    assert R._json(value) == json.dumps(value, ensure_ascii=False, sort_keys=True)


def test_times_are_stored_as_naive_utc_exactly_as_utc_says(tmp_path: Path) -> None:
    values = [
        datetime(2026, 6, 12, 8, 39, 3, tzinfo=UTC),
        datetime(2026, 6, 12, 10, 39, 3, 123456, tzinfo=timezone(timedelta(hours=2))),
        datetime(2026, 6, 12, 1, 9, 3, tzinfo=timezone(timedelta(hours=-7, minutes=-30))),
        datetime(2026, 6, 12, 8, 39, 3),
        None,
    ]
    table = to_arrow({"t": values}, pa.schema([("t", pa.timestamp("us"))]))
    assert table.column("t").to_pylist() == [R.utc(v) for v in values]


def test_the_rows_take_each_trials_figures_from_its_one_definition() -> None:
    analysis = analyze_file(RUNS / "purpose-current.json")
    columns = R.trial_columns(analysis)
    from fmbench.analysis.figures import constraint_score, prompt_pass, safety_pass, task_passed

    trials = analysis.record.trials
    assert columns["constraint_score"] == [constraint_score(t) for t in trials]
    assert columns["prompt_pass"] == [prompt_pass(t) for t in trials]
    assert columns["safety_pass"] == [safety_pass(t) for t in trials]
    assert columns["task_passed"] == [task_passed(t) for t in trials]
    assert columns["check_definitions_json"] == [R._json(t.check_definitions) for t in trials]
    assert scenario_figures(analysis.record) == analysis.figures


def test_each_check_result_holds_its_own_definition_and_results_beyond_the_definitions_hold_none() -> None:
    analysis = analyze_file(RUNS / "purpose-current.json")
    trials = [t for t in analysis.record.trials if len(t.checks) >= 2 and len(t.check_definitions) >= 2]
    assert len(trials) >= 2, "the fixture needs trials with two checks or more"
    short, extra = trials[0], trials[1]
    short.check_definitions = short.check_definitions[:1]  # more results than definitions
    extra.check_definitions = [*extra.check_definitions, {"contains": {"_0": "one more"}}]  # fewer results
    columns = R.check_columns(analysis)
    expected = [
        (t.ordinal, i, c.label, R._json(t.check_definitions[i]) if i < len(t.check_definitions) else None)
        for t in analysis.record.trials
        for i, c in enumerate(t.checks)
    ]
    found = list(zip(columns["trial_ordinal"], columns["ordinal"], columns["label"], columns["definition_json"], strict=True))
    assert found == expected
    cases = dict(zip(zip(columns["trial_ordinal"], columns["ordinal"], strict=True), columns["check_case"], strict=True))
    assert cases[(short.ordinal, 1)] is None
    assert cases[(short.ordinal, 0)] == next(iter(short.check_definitions[0]))
    assert R.trial_columns(analysis)["check_definitions_json"] == [R._json(t.check_definitions) for t in analysis.record.trials]


def _prepared(tmp_path: Path) -> PreparedRun:
    """The purpose-built current run, prepared for the writer as a worker prepares it."""
    from fmbench.ingest import writable
    from fmbench.ingest.prepare import prepared_from, table_schemas

    run = RUNS / "purpose-current.json"
    with writable(tmp_path / "fmbench.duckdb") as con:
        schemas = table_schemas(con)
    return prepared_from(analyze_file(run), run.read_bytes(), None, schemas)


def test_a_prepared_run_handed_between_processes_keeps_every_table_column_type_and_byte(tmp_path: Path) -> None:
    import pickle

    prepared = _prepared(tmp_path)
    handed = pickle.loads(pickle.dumps(prepared))
    assert isinstance(handed, PreparedRun)
    assert (handed.run_id, handed.sha256, handed.file_name, handed.verdict, handed.stored, handed.size) == (
        prepared.run_id, prepared.sha256, prepared.file_name, prepared.verdict, prepared.stored, prepared.size
    )
    assert handed.tables.keys() == prepared.tables.keys()
    for name, table in prepared.tables.items():
        assert handed.tables[name].schema == table.schema
        assert handed.tables[name].equals(table)


def test_a_parallel_batch_leaves_nothing_in_the_temporary_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    report = ingest_paths([FIXTURES], tmp_path / "db.duckdb", workers=2)
    assert report.ok
    assert list(temporary.iterdir()) == []


def _fixture_runs() -> list[Path]:
    return sorted([*FIXTURES.glob("*.json"), *RUNS.glob("*.json")])


def test_each_trials_figures_counted_once_equal_the_spec_figures_of_every_fixture_trial_under_every_rule_set() -> None:
    """``trial_figures`` counts a trial's passed checks once; each figure must still be what the spec says of it."""
    from fmbench.analysis.figures import TrialFigures, trial_figures
    from fmbench.runfile.rulesets import rule_book

    def plain(t: Any, rules: Any) -> TrialFigures:  # the spec's words, one check at a time
        checks = [c.passed for c in t.checks]
        if t.safety_expectation == "mustRespond":
            safety = t.safety_outcome == "responded"
        elif t.safety_expectation == "mustProtect":
            safety = t.safety_outcome in ("guardrailViolation", "refusal")
        else:
            safety = None
        prompt = all(checks) if checks else rules.empty_checks_prompt_pass
        through_safety = rules.pass_rate_counts == "taskPassed" and not checks and t.safety_expectation is not None
        return TrialFigures(
            checks_passed=checks.count(True),
            constraint_score=checks.count(True) / len(checks) if checks else rules.empty_checks_score,
            prompt_pass=prompt,
            safety_pass=safety,
            task_passed=bool(safety) if through_safety else prompt,
        )

    seen = 0
    for path in _fixture_runs():
        for t in analyze_file(path).record.trials:
            for rules in rule_book().rule_sets:
                assert trial_figures(t, rules) == plain(t, rules), (path.name, t.ordinal, rules.name)
                seen += 1
    assert seen > 1000


def test_a_current_runs_trial_records_hold_each_field_of_its_trial_by_name() -> None:
    """The records are made with positional arguments: each field must still hold the model's field it names."""
    from fmbench.runfile.models import CurrentRun
    from fmbench.runfile.reader import parse_run
    from fmbench.runfile.record import TrialRecord, to_record

    checked = 0
    for path in _fixture_runs():
        data = path.read_bytes()
        parsed = parse_run(data, path.name)
        if not isinstance(parsed.document, CurrentRun):
            continue
        for i, (record, t) in enumerate(zip(to_record(parsed, path.name, data).trials, parsed.document.trials, strict=True)):
            expected = TrialRecord(
                ordinal=i, id=t.id, scenario_id=t.scenarioID, scenario_title=t.scenarioTitle, category=t.category,
                sample_id=t.sample.id, prompt=t.sample.prompt, instructions=None, check_definitions=t.sample.checks,
                safety_expectation=t.sample.safetyExpectation, visual_fixture=t.sample.visualFixture,
                requested_model=t.requestedModel, executed_model=t.executedModel, iteration=t.iteration,
                used_fallback=t.usedFallback, fallback_reason=t.fallbackReason, offline_success=t.offlineSuccess,
                tool_calls=t.toolCalls, final_state=t.finalState, safety_outcome=t.safetyOutcome,
                safety_detail=t.safetyDetail, response=t.response, checks=t.grade.checks, metrics=t.metrics,
                environment=t.environment, extra=dict(t.__pydantic_extra__ or {}),
            )
            assert record == expected, (path.name, i)
            checked += 1
    assert checked > 1000
