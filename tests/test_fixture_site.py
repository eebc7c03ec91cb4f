"""A build of the whole fixture corpus: a comparison for every pair of builds that share a configuration, a page
for every OS build, and no internal link that leads nowhere."""

from __future__ import annotations

import itertools
from pathlib import Path

import duckdb
import pytest

from fmbench import urls

from sitebuild import broken_links, fixture_site

CONFIG = "route, suite, session_mode, reasoning_level, fallback_mode, connectivity, generation"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return fixture_site(tmp_path_factory.mktemp("fixture-site"))


def _sharing_pairs(db: Path) -> set[tuple[str, frozenset[str]]]:
    """(device, {build, build}) for every two builds of a device measured with one configuration (runs that are
    evidence), worked out from the database on its own."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        found = con.execute(
            f"SELECT hardware_model, {CONFIG}, list(DISTINCT os_build) FROM runs "
            "WHERE verdict <> 'invalid' AND os_build IS NOT NULL AND hardware_model IS NOT NULL GROUP BY ALL"
        ).fetchall()
    finally:
        con.close()
    return {(row[0], frozenset(p)) for row in found for p in itertools.combinations(row[-1], 2)}


def test_every_pair_of_builds_that_share_a_configuration_has_a_comparison_page(built: tuple[Path, Path]) -> None:
    db, out = built
    pairs = _sharing_pairs(db)
    assert len(pairs) > 5  # more than the consecutive steps alone
    published = {
        (p.parent.parent.name, frozenset(p.parent.name.split(".."))) for p in (out / "compare").glob("*/*..*/index.html")
    }
    assert {(urls.slug(device), builds) for device, builds in pairs} <= published


def test_every_os_build_has_a_page_and_the_index_links_each(built: tuple[Path, Path]) -> None:
    db, out = built
    con = duckdb.connect(str(db), read_only=True)
    try:
        builds = [b for (b,) in con.execute("SELECT DISTINCT os_build FROM runs WHERE os_build IS NOT NULL").fetchall()]
    finally:
        con.close()
    index = (out / "builds" / "index.html").read_text(encoding="utf-8")
    for build in builds:
        assert (out / urls.build(build) / "index.html").is_file(), build
        assert f'href="/{urls.build(build)}"' in index, build


def test_every_internal_link_of_the_fixture_site_resolves(built: tuple[Path, Path]) -> None:
    assert broken_links(built[1]) == []


def test_every_two_devices_sharing_a_generation_and_configuration_have_a_device_comparison(built: tuple[Path, Path]) -> None:
    db, out = built
    con = duckdb.connect(str(db), read_only=True)
    try:
        found = con.execute(
            f"SELECT os_generation, {CONFIG}, list(DISTINCT hardware_model ORDER BY hardware_model) FROM runs "
            "WHERE verdict <> 'invalid' AND os_build IS NOT NULL AND hardware_model IS NOT NULL "
            "AND os_generation IS NOT NULL GROUP BY ALL"
        ).fetchall()
    finally:
        con.close()
    expected = {(a, b, row[0]) for row in found for a, b in itertools.combinations(row[-1], 2)}
    assert expected
    for a, b, generation in expected:
        assert (out / urls.device_comparison(a, b, generation) / "index.html").is_file(), (a, b, generation)
    index = (out / "compare" / "index.html").read_text(encoding="utf-8")
    assert all(f'href="/{urls.device_comparison(a, b, g)}"' in index for a, b, g in expected)


def test_no_page_of_the_fixture_site_lays_out_a_card_for_a_chart_with_no_value(built: tuple[Path, Path]) -> None:
    _, out = built
    named = 0
    for page in out.rglob("index.html"):
        html = page.read_text(encoding="utf-8")
        assert "nothing to chart" not in html and "no change to chart" not in html, page.relative_to(out)
        for section in html.split("<section")[1:]:  # a place's charts are named once, in one sentence
            assert section.count('class="muted charts-none"') <= 1, page.relative_to(out)
        named += html.count('class="muted charts-none"')
    assert named  # the corpus has such charts (a PCC run that recorded no TTFT): they are said in words
