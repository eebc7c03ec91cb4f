"""The questions the device and scenario pages ask of the database, one query each."""

from __future__ import annotations

from typing import Any

import duckdb

from fmbench.views.common import RUN_COLUMNS, rows
from fmbench.views.filters import Filters


def devices(con: duckdb.DuckDBPyConnection, filters: Filters) -> list[dict[str, Any]]:
    """Per device key (hardware model, else name) among the matching runs: its name, systems, OS builds, runs,
    publishable runs and newest run, by name."""
    where, params = filters.where()
    return rows(
        con,
        "SELECT coalesce(r.hardware_model, r.device_name) AS key, min(r.device_name) AS name, "
        "string_agg(DISTINCT r.system_name, ', ') AS systems, "
        "string_agg(DISTINCT coalesce(r.os_build, 'not recorded'), ', ' ORDER BY coalesce(r.os_build, 'not recorded')) AS builds, "
        "count(*) AS runs, max(r.started_at) AS latest, "
        "count(*) FILTER (WHERE r.verdict = 'publishable') AS publishable "
        f"FROM runs r WHERE {where} GROUP BY 1 ORDER BY 2, 1",
        params,
    )


def device_keys(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every device key (hardware model, else name), sorted."""
    return [k for (k,) in con.execute("SELECT DISTINCT coalesce(hardware_model, device_name) FROM runs ORDER BY 1").fetchall()]


DEVICE_SCOPE = "coalesce(r.hardware_model, r.device_name) = ?"
"""The SQL condition (one bound parameter: the device key) that limits runs to one device."""


def device_runs(con: duckdb.DuckDBPyConnection, key: str, filters: Filters) -> list[dict[str, Any]]:
    """The matching runs of one device key, newest first."""
    where, params = filters.where()
    return rows(
        con,
        f"SELECT {RUN_COLUMNS} FROM runs r WHERE {DEVICE_SCOPE} AND {where} "
        "ORDER BY r.started_at DESC, r.run_id",
        [key, *params],
    )


def figures_by_run(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Run id -> its scenario figures, in the file's order."""
    out: dict[str, list[dict[str, Any]]] = {}
    if not run_ids:
        return out
    for f in rows(
        con, "SELECT * FROM scenario_figures WHERE list_contains(?, run_id) ORDER BY run_id, ordinal", [run_ids]
    ):
        out.setdefault(f["run_id"], []).append(f)
    return out


def scenario_totals(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Per scenario id: its title, category, and how many runs, devices, OS builds and trials measured it."""
    return rows(
        con,
        "SELECT f.scenario_id, min(f.title) AS title, min(f.category) AS category, "
        "count(DISTINCT f.run_id) AS runs, count(DISTINCT coalesce(r.hardware_model, r.device_name)) AS devices, "
        "count(DISTINCT r.os_build) AS builds, sum(f.trial_count) AS trials "
        "FROM scenario_figures f JOIN runs r USING (run_id) GROUP BY 1 ORDER BY 1",
    )


def run_ids(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every run id, in the database's order."""
    return [run_id for (run_id,) in con.execute("SELECT run_id FROM runs").fetchall()]


def scenario_ids(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every scenario id some run measured, sorted."""
    return [s for (s,) in con.execute("SELECT DISTINCT scenario_id FROM scenario_figures ORDER BY 1").fetchall()]


def scenario_runs(con: duckdb.DuckDBPyConnection, scenario_id: str, filters: Filters) -> list[dict[str, Any]]:
    """The matching runs that are not invalid with their figures for one scenario, by device and start."""
    where, params = filters.where()
    return rows(
        con,
        f"SELECT {RUN_COLUMNS}, f.* EXCLUDE (run_id) FROM scenario_figures f JOIN runs r USING (run_id) "
        f"WHERE f.scenario_id = ? AND r.verdict <> 'invalid' AND {where} "
        "ORDER BY r.device_name, r.started_at, r.run_id",
        [scenario_id, *params],
    )


def invalid_scenario_runs(con: duckdb.DuckDBPyConnection, scenario_id: str) -> int:
    """How many invalid runs measured the scenario (left out of its page)."""
    row = con.execute(
        "SELECT count(*) FROM scenario_figures f JOIN runs r USING (run_id) WHERE f.scenario_id = ? AND r.verdict = 'invalid'",
        [scenario_id],
    ).fetchone()
    return int(row[0]) if row else 0
