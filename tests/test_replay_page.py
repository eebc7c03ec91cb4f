"""A fixture run with an attached Evaluations replay shows the replay beside its figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from fmbench.build import build_site
from fmbench.ingest import ingest_paths
from fmbench.native.store import ingest_artifacts

from testdata import FIXTURES, REPO

AGENTIC = "macbook-pro-m5-macos27-26a5361b-on-device-agentic-2026-09-24.json"
REPLAYS = REPO / "fixtures" / "replays"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("replay")
    db = root / "replay.duckdb"
    assert ingest_paths([FIXTURES / AGENTIC], db).ok
    native = ingest_artifacts([REPLAYS], db)
    assert all(o.status == "ingested" for o in native.outcomes)
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    run_id = con.execute("SELECT run_id FROM runs").fetchone()[0]
    con.close()
    build_site(db, root / "_site")
    return root / "_site", run_id


def test_the_run_page_shows_the_replay_metrics_and_flags_the_planted_disagreement(site: tuple[Path, str]) -> None:
    out, run_id = site
    page = (out / "runs" / run_id / "index.html").read_text(encoding="utf-8")
    assert "Evaluations replay" in page
    assert "FoundationModelsBench Prompt Pass" in page
    assert "The replay disagrees with the recomputation" in page
    assert "replay says Prompt Pass fails" in page


def test_the_model_judge_artifact_is_shown_apart_as_secondary_evidence(site: tuple[Path, str]) -> None:
    out, run_id = site
    page = (out / "runs" / run_id / "index.html").read_text(encoding="utf-8")
    deterministic, _, judge = page.partition("Secondary evidence: model-judge scores")
    assert judge, "no secondary-evidence section"
    assert "Helpfulness" in judge and "Helpfulness" not in deterministic


def _issues_table(html: str) -> str:
    import re

    match = re.search(r'<table id="replay-issues-a\d+".*?</table>', html, re.S)
    assert match, "no issues table"
    return match.group(0)


def test_the_run_page_lists_the_replays_issues_and_treats_empty_expected_as_none(site: tuple[Path, str]) -> None:
    out, run_id = site
    page = (out / "runs" / run_id / "index.html").read_text(encoding="utf-8")
    table = _issues_table(page)
    body = table.split("</caption>", 1)[1]
    assert "Prompt Pass" in body
    assert "mismatch" not in body, "the replay's empty Expected is no expectation"
    assert "as xceval computes them" in page and "Pass rate" in page


def test_serve_shows_the_same_issues_as_the_build(site: tuple[Path, str]) -> None:
    from fmbench.serve import create_app

    out, run_id = site
    db = out.parent / "replay.duckdb"
    client = create_app(db, host="127.0.0.1", port=8000).test_client()
    served = client.get(f"/runs/{run_id}/", headers={"Host": "127.0.0.1:8000"}).get_data(as_text=True)
    built = (out / "runs" / run_id / "index.html").read_text(encoding="utf-8")
    assert _issues_table(served) == _issues_table(built)
