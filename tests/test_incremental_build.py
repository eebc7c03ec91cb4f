"""Incremental builds: a rebuild renders only what its inputs changed, and ends up where a full build would."""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

import duckdb
import pytest

from fmbench import urls
from fmbench.build import MANIFEST, build_site, output_file
from fmbench.ingest import ingest_paths
from fmbench.views.runs import trial_pages

from testdata import FIXTURES, RUNS

ADDED = "iphone-17-pro-ios27-24a5264n-pcc-quick-2026-11-02"
"""A PCC run on a device and build that other runs share: it touches a comparison and the PCC page."""


def _files(folder: Path) -> dict[str, Path]:
    return {str(p.relative_to(folder)): p for p in sorted(folder.rglob("*")) if p.is_file()}


def _same_tree(a: Path, b: Path) -> bool:
    fa, fb = _files(a), _files(b)
    return fa.keys() == fb.keys() and all(filecmp.cmp(fa[k], fb[k], shallow=False) for k in fa)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The fixture corpus's iPhone runs, with one held back in a folder of its own."""
    root = tmp_path_factory.mktemp("incremental")
    base, later = root / "base", root / "later"
    base.mkdir()
    later.mkdir()
    for path in sorted(FIXTURES.glob("iphone-17-pro-*")):
        shutil.copy(path, (later if path.name.startswith(ADDED) else base) / path.name)
    return base, later


def _expected(db: Path, run_id: str, site: Path) -> set[str]:
    """The pages and files one added run touches, worked out from the database and the site's comparison pages."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        hardware, os_build, route, file_name = con.execute(
            "SELECT hardware_model, os_build, route, file_name FROM runs WHERE run_id = ?", [run_id]
        ).fetchone()
        scenarios = [s for (s,) in con.execute("SELECT scenario_id FROM scenario_figures WHERE run_id = ?", [run_id]).fetchall()]
        pages = trial_pages(con, run_id)
        device_builds = [b for (b,) in con.execute(
            "SELECT DISTINCT os_build FROM runs WHERE hardware_model = ? AND os_build IS NOT NULL", [hardware]
        ).fetchall()]
    finally:
        con.close()
    paths = [
        urls.home(), urls.runs(), urls.devices(), urls.scenarios(), urls.data(), urls.compare_index(),
        urls.regressions(), urls.regressions_feed(), urls.data_runs_index(), urls.data_search_index(), urls.revisions(),
        urls.device(hardware), urls.run(run_id), urls.data_trials_csv(run_id), urls.data_figures(run_id),
        urls.data_source_gzip(run_id, file_name), urls.builds(),
    ]
    paths += [urls.build(b) for b in device_builds]  # each build page says what changed against the device's others
    paths += [urls.trials(run_id, s, page) for s, page in pages]
    paths += [
        p for s in scenarios for p in (urls.scenario(s), urls.data_trials_json(run_id, s))
    ]
    assert route == "privateCloudCompute"
    paths.append(urls.pcc())
    comparisons = [
        str(p.relative_to(site)) for p in (site / "compare" / urls.slug(hardware)).glob("*/index.html")
        if os_build in p.parent.name.split("..")
    ]
    assert comparisons, "the added run's build is compared with another"
    return {output_file(p) for p in paths} | set(comparisons)


def test_an_unchanged_rebuild_renders_nothing_and_writes_nothing(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    base, _ = corpus
    db = tmp_path / "db.duckdb"
    assert ingest_paths([base], db).ok
    site = tmp_path / "site"
    build_site(db, site)
    times = {p: p.stat().st_mtime_ns for p in site.rglob("*")}
    report = build_site(db, site)
    assert report.rendered == [] and report.changed == [] and report.removed == []
    assert {p: p.stat().st_mtime_ns for p in site.rglob("*")} == times
    assert report.pages > 0 and report.bytes_total > 0  # still reports what the site holds


def test_adding_one_run_re_renders_exactly_the_pages_it_touches_and_matches_a_full_build(
    corpus: tuple[Path, Path], tmp_path: Path
) -> None:
    base, later = corpus
    db = tmp_path / "db.duckdb"
    assert ingest_paths([base], db).ok
    site = tmp_path / "site"
    full = build_site(db, site)
    untouched = {f: p.stat().st_mtime_ns for f, p in _files(site).items()}

    added = ingest_paths([later], db)
    (run_id,) = [o.run_id for o in added.outcomes if o.status == "ingested"]
    report = build_site(db, site)

    assert set(report.rendered) == _expected(db, run_id, site)
    assert len(report.rendered) < (full.pages + full.data_files) / 4
    for f, mtime in untouched.items():  # what the run does not touch is carried over as it was
        if f not in report.rendered and f != MANIFEST and not f.startswith("assets/"):
            assert (site / f).stat().st_mtime_ns == mtime, f
    fresh = tmp_path / "fresh"
    build_site(db, fresh)
    assert _same_tree(site, fresh)  # the incremental site is byte for byte the full build's


def test_a_page_carries_the_time_its_data_last_changed_not_the_time_of_the_build(tmp_path: Path) -> None:
    db = tmp_path / "db.duckdb"
    assert ingest_paths([RUNS / "purpose-current.json", FIXTURES / f"{ADDED}.json"], db).ok
    build_site(db, tmp_path / "a")
    build_site(db, tmp_path / "b", base_url="/")
    assert _same_tree(tmp_path / "a", tmp_path / "b")
    con = duckdb.connect(str(db), read_only=True)
    newest = con.execute("SELECT max(ingested_at) FROM runs").fetchone()[0]
    con.close()
    home = (tmp_path / "a" / "index.html").read_text(encoding="utf-8")
    assert f"Generated {newest:%Y-%m-%d %H:%M} UTC by fmbench" in home
    assert "Generated by fmbench" in (tmp_path / "a" / "methodology" / "index.html").read_text(encoding="utf-8")
