"""Helpers for tests that build or serve the site: databases and a link checker."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from fmbench.analysis.revisions import Registry, fixtures_registry
from fmbench.ingest import ingest_paths
from fmbench.publish.build import build_site
from fmbench.views import PAGES, resolve

from testdata import EXAMPLES, FIXTURES, RUNS


def purpose_db(path: Path, registry: Registry | None = None) -> Path:
    """A database of the purpose-written runs and the benchmark's published example.

    ``registry``: the suite-revision registry to assign with (``None``: the benchmark's public history).
    """
    report = ingest_paths([RUNS, EXAMPLES], path, registry=registry)
    assert report.ok, [o.message for o in report.outcomes if o.status == "error"]
    return path


def fixture_site(root: Path) -> tuple[Path, Path]:
    """The fixture corpus ingested with its registry (as the demo shows it) and built: ``(database, site)``."""
    registry = fixtures_registry()
    db = root / "fixtures.duckdb"
    report = ingest_paths([FIXTURES], db, registry=registry)
    assert report.ok, [o.message for o in report.outcomes if o.status == "error"]
    out = root / "_site"
    build_site(db, out, registry=registry)
    return db, out


def purpose_and_fixture_site(root: Path) -> Path:
    """The purpose-written runs, the benchmark's own published example and the fixture corpus (where the checkout
    has it), judged by the fixtures' registry and built into ``root / "_site"``: the site the browser tests read."""
    registry = fixtures_registry()
    db = purpose_db(root / "site.duckdb", registry)
    if FIXTURES.is_dir():
        assert ingest_paths([FIXTURES], db, registry=registry).ok
    out = root / "_site"
    build_site(db, out, registry=registry)
    return out


def one_page_per_kind(site: Path) -> dict[str, str]:
    """For each page kind of the registry the site has an instance of, its largest page (the most rows and
    the longest texts): ``{kind: path}``."""
    largest: dict[str, tuple[int, str]] = {}
    for file in site.rglob("index.html"):
        path = str(file.relative_to(site)).removesuffix("index.html")
        found = resolve(path)
        if found is None or found[0] not in PAGES:
            continue  # a data file in HTML (a scenario's trials loaded in place)
        size = file.stat().st_size
        if found[0].name not in largest or size > largest[found[0].name][0]:
            largest[found[0].name] = (size, path)
    return {kind: path for kind, (_, path) in sorted(largest.items())}


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value and ((tag == "a" and name == "href") or (tag in ("script", "img") and name == "src")
                          or (tag == "link" and name == "href") or name == "data-trials-data"):
                self.links.append(value)


def internal_links(html: str) -> list[str]:
    parser = _Links()
    parser.feed(html)
    return parser.links


def broken_links(site: Path, base: str = "/") -> list[tuple[str, str]]:
    """Every (page, link) whose internal target is not a file of the built site."""
    broken = []
    for page in site.rglob("*.html"):
        for link in internal_links(page.read_text(encoding="utf-8")):
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or not parts.path.startswith(base):
                continue
            target = unquote(parts.path[len(base):])
            file = site / target
            if target == "" or target.endswith("/"):
                file = file / "index.html"
            if not file.is_file():
                broken.append((str(page.relative_to(site)), link))
    return broken


_SCRIPT = re.compile(r"<script\b[^>]*>", re.I)


def script_tags(html: str) -> list[str]:
    return _SCRIPT.findall(html)
