"""The run page's section about an attached Evaluations replay, when one is linked."""

from __future__ import annotations

from typing import Any

import duckdb

from fmbench.views.common import Url


def replay_section(con: duckdb.DuckDBPyConnection, url: Url, run_id: str) -> Any:
    """The linked replay artifacts of a run (``None`` when there are none)."""
    tables = {name for (name,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    if "evaluations" not in tables:
        return None
    from fmbench.native.linking import replay_for_run

    return replay_for_run(con, run_id)
