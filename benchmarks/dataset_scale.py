"""Where one machine stops reading a Parquet dataset: build throughput and peak memory against corpus size.

    python benchmarks/dataset_scale.py [--out DIR] [--sizes 8,16] [--trials 1000]

For each size (runs of ``--trials`` trials, generated like ``make bench``'s corpus) it ingests the runs, exports
the database as a Parquet dataset and builds the site from the dataset in a fresh process (``build --parquet``),
then prints the build's trials per second and peak resident memory, and the memory each further million trials
costs (the slope between the two sizes). docs/parquet.md quotes the figures.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as bench  # the make bench harness: its corpus and its fresh-process measurements

from fmbench.storage.dataset import export_parquet


def measure(out: Path, runs: int, trials: int) -> dict[str, float]:
    folder = out / f"{runs}x{trials}"
    folder.mkdir(parents=True, exist_ok=True)
    files = bench.corpus(folder, runs, trials, 0, bench.Results(started="", command="", machine={}))
    db = folder / "bench.duckdb"
    bench.fmbench_ingest(files, db)
    dataset = folder / "dataset"
    export_parquet(db, dataset)
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        (count,) = con.execute("SELECT count(*) FROM trials").fetchone() or (0,)
    site = folder / "site"
    shutil.rmtree(site, ignore_errors=True)
    built = bench.in_child("build", db=str(dataset), site=str(site))
    return {
        "runs": runs,
        "trials": int(count),
        "build_seconds": round(built.wall, 1),
        "trials_per_second": round(count / built.wall),
        "peak_mib": round(max(built.peak, built.children_peak) / 2**20),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("build/dataset-scale"))
    parser.add_argument("--sizes", default="8,16", help="run counts, comma-separated")
    parser.add_argument("--trials", type=int, default=1000)
    args = parser.parse_args(argv)
    rows = [measure(args.out, int(n), args.trials) for n in args.sizes.split(",")]
    for row in rows:
        print(json.dumps(row))
    if len(rows) >= 2:
        small, large = rows[0], rows[-1]
        slope = (large["peak_mib"] - small["peak_mib"]) / ((large["trials"] - small["trials"]) / 1e6)
        print(json.dumps({"peak_mib_per_million_trials": round(slope)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
