"""`fmbench serve` under concurrent readers while `fmbench ingest` writes a batch in another process."""

from __future__ import annotations

import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from fmbench.ingest import writable
from fmbench.storage.db import connect, writer_intent_path

from browser_support import fmbench_server
from sitebuild import purpose_db

READERS = 8
REQUESTS = 160
PATHS = ("", "runs/", "devices/", "scenarios/", "pcc/", "compare/", "api/runs", "data/runs.json")


def _generate(out: Path, runs: int) -> list[Path]:
    from fmbench.fixtures.generate import generate_large_corpus

    return generate_large_corpus(out, runs=runs, trials_per_run=100, legacy_runs=0)


def _get(url: str) -> tuple[int, str | None, str]:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, response.headers.get("Retry-After"), response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Retry-After"), exc.read().decode("utf-8", "replace")


def test_readers_get_200_or_503_with_retry_after_while_an_ingest_completes_and_then_see_the_new_runs(
    tmp_path: Path,
) -> None:
    db = purpose_db(tmp_path / "live.duckdb")
    batch = _generate(tmp_path / "batch", runs=30)
    answers: list[tuple[str, int, str | None, str]] = []
    during: list[bool] = []
    lock = threading.Lock()
    exe = str(Path(sys.executable).parent / "fmbench")

    with fmbench_server(db) as url:
        ingest = subprocess.Popen(
            [exe, "ingest", "--quiet", str(tmp_path / "batch"), "--db", str(db)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )

        def reader(n: int) -> None:
            for i in range(n, REQUESTS, READERS):
                path = PATHS[i % len(PATHS)]
                status, retry, body = _get(url + path)
                with lock:
                    answers.append((path, status, retry, body))
                    during.append(ingest.poll() is None)

        threads = [threading.Thread(target=reader, args=(n,)) for n in range(READERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        output, _ = ingest.communicate(timeout=240)
        assert ingest.returncode == 0, output.decode()
        assert "30 ingested" in output.decode()

        assert len(answers) == REQUESTS
        assert any(during), "no reader was answered while the ingest ran"
        statuses = Counter(status for _, status, _, _ in answers)
        assert set(statuses) <= {200, 503}, statuses
        assert statuses[200] > 0
        for path, status, retry, body in answers:
            assert "Traceback" not in body, path
            if status == 503:
                assert retry is not None and int(retry) > 0, path

        with connect(db, read_only=True) as con:
            new_runs = [r for (r,) in con.execute(
                "SELECT run_id FROM runs WHERE file_name IN (SELECT unnest(?))", [[p.name for p in batch]]
            ).fetchall()]
        assert len(new_runs) == 30
        runs_page = _get(url + "runs/")
        api = _get(url + "api/runs")
        assert runs_page[0] == 200 and api[0] == 200
        for run_id in new_runs:
            assert f"runs/{run_id}/" in runs_page[2]
            assert run_id in api[2]
        first = _get(url + f"runs/{new_runs[0]}/")
        assert first[0] == 200
    assert not writer_intent_path(db).exists()


@pytest.mark.parametrize("held", ["writer", "readers"])
def test_a_second_writer_waits_for_the_first_instead_of_failing(tmp_path: Path, held: str) -> None:
    """The writer's announcement is released when its process ends, whichever way it ends."""
    db = purpose_db(tmp_path / "w.duckdb")
    code = (
        "import sys, time; from fmbench.ingest import writable; from fmbench.storage.db import connect\n"
        "with (connect(sys.argv[1], read_only=True) if sys.argv[2] == 'readers' else writable(sys.argv[1])):\n"
        "    print('held', flush=True); time.sleep(1.0)\n"
    )
    with connect(db, read_only=True) as con:
        before = con.execute("SELECT count(*) FROM runs").fetchone()
    with subprocess.Popen([sys.executable, "-P", "-c", code, str(db), held], stdout=subprocess.PIPE) as holder:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        with writable(db, wait=10.0) as con:
            assert con.execute("SELECT count(*) FROM runs").fetchone() == before
        assert holder.wait(timeout=10) == 0
