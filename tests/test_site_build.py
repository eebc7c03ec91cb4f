"""The static build: every page, no broken link, honest absence, safe text, atomic output."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from fmbench.publish.build import BuildError, build_site
from fmbench.runfile.record import run_id_for

from sitebuild import broken_links, purpose_db
from stopping import FailAfter
from testdata import RUNS, methodology_sections


def _run_id(name: str) -> str:
    return run_id_for(hashlib.sha256((RUNS / name).read_bytes()).hexdigest())


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("site")
    db = purpose_db(root / "site.duckdb")
    out = root / "_site"
    report = build_site(db, out)
    assert report.pages > 10
    if report.largest_run_page:
        from conftest import REPORTED

        path, size = report.largest_run_page
        REPORTED.append(f"largest run page of the purpose-built site: {path} {size / 1024:.1f} KiB")
    return db, out


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_every_page_kind_is_written(built: tuple[Path, Path]) -> None:
    _, out = built
    run = _run_id("purpose-current.json")
    for page in (
        "index.html", "methodology/index.html", "revisions/index.html", "runs/index.html",
        f"runs/{run}/index.html", f"runs/{run}/trials/task-capture/index.html",
        "devices/index.html", "devices/iPhone18,1/index.html", "scenarios/index.html",
        "scenarios/task-capture/index.html", "pcc/index.html", "compare/index.html",
        "regressions/index.html", "regressions/feed.xml", "data/index.html", "data/runs.json",
        f"data/runs/{run}/purpose-current.json.gz", f"data/runs/{run}/trials/task-capture.json.gz",
        f"data/runs/{run}/figures.json",
    ):
        assert (out / page).is_file(), page
    # each trial is held once, in its scenario's trial data: no CSV of the same trials (fmbench export writes it)
    assert not (out / f"data/runs/{run}/trials.csv.gz").exists()


def test_no_internal_link_is_broken(built: tuple[Path, Path]) -> None:
    _, out = built
    assert broken_links(out) == []


def test_the_original_file_is_published_gzipped_and_decompresses_byte_identical(built: tuple[Path, Path]) -> None:
    _, out = built
    run = _run_id("purpose-current.json")
    original = (RUNS / "purpose-current.json").read_bytes()
    assert gzip.decompress((out / f"data/runs/{run}/purpose-current.json.gz").read_bytes()) == original
    assert not (out / f"data/runs/{run}/purpose-current.json").exists()
    page = (out / f"runs/{run}/index.html").read_text(encoding="utf-8")
    assert hashlib.sha256(original).hexdigest() in page


def test_plotly_is_one_shared_asset_not_inlined(built: tuple[Path, Path]) -> None:
    _, out = built
    marker = b"plotly.js (fmbench scatter build - minified) v"  # the vendored bundle's banner
    holders = [p for p in out.rglob("*") if p.is_file() and marker in p.read_bytes()[:2000]]
    assert [p.relative_to(out).as_posix() for p in holders] == ["assets/plotly.min.js"]
    run_page = (out / f"runs/{_run_id('purpose-current.json')}/index.html").read_text(encoding="utf-8")
    assert run_page.count("plotly.min.js") == 1
    assert "cdn" not in run_page.lower()


def test_a_missing_metric_reads_not_recorded_and_is_never_plotted_as_zero(built: tuple[Path, Path]) -> None:
    _, out = built
    page = (out / f"runs/{_run_id('purpose-current.json')}/index.html").read_text(encoding="utf-8")
    assert "not recorded" in page  # the guardrail scenario recorded no peak memory
    figures = json.loads((out / f"data/runs/{_run_id('purpose-current.json')}/figures.json").read_text())
    guard = next(s for s in figures["scenarios"] if s["scenario_id"] == "guardrail-expected-protection")
    assert guard["memory_count"] == 0 and guard["memory_max"] is None


def test_the_trials_csv_reads_back_every_stored_value_and_leaves_what_is_not_recorded_empty(
    built: tuple[Path, Path], tmp_path: Path
) -> None:
    import csv
    import io

    import duckdb

    from fmbench.publish.trials_csv import export_trials_csv
    from fmbench.views.trial_details import CSV_COLUMNS

    db, _ = built
    run = _run_id("purpose-current.json")
    export_trials_csv(db, tmp_path)  # what `fmbench export --trials-csv` writes
    text = (tmp_path / f"{run}.trials.csv").read_text(encoding="utf-8")
    header, *cells = list(csv.reader(io.StringIO(text, newline="")))
    assert tuple(header) == CSV_COLUMNS
    with duckdb.connect(str(db), read_only=True) as con:
        stored = con.execute(
            f"SELECT {', '.join(CSV_COLUMNS)} FROM trials WHERE run_id = ? ORDER BY ordinal", [run]
        ).fetchall()
    assert len(cells) == len(stored) > 0
    empty = 0
    for row, values in zip(cells, stored, strict=True):
        for name, cell, value in zip(CSV_COLUMNS, row, values, strict=True):
            if value is None:
                assert cell == "", name  # not recorded: an empty cell, never 0
                empty += 1
            elif isinstance(value, bool):
                assert cell == str(value), name
            elif isinstance(value, float):
                assert float(cell) == value, name  # the shortest text that reads back as the same double
            elif isinstance(value, int):
                assert int(cell) == value, name
            else:
                assert cell == str(value), name
    assert empty > 0


def test_a_legacy_run_page_shows_the_superseded_revision_banner(built: tuple[Path, Path]) -> None:
    db, out = built
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    legacy = con.execute("SELECT run_id FROM runs WHERE generation = 'legacy'").fetchall()
    con.close()
    assert legacy, "the published example (a legacy run) is missing from the database"
    page = (out / f"runs/{legacy[0][0]}/index.html").read_text(encoding="utf-8")
    assert "Measured on superseded suite revision 2026.06" in page


def test_an_exploratory_run_page_says_why(built: tuple[Path, Path]) -> None:
    _, out = built
    page = (out / f"runs/{_run_id('purpose-current.json')}/index.html").read_text(encoding="utf-8")
    assert "Exploratory: not a stable ranking" in page
    assert "1 repetition(s) per sample; a publishable run has at least 20." in page


def test_a_hand_edited_run_appears_on_no_ranking_or_comparison(built: tuple[Path, Path]) -> None:
    _, out = built
    edited = _run_id("purpose-hand-edited.json")
    run_page = (out / f"runs/{edited}/index.html").read_text(encoding="utf-8")
    assert "Invalid as evidence" in run_page
    for page in ("index.html", "devices/iPhone18,1/index.html", "scenarios/task-capture/index.html",
                 "compare/index.html", "regressions/index.html"):
        text = (out / page).read_text(encoding="utf-8")
        tables = text.split("All runs on this device")[0]  # the device's plain run list names every run
        assert f"runs/{edited}/" not in tables, page


def test_untrusted_text_is_escaped_in_html_and_in_embedded_json(built: tuple[Path, Path]) -> None:
    _, out = built
    hostile = _run_id("hostile-text.json")
    pages = [out / f"runs/{hostile}/index.html", out / f"runs/{hostile}/trials/task-capture/index.html"]
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert "<script>alert(1)</script>" not in html
        assert "<img src=x onerror=alert(1)>" not in html
        assert "&lt;img src=x onerror=alert(1)&gt;" in html
        assert "{{7*7}}" in html  # template syntax in data is text, never evaluated (49 would mean it ran)


def test_a_base_url_puts_every_link_under_the_sub_path(tmp_path: Path, built: tuple[Path, Path]) -> None:
    db, _ = built
    out = tmp_path / "sub"
    build_site(db, out, base_url="/results/fm/")
    home = (out / "index.html").read_text(encoding="utf-8")
    assert 'href="/results/fm/runs/"' in home
    assert broken_links(out, base="/results/fm/") == []


def test_an_unchanged_rebuild_writes_nothing(tmp_path: Path, built: tuple[Path, Path]) -> None:
    db, _ = built
    out = tmp_path / "site"
    build_site(db, out)
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    report = build_site(db, out)
    assert report.changed == [] and report.removed == []
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()} == before


def test_a_build_that_fails_part_way_leaves_the_previous_site_byte_identical(
    tmp_path: Path, built: tuple[Path, Path]
) -> None:
    db, _ = built
    out = tmp_path / "site"
    build_site(db, out, base_url="/a/")
    before = _snapshot(out)
    with pytest.raises(BuildError):
        build_site(db, out, base_url="/b/", checkpoints=FailAfter(7))
    assert _snapshot(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["site"]  # no staging folder left behind


def test_the_methodology_contents_link_every_section_of_the_page(built: tuple[Path, Path]) -> None:
    import re

    html = (built[1] / "methodology" / "index.html").read_text(encoding="utf-8")
    contents = html.split('<nav class="contents"', 1)[1].split("</nav>", 1)[0]
    anchors = re.findall(r'<a href="#([^"]+)">', contents)
    assert len(anchors) == methodology_sections() and anchors[0] == "measured"
    article = html.split('<article class="prose">', 1)[1]
    assert re.findall(r'<h2 id="([^"]+)"', article) == anchors  # every section, in the page's order


def test_a_run_page_states_its_conditions_at_a_glance_before_its_figures(built: tuple[Path, Path]) -> None:
    html = (built[1] / "runs" / _run_id("purpose-current.json") / "index.html").read_text(encoding="utf-8")
    assert html.index('id="glance-heading"') < html.index('id="scenarios-heading"') < html.index('id="conditions-heading"')
    glance = html.split('id="glance-heading"', 1)[1].split("</section>", 1)[0]
    for label in ("Device", "OS version and build", "Route", "Session", "Suite", "Suite revision", "Trials",
                  "Warmups", "Repetitions"):
        assert f"<dt>{label}</dt>" in glance
