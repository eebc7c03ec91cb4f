"""serve warms itself: the comparison pages are made in the background after it starts, so a reader's first visit
finds them made; a page asked for during the warm-up is rendered as without one; the warm-up stops with the server."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from fmbench.ingest import ingest_paths
from fmbench.serving.serve import comparison_pages, create_app, database_stamp, start_warm_up
from fmbench.serving.warmup import WarmUp

from browser_support import free_port, wait_for
from testdata import FIXTURES

HOST = "127.0.0.1:8000"
RUNS = (
    "macbook-pro-m5-macos27-26a5361b-on-device-performance-2026-10-27",
    "macbook-pro-m5-macos27-26a5378f-on-device-performance-2026-11-04",  # a comparison with the one above
    "macbook-pro-m5-macos26-25b78-on-device-quick-2026-11-02",
)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("warm") / "warm.duckdb"
    assert ingest_paths([FIXTURES / f"{name}.json" for name in RUNS], path).ok
    return path


def test_the_warm_up_makes_every_comparison_page_into_the_response_cache(db: Path) -> None:
    app = create_app(db, host="127.0.0.1", port=8000)
    pages = comparison_pages(app)
    assert pages and all(p.startswith("/compare/") for p in pages)
    messages: list[str] = []
    warm = start_warm_up(app, echo=messages.append)
    assert warm.done.wait(300)
    assert (warm.warmed, warm.failed) == (len(pages), 0)
    assert messages == [f"warmed up: {len(pages)} comparison pages made in {messages[0].rsplit(' in ', 1)[1]}"]
    cache = app.config["FMBENCH_CACHE"]
    stamp = database_stamp(app.config["FMBENCH_DB"], None)
    for path in pages:
        kept = cache.get(stamp, (path, b""))
        assert kept is not None and kept[1] == 200, path
        served = app.test_client().get(path, headers={"Host": HOST})
        assert served.status_code == 200 and served.data == kept[0]


def test_a_page_asked_for_during_the_warm_up_is_the_page_made_without_one(db: Path) -> None:
    cold = create_app(db, host="127.0.0.1", port=8000, cache=False)
    app = create_app(db, host="127.0.0.1", port=8000)
    path = comparison_pages(app)[0]
    warm = start_warm_up(app, echo=lambda _: None)
    during = app.test_client().get(path, headers={"Host": HOST})
    assert warm.done.wait(300)
    assert during.status_code == 200
    assert during.data == cold.test_client().get(path, headers={"Host": HOST}).data


def test_a_stopped_warm_up_makes_no_further_page(db: Path) -> None:
    app = create_app(db, host="127.0.0.1", port=8000)
    asked: list[str] = []

    def paths() -> list[str]:
        asked.append("listed")
        return ["/compare/"] * 1000

    warm = WarmUp(app, paths, HOST, echo=lambda _: None)
    warm.stopping.set()  # stopped before its first page
    warm.start()
    assert warm.done.wait(30)
    assert asked == ["listed"] and warm.warmed == 0


def test_the_server_warms_up_after_starting_unless_told_not_to(db: Path, tmp_path: Path) -> None:
    exe = str(Path(sys.executable).parent / "fmbench")
    for options, says in (((), True), (("--no-warm-up",), False)):
        port = free_port()
        log = tmp_path / f"serve-{port}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [exe, "serve", "--db", str(db), "--port", str(port), *options], stdout=out, stderr=subprocess.STDOUT
            )
            try:
                wait_for(f"http://127.0.0.1:{port}/api/runs", timeout=240)
                deadline = time.monotonic() + (240 if says else 3)
                while time.monotonic() < deadline and "warmed up:" not in log.read_text():
                    time.sleep(0.2)
            finally:
                proc.terminate()
                proc.wait(timeout=20)
        text = log.read_text()
        assert ("warmed up:" in text) is says, text
        assert "Traceback" not in text
