"""The questions one run's page asks of the database about that run, one query each; and the same questions of
every run at once (:class:`EveryRun`), for a static build."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb

from fmbench.errors import NotFoundError
from fmbench.queries import TokenSources, token_sources
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


# --- every run at once: a static build ----------------------------------------------------------


@dataclass(frozen=True)
class EveryRun:
    """What a run's page, trial pages and figures ask of the per-run tables, read for every run at once.

    A static build renders every run: one query per table for all of them, instead of one per table and run
    (each of which scans the table's run ids: about a millisecond a query on a corpus of 200 runs). The tables
    most runs have rows in are read whole (they are small); for the others, only which runs have any rows,
    so a run without any asks nothing. Each answer is what the query of one run gives (the same rows in the
    same order), and is not to be changed.
    """

    runs: dict[str, dict[str, Any]]
    """:func:`run` of each run."""
    figures: dict[str, list[dict[str, Any]]]
    """Each run's scenario figures (every column), in the run's order of its scenarios."""
    reasons: dict[str, list[dict[str, Any]]]
    """:func:`verdict_reasons` of each run that has any."""
    not_run: dict[str, list[str]]
    """:func:`scenarios_not_run` of each run that has any."""
    flags: dict[str, list[tuple[str, str]]]
    """:func:`run_flags` of each run that has any."""
    token_sources: TokenSources
    with_rows: dict[str, frozenset[str]]
    """For each of :data:`GATED`, the runs with any rows in it."""

    @classmethod
    def read(cls, con: duckdb.DuckDBPyConnection) -> EveryRun:
        runs = {r["run_id"]: r for r in rows(con, "SELECT * FROM runs")}
        figures: dict[str, list[dict[str, Any]]] = {}
        for f in rows(con, "SELECT * FROM scenario_figures ORDER BY run_id, ordinal"):
            figures.setdefault(f["run_id"], []).append(f)
        reasons: dict[str, list[dict[str, Any]]] = {}
        for r in rows(con, "SELECT run_id, level, code, message FROM verdict_reasons ORDER BY run_id, ordinal"):
            reasons.setdefault(r.pop("run_id"), []).append(r)
        not_run: dict[str, list[str]] = {}
        for run_id, sid in con.execute(
            "SELECT s.run_id, s.scenario_id FROM stored_summaries s WHERE s.scenario_id NOT IN "
            "(SELECT f.scenario_id FROM scenario_figures f WHERE f.run_id = s.run_id) ORDER BY s.run_id, s.ordinal"
        ).fetchall():
            not_run.setdefault(run_id, []).append(sid)
        flags: dict[str, list[tuple[str, str]]] = {}
        for run_id, loc, msg in con.execute(
            "SELECT run_id, location, message FROM run_flags ORDER BY run_id, ordinal"
        ).fetchall():
            flags.setdefault(run_id, []).append((loc, msg))
        with_rows = {
            name: frozenset(r for (r,) in con.execute(f"SELECT DISTINCT run_id FROM {source}").fetchall())
            for name, source in GATED.items()
        }
        return cls(runs, figures, reasons, not_run, flags, token_sources(con, sorted(runs)), with_rows)

    def run(self, run_id: str) -> dict[str, Any]:
        """:func:`run`: :class:`~fmbench.errors.NotFoundError` when there is no such run."""
        try:
            return self.runs[run_id]
        except KeyError:
            raise NotFoundError(f"no run {run_id!r}") from None

    def has(self, name: str, run_id: str) -> bool:
        """Whether the run has any rows in :data:`GATED`'s ``name``."""
        return run_id in self.with_rows[name]


GATED = {
    "summary mismatches": "summary_mismatches",
    "annotations": "annotations",
    "agentic trials": "trials WHERE category = 'agenticToolUse'",
    "scenarios on several executed models": (
        "(SELECT run_id FROM trials GROUP BY run_id, scenario_id HAVING count(DISTINCT executed_model) > 1)"
    ),
    "trial tool calls": "tool_calls WHERE owner = 'trial'",
    "trial final state": "final_state WHERE owner = 'trial'",
    "failure tool calls": "tool_calls WHERE owner = 'failure'",
    "failure final state": "final_state WHERE owner = 'failure'",
}
"""Per-run questions that most runs have no rows for: which runs have any, per table (and condition)."""
