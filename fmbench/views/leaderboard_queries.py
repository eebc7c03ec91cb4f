"""The questions the leaderboard and coverage pages ask of the database, one query each."""

from __future__ import annotations

from typing import Any

import duckdb

from fmbench.storage.queries import ordered_scenarios
from fmbench.views.common import RUN_COLUMNS, rows


def scenario_rows(con: duckdb.DuckDBPyConnection, scenario_ids: list[str]) -> list[dict[str, Any]]:
    """The runs that are not invalid with their figures of each of the scenarios, by start then run id."""
    if not scenario_ids:
        return []
    return rows(
        con,
        f"SELECT {RUN_COLUMNS}, f.* EXCLUDE (run_id) FROM scenario_figures f JOIN runs r USING (run_id) "
        "WHERE list_contains(?, f.scenario_id) AND r.verdict <> 'invalid' ORDER BY r.started_at, r.run_id, f.ordinal",
        [scenario_ids],
    )


def scenarios(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every scenario some run measured, in the order the scenarios page lists them (the newest run's first)."""
    return ordered_scenarios(con, [r for (r,) in con.execute("SELECT run_id FROM runs").fetchall()])


def ranked_scenarios(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The scenarios with a run that is not invalid (the ones a board can hold), in :func:`scenarios` order."""
    held = {s for (s,) in con.execute(
        "SELECT DISTINCT f.scenario_id FROM scenario_figures f JOIN runs r USING (run_id) WHERE r.verdict <> 'invalid'"
    ).fetchall()}
    return [s for s in scenarios(con) if s in held]


def category_of(con: duckdb.DuckDBPyConnection, scenario_id: str) -> str | None:
    found = con.execute("SELECT min(category) FROM scenario_figures WHERE scenario_id = ?", [scenario_id]).fetchone()
    return found[0] if found else None


def categories(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every category a scenario records, sorted."""
    return [c for (c,) in con.execute(
        "SELECT DISTINCT category FROM scenario_figures WHERE category IS NOT NULL ORDER BY 1").fetchall()]


def scenarios_of_category(con: duckdb.DuckDBPyConnection, category: str) -> list[str]:
    """The category's scenarios, in :func:`scenarios` order."""
    held = {s for (s,) in con.execute(
        "SELECT DISTINCT scenario_id FROM scenario_figures WHERE category = ?", [category]).fetchall()}
    return [s for s in scenarios(con) if s in held]


CATEGORY_PAGE_FROM = 2
"""A category has a leaderboard page of its own from two workloads: a category of one (each of the benchmark's
today) would be its workload's leaderboard again, so links to it go to that board."""


def category_workloads(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Every category's scenarios (in :func:`scenarios` order), by category, sorted: one query for all, where
    :func:`scenarios_of_category` makes one a category (the leaderboards index links each of 30 or more)."""
    held: dict[str, set[str]] = {}
    for category, scenario in con.execute(
        "SELECT DISTINCT category, scenario_id FROM scenario_figures WHERE category IS NOT NULL"
    ).fetchall():
        held.setdefault(category, set()).add(scenario)
    order = scenarios(con)
    return {c: [s for s in order if s in held[c]] for c in sorted(held)}


def paged_categories(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The categories with a page of their own (:data:`CATEGORY_PAGE_FROM` workloads or more), sorted."""
    return [c for c, workloads in category_workloads(con).items() if len(workloads) >= CATEGORY_PAGE_FROM]


def coverage_counts(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Per suite revision, device, platform, OS build and verdict: how many runs, the first run's id and the
    device's name, and when the build was first measured."""
    return rows(
        con,
        "SELECT coalesce(r.revision_id, 'unknown') AS revision, coalesce(r.hardware_model, r.device_name) AS device, "
        "min(r.device_name) AS device_name, r.hardware_model, min(r.system_name) AS system_name, r.os_build, "
        "r.verdict, count(*) AS runs, min(r.run_id) AS run_id, min(r.started_at) AS first_started "
        "FROM runs r GROUP BY ALL ORDER BY revision, device, os_build, verdict",
    )
