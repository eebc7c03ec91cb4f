"""The questions the OS build pages ask of the database, one query each."""

from __future__ import annotations

from typing import Any

import duckdb

from fmbench.views.common import RUN_COLUMNS, rows


def build_appearances(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Per OS build and device: the system, when the build was first and last measured on it and how many
    runs, in order of the build's first appearance (ties by build name)."""
    return rows(
        con,
        "SELECT r.os_build, coalesce(r.hardware_model, r.device_name) AS device, min(r.device_name) AS device_name, "
        "min(r.hardware_model) AS hardware_model, min(r.system_name) AS system_name, "
        "min(r.system_version) AS system_version, min(r.os_generation) AS os_generation, "
        "min(r.started_at) AS first_seen, max(r.started_at) AS last_seen, count(*) AS runs, "
        "count(*) FILTER (WHERE r.verdict = 'publishable') AS publishable, "
        "min(min(r.started_at)) OVER (PARTITION BY r.os_build) AS build_first_seen "
        "FROM runs r WHERE r.os_build IS NOT NULL GROUP BY r.os_build, 2 "
        "ORDER BY build_first_seen, r.os_build, first_seen, 2",
    )


def build_runs(con: duckdb.DuckDBPyConnection, os_build: str) -> list[dict[str, Any]]:
    """Every run measured on one OS build, oldest first."""
    return rows(
        con,
        f"SELECT {RUN_COLUMNS} FROM runs r WHERE r.os_build = ? ORDER BY r.started_at, r.run_id",
        [os_build],
    )


def os_builds(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every recorded OS build, sorted."""
    return [b for (b,) in con.execute("SELECT DISTINCT os_build FROM runs WHERE os_build IS NOT NULL ORDER BY 1").fetchall()]
