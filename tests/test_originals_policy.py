"""The originals policy: the site carries each original run file gzipped (the default), linked or copied."""

from __future__ import annotations

import gzip
import hashlib
import re
import shutil
from pathlib import Path

import duckdb
import pytest

import fmbench.publish.build
from fmbench import urls
from fmbench.analysis.revisions import fixtures_registry
from fmbench.comparison.cache import CACHE_FILE as COMPARISONS_FILE
from fmbench.publish.build import BuildError, build_site
from fmbench.publish.regression_cache import CACHE_FILE

from sitebuild import broken_links, purpose_db
from testdata import RUNS

REPOSITORY = "https://git.example.org/lab/results/blob/main/runs"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return purpose_db(tmp_path_factory.mktemp("originals") / "runs.duckdb", fixtures_registry())


@pytest.fixture(scope="module")
def originals(db: Path) -> list[tuple[str, str, str]]:
    """``(run id, file name, SHA-256)`` of every run."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [tuple(r) for r in con.execute("SELECT run_id, file_name, source_sha256 FROM runs ORDER BY run_id").fetchall()]
    finally:
        con.close()


@pytest.fixture(scope="module")
def links(originals: list[tuple[str, str, str]]) -> dict[str, str]:
    """What a project with a repository URL gives the build: each run file's page in the repository."""
    return {run_id: f"{REPOSITORY}/{name}" for run_id, name, _ in originals}


def _build(db: Path, out: Path, links: dict[str, str], originals: str) -> Path:
    build_site(db, out, registry=fixtures_registry(), source_links=links, originals=originals)
    return out


@pytest.fixture(scope="module")
def gzip_site(db: Path, links: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build(db, tmp_path_factory.mktemp("gzip") / "_site", links, "gzip")


@pytest.fixture(scope="module")
def link_site(db: Path, links: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build(db, tmp_path_factory.mktemp("link") / "_site", links, "link")


def _files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


_ORIGINAL_LINK = re.compile(
    r'<a href="[^"]*">Original run file \([^)]*\)</a> <span class="muted">\([^)]*\)</span>'  # run page
    r'|<li><a href="[^"]*">The run file in the publisher&#39;s repository</a></li>'  # said once under `link`
    r'|<td><a href="[^"]*\.json(\.gz)?">[^<]*\.json(\.gz)?</a></td>'  # data page
)


def test_every_original_decompresses_to_its_exact_bytes(gzip_site: Path, originals: list[tuple[str, str, str]]) -> None:
    assert originals
    for run_id, name, sha in originals:
        stored = gzip_site / urls.data_source_gzip(run_id, name)
        assert hashlib.sha256(gzip.decompress(stored.read_bytes())).hexdigest() == sha, name
        assert not (gzip_site / urls.data_source(run_id, name)).exists()
        assert sha in (gzip_site / urls.run(run_id) / "index.html").read_text(encoding="utf-8")
    kept = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in RUNS.glob("*.json")}
    assert {name: sha for _, name, sha in originals if name in kept} == {n: s for n, s in kept.items() if n in {o[1] for o in originals}}


def test_the_link_policy_writes_no_original_and_links_each_to_the_repository(
    link_site: Path, originals: list[tuple[str, str, str]]
) -> None:
    for run_id, name, sha in originals:
        assert not (link_site / urls.data_source_gzip(run_id, name)).exists()
        assert not (link_site / urls.data_source(run_id, name)).exists()
        page = (link_site / urls.run(run_id) / "index.html").read_text(encoding="utf-8")
        assert f'href="{REPOSITORY}/{name}"' in page and sha in page
    assert broken_links(link_site) == []


def test_gzip_and_link_sites_serve_the_same_pages_apart_from_the_originals(gzip_site: Path, link_site: Path) -> None:
    gz, linked = _files(gzip_site), _files(link_site)
    for bookkeeping in (fmbench.publish.build.MANIFEST, CACHE_FILE, COMPARISONS_FILE):  # the build's own records: not in the site
        assert bookkeeping not in gz and bookkeeping not in linked
    only_gzip = set(gz) - set(linked)
    assert only_gzip and all(f.endswith(".json.gz") and f.count("/") == 3 for f in only_gzip)  # data/runs/<id>/<file>.gz
    assert set(linked) <= set(gz)
    differ = sorted(f for f in linked if gz[f] != linked[f])
    assert all((f.endswith("index.html") and (f.startswith("runs/") or f == "data/index.html")) or f == "data/runs.json" for f in differ)
    for f in differ:
        if f.endswith(".html"):
            a = _ORIGINAL_LINK.sub("", gz[f].decode("utf-8"))
            b = _ORIGINAL_LINK.sub("", linked[f].decode("utf-8"))
            assert a == b, f


def test_the_copy_policy_writes_each_original_as_ingested(
    db: Path, links: dict[str, str], originals: list[tuple[str, str, str]], tmp_path: Path
) -> None:
    site = _build(db, tmp_path / "_site", {}, "copy")
    for run_id, name, sha in originals:
        assert hashlib.sha256((site / urls.data_source(run_id, name)).read_bytes()).hexdigest() == sha
    assert broken_links(site) == []


def test_an_unknown_policy_is_refused_naming_the_choices(db: Path, tmp_path: Path) -> None:
    with pytest.raises(BuildError, match="'zip' is not a policy; use one of gzip, link, copy"):
        build_site(db, tmp_path / "_site", originals="zip")
    assert not (tmp_path / "_site").exists()


def test_a_site_past_the_publishing_limit_is_warned_about_in_one_line(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = build_site(db, tmp_path / "_site", registry=fixtures_registry())
    assert report.warnings == []
    monkeypatch.setattr(fmbench.publish.build, "PUBLISHING_LIMIT", report.bytes_total - 1)
    again = build_site(db, tmp_path / "_site", registry=fixtures_registry())  # unchanged: still warned
    (warning,) = again.warnings
    assert "over the 1 GB GitHub Pages publishes" in warning and "\n" not in warning


def test_a_site_past_the_hosts_file_count_is_warned_about_in_one_line(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = build_site(db, tmp_path / "_site", registry=fixtures_registry())
    assert report.files_total == sum(1 for p in (tmp_path / "_site").rglob("*") if p.is_file())
    monkeypatch.setattr(fmbench.publish.build, "FILE_COUNT_LIMIT", report.files_total - 1)
    (warning,) = build_site(db, tmp_path / "_site", registry=fixtures_registry()).warnings
    assert f"the site has {report.files_total:,} files, over the 20,000" in warning and "\n" not in warning


def test_the_build_command_takes_the_policy_and_refuses_an_unknown_one(
    db: Path, originals: list[tuple[str, str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from fmbench.cli import main

    monkeypatch.chdir(tmp_path)  # outside any project
    out = tmp_path / "_site"
    result = CliRunner().invoke(main, ["build", "--db", str(db), "--out", str(out), "--originals", "copy"])
    assert result.exit_code == 0, result.output
    run_id, name, sha = originals[0]
    assert hashlib.sha256((out / urls.data_source(run_id, name)).read_bytes()).hexdigest() == sha
    refused = CliRunner().invoke(main, ["build", "--db", str(db), "--out", str(out), "--originals", "zip"])
    assert refused.exit_code == 2 and "'zip' is not one of 'gzip', 'link', 'copy'" in refused.output


def test_a_database_that_stored_raw_files_before_migration_6_builds_the_same_site(
    db: Path, gzip_site: Path, links: dict[str, str], tmp_path: Path
) -> None:
    # A database from before migration 6 keeps each file's own bytes (encoding 'identity'); the build gzips
    # them as the ingest now does, so the site is the same, originals and all.
    old = tmp_path / "old.duckdb"
    shutil.copyfile(db, old)
    con = duckdb.connect(str(old))
    try:
        stored = con.execute("SELECT sha256, content, encoding FROM sources").fetchall()
        assert stored and {encoding for _, _, encoding in stored} == {"gzip"}
        for sha, content, _ in stored:
            con.execute(
                "UPDATE sources SET content = ?, encoding = 'identity' WHERE sha256 = ?", [gzip.decompress(content), sha]
            )
    finally:
        con.close()
    site = _build(old, tmp_path / "_site", links, "gzip")
    ours = {p.relative_to(site) for p in site.rglob("*") if p.is_file()}
    theirs = {p.relative_to(gzip_site) for p in gzip_site.rglob("*") if p.is_file()}
    assert ours == theirs
    differing = [str(f) for f in sorted(ours) if (site / f).read_bytes() != (gzip_site / f).read_bytes()]
    assert differing == []
