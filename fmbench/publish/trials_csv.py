"""Every run's trials as CSV files (``fmbench export --trials-csv DIR``).

The site holds each trial once, as its scenario's gzipped trial data; a CSV of a run's trials (what the site
offered as ``trials.csv.gz`` before) is written from the database on demand instead.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from fmbench import urls
from fmbench.owned_files import place_files, record_beside
from fmbench.storage.db import connect, default_db_path, reading
from fmbench.views.data import trials_csv_text
from fmbench.write_errors import writing


def export_trials_csv(db: str | os.PathLike[str] | None, out: str | os.PathLike[str], *, force: bool = False) -> list[Path]:
    """Write ``<run id>.trials.csv`` for every run of the database into ``out``; return the paths written.

    The files are written whole into a folder beside ``out`` first, then moved in; a file of ``out`` that this
    export did not write (or that was edited since) is never replaced unless ``force``
    (:func:`fmbench.owned_files.place_files`)."""
    folder = Path(out)
    path = default_db_path(db)
    with writing(folder, "the export folder"):
        folder.mkdir(parents=True, exist_ok=True)
    where = folder.resolve()
    staging = where.with_name(f".{where.name}.trials-csv-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        with writing(folder, "the export folder"):
            staging.mkdir()
        names: list[str] = []
        with connect(path, read_only=True) as con, reading(path, "the trials"):
            run_ids = [r for (r,) in con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
            for run_id in run_ids:
                name = f"{urls.slug(run_id)}.trials.csv"
                text = trials_csv_text(con, run_id)
                with writing(folder / name, "a trials CSV"):
                    (staging / name).write_text(text, encoding="utf-8", newline="")
                names.append(name)
        return place_files(
            folder, [(n, staging / n) for n in names], record=record_beside(path, folder), force=force, what="a trials CSV"
        )
    finally:
        shutil.rmtree(staging, ignore_errors=True)
