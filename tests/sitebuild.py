"""Helpers for tests that build or serve the site: databases and a link checker."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from fmbench.analysis.revisions import Registry, fixtures_registry
from fmbench.ingest import ingest_paths
from fmbench.publish.build import build_site

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


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value and ((tag == "a" and name == "href") or (tag in ("script", "img") and name == "src")
                          or (tag == "link" and name == "href") or name == "data-trials-src"):
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


class _TrialMetrics(HTMLParser):
    """The rows of a trials page's metrics tables (table.trial-metrics), read as a browser lays them out."""

    def __init__(self) -> None:
        super().__init__()
        self.columns: list[str] = []
        self.rows: dict[str, dict[str, object]] = {}
        self._in_table = False
        self._section = ""
        self._cell: dict[str, object] | None = None
        self._row: dict[str, object] | None = None
        self._header_row: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table" and "trial-metrics" in (a.get("class") or "").split():
            self._in_table = True
        elif not self._in_table:
            return
        elif tag in ("thead", "tbody"):
            self._section = tag
        elif tag == "tr" and self._section == "thead":
            self._header_row = []
        elif tag == "tr" and self._section == "tbody":
            self._row = {"id": a.get("id"), "href": None, "header": "", "cells": []}
        elif tag in ("th", "td"):
            self._end_cell()  # a cell whose optional end tag is left out ends where the next one starts
            self._cell = {"tag": tag, "scope": a.get("scope"), "class": a.get("class") or "", "text": ""}
        elif tag == "a" and self._row is not None and self._cell is not None:
            self._row["href"] = a.get("href")

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell["text"] = str(self._cell["text"]) + data

    def _end_cell(self) -> None:
        if self._cell is None:
            return
        cell, self._cell = self._cell, None
        text = str(cell["text"]).strip()
        if self._header_row is not None and cell["scope"] == "col":
            self._header_row.append(text)
        elif self._row is not None and cell["scope"] == "row":
            self._row["header"] = text
        elif self._row is not None:
            self._row["cells"].append((text, "nr" in str(cell["class"]).split()))  # type: ignore[union-attr]

    def handle_endtag(self, tag: str) -> None:
        if not self._in_table:
            return
        if tag in ("th", "td", "tr"):
            self._end_cell()  # at its own end tag, or at its row's (</tr> ends the last cell)
        if tag == "tr" and self._header_row is not None:
            if self._header_row:
                self.columns = self._header_row[1:]  # the first is the row headers' column ("Trial")
            self._header_row = None
        elif tag == "tr" and self._row is not None:
            row, self._row = self._row, None
            cells = row["cells"]
            assert isinstance(cells, list) and len(cells) == len(self.columns), (row, self.columns)
            self.rows[str(row["id"])] = {
                "href": row["href"],
                "header": row["header"],
                "values": {label: text for label, (text, _) in zip(self.columns, cells, strict=True)},
                "not_recorded": {label for label, (_, nr) in zip(self.columns, cells, strict=True) if nr},
            }
        elif tag == "table":
            self._in_table = False


def trial_metrics(html: str) -> dict[str, dict[str, object]]:
    """A trials page's metrics table rows by row id (``metrics-<ordinal>``): the row header's text and link
    (``href``), each column's text (``values``, by its header label) and the columns marked not recorded."""
    parser = _TrialMetrics()
    parser.feed(html)
    return parser.rows
