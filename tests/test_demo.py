"""The demo: the main job on the embedded default, repeatable, and never at the cost of a user's data."""

from __future__ import annotations

from pathlib import Path

import pytest

from fmbench.demo import run_demo
from fmbench.errors import FmbenchError
from fmbench.ingest import ingest_paths

from testdata import RUNS


def test_the_demo_ingests_the_bundled_fixtures_and_builds_the_site_twice_over(tmp_path: Path) -> None:
    lines: list[str] = []
    db, out = tmp_path / "fmbench.duckdb", tmp_path / "_site"
    run_demo(db, out, serve=False, echo=lines.append)
    run_demo(db, out, serve=False, echo=lines.append)
    assert (out / "index.html").is_file() and (out / "regressions" / "feed.xml").is_file()
    ingested = [line for line in lines if line.startswith("ingested ") and "run files" in line]
    assert len(ingested) == 2 and ingested[0] == ingested[1]


def test_the_demo_refuses_a_database_that_holds_other_runs(tmp_path: Path) -> None:
    db = tmp_path / "mine.duckdb"
    assert ingest_paths([RUNS / "purpose-current.json"], db).ok
    with pytest.raises(FmbenchError, match="not the bundled fixtures"):
        run_demo(db, tmp_path / "_site", serve=False, echo=lambda _: None)
    assert db.exists()
