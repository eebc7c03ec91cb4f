"""Incremental builds: a rebuild renders only what its inputs changed, and ends up where a full build would."""

from __future__ import annotations

import filecmp
import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from fmbench import urls
from fmbench.analysis.os_builds import build_sort_key
from fmbench.comparison.cache import CACHE_FILE as COMPARISONS_FILE
from fmbench.ingest import ingest_paths
from fmbench.publish.build import BuildReport, build_site, output_file
from fmbench.publish.regression_cache import CACHE_FILE as REGRESSIONS_FILE
from fmbench.publish.state import state_folder
from fmbench.views.trials import trial_pages

from testdata import FIXTURES, RUNS, iphone_runs_with_one_held_back

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
    return iphone_runs_with_one_held_back(tmp_path_factory.mktemp("incremental"), ADDED)


def _expected(db: Path, run_id: str, site: Path) -> set[str]:
    """The pages and files one added run touches, worked out from the database and the site's comparison pages."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        hardware, os_build, route, file_name = con.execute(
            "SELECT hardware_model, os_build, route, file_name FROM runs WHERE run_id = ?", [run_id]
        ).fetchone()
        scenarios = [s for (s,) in con.execute("SELECT scenario_id FROM scenario_figures WHERE run_id = ?", [run_id]).fetchall()]
        categories = [c for (c,) in con.execute(  # every category any run records for one of its scenarios, that
            # holds two workloads or more (a category of one has no page: its workload's leaderboard is its board)
            "SELECT category FROM scenario_figures WHERE category IN (SELECT category FROM scenario_figures WHERE "
            "scenario_id IN (SELECT scenario_id FROM scenario_figures WHERE run_id = ?)) "
            "GROUP BY category HAVING count(DISTINCT scenario_id) >= 2", [run_id]
        ).fetchall()]
        others = [s for (s,) in con.execute(
            "SELECT DISTINCT scenario_id FROM scenario_figures WHERE list_contains(?, category)", [categories]
        ).fetchall()] if categories else []
        pages = trial_pages(con, run_id)
        # a trials page sets its samples against its device's previous build: the trials pages of the device's runs
        # of the route on a later build
        device_trials = [urls.trials(r, s) for r, b in con.execute(
            "SELECT run_id, os_build FROM runs WHERE hardware_model = ? AND route = ? AND os_build IS NOT NULL",
            [hardware, route]).fetchall() if build_sort_key(b) > build_sort_key(os_build) for s in trial_pages(con, r)]
        # a board stands each device on evidence chosen among all its runs: every board the device is on
        device_scenarios = [s for (s,) in con.execute(
            "SELECT DISTINCT f.scenario_id FROM scenario_figures f JOIN runs r USING (run_id) WHERE r.hardware_model = ?",
            [hardware]).fetchall()]
        device_categories = [c for (c,) in con.execute(
            "SELECT category FROM scenario_figures WHERE category IN (SELECT f.category FROM scenario_figures f "
            "JOIN runs r USING (run_id) WHERE r.hardware_model = ?) GROUP BY category "
            "HAVING count(DISTINCT scenario_id) >= 2", [hardware]).fetchall()]
        device_builds = [b for (b,) in con.execute(
            "SELECT DISTINCT os_build FROM runs WHERE hardware_model = ? AND os_build IS NOT NULL", [hardware]
        ).fetchall()]
    finally:
        con.close()
    paths = [
        urls.home(), urls.runs(), urls.devices(), urls.scenarios(), urls.data(), urls.compare_index(),
        urls.regressions(), urls.regressions_feed(), urls.data_runs_index(), urls.data_search_index(), urls.revisions(),
        urls.device(hardware), urls.run(run_id), urls.data_figures(run_id),
        urls.data_source_gzip(run_id, file_name), urls.builds(), urls.leaderboards(), urls.coverage(),
    ]
    paths += [urls.leaderboard_category(c) for c in categories]  # the boards of its scenarios' categories
    paths += [urls.leaderboard(s) for s in others]  # the boards of those categories' other workloads link them
    paths += [urls.leaderboard(s) for s in device_scenarios]
    paths += [urls.leaderboard_category(c) for c in device_categories]
    paths += [urls.build(b) for b in device_builds]  # each build page says what changed against the device's others
    paths += [urls.trials(run_id, s) for s in pages] + device_trials
    paths += [
        p for s in scenarios for p in (urls.scenario(s), urls.leaderboard(s), urls.data_trials_json(run_id, s))
    ]
    assert route == "privateCloudCompute"
    paths.append(urls.pcc())
    ours = [
        str(p.relative_to(site)) for p in (site / "compare" / urls.slug(hardware)).glob("*/index.html")
        if os_build in p.parent.name.split("..")
    ]
    assert ours, "the added run's build is compared with another"
    # Every OS-build comparison page: which change points its sections name depends on every test of the list.
    comparisons = [str(p.relative_to(site)) for p in (site / "compare").glob("*/*..*/index.html")
                   if p.parts[-3] != "devices"]
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


@dataclass(frozen=True)
class Grown:
    """A site built from the iPhone runs, then built again after one run was added, and a full build beside it."""

    db: Path
    site: Path
    fresh: Path
    full: BuildReport
    report: BuildReport
    run_id: str
    untouched: dict[str, int]
    """Each file's modification time after the first build."""


@pytest.fixture(scope="module")
def grown(corpus: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Grown:
    base, later = corpus
    folder = tmp_path_factory.mktemp("grown")
    db, site, fresh = folder / "db.duckdb", folder / "site", folder / "fresh"
    assert ingest_paths([base], db).ok
    full = build_site(db, site)
    untouched = {f: p.stat().st_mtime_ns for f, p in _files(site).items()}
    added = ingest_paths([later], db)
    (run_id,) = [o.run_id for o in added.outcomes if o.status == "ingested"]
    report = build_site(db, site)
    build_site(db, fresh)
    return Grown(db, site, fresh, full, report, run_id, untouched)


def test_adding_one_run_re_renders_exactly_the_pages_it_touches_and_matches_a_full_build(grown: Grown) -> None:
    report, site = grown.report, grown.site
    assert set(report.rendered) == _expected(grown.db, grown.run_id, site)
    # Each of the run's eleven scenarios has its page, its trials, its leaderboard and its category's boards.
    # A small share of the site: a third (a run is a few files now, one trials page and one data file a scenario,
    # so the site-wide pages it touches weigh more than when a run had a page per 50 trials).
    assert len(report.rendered) < (grown.full.pages + grown.full.data_files) / 3
    for f, mtime in grown.untouched.items():  # what the run does not touch is carried over as it was
        if f not in report.rendered and not f.startswith("assets/"):
            assert (site / f).stat().st_mtime_ns == mtime, f
    assert _same_tree(site, grown.fresh)  # the incremental site is byte for byte the full build's


def test_an_incremental_build_takes_the_comparisons_its_run_leaves_alone_from_the_previous_build(grown: Grown) -> None:
    assert grown.full.comparisons_made > 0
    # The pages it renders again compare configurations the run is not part of: nothing to work out again.
    assert grown.report.comparisons_reused > 0 and grown.report.comparisons_made < grown.full.comparisons_made
    assert _same_tree(grown.site, grown.fresh)  # its pages and its records are a full build's
    ours, theirs = state_folder(grown.db, grown.site), state_folder(grown.db, grown.fresh)
    for record in (COMPARISONS_FILE, REGRESSIONS_FILE):
        assert (ours / record).read_bytes() == (theirs / record).read_bytes(), record


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


def test_adding_one_run_recomputes_the_regression_report_of_its_device_only(tmp_path: Path) -> None:
    from fmbench.comparison.regressions import find_build_changes

    base, later = tmp_path / "base", tmp_path / "later"
    base.mkdir()
    later.mkdir()
    for path in sorted(FIXTURES.glob("*.json")):
        if path.name.startswith(ADDED):
            shutil.copy(path, later / path.name)
        elif path.name.startswith(("iphone-17-pro-", "macbook-pro-m5-", "ipad-pro-m5-")):
            shutil.copy(path, base / path.name)
    db = tmp_path / "db.duckdb"
    assert ingest_paths([base], db).ok
    site = tmp_path / "site"

    def devices_with_steps() -> set[str]:
        con = duckdb.connect(str(db), read_only=True)
        try:
            return {s.group.hardware_model for s in find_build_changes(con).steps}
        finally:
            con.close()

    full: BuildReport = build_site(db, site)
    assert len(devices_with_steps()) >= 3 and set(full.regression_devices) >= devices_with_steps()
    assert build_site(db, site).regression_devices == []  # nothing changed: nothing recomputed

    added = ingest_paths([later], db)
    (run_id,) = [o.run_id for o in added.outcomes if o.status == "ingested"]
    con = duckdb.connect(str(db), read_only=True)
    try:
        (hardware,) = con.execute("SELECT hardware_model FROM runs WHERE run_id = ?", [run_id]).fetchone()
    finally:
        con.close()
    report = build_site(db, site)
    assert report.regression_devices == [hardware]
    fresh = tmp_path / "fresh"
    assert set(build_site(db, fresh).regression_devices) >= devices_with_steps()
    assert _same_tree(site, fresh)  # the regressions page, its feed and the compare index as a full build makes them


def test_a_regression_report_put_together_from_kept_devices_is_the_one_computed_whole(tmp_path: Path) -> None:
    from fmbench.analysis.tolerance import DEFAULT_TOLERANCE
    from fmbench.comparison.regressions import find_build_changes
    from fmbench.publish.regression_cache import build_regressions
    from fmbench.views.inputs import RunIndex

    db = tmp_path / "db.duckdb"
    assert ingest_paths([FIXTURES], db).ok
    con = duckdb.connect(str(db), read_only=True)
    try:
        index = RunIndex.read(con)
        first = build_regressions(con, index, tmp_path, settings="s", tolerance=DEFAULT_TOLERANCE)
        first.save(tmp_path)
        kept = build_regressions(con, index, tmp_path, settings="s", tolerance=DEFAULT_TOLERANCE)
        other = build_regressions(con, index, tmp_path, settings="other", tolerance=DEFAULT_TOLERANCE)
        whole = find_build_changes(con)
    finally:
        con.close()
    assert first.recomputed and kept.recomputed == [] and other.recomputed == first.recomputed
    assert kept.report.to_json() == whole.to_json() == first.report.to_json()
    assert kept.report == whole


class _Boom:
    """A pickle payload that, if it were ever unpickled, would create ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


def test_a_tampered_regression_cache_calls_nothing_and_is_computed_again(tmp_path: Path) -> None:
    import json
    import pickle

    from fmbench.analysis.tolerance import DEFAULT_TOLERANCE
    from fmbench.publish.regression_cache import (
        CACHE_FILE,
        CACHE_FORMAT,
        LEGACY_FILE,
        build_regressions,
    )
    from fmbench.views.inputs import RunIndex

    marker = tmp_path / "unpickled"
    db = tmp_path / "db.duckdb"
    assert ingest_paths([FIXTURES], db).ok
    con = duckdb.connect(str(db), read_only=True)
    try:
        index = RunIndex.read(con)
        honest = build_regressions(con, index, tmp_path, settings="s", tolerance=DEFAULT_TOLERANCE)
        payloads = [
            pickle.dumps(_Boom(marker)).decode("latin-1"),  # a pickle where the steps' JSON goes
            json.dumps([{"@": "Popen", "args": ["touch", str(marker)]}]),  # a class a report is not made of
            json.dumps([{"@": "BuildStep", "group": None}]),  # not the fields of a step
            '{"@t": [1, 2',  # cut short
        ]
        parts = {
            d: {"key": key, "steps": payloads[i % len(payloads)]} for i, (d, (key, _)) in enumerate(honest.parts.items())
        }
        (tmp_path / CACHE_FILE).write_text(json.dumps({"format": CACHE_FORMAT, "parts": parts}))
        (tmp_path / LEGACY_FILE).write_bytes(pickle.dumps(_Boom(marker)))  # an older build's record
        again = build_regressions(con, index, tmp_path, settings="s", tolerance=DEFAULT_TOLERANCE)
        (tmp_path / CACHE_FILE).write_bytes(pickle.dumps(_Boom(marker)))  # a pickle in place of the whole file
        whole = build_regressions(con, index, tmp_path, settings="s", tolerance=DEFAULT_TOLERANCE)
        again.save(tmp_path)
        newer = json.loads((tmp_path / CACHE_FILE).read_text())
        newer["format"] = CACHE_FORMAT + 1  # a newer fmbench's: not read
        (tmp_path / CACHE_FILE).write_text(json.dumps(newer))
        later = build_regressions(con, index, tmp_path, settings="s", tolerance=DEFAULT_TOLERANCE)
    finally:
        con.close()
    assert not marker.exists()
    assert again.recomputed == whole.recomputed == later.recomputed == honest.recomputed
    assert again.report.to_json() == whole.report.to_json() == later.report.to_json() == honest.report.to_json()
    assert not (tmp_path / LEGACY_FILE).exists()  # removed when the records were saved, never read


def test_a_run_re_renders_the_device_comparisons_of_its_own_os_generation_only(tmp_path: Path) -> None:
    from fmbench.analysis.revisions import fixtures_registry

    added = "macbook-pro-m5-macos26-25b78-on-device-quick-2026-11-02.json"
    base = tmp_path / "base"
    base.mkdir()
    for path in FIXTURES.iterdir():
        if path.is_file() and path.name != added and path.suffix in (".json", ".yaml"):
            shutil.copy(path, base / path.name)
    db = tmp_path / "db.duckdb"
    assert ingest_paths([base], db, registry=fixtures_registry()).ok
    site = tmp_path / "site"
    build_site(db, site, registry=fixtures_registry())
    device_pages = {str(p.relative_to(site)) for p in (site / "compare" / "devices").glob("*/*/index.html")}
    assert any("/27/" in p for p in device_pages) and any("/26/" in p and "Mac17,2" in p for p in device_pages)

    assert ingest_paths([FIXTURES / added], db, registry=fixtures_registry()).ok
    report = build_site(db, site, registry=fixtures_registry())

    rendered = {f for f in report.rendered if f.startswith("compare/devices/")}
    assert {p for p in device_pages if "/26/" in p and "Mac17,2" in p} <= rendered  # its generation's, and any new one
    assert all("/26/" in f and "Mac17,2" in f for f in rendered), rendered  # none of generation 27
    fresh = tmp_path / "fresh"
    build_site(db, fresh, registry=fixtures_registry())
    assert _same_tree(site, fresh)  # the generation 27 pages it left alone are the full build's


def test_a_tampered_comparison_cache_calls_nothing_and_is_worked_out_again(
    corpus: tuple[Path, Path], tmp_path: Path
) -> None:
    import json
    import pickle

    from fmbench.comparison.cache import CACHE_FORMAT, LEGACY_FILE

    marker = tmp_path / "unpickled"
    base, later = corpus
    db = tmp_path / "db.duckdb"
    assert ingest_paths([base], db).ok
    site = tmp_path / "site"
    build_site(db, site)
    record = state_folder(db, site) / COMPARISONS_FILE
    doc = json.loads(record.read_text())
    assert doc["format"] == CACHE_FORMAT and doc["entries"]
    payloads = [
        pickle.dumps(_Boom(marker)).decode("latin-1"),
        json.dumps({"@": "ResampleStore", "folder": str(marker)}),  # a class a comparison is not made of
        json.dumps({"@": "Interval", "low": 0.0, "high": 1.0, "confidence": 0.95, "method": "m"}),  # not a comparison
    ]
    doc["entries"] = {key: payloads[i % len(payloads)] for i, key in enumerate(doc["entries"])}
    record.write_text(json.dumps(doc))
    (record.parent / LEGACY_FILE).write_bytes(pickle.dumps(_Boom(marker)))  # an older build's record

    assert ingest_paths([later], db).ok
    report = build_site(db, site)

    assert not marker.exists() and not (record.parent / LEGACY_FILE).exists()
    assert report.comparisons_made > 0  # the tampered entries were refused and worked out again
    fresh = tmp_path / "fresh"
    build_site(db, fresh)
    # A run renders every OS-build comparison page again (the change points their sections name depend on every
    # run), so every tampered entry was refused and worked out again: the record is the full build's, as is every page.
    assert record.read_bytes() == (state_folder(db, fresh) / COMPARISONS_FILE).read_bytes()
    assert _same_tree(site, fresh)
