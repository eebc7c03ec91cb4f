"""The live server: same pages as the build, strict about hosts and input, never a traceback."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from fmbench.build import build_site
from fmbench.record import run_id_for
from fmbench.serve import create_app

from sitebuild import purpose_db
from testdata import RUNS

HOST = "127.0.0.1:8000"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return purpose_db(tmp_path_factory.mktemp("serve") / "serve.duckdb")


@pytest.fixture
def client(db: Path):  # type: ignore[no-untyped-def]
    return create_app(db, host="127.0.0.1", port=8000).test_client()


def _run_id(name: str) -> str:
    return run_id_for(hashlib.sha256((RUNS / name).read_bytes()).hexdigest())


def get(client, path: str, host: str = HOST):  # type: ignore[no-untyped-def]
    return client.get(path, headers={"Host": host})


def test_a_forged_host_header_is_refused(client) -> None:  # type: ignore[no-untyped-def]
    response = get(client, "/", host="attacker.example:8000")
    assert response.status_code == 400
    assert get(client, "/", host="localhost:8000").status_code == 200


def test_an_unknown_run_is_404_as_a_page_and_as_json(client) -> None:  # type: ignore[no-untyped-def]
    assert get(client, "/runs/000000000000/").status_code == 404
    response = get(client, "/api/runs/000000000000")
    assert response.status_code == 404
    assert response.get_json()["error"]["status"] == 404


@pytest.mark.parametrize(
    "path",
    [
        "/runs/?os_build=%27%3B%20DROP%20TABLE%20runs%3B--",
        "/runs/?verdict=great",
        "/runs/?colour=blue",
        "/api/runs?device=%22%20OR%201%3D1",
        "/api/runs/x/scenarios/y/trials?page=-1",
    ],
)
def test_a_malformed_filter_is_400(client, path: str) -> None:  # type: ignore[no-untyped-def]
    assert get(client, path).status_code == 400


@pytest.mark.parametrize(
    "path",
    [
        "/assets/../cli.py",
        "/assets/%2e%2e/cli.py",
        "/assets/%252e%252e%252fcli.py",
        "/assets/..%2f..%2fpyproject.toml",
        "/assets/style.css/../../db.py",
    ],
)
def test_path_traversal_on_assets_is_404(client, path: str) -> None:  # type: ignore[no-untyped-def]
    assert get(client, path).status_code == 404


def test_an_oversized_query_string_is_refused(client) -> None:  # type: ignore[no-untyped-def]
    assert get(client, "/runs/?os_build=" + "A" * 5000).status_code == 414


def test_security_headers_are_on_every_response(client) -> None:  # type: ignore[no-untyped-def]
    for path in ("/", "/assets/style.css", "/api/runs", "/nope"):
        response = get(client, path)
        assert "script-src 'self'" in response.headers["Content-Security-Policy"]
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["Referrer-Policy"] == "no-referrer"


def test_no_response_ever_carries_a_traceback(client) -> None:  # type: ignore[no-untyped-def]
    paths = [
        "/", "/runs/", "/runs/?os_build=%00", "/runs/%00/", "/devices/%3Cscript%3E/", "/api/runs?verdict=%27",
        "/api/compare?device=x", "/api/compare?device=x&baseline=a&candidate=b", "/data/runs/zz/trials.csv",
        "/runs/" + _run_id("purpose-current.json") + "/trials/none/", "/compare/x/a..b/", "/regressions/?device=%2F",
    ]
    for path in paths:
        body = get(client, path).get_data(as_text=True)
        assert "Traceback" not in body and 'File "' not in body, path


def test_filters_are_computed_in_the_database_and_reflected_in_the_form(client) -> None:  # type: ignore[no-untyped-def]
    everything = get(client, "/api/runs").get_json()
    ios = get(client, "/api/runs?os_build=24A5264n").get_json()
    assert 0 < ios["count"] < everything["count"]
    assert {r["os_build"] for r in ios["runs"]} == {"24A5264n"}
    page = get(client, "/runs/?os_build=24A5264n").get_data(as_text=True)
    assert re.search(r'<option value="24A5264n" selected>', page)


def test_the_trials_api_is_paginated(client) -> None:  # type: ignore[no-untyped-def]
    run = _run_id("purpose-current.json")
    first = get(client, f"/api/runs/{run}/scenarios/task-capture/trials?per_page=3").get_json()
    second = get(client, f"/api/runs/{run}/scenarios/task-capture/trials?per_page=3&page=2").get_json()
    assert (first["total"], first["pages"], len(first["trials"]), len(second["trials"])) == (4, 2, 3, 1)
    assert get(client, f"/api/runs/{run}/scenarios/task-capture/trials?per_page=3&page=3").status_code == 404


def _scenario_table(html: str) -> str:
    match = re.search(r'<table id="scenarios".*?</table>', html, re.S)
    assert match
    return match.group(0)


def test_serve_and_build_show_the_same_figures_for_a_run(client, db: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run = _run_id("purpose-current.json")
    build_site(db, tmp_path / "site")
    built = (tmp_path / "site" / "runs" / run / "index.html").read_text(encoding="utf-8")
    served = get(client, f"/runs/{run}/").get_data(as_text=True)
    assert _scenario_table(built) == _scenario_table(served)
    assert "40.0%" in _scenario_table(served)
