"""What a first visit of each page of the built fixture site downloads, gzipped: the page and every asset it
references (stylesheet, scripts, icon, and the chart library that charts.js fetches for a chart page). A page
without a chart stays under 60 KiB and never references the chart library; a chart page stays under 350 KiB."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from sitebuild import fixture_site

NO_CHART_BUDGET = 60 * 1024
CHART_BUDGET = 350 * 1024


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fixture_site(tmp_path_factory.mktemp("weight"))[1]


class _Loads(HTMLParser):
    """The addresses a browser fetches on a first visit of a page (and what charts.js fetches for it)."""

    def __init__(self) -> None:
        super().__init__()
        self.loads: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "script" and a.get("src"):
            self.loads.append(a["src"] or "")
            if a.get("data-plotly"):
                self.loads.append(a["data-plotly"] or "")
        elif tag == "link" and a.get("rel") in ("stylesheet", "icon", "preload", "modulepreload") and a.get("href"):
            self.loads.append(a["href"] or "")
        elif tag == "img" and a.get("src"):
            self.loads.append(a["src"] or "")


def _loads(html: str) -> list[str]:
    parser = _Loads()
    parser.feed(html)
    return parser.loads


def _file(site: Path, page: Path, address: str) -> Path:
    path = urlsplit(address).path
    target = (site / path.lstrip("/")) if path.startswith("/") else (page.parent / path)
    return target.resolve()


def _gzipped(path: Path) -> int:
    return len(gzip.compress(path.read_bytes(), compresslevel=9))


def _pages(site: Path) -> Iterator[Path]:
    yield from sorted(site.rglob("index.html"))


def _weights(site: Path) -> dict[str, tuple[int, bool, list[str]]]:
    """Per page: its first visit's gzipped bytes, whether it draws a chart, and the assets it loads."""
    sizes: dict[Path, int] = {}
    out = {}
    for page in _pages(site):
        html = page.read_text(encoding="utf-8")
        loads = _loads(html)
        total = len(gzip.compress(html.encode("utf-8"), compresslevel=9))
        for address in loads:
            target = _file(site, page, address)
            assert target.is_file(), (page, address)
            if target not in sizes:
                sizes[target] = _gzipped(target)
            total += sizes[target]
        out[page.relative_to(site).as_posix()] = (total, "data-chart=" in html, loads)
    return out


def test_a_page_without_a_chart_weighs_at_most_60_kib_and_never_references_plotly(site: Path) -> None:
    weights = _weights(site)
    plain = {p: w for p, w in weights.items() if not w[1]}
    assert len(plain) > 20  # home, lists, device pages, methodology, search, data, ...
    for page, (total, _, loads) in plain.items():
        assert not any("plotly" in a or "charts.js" in a for a in loads), page
        assert "plotly" not in (site / page).read_text(encoding="utf-8").lower(), page
        assert total <= NO_CHART_BUDGET, f"{page}: {total / 1024:.1f} KiB gzipped"


def test_a_chart_page_weighs_at_most_350_kib_with_the_chart_library(site: Path) -> None:
    weights = _weights(site)
    charted = {p: w for p, w in weights.items() if w[1]}
    assert len(charted) > 5  # run, scenario, device, comparison, PCC pages
    for page, (total, _, loads) in charted.items():
        assert any(a.split("?")[0].endswith("plotly.min.js") for a in loads), page  # counted, not left out
        assert total <= CHART_BUDGET, f"{page}: {total / 1024:.1f} KiB gzipped"


def test_a_page_that_could_chart_but_has_nothing_to_draw_loads_no_chart_code(site: Path) -> None:
    """A run page whose scenarios recorded no speed figure (a legacy or failed run) says so in words."""
    pages = [(site / p).read_text(encoding="utf-8") for p, w in _weights(site).items()
             if p.startswith("runs/") and p.count("/") == 2 and not w[1]]
    assert pages, "every fixture run draws a chart: the fixture corpus should hold one that cannot"
    assert all("charts.js" not in html and "plotly" not in html.lower() for html in pages)
