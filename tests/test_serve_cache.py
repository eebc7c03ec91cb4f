"""serve keeps what it made while the database is unchanged, and makes it again once anything is ingested."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import fmbench.serving.serve as serve
from fmbench.ingest import ingest_paths
from fmbench.runfile.record import run_id_for
from fmbench.serving.serve import create_app

from testdata import RUNS

HOST = {"Host": "127.0.0.1:8000"}


@pytest.fixture
def counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    db = tmp_path / "db.duckdb"
    assert ingest_paths([RUNS / "purpose-current.json"], db).ok
    renders: list[str] = []
    original = serve.render_page

    def render_page(site, kind, filters, **params):  # type: ignore[no-untyped-def]
        renders.append(kind.name)
        return original(site, kind, filters, **params)

    monkeypatch.setattr(serve, "render_page", render_page)
    return db, create_app(db).test_client(), renders


def test_a_page_is_served_again_without_rendering_while_the_database_is_unchanged(counted) -> None:  # type: ignore[no-untyped-def]
    _, client, renders = counted
    first = client.get("/runs/", headers=HOST)
    second = client.get("/runs/", headers=HOST)
    assert first.status_code == second.status_code == 200
    assert first.data == second.data
    assert renders == ["runs"]
    assert second.headers["Content-Security-Policy"] == first.headers["Content-Security-Policy"]
    client.get("/runs/?verdict=invalid", headers=HOST)
    assert renders == ["runs", "runs"]  # another query is another page


def test_an_ingest_makes_every_page_again_with_the_new_run(counted) -> None:  # type: ignore[no-untyped-def]
    db, client, renders = counted
    client.get("/runs/", headers=HOST)
    added = RUNS / "purpose-hand-edited.json"
    assert ingest_paths([added], db).ok
    page = client.get("/runs/", headers=HOST)
    assert renders == ["runs", "runs"]
    assert run_id_for(hashlib.sha256(added.read_bytes()).hexdigest()) in page.get_data(as_text=True)


def test_errors_are_never_kept(counted) -> None:  # type: ignore[no-untyped-def]
    _, client, renders = counted
    assert client.get("/runs/000000000000/", headers=HOST).status_code == 404
    assert client.get("/runs/000000000000/", headers=HOST).status_code == 404
    assert renders == ["run", "run"]


def test_responses_past_the_budget_drop_the_kept_ones_and_a_new_database_state_drops_them_all() -> None:
    cache = serve.ResponseCache(max_bytes=10, max_item=6)
    cache.put("state 1", "a", (b"aaaaa", 200, "text/html"))
    cache.put("state 1", "b", (b"bbbb", 200, "text/html"))
    assert cache.get("state 1", "a") == (b"aaaaa", 200, "text/html")
    cache.put("state 1", "too big", (b"x" * 7, 200, "text/html"))
    assert cache.get("state 1", "too big") is None  # larger than one response may be: never kept
    cache.put("state 1", "c", (b"cc", 200, "text/html"))  # 5 + 4 + 2 > 10: the kept ones go first
    assert cache.get("state 1", "a") is None and cache.get("state 1", "b") is None
    assert cache.get("state 1", "c") == (b"cc", 200, "text/html")
    assert cache.get("state 2", "c") is None
