"""Safety figures carry their caveat: refusals come from a phrase matcher, and the responses are there to review."""

from __future__ import annotations

from pathlib import Path

from fmbench.analysis.revisions import fixtures_registry
from fmbench.ingest import ingest_paths
from fmbench.storage.db import connect
from fmbench.views import PAGES, render_page, site_context
from fmbench.views.filters import Filters
from fmbench.views.render import Renderer

from testdata import FIXTURES

GUARDRAILS = "iphone-17-pro-ios27-24a5264n-on-device-guardrails-2026-11-04.json"
PERFORMANCE = "iphone-17-pro-ios27-24a5264n-on-device-performance-2026-11-03.json"


def test_a_run_page_with_safety_figures_says_how_refusals_are_found(tmp_path: Path) -> None:
    registry = fixtures_registry()
    db = tmp_path / "db.duckdb"
    assert ingest_paths([FIXTURES / GUARDRAILS, FIXTURES / PERFORMANCE], db, registry=registry).ok
    (kind,) = [k for k in PAGES if k.name == "run"]
    with connect(db, read_only=True) as con:
        site = site_context(con, Renderer(), registry)
        ids = dict(con.execute("SELECT file_name, run_id FROM runs").fetchall())
        safety = render_page(site, kind, Filters(), run_id=ids[GUARDRAILS])
        speed = render_page(site, kind, Filters(), run_id=ids[PERFORMANCE])
    assert "Refusals are found by the runner&#39;s phrase matcher" in safety or \
        "Refusals are found by the runner's phrase matcher" in safety
    assert "response text is on its trial page to review" in safety
    assert "phrase matcher" not in speed
