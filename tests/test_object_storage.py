"""A Parquet dataset in object storage: read through fsspec from a local S3-compatible server (moto's server mode),
with the endpoint and credentials from the standard AWS variables, and no DuckDB extension downloaded."""

from __future__ import annotations

import filecmp
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fmbench.errors import DatabaseError
from fmbench.ingest import ingest_paths
from fmbench.publish.build import build_site
from fmbench.serving.serve import create_app
from fmbench.storage.dataset import export_parquet, open_database

from sitebuild import purpose_db
from testdata import FIXTURES

moto_server = pytest.importorskip("moto.server")
s3fs = pytest.importorskip("s3fs")

BUCKET = "bench"
PREFIX = f"s3://{BUCKET}/fmbench"
RUNS = (
    "macbook-pro-m5-macos27-26a5361b-on-device-performance-2026-10-27",
    "macbook-pro-m5-macos27-26a5378f-on-device-performance-2026-11-04",  # a comparison with the one above
    "macbook-pro-m5-macos27-26a5378f-pcc-quick-2026-11-08",
)


@pytest.fixture(scope="module")
def s3_environment() -> Iterator[dict[str, str]]:
    """A moto S3 server on 127.0.0.1 and the AWS variables a reader sets to reach it (restored afterwards)."""
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    variables = {
        "AWS_ENDPOINT_URL": f"http://{host}:{port}",
        "AWS_ACCESS_KEY_ID": "fmbench-test",
        "AWS_SECRET_ACCESS_KEY": "fmbench-test-secret",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield variables
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        server.stop()


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = purpose_db(tmp_path_factory.mktemp("s3") / "db.duckdb")
    assert ingest_paths([FIXTURES / f"{name}.json" for name in RUNS], path).ok
    return path


@pytest.fixture(scope="module")
def dataset(db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dataset") / "dataset"
    export_parquet(db, out)
    return out


@pytest.fixture(scope="module")
def bucket(s3_environment: dict[str, str], dataset: Path) -> str:
    """The exported dataset uploaded to the bucket, as a publisher's `aws s3 sync` would."""
    fs = s3fs.S3FileSystem()
    fs.mkdir(BUCKET)
    for path in sorted(dataset.rglob("*")):
        if path.is_file():
            fs.put_file(str(path), f"{BUCKET}/fmbench/{path.relative_to(dataset).as_posix()}")
    return PREFIX


def _files(folder: Path) -> dict[str, Path]:
    return {str(p.relative_to(folder)): p for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_site_built_from_s3_by_the_command_equals_the_site_built_from_the_folder(
    bucket: str, dataset: Path, s3_environment: dict[str, str], tmp_path: Path
) -> None:
    from_folder, from_s3 = tmp_path / "folder-site", tmp_path / "s3-site"
    build_site(dataset, from_folder)
    built = subprocess.run(
        [sys.executable, "-P", "-m", "fmbench", "build", "--parquet", bucket, "--out", str(from_s3)],
        capture_output=True,
        text=True,
        env={**os.environ, **s3_environment, "NO_COLOR": "1"},
        timeout=600,
    )
    assert built.returncode == 0, built.stderr
    a, b = _files(from_folder), _files(from_s3)
    assert len(a) > 20
    assert a.keys() == b.keys()
    assert [f for f in a if not filecmp.cmp(a[f], b[f], shallow=False)] == []


def test_serve_answers_from_s3_as_from_the_folder(bucket: str, dataset: Path) -> None:
    host = {"Host": "127.0.0.1:8000"}
    from_folder = create_app(parquet=dataset).test_client()
    from_s3 = create_app(parquet=bucket).test_client()
    for path in ("/api/runs", "/runs/", "/compare/"):
        a, b = from_folder.get(path, headers=host), from_s3.get(path, headers=host)
        assert a.status_code == b.status_code == 200
        assert a.data == b.data


def test_an_r2_location_is_read_as_s3_at_the_configured_endpoint(bucket: str) -> None:
    with open_database(bucket.replace("s3://", "r2://", 1)) as con:
        (runs,) = con.execute("SELECT count(*) FROM runs").fetchone() or (0,)
    assert runs >= len(RUNS)


def test_a_missing_bucket_is_one_line_naming_the_location(s3_environment: dict[str, str], tmp_path: Path) -> None:
    with (
        pytest.raises(DatabaseError, match=r"^s3://no-such-bucket/fmbench: not an fmbench Parquet dataset"),
        open_database("s3://no-such-bucket/fmbench"),
    ):
        pass
    built = subprocess.run(
        [sys.executable, "-P", "-m", "fmbench", "build", "--parquet", "s3://no-such-bucket/x", "--out", str(tmp_path / "s")],
        capture_output=True,
        text=True,
        env={**os.environ, **s3_environment, "NO_COLOR": "1"},
        timeout=120,
    )
    assert built.returncode == 1
    assert "Traceback" not in built.stderr
    assert "s3://no-such-bucket/x: not an fmbench Parquet dataset" in built.stderr
    assert not (tmp_path / "s").exists()
