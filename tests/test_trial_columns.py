"""A run's trials read column by column (through numpy) are the very values ``fetchall`` gives."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import duckdb
import pytest

from fmbench.storage.dataset import open_database
from fmbench.views.trial_details import _TRIAL_SELECT, TRIAL_COLUMNS, trial_columns

from sitebuild import purpose_db


def _fetched(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> dict[str, list[Any]]:
    rows = con.execute(sql, params).fetchall()
    return {name: [r[i] for r in rows] for i, name in enumerate(TRIAL_COLUMNS)}


def _same(a: Any, b: Any) -> bool:
    """The same value of the same type (a NaN is a NaN, -0.0 is not 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return repr(a) == repr(b)
    return bool(a == b)


def _assert_same_columns(got: dict[str, list[Any]], expected: dict[str, list[Any]]) -> None:
    assert list(got) == list(TRIAL_COLUMNS)
    for name in TRIAL_COLUMNS:
        assert len(got[name]) == len(expected[name]), name
        bad = [(a, b) for a, b in zip(got[name], expected[name], strict=True) if not _same(a, b)]
        assert not bad, (name, bad[:3])


@pytest.fixture(scope="module")
def runs_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return purpose_db(tmp_path_factory.mktemp("trial-columns") / "runs.duckdb")


def test_every_runs_trials_read_by_column_are_what_fetchall_gives(runs_db: Path) -> None:
    sql = f"{_TRIAL_SELECT} WHERE run_id = ? ORDER BY ordinal"
    with open_database(runs_db) as con:
        run_ids = [r for (r,) in con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
        assert run_ids
        for run_id in run_ids:
            _assert_same_columns(trial_columns(con, sql, [run_id]), _fetched(con, sql, [run_id]))
        assert trial_columns(con, sql, ["no such run"]) == {name: [] for name in TRIAL_COLUMNS}


def test_nulls_and_edge_values_of_every_column_type_read_by_column_are_what_fetchall_gives(runs_db: Path) -> None:
    con = duckdb.connect()
    con.execute(f"ATTACH '{runs_db}' AS runs (READ_ONLY)")
    con.execute(f"CREATE TABLE trials AS {_TRIAL_SELECT.replace('FROM trials', 'FROM runs.trials')} LIMIT 3")
    con.execute("DETACH runs")
    types = dict(con.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'trials'")
                 .fetchall())
    assert set(types.values()) >= {"BOOLEAN", "INTEGER", "BIGINT", "UBIGINT", "DOUBLE", "VARCHAR", "TIMESTAMP"}
    con.execute(f"INSERT INTO trials VALUES ({', '.join('NULL' for _ in TRIAL_COLUMNS)})")
    edge = {
        "DOUBLE": "'-0.0'::DOUBLE", "UBIGINT": "18446744073709551615", "BIGINT": "-9223372036854775808",
        "INTEGER": "-1", "BOOLEAN": "false", "VARCHAR": "'NUL \x00 <é> \U0001F600'",
        "TIMESTAMP": "TIMESTAMP '1970-01-01 00:00:00.000001'",
    }
    con.execute(f"INSERT INTO trials VALUES ({', '.join(edge[types[name]] for name in TRIAL_COLUMNS)})")
    con.execute(f"INSERT INTO trials VALUES ({', '.join(edge[types[name]].replace('-0.0', 'nan') for name in TRIAL_COLUMNS)})")
    sql = f"{_TRIAL_SELECT} ORDER BY ordinal NULLS FIRST, duration NULLS FIRST"
    got = trial_columns(con, sql, [])
    _assert_same_columns(got, _fetched(con, sql, []))
    durations = got["duration"]
    assert got["trial_id"][0] is None and durations[0] is None
    assert any(isinstance(v, float) and math.isnan(v) for v in durations) and "-0.0" in map(repr, durations)


def test_a_column_of_another_type_is_read_with_fetchall(runs_db: Path) -> None:
    """A time zone's timestamp (numpy would give a naive one) or a decimal (numpy: a float) reads as fetchall gives."""
    con = duckdb.connect()
    con.execute(f"ATTACH '{runs_db}' AS runs (READ_ONLY)")
    con.execute(f"CREATE TABLE trials AS {_TRIAL_SELECT.replace('FROM trials', 'FROM runs.trials')}")
    con.execute("DETACH runs")
    con.execute("ALTER TABLE trials ALTER started_at TYPE TIMESTAMPTZ")
    con.execute("ALTER TABLE trials ALTER constraint_score TYPE DECIMAL(6, 3)")
    sql = f"{_TRIAL_SELECT} ORDER BY trial_id"
    got = trial_columns(con, sql, [])
    _assert_same_columns(got, _fetched(con, sql, []))
    assert any(v is not None and v.tzinfo is not None for v in got["started_at"])
