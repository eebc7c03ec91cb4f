"""The site holds each trial once, compressed: one trials page a run and scenario (its summary in HTML, no trial
laid out), and one gzipped trial data file that decompresses to every trial of the run and scenario."""

from __future__ import annotations

import base64
import csv
import gzip
import io
import json
import re
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from fmbench import urls
from fmbench.cli import main
from fmbench.fixtures.generate import generate_large_corpus
from fmbench.ingest import ingest_paths
from fmbench.publish.build import build_site
from fmbench.serving.serve import create_app
from fmbench.views.data import _packed_ids, trial_rows

from testdata import RUNS


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The purpose-written runs and a generated run of about 130 trials (three trials pages' worth before)."""
    root = tmp_path_factory.mktemp("compact")
    generated = generate_large_corpus(root / "corpus", runs=1, trials_per_run=130, legacy_runs=0, seed=3)
    db = root / "compact.duckdb"
    report = ingest_paths([RUNS, *[p for p in generated if p.suffix == ".json"]], db)
    assert report.ok, [o.message for o in report.outcomes if o.status == "error"]
    out = root / "_site"
    build_site(db, out, jobs=1)
    return db, out


def _scenarios(db: Path) -> list[tuple[str, str, int]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        paths = urls.SitePaths.read(con)
        return [
            (run_id, paths.scenarios.of(sid), n)
            for run_id, sid, n in con.execute(
                "SELECT run_id, scenario_id, count(*) FROM trials GROUP BY run_id, scenario_id ORDER BY run_id, scenario_id"
            ).fetchall()
        ]
    finally:
        con.close()


def test_the_site_has_one_trials_page_a_scenario_and_no_trial_laid_out_in_html(built: tuple[Path, Path]) -> None:
    db, out = built
    pages = sorted(p.relative_to(out).as_posix() for p in out.glob("runs/*/trials/**/*") if p.is_file())
    wanted = sorted(f"{urls.trials(run_id, segment)}index.html" for run_id, segment, _ in _scenarios(db))
    assert set(wanted) <= set(pages)
    assert not [p for p in pages if "/page-" in p]  # no paginated trial HTML
    assert not list(out.glob("data/runs/*/trials.csv.gz"))  # the CSV would hold every trial a second time
    for page in pages:
        html = (out / page).read_text(encoding="utf-8")
        assert '<article class="trial"' not in html and "<pre>" not in html, page  # no trial's response in HTML
        assert 'class="trials-app" data-trials-data="/data/runs/' in html and "<noscript>" in html, page


def test_the_gzip_trial_data_decompresses_to_every_trial_of_the_run(built: tuple[Path, Path]) -> None:
    db, out = built
    con = duckdb.connect(str(db), read_only=True)
    try:
        for run_id, segment, n in _scenarios(db):
            doc = json.loads(gzip.decompress((out / urls.SitePaths.read(con).data_trials_json(run_id, segment)).read_bytes()))
            rows = trial_rows(doc)
            assert doc["count"] == len(rows) == n
            ids = [r for (r,) in con.execute(
                "SELECT trial_id FROM trials WHERE run_id = ? AND scenario_id = ? ORDER BY ordinal",
                [run_id, doc["scenario"]],
            ).fetchall()]
            assert [r["trial_id"] for r in rows] == ids
        per_run = dict(con.execute("SELECT run_id, count(*) FROM trials GROUP BY run_id").fetchall())
    finally:
        con.close()
    held: dict[str, int] = {}
    for run_id, _, n in _scenarios(db):
        held[run_id] = held.get(run_id, 0) + n
    assert held == per_run  # every trial of every run, once
    assert max(per_run.values()) >= 100


def _held_and_stored(
    con: duckdb.DuckDBPyConnection, out: Path, run_id: str, segment: str, column: str
) -> tuple[dict[str, Any], list[Any]]:
    """A scenario's trial data file as the site holds it, and one column of its trials as the database stores it."""
    assert column in ("prompt", "trial_id")  # a column name of ours, never data, in the query's text
    doc = json.loads(gzip.decompress((out / urls.SitePaths.read(con).data_trials_json(run_id, segment)).read_bytes()))
    stored = [v for (v,) in con.execute(
        f"SELECT {column} FROM trials WHERE run_id = ? AND scenario_id = ? ORDER BY ordinal", [run_id, doc["scenario"]],
    ).fetchall()]
    return doc, stored


def test_a_prompt_repeated_over_the_repetitions_is_held_once_and_read_back_for_every_trial(
    built: tuple[Path, Path],
) -> None:
    db, out = built
    con = duckdb.connect(str(db), read_only=True)
    try:
        run_id, segment, n = max(_scenarios(db), key=lambda s: s[2])
        doc, prompts = _held_and_stored(con, out, run_id, segment, "prompt")
    finally:
        con.close()
    held = doc["columns"]["prompt"]
    assert len(set(prompts)) < n  # the samples' prompts come back every repetition
    assert sorted(held) == ["at", "distinct"] and len(held["distinct"]) == len(set(prompts)) and len(held["at"]) == n
    assert [r["prompt"] for r in trial_rows(doc)] == prompts
    assert isinstance(doc["columns"]["ordinal"], list)  # a column with no repeat stays a plain list


def test_runner_written_trial_ids_are_held_as_their_bytes_and_read_back_as_the_runner_wrote_them(
    built: tuple[Path, Path],
) -> None:
    db, out = built
    con = duckdb.connect(str(db), read_only=True)
    try:
        packed = 0
        for run_id, segment, _ in _scenarios(db):
            doc, ids = _held_and_stored(con, out, run_id, segment, "trial_id")
            held = doc["columns"]["trial_id"]
            if isinstance(held, dict):
                assert sorted(held) == ["uuids"] and len(base64.b64decode(held["uuids"])) == 16 * len(ids)
                packed += 1
            else:
                assert held == ids and not all(re.fullmatch(r"[0-9A-F-]{36}", str(i)) for i in ids)
            assert [r["trial_id"] for r in trial_rows(doc)] == ids
    finally:
        con.close()
    assert packed
    # ids the runner did not write as upper-case UUIDs (a hand-made or older file) are kept as their text
    for ids in (["00000000-0000-4000-8000-00000000000a"], ["task-capture-1", "task-capture-2"], [None]):
        assert _packed_ids(ids) == ids


def test_serve_answers_the_trials_page_and_the_same_data_file(built: tuple[Path, Path]) -> None:
    db, out = built
    client = create_app(db, host="127.0.0.1", port=8000).test_client()
    run_id, segment, _ = max(_scenarios(db), key=lambda s: s[2])
    con = duckdb.connect(str(db), read_only=True)
    data = urls.SitePaths.read(con).data_trials_json(run_id, segment)
    con.close()
    host = {"Host": "127.0.0.1:8000"}
    served = client.get("/" + data, headers=host)
    assert served.status_code == 200 and served.data == (out / data).read_bytes()
    page = client.get("/" + urls.trials(run_id, segment), headers=host)
    assert page.status_code == 200 and f'data-trials-data="/{data}"'.encode() in page.data
    assert client.get("/" + urls.trials(run_id, segment) + "page-2/", headers=host).status_code == 404


def test_export_writes_each_runs_trials_as_csv_from_the_database(built: tuple[Path, Path], tmp_path: Path) -> None:
    db, _ = built
    result = CliRunner().invoke(main, ["export", "--db", str(db), "--trials-csv", str(tmp_path / "csv")])
    assert result.exit_code == 0, result.output
    con = duckdb.connect(str(db), read_only=True)
    per_run = dict(con.execute("SELECT run_id, count(*) FROM trials GROUP BY run_id").fetchall())
    con.close()
    assert f"{len(per_run)} trials CSV file(s) written" in result.output
    csv.field_size_limit(2**31 - 1)  # the hostile run's response is a long field
    for run_id, n in per_run.items():
        rows = list(csv.reader(io.StringIO((tmp_path / "csv" / f"{run_id}.trials.csv").read_text(encoding="utf-8"))))
        assert rows[0][:3] == ["ordinal", "trial_id", "scenario_id"] and len(rows) == n + 1
