"""A type read from a database row takes each value by its column's name: a reordered ``SELECT`` (or a field
moved in the type) cannot put one column's value in another field."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path

import duckdb
import pytest

from fmbench.analysis.revisions import fixtures_registry
from fmbench.comparison import selection
from fmbench.ingest import ingest_paths
from fmbench.storage.db import connect
from fmbench.storage.queries import RunListing, list_runs, named_rows
from fmbench.views.inputs import RunIndex

from testdata import FIXTURES

NAMES = (
    "iphone-17-pro-ios27-24a5256a-on-device-performance-2026-10-29.json",
    "iphone-17-pro-ios27-24a5264n-on-device-performance-2026-11-03.json",
)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rows") / "two.duckdb"
    assert ingest_paths([FIXTURES / name for name in NAMES], path, registry=fixtures_registry()).ok
    return path


@pytest.fixture
def con(db: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    with connect(db, read_only=True) as connection:
        yield connection


def test_run_info_is_the_same_whatever_order_the_select_lists_its_columns_in(
    con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    as_declared = selection.fetch_runs(con, "TRUE", [])
    assert len(as_declared) == 2
    monkeypatch.setattr(selection, "_RUN_COLUMNS", tuple(reversed(selection._RUN_COLUMNS)))
    assert selection.fetch_runs(con, "TRUE", []) == as_declared
    # Each field holds its own column, not its neighbour's.
    for run in as_declared:
        row = con.execute(
            "SELECT run_id, file_name, started_at, ended_at, os_build, suite, warmup_count, repetitions FROM runs "
            "WHERE run_id = ?", [run.run_id],
        ).fetchone()
        assert row == (run.run_id, run.file_name, run.started_at, run.ended_at, run.os_build, run.suite,
                       run.warmup_count, run.repetitions)
        assert run.file_name in NAMES and run.os_build in ("24A5256a", "24A5264n")


def test_a_run_listing_takes_its_columns_by_name(db: Path, con: duckdb.DuckDBPyConnection) -> None:
    listed = list_runs(db)
    reversed_columns = ", ".join(reversed([f.name for f in fields(RunListing)]))
    rows = named_rows(con.execute(f"SELECT {reversed_columns} FROM runs ORDER BY started_at, run_id"))
    assert [RunListing(**row) for row in rows] == listed
    assert [r.file_name for r in listed] == list(NAMES)


def test_a_query_naming_a_column_twice_is_refused_rather_than_one_value_dropped(
    con: duckdb.DuckDBPyConnection,
) -> None:
    with pytest.raises(ValueError, match="names a column twice"):
        named_rows(con.execute("SELECT run_id, file_name AS run_id FROM runs"))


def test_the_run_index_reads_each_fact_from_its_own_column(con: duckdb.DuckDBPyConnection) -> None:
    index = RunIndex.read(con)
    for run_id, facts in index.runs.items():
        hardware, name, build, route, verdict, started, ingested = con.execute(
            "SELECT hardware_model, device_name, os_build, route, verdict, started_at, ingested_at FROM runs "
            "WHERE run_id = ?", [run_id],
        ).fetchone()
        assert (facts.run_id, facts.hardware_model, facts.device, facts.os_build, facts.route, facts.verdict) == (
            run_id, hardware, hardware or name, build, route, verdict)
        assert (facts.started_at, facts.ingested_at) == (started, ingested)
