"""The questions the comparison, compare-index and regression pages ask of the database, one query each."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import duckdb

from fmbench.analysis.configuration import GENERATION, GROUPING, columns
from fmbench.views.common import rows


def comparable_runs(con: duckdb.DuckDBPyConnection, hardware_model: str | None = None) -> list[dict[str, Any]]:
    """Runs that may be compared (never an invalid one; OS build and hardware model recorded), oldest first;
    only one device's when ``hardware_model`` is given."""
    where = "verdict <> 'invalid' AND os_build IS NOT NULL AND hardware_model IS NOT NULL"
    params: list[Any] = []
    if hardware_model is not None:
        where += " AND hardware_model = ?"
        params.append(hardware_model)
    return rows(
        con,
        "SELECT run_id, hardware_model, device_name, os_build, os_generation, "
        f"{columns((*GROUPING, GENERATION))}, started_at, verdict, file_name "
        f"FROM runs WHERE {where} ORDER BY started_at, run_id",
        params,
    )


def hardware_models(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every recorded hardware model."""
    return [k for (k,) in con.execute("SELECT DISTINCT hardware_model FROM runs WHERE hardware_model IS NOT NULL").fetchall()]


def newest_ingest(con: duckdb.DuckDBPyConnection) -> datetime | None:
    """When the newest run was ingested (``None`` for an empty database)."""
    row = con.execute("SELECT max(ingested_at) FROM runs").fetchone()
    return row[0] if row else None


def build_order(found: list[dict[str, Any]]) -> list[str]:
    """A device's OS builds in the order they were first measured."""
    order: list[str] = []
    for r in found:
        if r["os_build"] not in order:
            order.append(r["os_build"])
    return order
