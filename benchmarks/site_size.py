"""The site's size against its input, and its file count (``make bench`` runs it after ``run.py``).

Two corpora, generated once with ``fixtures/generate.py`` (the same parameters reuse them):

- 40 runs of about 1,000 trials, built with the default settings (originals gzipped) and with
  ``--originals link`` (each run linked into a publisher's repository, no copy): the site's size ÷ the run
  files' size, files a run, and where the bytes go;
- 3 full-size runs of about 5,000 trials: each run's bytes and files, and the site extrapolated to 400 and
  4,000 such runs.

Goals (issue 31): at most 0.15× its input by default, 0.08× with ``link``, at most 40 files a run.

    nice -n 10 python benchmarks/site_size.py [--runs 40] [--trials 1000] [--full-runs 3] [--full-trials 5000]
        [--out benchmarks/out/site-size]

Writes ``results.json`` and ``results.md`` in ``--out``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import Figure, MiB, Results, corpus, log, machine, timed

DEFAULT_OUT = Path(__file__).resolve().parent / "out" / "site-size"
HOST_LIMIT = 10**9
"""GitHub Pages refuses sites over 1 GB."""


def part_of(path: str) -> str:
    """Which part of the site a file is, for the breakdown."""
    if path.startswith("runs/") and "/trials/" in path:
        return "trials pages (HTML summary)"
    if path.startswith("data/runs/") and "/trials/" in path:
        return "trial data (JSON, gzip)"
    if path.startswith("data/runs/") and path.endswith(".gz"):
        return "originals (gzip)"
    if path.startswith("data/runs/"):
        return "run figures (JSON)"
    if path.startswith("runs/"):
        return "run pages"
    if path.startswith("assets/"):
        return "assets"
    if path.startswith("compare/"):
        return "comparison pages"
    return "other pages and data"


def run_of(path: str) -> str | None:
    """The run a file belongs to (its run page, trials pages and data), or ``None`` for a site-wide file."""
    parts = path.split("/")
    if parts[0] == "runs" and len(parts) > 2:
        return parts[1]
    if parts[:2] == ["data", "runs"] and len(parts) > 3:
        return parts[2]
    return None


def measure(site: Path) -> dict[str, Any]:
    """Bytes and files of a built site: in all, by part, each run's own and the site-wide rest."""
    by_part: dict[str, int] = {}
    per_run: dict[str, list[int]] = {}
    shared = [0, 0]
    for f in site.rglob("*"):
        if not f.is_file():
            continue
        rel = f.relative_to(site).as_posix()
        if rel.startswith(".") or "/." in rel:
            continue  # the build's own state
        size = f.stat().st_size
        by_part[part_of(rel)] = by_part.get(part_of(rel), 0) + size
        run = run_of(rel)
        if run is None:
            shared[0] += size
            shared[1] += 1
        else:
            kept = per_run.setdefault(run, [0, 0])
            kept[0] += size
            kept[1] += 1
    runs = len(per_run)
    return {
        "bytes": sum(by_part.values()),
        "files": sum(n for _, n in per_run.values()) + shared[1],
        "runs": runs,
        "by_part": dict(sorted(by_part.items(), key=lambda kv: -kv[1])),
        "run_bytes_mean": sum(b for b, _ in per_run.values()) / max(runs, 1),
        "run_files_max": max((n for _, n in per_run.values()), default=0),
        "run_files_mean": sum(n for _, n in per_run.values()) / max(runs, 1),
        "shared_bytes": shared[0],
        "shared_files": shared[1],
    }


def ingest(files: Sequence[Path], db: Path) -> None:
    from fmbench.ingest import ingest_paths

    if db.exists():
        return
    # a full-size run file (about 19 MB) is over the reader's default bound: as the harness, raise it
    report = ingest_paths(list(files), db, max_bytes=max(p.stat().st_size for p in files) + 1, max_trials=None)
    failed = [o.message for o in report.outcomes if o.status == "error"]
    if failed:
        raise SystemExit(f"ingest failed: {failed[:3]}")


def build(db: Path, site: Path, originals: str) -> float:
    import duckdb

    from fmbench.publish.build import build_site

    links: dict[str, str] = {}
    if originals == "link":
        con = duckdb.connect(str(db), read_only=True)
        try:
            links = {r: f"https://example.org/bench/blob/main/runs/{f}"
                     for r, f in con.execute("SELECT run_id, file_name FROM runs").fetchall()}
        finally:
            con.close()
    shutil.rmtree(site, ignore_errors=True)
    seconds, _ = timed(lambda: build_site(db, site, originals=originals, source_links=links))
    return seconds


def breakdown(parts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v / MiB:,.1f} MiB" for k, v in parts.items())


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--full-runs", type=int, default=3)
    ap.add_argument("--full-trials", type=int, default=5000)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    results = Results(datetime.now(UTC).isoformat(timespec="seconds"), " ".join(sys.argv), machine())

    # The 40 x 1,000 corpus, default settings and --originals link.
    small = out / "runs-1000"
    files = corpus(small, args.runs, args.trials, 0, results)
    inputs = sum(p.stat().st_size for p in files)
    db = small / "site-size.duckdb"
    log(f"ingesting {len(files)} run files ({inputs / MiB:,.0f} MiB)")
    ingest(files, db)
    sized: dict[str, dict[str, Any]] = {}
    for originals, goal in (("gzip", 0.15), ("link", 0.08)):
        log(f"building with --originals {originals}")
        seconds = build(db, small / f"site-{originals}", originals)
        m = sized[originals] = measure(small / f"site-{originals}")
        ratio = m["bytes"] / inputs
        results.add(Figure(
            f"site size vs its input, {args.runs} x {args.trials:,} trials, originals {originals}"
            + (" (the default)" if originals == "gzip" else ""),
            round(ratio, 3), "x", f"<= {goal}x", ratio <= goal,
            f"{m['bytes'] / MiB:,.1f} MiB of site for {inputs / MiB:,.1f} MiB of run files, built in {seconds:.0f} s: "
            + breakdown(m["by_part"]),
        ))
        results.add(Figure(
            f"files a run, originals {originals}", m["run_files_max"], "files", "<= 40", m["run_files_max"] <= 40,
            f"at most {m['run_files_max']}, {m['run_files_mean']:.1f} on average; {m['files']:,} files in all, "
            f"{m['shared_files']:,} of them site-wide",
        ))

    # Full-size runs: each run's bytes and files, extrapolated.
    full = out / f"runs-{args.full_trials}"
    big = corpus(full, args.full_runs, args.full_trials, 0, results)
    big_inputs = sum(p.stat().st_size for p in big)
    big_db = full / "site-size.duckdb"
    log(f"ingesting {len(big)} full-size run files ({big_inputs / MiB:,.0f} MiB)")
    ingest(big, big_db)
    log("building the full-size runs' site (default settings)")
    seconds = build(big_db, full / "site-gzip", "gzip")
    m = measure(full / "site-gzip")
    per_run = m["run_bytes_mean"]
    # Site-wide pages grow with the runs too (indexes, comparisons): their bytes and files per run, as measured on
    # the 40-run corpus, are added to each full run's own.
    wide = sized["gzip"]
    wide_bytes = wide["shared_bytes"] / max(wide["runs"], 1)
    wide_files = wide["shared_files"] / max(wide["runs"], 1)
    results.add(Figure(
        f"a full-size run ({args.full_trials:,} trials) in the site", round(per_run / MiB, 2), "MiB", "report", None,
        f"{m['run_files_mean']:.0f} files a run (at most {m['run_files_max']}); {big_inputs / len(big) / MiB:,.1f} MiB "
        f"of run file a run, so {per_run * m['runs'] / big_inputs:.3f}x; {m['runs']} runs built in {seconds:.0f} s: "
        + breakdown(m["by_part"]),
    ))
    extrapolated = {}
    for n in (400, 4000):
        size = n * (per_run + wide_bytes)
        count = n * (m["run_files_mean"] + wide_files)
        extrapolated[n] = {"bytes": size, "files": count}
        results.add(Figure(
            f"site of {n:,} full-size runs (extrapolated)", round(size / 1e9, 2), "GB", "report", None,
            f"about {count:,.0f} files; each run's own files ({per_run / MiB:,.2f} MiB, {m['run_files_mean']:.0f} "
            f"files) plus the site-wide pages' share a run on the {wide['runs']}-run corpus ({wide_bytes / 1024:,.0f} "
            f"KiB, {wide_files:.1f} files)"
            + ("; past GitHub Pages' 1 GB" if size > HOST_LIMIT else "; within GitHub Pages' 1 GB"),
        ))

    doc = {**asdict(results), "sites": sized, "full_size": m, "extrapolated": extrapolated}
    (out / "results.json").write_text(json.dumps(doc, indent=2, default=str) + "\n")
    lines = ["| Figure | Value | Goal | Met | Detail |", "| --- | --- | --- | --- | --- |"]
    for f in results.figures:
        met = "" if f.met is None else ("yes" if f.met else "**no**")
        lines.append(f"| {f.name} | {f.value:,.3g} {f.unit} | {f.goal} | {met} | {f.detail} |")
    (out / "results.md").write_text("\n".join(lines) + "\n")
    log(f"written {out / 'results.md'}")
    return 0 if all(f.met is not False for f in results.figures) else 1


if __name__ == "__main__":
    sys.exit(main())
