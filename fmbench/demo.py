"""The main job on the embedded default: bundled fixtures into a fresh DuckDB file, the site built, served."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from fmbench.build import build_site
from fmbench.ingest import ingest_paths


def fixtures_dir() -> Path:
    return Path(str(resources.files("fmbench.fixtures").joinpath("runs")))


def replays_dir() -> Path:
    return Path(str(resources.files("fmbench.fixtures").joinpath("replays")))


def run_demo(
    db: Path,
    out: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    serve: bool = True,
    echo: Callable[[str], Any] = print,
) -> None:
    for stale in (db, db.with_name(db.name + ".wal")):
        stale.unlink(missing_ok=True)
    report = ingest_paths([fixtures_dir()], db)
    echo(
        f"ingested {report.count('ingested')} bundled run files into {db} "
        f"({report.count('error')} could not be read, as planted)"
    )
    for o in report.outcomes:
        if o.status == "error":
            echo(f"  {o.message}")
    if replays_dir().is_dir():
        from fmbench.native.store import ingest_artifacts

        native = ingest_artifacts([replays_dir()], db)
        echo(f"ingested {len(native.outcomes)} Evaluations artifact(s)")
    built = build_site(db, out)
    echo(f"built {built.pages} pages and {built.data_files} data files into {out}/")
    if serve:
        from fmbench.serve import run_server

        run_server(db, host=host, port=port, echo=echo)
