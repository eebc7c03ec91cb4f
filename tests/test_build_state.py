"""The build's own records (manifest, caches) live beside the database, never in the site; serve hides dot-files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fmbench.comparison.cache import CACHE_FILE as COMPARISONS_FILE
from fmbench.ingest import ingest_paths
from fmbench.publish.build import MANIFEST, BuildError, build_site
from fmbench.publish.regression_cache import CACHE_FILE as REGRESSIONS_FILE
from fmbench.publish.state import LEGACY_FILES, output_key, state_folder

from testdata import FIXTURES, RUNS

ADDED = "iphone-17-pro-ios27-24a5264n-pcc-quick-2026-11-02.json"


def _internal(site: Path) -> list[str]:
    """Every dot-file or dot-folder and every pickle anywhere under ``site``."""
    return sorted(
        str(p.relative_to(site)) for p in site.rglob("*")
        if any(part.startswith(".") for part in p.relative_to(site).parts) or p.suffix in (".pickle", ".pkl")
    )


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "db.duckdb"
    base = [p for p in sorted(FIXTURES.glob("iphone-17-pro-*.json")) if p.name != ADDED]
    assert ingest_paths([RUNS / "purpose-current.json", *base], path).ok
    return path


def test_a_built_site_full_and_incremental_holds_no_dot_file_and_no_pickle(db: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    full = build_site(db, site)
    assert full.rendered and _internal(site) == []
    records = state_folder(db, site)
    assert records.parent == tmp_path / "db.duckdb.builds"
    assert {MANIFEST, COMPARISONS_FILE, REGRESSIONS_FILE} <= {p.name for p in records.iterdir()}

    assert ingest_paths([FIXTURES / ADDED], db).ok
    incremental = build_site(db, site)
    assert incremental.rendered and len(incremental.rendered) < len(full.rendered)  # the manifest was found
    assert _internal(site) == []
    assert build_site(db, site).rendered == []  # and written again for the next build


def test_another_output_folder_with_the_same_database_is_built_whole_and_has_records_of_its_own(
    db: Path, tmp_path: Path
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    full = build_site(db, first)
    other = build_site(db, second)
    assert sorted(other.rendered) == sorted(full.rendered)
    assert state_folder(db, first) != state_folder(db, second)
    manifest = json.loads((state_folder(db, second) / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["output"] == output_key(db, second) == "second"
    assert build_site(db, first).rendered == [] and build_site(db, second).rendered == []


def test_an_emptied_output_folder_is_built_whole_again(db: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    full = build_site(db, site)
    for child in site.iterdir():
        shutil.rmtree(child) if child.is_dir() else child.unlink()
    again = build_site(db, site)
    assert sorted(again.rendered) == sorted(full.rendered)
    assert (site / "index.html").is_file() and _internal(site) == []


def test_a_page_removed_by_hand_is_rendered_again(db: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_site(db, site)
    (site / "runs" / "index.html").unlink()
    again = build_site(db, site)
    assert again.rendered == ["runs/index.html"] and (site / "runs" / "index.html").is_file()


def test_a_project_moved_with_its_database_keeps_its_records(db: Path, tmp_path: Path) -> None:
    build_site(db, tmp_path / "site")
    moved = tmp_path / "moved"
    moved.mkdir()
    for name in ("db.duckdb", "db.duckdb.builds", "db.duckdb.resamples", "site"):
        if (tmp_path / name).exists():
            (tmp_path / name).rename(moved / name)
    assert build_site(moved / "db.duckdb", moved / "site").rendered == []


def test_the_records_an_earlier_version_left_in_the_site_are_removed(db: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_site(db, site)
    for name in LEGACY_FILES:
        (site / name).write_bytes(b"left by an earlier fmbench")
    build_site(db, site)  # nothing else changed
    assert _internal(site) == []

    shutil.rmtree(tmp_path / "db.duckdb.builds")  # an upgrade: no records beside the database yet
    for name in LEGACY_FILES:
        (site / name).write_bytes(b"left by an earlier fmbench")
    assert build_site(db, site).rendered
    assert _internal(site) == []


def test_a_folder_fmbench_did_not_build_is_still_refused(db: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("my own", encoding="utf-8")
    with pytest.raises(BuildError, match="was not written by fmbench build"):
        build_site(db, mine)
    assert (mine / "notes.txt").read_text(encoding="utf-8") == "my own"


def test_a_site_whose_records_were_deleted_is_built_again_in_place(db: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_site(db, site)
    shutil.rmtree(tmp_path / "db.duckdb.builds")
    assert build_site(db, site).rendered  # its home page says fmbench made it
    assert _internal(site) == []
