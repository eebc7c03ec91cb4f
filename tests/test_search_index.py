"""The search index (data/search.json): what each run, device, OS build and scenario can be found by, and where
each result leads. The page's script matches every word of a query inside an entry's words; ``_find`` does the
same here."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from fmbench.analysis.revisions import fixtures_registry
from fmbench.ingest import ingest_paths
from fmbench.storage.db import connect
from fmbench.views import SiteContext, site_context
from fmbench.views.filters import Filters
from fmbench.views.render import Renderer
from fmbench.views.search import os_names, search_index

from testdata import FIXTURES

IPHONE = "iphone-17-pro-ios27-24a5264n-on-device-performance-2026-11-03.json"
IPHONE_OLDER = "iphone-17-pro-ios27-24a5256a-on-device-performance-2026-10-29.json"
IPAD = "ipad-pro-m5-ipados27-24a5264n-on-device-performance-2026-11-05.json"
MAC = "macbook-pro-m5-macos26-25b78-on-device-performance-2026-09-18.json"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SiteContext]:
    db = tmp_path_factory.mktemp("search") / "search.duckdb"
    registry = fixtures_registry()
    assert ingest_paths([FIXTURES / n for n in (IPHONE, IPHONE_OLDER, IPAD, MAC)], db, registry=registry).ok
    with connect(db, read_only=True) as con:
        yield site_context(con, Renderer(), registry)


@pytest.fixture(scope="module")
def entries(site: SiteContext) -> list[dict[str, Any]]:
    doc = json.loads(search_index(site, Filters()))
    assert doc["format"] == 1
    return doc["entries"]


def _find(entries: list[dict[str, Any]], query: str, kind: str | None = None) -> list[dict[str, Any]]:
    words = query.lower().split()
    return [
        e for e in entries
        if (kind is None or e["kind"] == kind)
        and all(w in f"{e['title']} {e['detail']} {e['terms']}".lower() for w in words)
    ]


def _run_file(site: SiteContext, url: str) -> str:
    run_id = url.strip("/").split("/")[-1]
    return site.con.execute("SELECT file_name FROM runs WHERE run_id = ?", [run_id]).fetchone()[0]


def test_a_build_id_finds_the_build_and_every_run_measured_on_it(site: SiteContext, entries: list[dict[str, Any]]) -> None:
    (build,) = _find(entries, "24A5264n", "build")
    assert build["url"] == "/builds/24A5264n/"
    assert "2 run(s)" in build["detail"]
    assert sorted(_run_file(site, e["url"]) for e in _find(entries, "24a5264n", "run")) == sorted([IPAD, IPHONE])


def test_a_version_finds_its_builds_and_an_ipad_is_found_by_ipados_too(site: SiteContext, entries: list[dict[str, Any]]) -> None:
    assert {e["title"] for e in _find(entries, "iOS 27.0", "build")} == {
        "iOS 27.0.0 · iPadOS 27.0.0 (24A5264n)", "iOS 27.0.0 (24A5256a)",
    }
    assert [_run_file(site, e["url"]) for e in _find(entries, "iPadOS 27.0", "run")] == [IPAD]
    assert [e["url"] for e in _find(entries, "ipados", "device")] == ["/devices/iPad17,3/"]
    assert [e["title"] for e in _find(entries, "macOS 26.1", "build")] == ["macOS 26.1.0 (25B78)"]


def test_devices_runs_and_scenarios_link_to_their_pages(site: SiteContext, entries: list[dict[str, Any]]) -> None:
    assert {e["kind"] for e in entries} == {"run", "device", "build", "scenario", "sample", "leaderboard", "coverage"}
    assert len(_find(entries, "", "run")) == 4
    (device,) = _find(entries, "iPhone 17 Pro", "device")
    assert device["url"] == "/devices/iPhone18,1/"
    assert all(e["url"].startswith("/runs/") for e in _find(entries, "", "run"))
    scenarios = _find(entries, "", "scenario")
    assert scenarios and all(e["url"].startswith("/scenarios/") for e in scenarios)


def test_the_leaderboards_and_coverage_are_found_by_what_a_reader_asks(entries: list[dict[str, Any]]) -> None:
    found = {e["url"] for e in _find(entries, "fastest", "leaderboard")}
    assert "/leaderboards/" in found and "/leaderboards/synthetic-throughput/" in found
    # each category of the fixture corpus holds one workload: it has no page, and its name finds that board
    assert not any(u.startswith("/leaderboards/category/") for u in found)
    assert "/leaderboards/synthetic-throughput/" in [e["url"] for e in _find(entries, "syntheticThroughput", "leaderboard")]
    assert [e["url"] for e in _find(entries, "synthetic-throughput", "leaderboard")] == [
        "/leaderboards/synthetic-throughput/"]
    assert [e["url"] for e in _find(entries, "what to measure next")] == ["/coverage/"]


def test_only_an_ipad_running_ios_is_also_called_ipados() -> None:
    assert os_names({"system_name": "iOS", "hardware_model": "iPad17,3"}) == ["iOS", "iPadOS"]
    assert os_names({"system_name": "iOS", "hardware_model": "iPhone18,1"}) == ["iOS"]
    assert os_names({"system_name": "iPadOS", "hardware_model": "iPad17,3"}) == ["iPadOS"]
    assert os_names({"system_name": "macOS", "hardware_model": None}) == ["macOS"]


def test_a_sample_id_finds_its_sample_with_its_trials_and_the_newest_run_that_measured_it(
    site: SiteContext, entries: list[dict[str, Any]]
) -> None:
    (sample,) = _find(entries, "synthetic-throughput-002", "sample")
    assert sample["title"] == "Sample synthetic-throughput-002" and sample["label"] == "Sample"
    # the four runs measured it, 20 trials each; the iPad's run of 2026-11-05 is the newest
    assert sample["detail"].endswith("· 80 trial(s) in 4 run(s)")
    run_id = sample["url"].split("/")[2]
    assert sample["url"] == f"/runs/{run_id}/trials/synthetic-throughput/"
    assert site.con.execute("SELECT file_name FROM runs WHERE run_id = ?", [run_id]).fetchone()[0] == IPAD
    assert [e["title"] for e in _find(entries, "throughput-00", "sample")] == [
        f"Sample synthetic-throughput-00{i}" for i in (1, 2, 3)
    ]


def test_no_result_shows_the_run_files_camel_case_words(entries: list[dict[str, Any]]) -> None:
    shown = " ".join(f"{e['title']} {e['detail']}" for e in entries)
    assert re.findall(r"(?<![\w.])(?:onDevice|privateCloudCompute|syntheticThroughput|taskParsing)\b", shown) == []
    assert "Synthetic throughput" in shown  # a scenario's category, in words
