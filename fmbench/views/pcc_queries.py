"""The questions the Private Cloud Compute page asks of the database, one query each.

Each function answers for a whole set of runs at once (never a query per run).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb

from fmbench.views.common import RUN_COLUMNS, rows
from fmbench.views.filters import Filters


def pcc_runs(con: duckdb.DuckDBPyConnection, filters: Filters) -> list[dict[str, Any]]:
    """The PCC runs matching the filters, oldest first, with their quota snapshots and operator annotations."""
    where, params = filters.where()
    return rows(
        con,
        f"SELECT {RUN_COLUMNS}, r.quota_before_approaching, r.quota_before_reached, r.quota_before_reset, "
        "r.quota_after_approaching, r.quota_after_reached, r.quota_after_reset, "
        "a.connection, a.location, a.entitlement, a.note "
        f"FROM runs r LEFT JOIN annotations a USING (run_id) WHERE r.route = 'privateCloudCompute' AND {where} "
        "ORDER BY r.started_at, r.run_id",
        params,
    )


def failure_kinds(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> dict[str, dict[str, int]]:
    """Run id -> measured failures counted by kind ("not recorded" where the file names none)."""
    kinds: dict[str, dict[str, int]] = {}
    for run_id, kind, n in con.execute(
        "SELECT run_id, coalesce(kind, 'not recorded'), count(*) FROM failures "
        "WHERE NOT is_warmup AND list_contains(?, run_id) GROUP BY 1, 2 ORDER BY 1, 2",
        [list(run_ids)],
    ).fetchall():
        kinds.setdefault(run_id, {})[kind] = n
    return kinds


def fallback_counts(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> dict[str, int]:
    """Run id -> how many of its trials fell back from PCC to the on-device model (runs with none are absent)."""
    return dict(
        con.execute(
            "SELECT run_id, count(*) FROM trials WHERE used_fallback AND list_contains(?, run_id) GROUP BY 1",
            [list(run_ids)],
        ).fetchall()
    )


def pcc_first_token_times(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> dict[str, list[float]]:
    """Run id -> the time to first token of every trial PCC itself answered (runs with none are absent)."""
    out: dict[str, list[float]] = {}
    for run_id, value in con.execute(
        "SELECT run_id, time_to_first_token FROM trials WHERE list_contains(?, run_id) "
        "AND executed_model = 'privateCloudCompute' AND time_to_first_token IS NOT NULL ORDER BY run_id, ordinal",
        [list(run_ids)],
    ).fetchall():
        out.setdefault(run_id, []).append(value)
    return out


def fallback_trials(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Every trial of these runs that fell back, in run and trial order, with the reason the file gives."""
    return rows(
        con,
        "SELECT t.run_id, t.scenario_id, t.sample_id, t.iteration, t.requested_model, t.executed_model, t.fallback_reason "
        "FROM trials t WHERE t.used_fallback AND list_contains(?, t.run_id) ORDER BY t.run_id, t.ordinal",
        [list(run_ids)],
    )
