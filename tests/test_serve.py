"""The live server: same pages as the build, strict about hosts and input, never a traceback."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from fmbench.publish.build import build_site
from fmbench.runfile.record import run_id_for
from fmbench.serving.serve import create_app

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


@pytest.mark.parametrize(
    "path",
    [
        "/.fmbench-manifest.json",
        "/results/.fmbench-comparisons.pickle",
        "/.fmbench-regressions.pickle",
        "/runs/.hidden/",
        "/.git/config",
        "/assets/.style.css",
        "/api/.runs",
    ],
)
def test_a_dot_file_path_is_never_served(client, path: str) -> None:  # type: ignore[no-untyped-def]
    response = get(client, path)
    assert response.status_code == 404
    assert b"No page at this address" in response.data  # the refusal, never a file's bytes


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
        "/api/compare?device=x", "/api/compare?device=x&baseline=a&candidate=b", "/data/runs/zz/trials.csv.gz",
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


# --- hardening: every route family, hostile hosts, paths, queries and filter values ----------------


def _assert_clear_refusal(response, path: str, statuses: tuple[int, ...] = (400, 404)) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code in statuses, (path, response.status_code)
    body = response.get_data(as_text=True)
    assert "Traceback" not in body and 'File "' not in body, path
    if path.startswith("/api/"):
        error = response.get_json()["error"]
        assert error["status"] == response.status_code and error["message"], path
    else:
        assert f"<h1>{response.status_code} " in body, path


@pytest.mark.parametrize(
    "host",
    [
        "attacker.example", "127.0.0.1:8000.attacker.example", "localhost:8001", "127.0.0.1", "[::1]:9999",
        "127.0.0.1:8000@attacker.example", "localhost.:8000", "0.0.0.0:8000", "",
    ],
)
@pytest.mark.parametrize("path", ["/", "/runs/", "/api/runs", "/assets/style.css", "/data/runs.json", "/diagnostics/"])
def test_a_forged_host_header_is_refused_on_every_route_family(client, host: str, path: str) -> None:  # type: ignore[no-untyped-def]
    response = get(client, path, host=host)
    assert response.status_code == 400
    assert "does not answer for that host name" in response.get_data(as_text=True)


TRAVERSALS = [
    "/runs/../../pyproject.toml",
    "/runs/%2e%2e/%2e%2e/pyproject.toml",
    "/runs/%252e%252e%252f%252e%252e%252fpyproject.toml",
    "/runs/..%2f..%2fpyproject.toml",
    "/runs/{run}/trials/..%2f..%2f..%2fpyproject.toml/",
    "/devices/%2e%2e%2f%2e%2e%2fpyproject.toml/",
    "/scenarios/..%252f..%252fpyproject.toml/",
    "/compare/..%2f/a..b/",
    "/data/runs/{run}/..%2f..%2fpyproject.toml",
    "/data/runs/{run}/%2e%2e%2fpurpose-current.json",
    "/data/runs/%2e%2e/trials.csv.gz",
    "/api/runs/..%2f..%2fpyproject.toml",
    "/api/runs/{run}/scenarios/%2e%2e%252f%2e%2e/trials",
    "/diagnostics/..%2f..%2fpyproject.toml",
    "/assets/%2e%2e%2f%2e%2e%2fpyproject.toml",
    "/%2e%2e/%2e%2e/pyproject.toml",
    "/..%5c..%5cpyproject.toml",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_path_traversal_on_every_route_family_is_a_clear_4xx_that_reveals_no_file(client, path: str) -> None:  # type: ignore[no-untyped-def]
    path = path.format(run=_run_id("purpose-current.json"))
    response = get(client, path)
    _assert_clear_refusal(response, path)
    assert "[build-system]" not in response.get_data(as_text=True)


@pytest.mark.parametrize("path", ["/", "/runs/", "/api/runs", "/assets/style.css", "/data/runs.json", "/devices/iPhone18,1/"])
def test_an_oversized_query_string_is_refused_on_every_route_family(client, path: str) -> None:  # type: ignore[no-untyped-def]
    response = get(client, f"{path}?os_build=" + "A" * 3000)
    assert response.status_code == 414
    assert "Query strings are limited to 2048 bytes" in response.get_data(as_text=True)


@pytest.mark.parametrize(
    "path",
    [
        "/?colour=blue", "/runs/?colour=blue", "/devices/?verdict=invalid", "/scenarios/?os_build=24A5264n",
        "/data/runs.json?os_build=24A5264n", "/api/runs?colour=blue", "/api/runs/{run}?device=x",
        "/api/runs/{run}/scenarios/task-capture/trials?colour=blue", "/api/compare?colour=blue",
        "/runs/{run}/?os_build=24A5264n",
    ],
)
def test_an_unknown_filter_field_is_a_clear_400(client, path: str) -> None:  # type: ignore[no-untyped-def]
    path = path.format(run=_run_id("purpose-current.json"))
    _assert_clear_refusal(get(client, path), path, (400,))


SQL_VALUES = ["' OR 1=1 --", "x'; DROP TABLE runs; --", ";", '"', '" OR ""="', "\\", "%", "1) OR (1=1", "a\x00b", "*/ OR /*"]


@pytest.mark.parametrize("value", SQL_VALUES)
@pytest.mark.parametrize("where", ["/runs/", "/api/runs", "/devices/", "/pcc/", "/compare/"])
def test_sql_metacharacters_in_a_filter_value_are_a_clear_400(client, where: str, value: str) -> None:  # type: ignore[no-untyped-def]
    from urllib.parse import urlencode

    path = f"{where}?{urlencode({'os_build': value})}"
    response = get(client, path)
    _assert_clear_refusal(response, path, (400,))
    assert "is not a value fmbench stores" in response.get_data(as_text=True)


def test_a_filter_value_is_bound_as_data_never_read_as_sql(client) -> None:  # type: ignore[no-untyped-def]
    everything = get(client, "/api/runs").get_json()["count"]
    assert everything > 1
    for value in ("24A5264n OR 1", "1 OR 1", "runs", "r.os_build"):  # allowed characters, still only a value
        response = get(client, f"/api/runs?os_build={value.replace(' ', '%20')}")
        assert response.status_code == 200
        assert response.get_json()["count"] == 0, value
    assert get(client, "/api/runs").get_json()["count"] == everything


@pytest.mark.parametrize(
    "path",
    ["/devices/'%20OR%201=1%20--/", "/runs/'%3B/", "/api/runs/'%20OR%20'1'='1", "/scenarios/%22%3B--/",
     "/compare/x/a..b/?rule=%27", "/compare/x/a..b/?strict=%3B"],
)
def test_sql_metacharacters_in_a_path_segment_or_option_are_a_clear_4xx(client, path: str) -> None:  # type: ignore[no-untyped-def]
    _assert_clear_refusal(get(client, path), path)


def _broken_copy(db: Path, folder: Path) -> Path:
    """A copy of the database whose run pages fail inside the view (a table is gone)."""
    import shutil

    import duckdb

    broken = folder / "broken.duckdb"
    shutil.copy(db, broken)
    con = duckdb.connect(str(broken))
    con.execute("DROP TABLE scenario_figures")
    con.close()
    return broken


DEBUGGER_MARKERS = ("Traceback", 'File "', "scenario_figures", "Werkzeug", "__debugger__", "CatalogException")


def test_the_debugger_cannot_be_enabled_from_the_command_line_or_the_environment(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from fmbench.cli import main

    help_text = CliRunner().invoke(main, ["serve", "--help"]).output
    options = re.findall(r"^\s+(-[-\w, ]+)", help_text, re.M)
    assert options and not [o for o in options if "debug" in o or "reload" in o], options
    refused = CliRunner().invoke(main, ["serve", "--debug", "--db", str(db)])
    assert refused.exit_code == 2 and "No such option" in refused.output

    monkeypatch.setenv("FLASK_DEBUG", "1")
    monkeypatch.setenv("FLASK_ENV", "development")
    app = create_app(_broken_copy(db, tmp_path), host="127.0.0.1", port=8000)
    assert app.debug is False and app.config["DEBUG"] is False
    client = app.test_client()
    response = get(client, f"/runs/{_run_id('purpose-current.json')}/")
    assert response.status_code == 500
    body = response.get_data(as_text=True)
    assert "could not render this page" in body
    assert [m for m in DEBUGGER_MARKERS if m in body] == []
    debugger = get(client, "/?__debugger__=yes&cmd=resource&f=debugger.js")
    assert debugger.status_code in (400, 404) and "Werkzeug" not in debugger.get_data(as_text=True)


def test_the_real_server_with_flask_debug_in_its_environment_answers_raw_hostile_requests_without_a_traceback(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Raw HTTP, as a hostile page or tool would send it: nothing normalized by a client library."""
    import http.client

    from browser_support import fmbench_server

    monkeypatch.setenv("FLASK_DEBUG", "1")
    monkeypatch.setenv("WERKZEUG_DEBUG_PIN", "off")
    with fmbench_server(_broken_copy(db, tmp_path)) as url:
        port = int(url.rsplit(":", 1)[1].strip("/"))
        requests = [
            ("/runs/../../pyproject.toml", f"127.0.0.1:{port}", (400, 404)),
            ("/assets/..%2f..%2fpyproject.toml", f"127.0.0.1:{port}", (404,)),
            ("/%2e%2e/%2e%2e/%2e%2e/etc/passwd", f"127.0.0.1:{port}", (404,)),
            ("/", f"xn--attacker.example:{port}", (400,)),
            ("/", f"attacker.example:{port}", (400,)),
            ("/runs/?os_build=%27%20OR%201%3D1%20--", f"127.0.0.1:{port}", (400,)),
            (f"/runs/{_run_id('purpose-current.json')}/", f"127.0.0.1:{port}", (500,)),
            ("/?__debugger__=yes&cmd=resource&f=debugger.js", f"127.0.0.1:{port}", (400, 404)),
        ]
        for path, host, statuses in requests:
            con = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            con.putrequest("GET", path, skip_host=True)
            con.putheader("Host", host)
            con.endheaders()
            response = con.getresponse()
            body = response.read().decode("utf-8", "replace")
            con.close()
            assert response.status in statuses, (path, host, response.status)
            shown = body.replace("unknown filter &#39;__debugger__&#39;", "")  # the 400 names the parameter it refused
            assert [m for m in DEBUGGER_MARKERS if m in shown] == [], (path, host)
            assert response.getheader("Content-Type", "").startswith(("text/html", "application/json")), path
            assert "[build-system]" not in body and "root:" not in body


def test_a_prepared_renderer_has_every_template_compiled_before_any_page() -> None:
    from fmbench.views.render import Renderer

    renderer = Renderer(mode="serve", base_url="/")
    renderer.prepare()  # what `fmbench serve` does before it takes its first request
    templates = set(renderer.env.list_templates(extensions=("html", "xml")))
    assert "comparison.html" in templates
    assert {name for _, name in renderer.env.cache} == templates
