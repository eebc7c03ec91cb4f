"""The bundled fixture corpus: it ingests whole, and each planted situation is judged as planted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fmbench.cli import main
from fmbench.ingest import ingest_paths

from testdata import FIXTURES

PLANTED = {
    # The generator's Simulator file names the host architecture (arm64), not the simulated model the
    # runner writes: no model in the hardware table to check it against, so a note and no verdict.
    "iphone-17-pro-simulator-ios27-24a5264n-on-device-quick-2026-11-01.json": ("exploratory", None),
    "ipad-pro-m5-ipados27-on-device-quick-2026-10-22.json": ("invalid", "no-os-build"),
    "ipad-pro-m5-ipados26-23b85-on-device-performance-2026-10-28.json": ("invalid", "summary-mismatch"),
    "macbook-pro-m5-macos26-25a362-on-device-guardrails-2026-09-15.json": ("invalid", "missing-repetitions"),
    "iphone-17-pro-ios27-24a5264n-pcc-quick-2026-10-21.json": ("invalid", "pcc-entitlement"),
    "iphone-17-pro-ios27-24a5264n-on-device-performance-2026-11-03.json": ("publishable", None),
}


@pytest.fixture(scope="module")
def corpus_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("corpus") / "corpus.duckdb"
    report = ingest_paths([FIXTURES], db)
    assert report.ok, [o.message for o in report.outcomes if o.status == "error"]
    assert report.count("ingested") == len(list(FIXTURES.glob("*.json")))
    return db


def test_fmbench_runs_lists_the_whole_corpus_with_verdicts_and_revisions(corpus_db: Path) -> None:
    result = CliRunner().invoke(main, ["runs", "--db", str(corpus_db), "--json"])
    assert result.exit_code == 0
    runs = {r["file_name"]: r for r in json.loads(result.output)}
    assert len(runs) == len(list(FIXTURES.glob("*.json")))
    assert {r["verdict"] for r in runs.values()} == {"publishable", "exploratory", "invalid"}
    assert {r["revision_id"] for r in runs.values()} == {"2026.06", "2026.09", "2026.11", None}
    legacy = [r for r in runs.values() if r["generation"] == "legacy"]
    assert legacy and all(r["revision_status"] == "superseded" for r in legacy)
    text = CliRunner().invoke(main, ["runs", "--db", str(corpus_db)])
    assert text.exit_code == 0 and f"{len(runs)} run(s)" in text.output


@pytest.mark.parametrize(("name", "expected"), sorted(PLANTED.items()))
def test_each_planted_file_is_judged_as_planted(corpus_db: Path, name: str, expected: tuple[str, str | None]) -> None:
    import duckdb

    con = duckdb.connect(str(corpus_db), read_only=True)
    try:
        verdict = con.execute("SELECT run_id, verdict FROM runs WHERE file_name = ?", [name]).fetchone()
        assert verdict is not None
        codes = [c for (c,) in con.execute("SELECT code FROM verdict_reasons WHERE run_id = ?", [verdict[0]]).fetchall()]
    finally:
        con.close()
    level, code = expected
    assert verdict[1] == level
    if code:
        assert code in codes
