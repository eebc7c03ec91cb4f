"""The main job on the embedded default: bundled fixtures into a fresh DuckDB file, the site built, served."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb

from fmbench.analysis.revisions import fixtures_registry
from fmbench.errors import FmbenchError
from fmbench.ingest import collect_run_files, ingest_paths
from fmbench.native.store import ingest_artifacts
from fmbench.project import PROJECT_FILE, find_project_root
from fmbench.publish.build import build_site
from fmbench.serving.serve import run_server
from fmbench.storage.db import open_duckdb


def fixtures_dir() -> Path:
    return Path(str(resources.files("fmbench.fixtures").joinpath("runs")))


def replays_dir() -> Path:
    return Path(str(resources.files("fmbench.fixtures").joinpath("replays")))


def _refuse_foreign(db: Path) -> None:
    """The demo recreates its database: never one that holds runs of the user's own."""
    if not db.exists():
        return


    bundled = {hashlib.sha256(p.read_bytes()).hexdigest() for p in collect_run_files([fixtures_dir()])[0]}
    try:
        con = open_duckdb(str(db), read_only=True)
        try:
            stored = {sha for (sha,) in con.execute("SELECT sha256 FROM sources").fetchall()}
        finally:
            con.close()
    except duckdb.Error:
        stored = {"(not an fmbench database)"}
    if stored - bundled:
        raise FmbenchError(
            f"{db}: holds runs that are not the bundled fixtures, and the demo recreates its database; "
            "pass --db with another file"
        )


def _refuse_project(db: Path, out: Path) -> None:
    """The demo keeps to its own database and site: never a project's folder (the current one or theirs)."""

    for what, path in (("database", db), ("site", out)):
        root = find_project_root(path.resolve().parent)
        if root is not None:
            raise FmbenchError(
                f"{root / PROJECT_FILE}: the demo's {what} {path} would be inside this project; run `fmbench demo` "
                "outside it (or give --db and --out outside it): the demo never touches a project"
            )


def run_demo(
    db: Path,
    out: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    serve: bool = True,
    echo: Callable[[str], Any] = print,
) -> None:
    _refuse_project(db, out)
    _refuse_foreign(db)
    for stale in (db, db.with_name(db.name + ".wal")):
        stale.unlink(missing_ok=True)
    registry = fixtures_registry()  # the demo, and only the demo, uses the fixtures' fictional revisions
    report = ingest_paths([fixtures_dir()], db, registry=registry)
    echo(f"ingested {report.count('ingested')} bundled run files into {db}")
    for o in report.outcomes:
        if o.status == "error":
            echo(f"  {o.message}")
    if replays_dir().is_dir():

        native = ingest_artifacts([replays_dir()], db)
        echo(f"ingested {len(native.outcomes)} Evaluations artifact(s)")
    built = build_site(db, out, registry=registry)
    echo(f"built {built.pages} pages and {built.data_files} data files into {out}/")
    if serve:

        run_server(db, host=host, port=port, echo=echo, registry=registry)
