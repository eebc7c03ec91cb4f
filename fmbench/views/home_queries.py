"""The questions the home, revisions and data pages ask of the database, one query each."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb

from fmbench.analysis.configuration import GENERATION, GROUPING, LISTING_ORDER, columns
from fmbench.views.common import RUN_COLUMNS, rows
from fmbench.views.filters import Filters


@dataclass(frozen=True)
class RunCounts:
    """What the home page counts over every run."""

    by_verdict: dict[str, int]
    devices: int
    os_builds: int
    measured_trials: int

    @property
    def runs(self) -> int:
        return sum(self.by_verdict.values())


def run_counts(con: duckdb.DuckDBPyConnection) -> RunCounts:
    """Runs by verdict, distinct devices and OS builds, and measured trials, over every run."""
    by_verdict = dict(con.execute("SELECT verdict, count(*) FROM runs GROUP BY 1").fetchall())
    devices, builds, trials = con.execute(
        "SELECT count(DISTINCT coalesce(hardware_model, device_name)), count(DISTINCT os_build), "
        "coalesce(sum(trial_count), 0) FROM runs"
    ).fetchone() or (0, 0, 0)
    return RunCounts(by_verdict, devices, builds, int(trials))


def newest_run_per_configuration(con: duckdb.DuckDBPyConnection, route: str) -> list[dict[str, Any]]:
    """On one route, the newest run that is not invalid per device, OS build and suite."""
    return rows(
        con,
        f"SELECT {RUN_COLUMNS} FROM runs r WHERE r.route = ? AND r.verdict <> 'invalid' "
        "QUALIFY row_number() OVER (PARTITION BY coalesce(r.hardware_model, r.device_name), r.os_build, r.suite "
        "ORDER BY r.started_at DESC, r.run_id) = 1 "
        "ORDER BY r.device_name, r.os_generation, r.os_build, r.suite, r.run_id",
        [route],
    )


def runs_by_revision(con: duckdb.DuckDBPyConnection) -> dict[str | None, list[dict[str, Any]]]:
    """Revision id (``None``: cannot be determined) -> its runs, newest first."""
    out: dict[str | None, list[dict[str, Any]]] = {}
    for r in rows(con, f"SELECT {RUN_COLUMNS} FROM runs r ORDER BY r.started_at DESC, r.run_id"):
        out.setdefault(r["revision_id"], []).append(r)
    return out


def data_runs(con: duckdb.DuckDBPyConnection, filters: Filters) -> list[dict[str, Any]]:
    """The runs matching the filters, newest first, with their files' SHA-256."""
    where, params = filters.where()
    return rows(
        con,
        f"SELECT {RUN_COLUMNS}, r.source_sha256 FROM runs r WHERE {where} ORDER BY r.started_at DESC, r.run_id",
        params,
    )


def has_tables(con: duckdb.DuckDBPyConnection, *names: str) -> bool:
    """Whether the database holds every one of these tables (a database that was never migrated, or a dataset
    exported without its derived tables, may not)."""
    found = con.execute(
        "SELECT count(DISTINCT table_name) FROM information_schema.tables WHERE list_contains(?, table_name)",
        [list(names)],
    ).fetchone()
    return bool(found and found[0] == len(set(names)))


def newest_run_per_device_configuration(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Per device, the newest run that is not invalid of each configuration (:data:`GROUPING` and the file
    generation), whatever its OS build and verdict, by device name and configuration: never by a figure."""
    return rows(
        con,
        f"SELECT {RUN_COLUMNS} FROM runs r WHERE r.verdict <> 'invalid' "
        "QUALIFY row_number() OVER (PARTITION BY coalesce(r.hardware_model, r.device_name), "
        f"{columns((*GROUPING, GENERATION), 'r.')} ORDER BY r.started_at DESC, r.run_id) = 1 "
        f"ORDER BY r.device_name, coalesce(r.hardware_model, r.device_name), {columns(LISTING_ORDER, 'r.')}, "
        "r.generation, r.run_id",
    )


def runs_by_id(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> dict[str, dict[str, Any]]:
    """The rows of the runs given, by run id."""
    if not run_ids:
        return {}
    marks = ", ".join("?" for _ in run_ids)
    return {r["run_id"]: r for r in rows(con, f"SELECT {RUN_COLUMNS} FROM runs r WHERE r.run_id IN ({marks})", run_ids)}
