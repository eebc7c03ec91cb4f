"""The resample store: each side's bootstrap resamples computed once, kept beside the database for the builds and
the server that come after, exact to the bit, and never trusted when an entry is damaged."""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from fmbench.analysis import stats
from fmbench.comparison import resample_store
from fmbench.comparison.compare import compare_runs
from fmbench.comparison.resample_store import ENTRY, Resamples, ResampleStore, location, store_for
from fmbench.ingest import ingest_paths
from fmbench.publish.build import build_site
from fmbench.serving.serve import create_app

from testdata import iphone_runs_with_one_held_back

ADDED = "iphone-17-pro-ios27-24a5264n-on-device-performance-2026-11-03"
"""An on-device performance run of a device and build that other runs share: it changes the sides of comparisons."""
HOST = {"Host": "127.0.0.1:8000"}

UNEVEN = [
    [[12.5, 3.25, 7.0], [1.5, 9.75], [4.0, 4.0, 8.5, 2.25]],
    [[6.0, 11.0], [3.5, 3.5, 10.25]],
]
"""Runs of uneven samples (empty slots in the resamples), with ties."""
OUTCOMES = [[[1.0, 0.0, 1.0, 1.0], [0.0, 1.0]], [[1.0, 1.0, 1.0], [1.0, 0.0, 0.0, 1.0, 1.0]]]
"""0/1 outcomes: a rate, whose resampled means the store keeps as whole sums and counts."""
SCORES = [[[0.25, 0.5, 0.75, 1.0, 0.5, 0.125]]]
"""One run of one sample of scores: a mean that is no rate."""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The fixture corpus's iPhone runs, with one held back in a folder of its own."""
    return iphone_runs_with_one_held_back(tmp_path_factory.mktemp("resample-store"), ADDED)


def _database(corpus: tuple[Path, Path], folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "db.duckdb"
    assert ingest_paths([corpus[0]], db).ok
    return db


def _entries(db: Path) -> dict[str, int]:
    """The store's entries beside ``db``, each with its inode (an entry written again is a new file)."""
    folder = location(db)
    assert folder is not None
    return {str(p.relative_to(folder)): p.stat().st_ino for p in sorted(folder.glob(f"??/*{ENTRY}"))}


def _same_tree(a: Path, b: Path) -> bool:
    fa = {str(p.relative_to(a)): p for p in a.rglob("*") if p.is_file()}
    fb = {str(p.relative_to(b)): p for p in b.rglob("*") if p.is_file()}
    return fa.keys() == fb.keys() and all(filecmp.cmp(fa[k], fb[k], shallow=False) for k in fa)


def _results(kept: Resamples | None = None) -> list[bytes]:
    return [
        a.tobytes()
        for a in (
            stats.resampled_quantiles(UNEVEN, kept=kept), stats.resampled_quantiles(UNEVEN, (0.9,), kept),
            stats.resampled_means(UNEVEN, kept), stats.resampled_means(OUTCOMES, kept),
            stats.resampled_means(SCORES, kept),
        )
    ]


def test_stored_resamples_are_the_same_bits_as_resampling(tmp_path: Path) -> None:
    computed = _results()
    store = ResampleStore(tmp_path / "store")
    first = Resamples(store)
    assert _results(first) == computed and first.drawn == 5  # resampled, and written
    again = Resamples(store)  # another owner: nothing in its memory
    assert _results(again) == computed and again.drawn == 0  # read
    assert store.writes == 5 and store.reads == 5 and store.ignored == 0
    assert store.size()[0] == 5


def test_an_entry_is_an_npz_numpy_reads_without_pickle(tmp_path: Path) -> None:
    store = ResampleStore(tmp_path / "store")
    _results(Resamples(store))
    entries = sorted((tmp_path / "store").glob(f"??/*{ENTRY}"))
    assert len(entries) == 5
    for entry in entries:
        with np.load(entry, allow_pickle=False) as found:
            assert found.files[0] == "key" and all(found[name].ndim == 1 for name in found.files)


def test_resamples_met_by_one_owner_are_kept_in_its_memory_and_not_in_another_s() -> None:
    one, other = Resamples(), Resamples()
    assert _results(one) == _results(one) and one.drawn == 5  # the second time from its memory
    assert _results(other) == _results(one) and other.drawn == 5  # nothing of the first owner's


DRAWS_OF_ALGORITHM = {
    1: "cd639e1ac8010020cc9a4f1524154b620b0917afd798c0731fc831b3d4ba2f34",
    2: "07922b03cc37ab190b51a8faa0e0e853c6852032b036fa177117939647bf27b8",
}
"""SHA-256 of the resamples of :data:`UNEVEN`, :data:`OUTCOMES` and :data:`SCORES` (see ``_results``) that each
version of the draw gives."""


def test_the_draw_is_the_one_its_algorithm_version_names() -> None:
    import hashlib

    found = hashlib.sha256(b"".join(_results())).hexdigest()
    assert DRAWS_OF_ALGORITHM.get(resample_store.ALGORITHM) == found, (
        "the resampling changed: bump fmbench.comparison.resample_store.ALGORITHM (so no stored entry of the old draw is read) "
        "and add the new draw's digest here"
    )


def test_a_damaged_or_foreign_entry_is_ignored_and_the_side_resampled_again(tmp_path: Path) -> None:
    computed = _results()
    store = ResampleStore(tmp_path / "store")
    _results(Resamples(store))
    entries = sorted((tmp_path / "store").glob(f"??/*{ENTRY}"))
    assert len(entries) == 5
    truncated, flipped, foreign, garbage, empty = entries
    data = truncated.read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    data = bytearray(flipped.read_bytes())
    data[len(data) // 2] ^= 0xFF  # the CRC of its member no longer holds
    flipped.write_bytes(bytes(data))
    foreign.write_bytes(garbage.read_bytes())  # a whole entry, of another key
    garbage.write_bytes(b"\x80\x04 not an entry" * 40)
    empty.write_bytes(b"")

    kept = Resamples(store)
    assert _results(kept) == computed
    assert kept.drawn == 5 and store.ignored == 5
    kept = Resamples(store)
    assert _results(kept) == computed  # written again, whole
    assert kept.drawn == 0


def test_an_entry_whose_indices_fall_outside_its_side_is_not_trusted(tmp_path: Path) -> None:
    computed = stats.resampled_quantiles(UNEVEN).tobytes()
    store = ResampleStore(tmp_path / "store")
    values = sum(len(s) for run in UNEVEN for s in run)
    # A well-formed entry of the right key, checksum and all, whose indices point past the side's values.
    store.save(stats._side_digest(UNEVEN), (0.5, 0.9), values, stats.RESAMPLES,
               [np.full(2 * stats.RESAMPLES, values + 3, dtype=np.int16)])
    kept = Resamples(store)
    assert stats.resampled_quantiles(UNEVEN, kept=kept).tobytes() == computed
    assert kept.drawn == 1


def test_the_store_lives_beside_its_database_file_or_dataset_folder_and_a_remote_dataset_has_none(tmp_path: Path) -> None:
    assert location(tmp_path / "fmbench.duckdb") == tmp_path / "fmbench.duckdb.resamples"
    (tmp_path / "dataset").mkdir()
    assert location(tmp_path / "dataset") == tmp_path / "dataset.resamples"
    assert location("s3://bucket/fmbench") is None and store_for("https://example.org/fmbench") is None


def test_a_second_build_in_a_new_process_reads_every_side_from_the_store_and_writes_the_same_site(
    corpus: tuple[Path, Path], tmp_path: Path
) -> None:
    db = _database(corpus, tmp_path)
    first = build_site(db, tmp_path / "a", jobs=1)
    entries = _entries(db)
    assert first.resamples_drawn > 0 and len(entries) == first.resamples_drawn

    done = subprocess.run(
        # -P and a folder outside the checkout: the installed fmbench, not the source folder of the same name.
        [sys.executable, "-P", "-m", "fmbench", "build", "--db", str(db), "--out", str(tmp_path / "b")],
        capture_output=True, text=True, cwd=tmp_path, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert _entries(db) == entries  # nothing resampled: not one entry written again
    assert _same_tree(tmp_path / "a", tmp_path / "b")


def test_an_incremental_build_resamples_only_the_sides_the_added_run_changed(
    corpus: tuple[Path, Path], tmp_path: Path
) -> None:
    db = _database(corpus, tmp_path)
    site = tmp_path / "site"
    build_site(db, site)
    before = set(_entries(db))
    assert ingest_paths([corpus[1]], db).ok
    incremental = build_site(db, site)
    added = set(_entries(db)) - before
    assert incremental.resamples_drawn == len(added) > 0

    # The run's sides are those a full build of the new database needs and the old site did not: every other
    # side holds the same runs' values as before. The incremental build resampled those and nothing else.
    shutil.rmtree(location(db))  # type: ignore[arg-type]
    full = build_site(db, tmp_path / "fresh")
    assert set(_entries(db)) - before == added
    assert incremental.resamples_drawn < full.resamples_drawn


def test_a_full_build_removes_the_entries_no_page_uses_and_an_incremental_build_keeps_them(
    corpus: tuple[Path, Path], tmp_path: Path
) -> None:
    db = _database(corpus, tmp_path)
    build_site(db, tmp_path / "site")
    folder = location(db)
    assert folder is not None
    stats.resampled_means(SCORES, Resamples(ResampleStore(folder)))  # a side no page of this database has
    hour_ago = time.time() - 3600
    for entry in folder.glob(f"??/*{ENTRY}"):
        os.utime(entry, (hour_ago, hour_ago))
    count = len(_entries(db))

    assert ingest_paths([corpus[1]], db).ok
    incremental = build_site(db, tmp_path / "site")
    assert incremental.resamples_removed == 0 and len(_entries(db)) == count + incremental.resamples_drawn

    full = build_site(db, tmp_path / "fresh")
    assert full.resamples_drawn == 0 and full.resamples_removed > 0
    assert len(_entries(db)) == count + incremental.resamples_drawn - full.resamples_removed
    kept = Resamples(ResampleStore(folder))
    stats.resampled_means(SCORES, kept)
    assert kept.drawn == 1  # it was removed
    assert build_site(db, tmp_path / "again").resamples_drawn == 0  # what the site needs was kept


def test_a_database_beside_which_nothing_can_be_written_still_builds_and_serves_the_same_pages(
    corpus: tuple[Path, Path], tmp_path: Path
) -> None:
    # Tests may run as root, whom a read-only mode does not stop: a file where the store's folder would go
    # refuses every write (and read) the same way.
    db = _database(corpus, tmp_path / "blocked")
    blocked = location(db)
    assert blocked is not None
    blocked.write_bytes(b"not a folder")
    report = build_site(db, tmp_path / "blocked-site")
    assert report.resamples_drawn > 0 and blocked.read_bytes() == b"not a folder"

    other = tmp_path / "writable"
    other.mkdir()
    shutil.copy(db, other / "db.duckdb")
    build_site(other / "db.duckdb", tmp_path / "site")
    assert _same_tree(tmp_path / "blocked-site", tmp_path / "site")

    comparison = next((tmp_path / "site" / "compare").glob("*/*/index.html")).parent
    client = create_app(db).test_client()
    response = client.get("/" + comparison.relative_to(tmp_path / "site").as_posix() + "/", headers=HOST)
    assert response.status_code == 200 and b"cluster bootstrap" in response.data
    assert blocked.read_bytes() == b"not a folder"


def test_serve_answers_a_comparison_s_first_request_from_the_build_s_store(
    corpus: tuple[Path, Path], tmp_path: Path
) -> None:
    db = _database(corpus, tmp_path)
    build_site(db, tmp_path / "site")
    entries = _entries(db)
    comparison = next((tmp_path / "site" / "compare").glob("*/*/index.html")).parent

    app = create_app(db)  # a new server remembers nothing but the store's files
    client = app.test_client()
    response = client.get("/" + comparison.relative_to(tmp_path / "site").as_posix() + "/", headers=HOST)
    assert response.status_code == 200 and b"cluster bootstrap" in response.data
    kept = app.config["FMBENCH_CACHES"].resamples
    store = kept.store
    assert store is not None and store.folder == location(db)
    assert kept.drawn == 0 and store.reads > 0 and store.writes == 0
    assert _entries(db) == entries


def test_fmbench_compare_on_a_database_resamples_a_side_once_and_reads_it_from_the_store_after(
    corpus: tuple[Path, Path], tmp_path: Path
) -> None:
    db = _database(corpus, tmp_path)
    sides = ("os_build=23B85 route=onDevice suite=full", "os_build=24A5264n route=onDevice suite=full")
    first = compare_runs(*sides, db)
    entries = _entries(db)
    assert entries  # resampled, and written beside the database

    again = compare_runs(*sides, db)  # another comparison remembers nothing but the store's files
    assert _entries(db) == entries  # read: not one entry written again
    assert again.to_json() == first.to_json()
