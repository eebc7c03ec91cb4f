"""Every run's trials as CSV files (``fmbench export --trials-csv DIR``).

The site holds each trial once, as its scenario's gzipped trial data; a CSV of a run's trials (what the site
offered as ``trials.csv.gz`` before) is written from the database on demand instead.
"""

from __future__ import annotations

import os
from pathlib import Path

from fmbench import urls
from fmbench.storage.db import connect, default_db_path, reading
from fmbench.views.data import trials_csv_text
from fmbench.write_errors import writing


def export_trials_csv(db: str | os.PathLike[str] | None, out: str | os.PathLike[str]) -> list[Path]:
    """Write ``<run id>.trials.csv`` for every run of the database into ``out``; return the paths written."""
    folder = Path(out)
    path = default_db_path(db)
    with writing(folder, "the export folder"):
        folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with connect(path, read_only=True) as con, reading(path, "the trials"):
        run_ids = [r for (r,) in con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
        for run_id in run_ids:
            target = folder / f"{urls.slug(run_id)}.trials.csv"
            text = trials_csv_text(con, run_id)
            with writing(target, "a trials CSV"):
                target.write_text(text, encoding="utf-8", newline="")
            written.append(target)
    return written
