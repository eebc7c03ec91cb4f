"""A fixture run with an attached Evaluations replay shows the replay beside its figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from fmbench.ingest import ingest_paths
from fmbench.native.store import ingest_artifacts
from fmbench.publish.build import build_site

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
    from fmbench.serving.serve import create_app

    out, run_id = site
    db = out.parent / "replay.duckdb"
    client = create_app(db, host="127.0.0.1", port=8000).test_client()
    served = client.get(f"/runs/{run_id}/", headers={"Host": "127.0.0.1:8000"}).get_data(as_text=True)
    built = (out / "runs" / run_id / "index.html").read_text(encoding="utf-8")
    assert _issues_table(served) == _issues_table(built)


def test_the_judge_artifact_names_its_judge_and_says_it_is_not_calibrated(site: tuple[Path, str]) -> None:
    out, run_id = site
    page = (out / "runs" / run_id / "index.html").read_text(encoding="utf-8")
    _, _, judge = page.partition("Secondary evidence: model-judge scores")
    assert "<dt>Judge</dt><dd>fixture: synthetic scores, no model judge was run" in judge
    # The fixture's judge artifact records no rubric version: it says so rather than leaving it out.
    rubric = judge.split("<dt>Rubric version</dt><dd>", 1)[1].split("</dd>", 1)[0]
    assert "not recorded" in rubric
    assert "not calibrated against human ratings" in judge


def test_a_recorded_rubric_version_and_judge_reach_the_run_page_context(tmp_path: Path) -> None:
    import json

    import duckdb

    from fmbench.views.replay import JUDGE_CAVEAT, replay_section

    judge_file = next(REPLAYS.glob("*.judge.xcevalresult"))
    document = json.loads(judge_file.read_text(encoding="utf-8"))
    document["evaluationInfo"]["Judge"] = "Judge model 3.1"
    document["evaluationInfo"]["Rubric Version"] = "helpfulness-clarity-completeness v2"
    artifacts = tmp_path / "replays"
    artifacts.mkdir()
    (artifacts / judge_file.name).write_text(json.dumps(document), encoding="utf-8")
    db = tmp_path / "judge.duckdb"
    assert ingest_paths([FIXTURES / AGENTIC], db).ok
    assert all(o.status == "ingested" for o in ingest_artifacts([artifacts], db).outcomes)
    con = duckdb.connect(str(db), read_only=True)
    try:
        run_id = con.execute("SELECT run_id FROM runs").fetchone()[0]
        section = replay_section(con, lambda path: path, run_id)
    finally:
        con.close()
    assert section is not None and len(section.judges) == 1 and section.deterministic == []
    details = dict(section.judges[0].details)
    assert details["Judge"] == "Judge model 3.1"
    assert details["Rubric version"] == "helpfulness-clarity-completeness v2"
    assert section.judge_caveat == JUDGE_CAVEAT and "not calibrated against human ratings" in JUDGE_CAVEAT
