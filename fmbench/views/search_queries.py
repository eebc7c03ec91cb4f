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
    """Every scenario some run measured, with a title and category (chosen as the scenarios page chooses them),
    every title a run gave it (``titles``: an older name finds it too) and its run count."""
    return rows(
        con,
        "SELECT scenario_id, min(title) AS title, list(DISTINCT title ORDER BY title) AS titles, "
        "min(category) AS category, count(DISTINCT run_id) AS run_count "
        "FROM scenario_figures GROUP BY scenario_id ORDER BY scenario_id",
    )


def search_samples(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Every sample some run measured, per scenario: its trials and runs, and the newest run that measured it
    (``newest_run``: by start time, then run id)."""
    return rows(
        con,
        "SELECT t.scenario_id, t.sample_id, count(*) AS trials, count(DISTINCT t.run_id) AS runs, "
        "arg_max(t.run_id, strftime(r.started_at, '%Y-%m-%dT%H:%M:%S.%f') || t.run_id) AS newest_run "
        "FROM trials t JOIN runs r ON r.run_id = t.run_id "
        "GROUP BY t.scenario_id, t.sample_id ORDER BY t.scenario_id, t.sample_id",
    )
