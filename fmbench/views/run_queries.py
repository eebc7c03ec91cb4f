"""The questions one run's page asks of the database about that run, one query each."""

from __future__ import annotations

from typing import Any

import duckdb

from fmbench.views.common import one, rows


def run(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, Any]:
    """Every stored column of the run; :class:`~fmbench.errors.NotFoundError` when there is no such run."""
    return one(con, "SELECT * FROM runs WHERE run_id = ?", [run_id], f"run {run_id!r}")


def verdict_reasons(con: duckdb.DuckDBPyConnection, run_id: str) -> list[dict[str, Any]]:
    """The reasons of the run's verdict (level, code, message), in order."""
    return rows(con, "SELECT level, code, message FROM verdict_reasons WHERE run_id = ? ORDER BY ordinal", [run_id])


def executed_models(con: duckdb.DuckDBPyConnection, run_id: str) -> list[tuple[str, int]]:
    """How many of the run's trials each model executed."""
    return [
        (m, n)
        for m, n in con.execute(
            "SELECT executed_model, count(*) FROM trials WHERE run_id = ? GROUP BY 1 ORDER BY 1", [run_id]
        ).fetchall()
    ]


def scenarios_not_run(con: duckdb.DuckDBPyConnection, run_id: str) -> list[str]:
    """Scenarios the file's summaries hold with no trial and no failure, in the summaries' order."""
    return [
        sid
        for (sid,) in con.execute(
            "SELECT scenario_id FROM stored_summaries WHERE run_id = ? AND scenario_id NOT IN "
            "(SELECT scenario_id FROM scenario_figures WHERE run_id = ?) ORDER BY ordinal",
            [run_id, run_id],
        ).fetchall()
    ]


def offline_counts(con: duckdb.DuckDBPyConnection, run_id: str) -> tuple[int, int]:
    """(trials that succeeded offline, trials that record offline success at all)."""
    row = con.execute(
        "SELECT count(*) FILTER (WHERE offline_success), count(offline_success) FROM trials WHERE run_id = ?", [run_id]
    ).fetchone()
    return (row[0], row[1]) if row else (0, 0)


def summary_mismatches(con: duckdb.DuckDBPyConnection, run_id: str) -> list[dict[str, Any]]:
    """Where the file's stored summaries disagree with the recomputation."""
    return rows(
        con, "SELECT scenario_id, field, stored_json, recomputed_json FROM summary_mismatches WHERE run_id = ?", [run_id]
    )


def run_flags(con: duckdb.DuckDBPyConnection, run_id: str) -> list[tuple[str, str]]:
    """The reader's notes on the file (location, message), in order."""
    return [
        (loc, msg)
        for loc, msg in con.execute(
            "SELECT location, message FROM run_flags WHERE run_id = ? ORDER BY ordinal", [run_id]
        ).fetchall()
    ]
