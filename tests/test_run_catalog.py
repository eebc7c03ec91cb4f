"""A static build matches comparison sides against every run read once; the result is the database's own."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import duckdb
import pytest

from fmbench.analysis.revisions import fixtures_registry
from fmbench.comparison.selection import FILTER_KEYS, RunCatalog, SideSpec, matching_runs
from fmbench.errors import NotFoundError
from fmbench.ingest import ingest_paths

from testdata import FIXTURES


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory) -> duckdb.DuckDBPyConnection:
    db = tmp_path_factory.mktemp("catalog") / "db.duckdb"
    assert ingest_paths([FIXTURES], db, registry=fixtures_registry()).ok
    return duckdb.connect(str(db), read_only=True)


def _sql(con: duckdb.DuckDBPyConnection, filters: tuple[tuple[str, str], ...]) -> list[str]:
    try:
        return [r.run_id for r in matching_runs(con, SideSpec(text="t", kind="filter", filters=filters))]
    except NotFoundError:
        return []


def test_matching_a_side_against_the_catalog_gives_the_runs_sql_gives_in_the_same_order(
    con: duckdb.DuckDBPyConnection,
) -> None:
    catalog = RunCatalog.read(con)
    keys = [k for k in FILTER_KEYS if k != "run"]
    specs: set[tuple[tuple[str, str], ...]] = set()
    for run in catalog.runs:
        recorded = [(k, getattr(run, FILTER_KEYS[k])) for k in keys if getattr(run, FILTER_KEYS[k]) is not None]
        for size in (1, 2, 3, len(recorded)):
            specs.update(combinations(recorded, size))
    specs.add((("device", "no-such-device"),))
    assert len(specs) > 100
    several = 0
    for filters in sorted(specs):
        found = [r.run_id for r in catalog.matching(filters)]
        assert found == _sql(con, filters), filters
        several += len(found) > 1
    assert several > 10  # sides that the order of runs (start time, then run id) decides


def test_a_site_selects_its_sides_from_one_catalog_read_once_for_its_memo(tmp_path: Path) -> None:
    from fmbench.views import site_context
    from fmbench.views.render import Renderer

    db = tmp_path / "db.duckdb"
    assert ingest_paths([FIXTURES], db, registry=fixtures_registry()).ok
    with duckdb.connect(str(db), read_only=True) as c:
        site = site_context(c, Renderer())
        catalog = site.run_catalog()
        assert isinstance(catalog, RunCatalog) and site.run_catalog() is catalog
        assert [r.run_id for r in catalog.runs] == [r for (r,) in c.execute("SELECT run_id FROM runs ORDER BY started_at, run_id").fetchall()]
        # a site of its own (serve's, once the database changed: a memo of its own) reads the database again
        assert site_context(c, Renderer()).run_catalog() is not catalog
