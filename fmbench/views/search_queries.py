"""The questions the search index asks the database, one query each, for every run at once."""

from __future__ import annotations

from typing import Any

import duckdb

from fmbench.views.common import rows


def search_runs(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Every run with what a reader may search it by, newest first."""
    return rows(
        con,
        "SELECT run_id, file_name, suite, route, device_name, hardware_model, system_name, system_version, "
        "os_build, started_at, verdict FROM runs ORDER BY started_at DESC, run_id",
    )


def search_scenarios(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Every scenario some run measured, with its title and category (from its newest run) and its run count."""
    return rows(
        con,
        "SELECT f.scenario_id, arg_max(f.title, r.started_at) AS title, arg_max(f.category, r.started_at) AS category, "
        "count(DISTINCT f.run_id) AS run_count "
        "FROM scenario_figures f JOIN runs r USING (run_id) GROUP BY f.scenario_id ORDER BY f.scenario_id",
    )
