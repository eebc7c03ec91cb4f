"""Read-side queries over the database that more than one command needs."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import Any

import duckdb

from fmbench.db import connect


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
        rows = con.execute(f"SELECT {columns} FROM runs ORDER BY started_at, run_id").fetchall()
    return [RunListing(*row) for row in rows]


def ordered_scenarios(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> list[str]:
    """Scenario ids of several runs: the newest run's order (its file's summaries order), then the
    scenarios it lacks from the next newest run, and so on."""
    if not run_ids:
        return []
    found = con.execute(
        "SELECT f.scenario_id FROM scenario_figures f JOIN runs r ON r.run_id = f.run_id "
        "WHERE list_contains(?, f.run_id) ORDER BY r.started_at DESC, r.run_id, f.ordinal",
        [list(run_ids)],
    ).fetchall()
    return list(dict.fromkeys(sid for (sid,) in found))
