"""Every link the site prints resolves: each internal href and src of a full build of the fixture corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from fmbench.demo import run_demo

from sitebuild import broken_links, internal_links


@pytest.fixture(scope="module")
def corpus_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus-site")
    run_demo(folder / "fmbench.duckdb", folder / "_site", serve=False, echo=lambda _: None)
    return folder / "_site"


def test_every_internal_href_and_src_of_the_fixture_corpus_site_resolves(corpus_site: Path) -> None:
    pages = list(corpus_site.rglob("*.html"))
    assert len(pages) > 300
    assert sum(len(internal_links(p.read_text(encoding="utf-8"))) for p in pages) > 5_000
    assert broken_links(corpus_site) == []


def test_device_pages_link_only_to_comparisons_the_site_built(corpus_site: Path) -> None:
    for device in (corpus_site / "devices").iterdir():
        if not device.is_dir():
            continue
        html = (device / "index.html").read_text(encoding="utf-8")
        for link in internal_links(html):
            page, _, section = link.partition("#")
            if page.startswith("/compare/") and page.count("/") == 4:
                target = corpus_site / page.strip("/") / "index.html"
                assert target.is_file(), (device.name, link)
                # a configuration's section of it: the page has that section
                assert not section or f'id="{section}"' in target.read_text(encoding="utf-8"), (device.name, link)
