"""Names become paths in one place: a device, OS build or scenario that is long, collides with another after its
unsafe characters are replaced, differs from another only by case, or holds characters a URL cannot keep still
gets its own page, at a path every file system holds, in the static build and in ``serve`` alike.

The run files are a fixture run edited by a few lines (its device, its build, its scenario ids), built for real
into ``tmp_path`` and served with Flask's test client over the same DuckDB file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import duckdb
import pytest

from fmbench import urls
from fmbench.analysis.revisions import fixtures_registry
from fmbench.ingest import ingest_paths
from fmbench.publish.build import build_site
from fmbench.serving.serve import create_app

from sitebuild import broken_links, internal_links
from testdata import FIXTURES

HOST = "127.0.0.1:8000"
BASE = FIXTURES / "macbook-pro-m5-macos26-25b78-on-device-quick-2026-11-02.json"
LONG_DEVICE = "Mac" + "7" * 297
LONG_BUILD = "25B" + "8" * 297
LONG_SCENARIO = "grounded-" + "x" * 291
HOSTILE_BUILD = "26A?5#3 %2F"


def _variant(folder: Path, name: str, *, device: str | None = None, build: str | None = None,
             scenarios: dict[str, str] | None = None) -> None:
    """The base run with its device, OS build or scenario ids replaced, everywhere the run file names them."""
    doc: dict[str, Any] = json.loads(BASE.read_text(encoding="utf-8"))
    for env in (doc["environment"], *(t["environment"] for t in doc["trials"])):
        if device is not None:
            env["hardwareModel"] = device
        if build is not None:
            env["systemBuild"] = build
    for old, new in (scenarios or {}).items():
        for s in doc["summaries"]:
            if s["id"] == old:
                s["id"] = new
        for t in doc["trials"]:
            if t["scenarioID"] == old:
                t["scenarioID"] = new
    (folder / f"{name}.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")


SITES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "long": [("long-names", {"device": LONG_DEVICE, "build": LONG_BUILD, "scenarios": {"task-capture": LONG_SCENARIO}})],
    "collide": [("slash-device", {"device": "Mac17/2", "scenarios": {"task-capture": "a/b"}}),
                ("dash-device", {"device": "Mac17-2", "scenarios": {"task-capture": "a-b"}})],
    "case": [("build-upper", {"build": "26A5378f", "scenarios": {"task-capture": "Summarize"}}),
             ("build-lower", {"build": "26a5378F", "scenarios": {"task-capture": "summarize"}})],
    "hostile": [("hostile-build", {"build": HOSTILE_BUILD}), ("build-upper", {"build": "26A5378f"})],
}
"""Each site: the base run and the variants that make one row of the issue (each fails on its own)."""
_BUILT: dict[str, tuple[Path, Path]] = {}


def _built(name: str, factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``(database, site)`` of the base run and one row's odd-named variants, ingested and built."""
    if name not in _BUILT:
        root = factory.mktemp(f"odd-{name}")
        runs = root / "runs"
        runs.mkdir()
        (runs / "base.json").write_bytes(BASE.read_bytes())
        for file_name, changes in SITES[name]:
            _variant(runs, file_name, **changes)
        db = root / "odd.duckdb"
        report = ingest_paths([runs], db, registry=fixtures_registry())
        assert report.ok, [o.message for o in report.outcomes if o.status == "error"]
        out = root / "_site"
        build_site(db, out, registry=fixtures_registry())
        _BUILT[name] = (db, out)
    return _BUILT[name]


@pytest.fixture(scope="module")
def long_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _built("long", tmp_path_factory)


@pytest.fixture(scope="module")
def collide_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _built("collide", tmp_path_factory)


@pytest.fixture(scope="module")
def case_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _built("case", tmp_path_factory)


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _built("hostile", tmp_path_factory)


def _names(db: Path, sql: str) -> set[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {v for (v,) in con.execute(sql).fetchall()}
    finally:
        con.close()


def _site_paths(out: Path) -> list[str]:
    return [p.relative_to(out).as_posix() for p in out.rglob("*") if not p.name.startswith(".")]


def _page_urls(out: Path) -> list[str]:
    """Every page and data file the static build wrote, as the URL path that serves it."""
    found = []
    for rel in _site_paths(out):
        if rel.startswith("assets/") or not (out / rel).is_file():
            continue
        found.append("/" + (rel[: -len("index.html")] if rel.endswith("index.html") else rel))
    return sorted(found)


def test_names_of_300_characters_build_into_segments_a_file_system_holds(long_site: tuple[Path, Path]) -> None:
    db, out = long_site
    assert LONG_DEVICE in _names(db, "SELECT hardware_model FROM runs")
    assert LONG_BUILD in _names(db, "SELECT os_build FROM runs")
    longest = max(len(part.encode()) for rel in _site_paths(out) for part in rel.split("/"))
    assert longest <= 2 * urls.SEGMENT_BYTES + 2  # a comparison's segment holds two builds
    segment = urls.segment(LONG_DEVICE)
    assert len(segment) == urls.SEGMENT_BYTES and segment.startswith("Mac777") and segment == urls.segment(LONG_DEVICE)
    assert (out / "devices" / segment / "index.html").is_file()
    assert (out / "builds" / urls.segment(LONG_BUILD) / "index.html").is_file()
    assert (out / "scenarios" / urls.segment(LONG_SCENARIO) / "index.html").is_file()


def test_names_that_collide_after_slugging_get_a_page_each(collide_site: tuple[Path, Path]) -> None:
    db, out = collide_site
    devices = _names(db, "SELECT coalesce(hardware_model, device_name) FROM runs")
    assert {"Mac17/2", "Mac17-2"} <= devices
    assert len(list((out / "devices").glob("*/index.html"))) == len(devices)
    builds = _names(db, "SELECT os_build FROM runs WHERE os_build IS NOT NULL")
    assert len(list((out / "builds").glob("*/index.html"))) == len(builds)
    scenarios = _names(db, "SELECT scenario_id FROM scenario_figures")
    assert {"a/b", "a-b"} <= scenarios
    assert len(list((out / "scenarios").glob("*/index.html"))) == len(scenarios)
    for device, segment in (("Mac17-2", "Mac17-2"), ("Mac17/2", urls.segment("Mac17/2"))):  # a safe name keeps its path
        (run_id,) = _names(db, f"SELECT run_id FROM runs WHERE hardware_model = '{device}'")
        (other,) = _names(db, f"SELECT run_id FROM runs WHERE hardware_model = '{'Mac17/2' if device == 'Mac17-2' else 'Mac17-2'}'")
        page = (out / "devices" / segment / "index.html").read_text(encoding="utf-8")
        assert f"/runs/{run_id}/" in page and f"/runs/{other}/" not in page, device


def test_no_two_paths_of_the_site_differ_only_by_case(case_site: tuple[Path, Path]) -> None:
    db, out = case_site
    assert {"26A5378f", "26a5378F"} <= _names(db, "SELECT os_build FROM runs")
    assert {"Summarize", "summarize"} <= _names(db, "SELECT scenario_id FROM scenario_figures")
    paths = _site_paths(out)
    folded: dict[str, list[str]] = {}
    for p in paths:
        folded.setdefault(p.casefold(), []).append(p)
    assert [group for group in folded.values() if len(group) > 1] == []
    assert any(p.startswith("builds/26A5378f/") for p in paths)  # the first in code-point order keeps its path
    assert len(list((out / "builds").glob("*/index.html"))) == 3
    assert len(list((out / "scenarios").glob("*/index.html"))) == len(_names(db, "SELECT scenario_id FROM scenario_figures"))


@pytest.mark.parametrize("name", sorted(SITES))
def test_every_internal_link_of_an_odd_site_resolves(name: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    assert broken_links(_built(name, tmp_path_factory)[1]) == []


@pytest.mark.parametrize("name", sorted(SITES))
def test_serve_answers_every_page_and_file_the_build_wrote(name: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    db, out = _built(name, tmp_path_factory)
    client = create_app(db, host="127.0.0.1", port=8000).test_client()
    failed = []
    for path in _page_urls(out):
        response = client.get(quote(path, safe="/,"), headers={"Host": HOST})
        if response.status_code != 200:
            failed.append((path, response.status_code))
    assert failed == []


def test_a_build_id_a_url_cannot_keep_has_its_comparison_in_both_and_serves_links_resolve(
    hostile_site: tuple[Path, Path],
) -> None:
    db, out = hostile_site
    segment = urls.segment(HOSTILE_BUILD)
    assert re.fullmatch(r"[A-Za-z0-9,._-]+", segment) and segment != urls.slug(HOSTILE_BUILD)
    published = [p for p in (out / "compare" / "Mac17,2").glob("*/index.html") if segment in p.parent.name]
    assert published, "no static comparison with the hostile build"
    client = create_app(db, host="127.0.0.1", port=8000).test_client()
    device = client.get("/devices/Mac17,2/", headers={"Host": HOST})
    assert device.status_code == 200
    links = {urlsplit(link).path for link in internal_links(device.get_data(as_text=True))}
    to_compare = sorted(link for link in links if link.startswith("/compare/") and segment in link)
    assert to_compare
    for link in sorted(links):
        if not link.startswith("/") or link.startswith("/assets/"):  # an anchor on the page, or a static asset
            continue
        response = client.get(quote(unquote(link), safe="/,"), headers={"Host": HOST})
        assert response.status_code == 200, link
    comparison = client.get(to_compare[0], headers={"Host": HOST}).get_data(as_text=True)
    assert HOSTILE_BUILD in comparison  # the page is about the build, named as recorded


def test_slugs_are_unique_per_kind_without_case_and_stable() -> None:
    names = ["Mac17-2", "Mac17/2", "mac17-2", "Mac17 2", "a" * 300, "a" * 301, "CON", "x..y", ""]
    first = urls.Segments(names)
    again = urls.Segments(reversed(names))
    assert first.by_name == again.by_name  # a function of the set, not of the order
    segments = list(first.by_name.values())
    assert len({s.casefold() for s in segments}) == len(names)
    assert all(re.fullmatch(r"[A-Za-z0-9,._-]+", s) and len(s) <= urls.SEGMENT_BYTES for s in segments)
    assert all(".." not in s for s in segments)
    assert first.of("Mac17-2") == "Mac17-2" and first.of("CON") != "CON"
    assert all(first.name(s) == n for n, s in first.by_name.items())
    assert urls.Segments(["Mac17,2", "iPhone18,1"]).by_name == {"Mac17,2": "Mac17,2", "iPhone18,1": "iPhone18,1"}


@pytest.mark.parametrize(
    ("query", "parameter", "values"),
    [
        ("/api/compare?device=Mac17,2&baseline=25B78&candidate=26A5378f&strict=maybe", "strict", "true"),
        ("/api/compare?device=Mac17,2&baseline=25B78&candidate=26A5378f&route=bogus", "route", "onDevice"),
        ("/api/runs?route=bogus", "route", "privateCloudCompute"),
        ("/api/runs?suite=bogus", "suite", "quick"),
        ("/api/runs?device=Mac17,2&device=Mac17-2", "device", "once"),
        ("/runs/?device=Mac17,2&device=Mac17-2", "device", "once"),
        ("/compare/Mac17,2/25B78..26A5378f/?strict=maybe", "strict", "false"),
    ],
)
def test_a_parameter_value_outside_what_it_takes_is_400_naming_the_parameter_and_its_values(
    hostile_site: tuple[Path, Path], query: str, parameter: str, values: str
) -> None:
    client = create_app(hostile_site[0], host="127.0.0.1", port=8000).test_client()
    response = client.get(query, headers={"Host": HOST})
    assert response.status_code == 400, query
    text = response.get_data(as_text=True)
    assert parameter in text and values in text, text


def test_a_route_or_strict_it_takes_still_answers(hostile_site: tuple[Path, Path]) -> None:
    client = create_app(hostile_site[0], host="127.0.0.1", port=8000).test_client()
    for query in (
        "/api/compare?device=Mac17,2&baseline=25B78&candidate=26A5378f&strict=true&route=onDevice",
        "/api/runs?route=onDevice&suite=quick",
    ):
        assert client.get(query, headers={"Host": HOST}).status_code == 200, query


def test_a_rebuild_after_a_collision_moves_a_segment_leaves_no_page_linking_the_old_path(tmp_path: Path) -> None:
    """``26a5378F`` owns ``builds/26a5378F/`` until ``26A5378f`` (first in code-point order) arrives on another
    device; the rebuild must move it, and every page that links it, though the first device's runs did not change."""
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "base.json").write_bytes(BASE.read_bytes())
    _variant(runs, "build-lower", build="26a5378F")
    db, out, fresh = tmp_path / "odd.duckdb", tmp_path / "_site", tmp_path / "_fresh"
    assert ingest_paths([runs], db, registry=fixtures_registry()).ok
    build_site(db, out, registry=fixtures_registry())
    assert (out / "builds" / "26a5378F" / "index.html").is_file()
    _variant(runs, "build-upper-elsewhere", device="iPhone18,1", build="26A5378f")
    assert ingest_paths([runs], db, registry=fixtures_registry()).ok
    build_site(db, out, registry=fixtures_registry())
    build_site(db, fresh, registry=fixtures_registry())
    moved = urls.Segments(["26a5378F", "26A5378f"]).of("26a5378F")
    assert moved != "26a5378F" and (out / "builds" / moved / "index.html").is_file()
    assert broken_links(out) == []
    assert sorted(_site_paths(out)) == sorted(_site_paths(fresh))
    device = "devices/Mac17,2/index.html"
    assert f"..{moved}/" in (out / device).read_text(encoding="utf-8")  # its comparison with the moved build
    assert (out / device).read_bytes() == (fresh / device).read_bytes()
