"""Read-side queries over the database that more than one command needs."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import Any

import duckdb

from fmbench.analysis.figures import token_count_source
from fmbench.storage.db import connect


def named_rows(result: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Every row of an executed query as its column names (the cursor's description) and values: a type built
    from a row takes them by field name (``Type(**row)``), so a reordered ``SELECT`` cannot swap two fields."""
    names = [column[0] for column in result.description or ()]
    if len(set(names)) != len(names):
        raise ValueError(f"a query names a column twice: {names}")
    return [dict(zip(names, row, strict=True)) for row in result.fetchall()]


@dataclass(frozen=True)
class RunListing:
    """A line of ``fmbench runs``: each field is the ``runs`` column of that name (a new field is a new column read)."""

    run_id: str
    file_name: str
    device_name: str
    hardware_model: str | None
    system_name: str
    os_build: str | None
    os_generation: int | None
    route: str
    suite: str
    session_mode: str | None
    started_at: datetime
    revision_id: str | None
    revision_status: str
    verdict: str
    generation: str

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["started_at"] = self.started_at.strftime("%Y-%m-%dT%H:%M:%SZ")
        return out


def list_runs(db: str | os.PathLike[str] | None = None) -> list[RunListing]:
    with connect(db, read_only=True) as con:
        columns = ", ".join(f.name for f in fields(RunListing))
        rows = named_rows(con.execute(f"SELECT {columns} FROM runs ORDER BY started_at, run_id"))
    return [RunListing(**row) for row in rows]


def scenario_order(listed: Iterable[tuple[str, int, str]], started: Mapping[str, datetime]) -> list[str]:
    """Scenario ids of several runs, from each run's scenarios as ``(run id, ordinal, scenario id)`` and the
    runs' start times: the newest run's order (its file's summaries order), then the scenarios it lacks from
    the next newest run, and so on (runs that started together in run id order)."""
    ordered = sorted(listed, key=lambda r: (r[0], r[1]))
    ordered.sort(key=lambda r: started[r[0]], reverse=True)  # a stable sort: a tie keeps run id, then ordinal
    return list(dict.fromkeys(sid for _, _, sid in ordered))


def ordered_scenarios(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> list[str]:
    """:func:`scenario_order` of several runs, read from the database."""
    if not run_ids:
        return []
    found = con.execute(
        "SELECT f.run_id, f.ordinal, f.scenario_id, r.started_at FROM scenario_figures f "
        "JOIN runs r ON r.run_id = f.run_id WHERE list_contains(?, f.run_id)",
        [list(run_ids)],
    ).fetchall()
    return scenario_order([(run_id, o, sid) for run_id, o, sid, _ in found], {r[0]: r[3] for r in found})


SCENARIO_TITLES_SQL = (
    "SELECT f.scenario_id, f.title FROM scenario_figures f JOIN runs r ON r.run_id = f.run_id "
    "QUALIFY row_number() OVER (PARTITION BY f.scenario_id "
    "ORDER BY r.verdict = 'invalid', r.started_at DESC, r.run_id DESC) = 1"
)
"""Per scenario id, its one name on every page: the title the newest run that measured it gives it (a run that is
evidence before an invalid one, whose file may name it anything)."""


def scenario_titles(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Scenario id -> its one name (:data:`SCENARIO_TITLES_SQL`): a workload is called one thing across the
    site and in comparisons, whatever older runs' files called it."""
    return dict(con.execute(SCENARIO_TITLES_SQL).fetchall())


@dataclass(frozen=True)
class TokenSources:
    """The token count source of runs and of their scenarios (see :func:`fmbench.analysis.figures.token_count_source`):
    one source, ``mixed``, or ``None`` where no trial recorded one."""

    by_scenario: dict[tuple[str, str], list[str]]

    def run(self, run_id: str) -> str | None:
        return token_count_source(s for (r, _), sources in self.by_scenario.items() if r == run_id for s in sources)

    def scenario(self, run_id: str, scenario_id: str) -> str | None:
        return token_count_source(self.by_scenario.get((run_id, scenario_id), ()))


def token_sources(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> TokenSources:
    """Which token count sources the trials of these runs recorded, per run and scenario, in one query."""
    found: dict[tuple[str, str], list[str]] = {}
    if run_ids:
        for run_id, scenario_id, source in con.execute(
            "SELECT DISTINCT run_id, scenario_id, token_count_source FROM trials "
            "WHERE list_contains(?, run_id) AND token_count_source IS NOT NULL ORDER BY 1, 2, 3",
            [list(run_ids)],
        ).fetchall():
            found.setdefault((run_id, scenario_id), []).append(source)
    return TokenSources(found)
