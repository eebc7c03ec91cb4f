"""The performance harness (``make bench``): fmbench at the size a benchmark owner reaches, against floors.

Every figure is a ratio to a floor measured in the same run on the same
machine, never an absolute time: DuckDB's own ``read_json`` for the ingest,
a trivial Jinja template for the build, the full build for an incremental
one. Writes everything it makes under ``benchmarks/out/`` (git-ignored):
the generated corpus, the databases, the sites, ``results.json`` and
``results.md`` (the table ``benchmarks/README.md`` shows).

    python benchmarks/run.py [--runs 200] [--trials 1000] [--legacy 10] [--out benchmarks/out]

The corpus is generated once with ``fixtures/generate.py`` (the same
parameters reuse it). The whole run takes under 15 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fmbench.analysis.figures import nearest_rank

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "benchmarks" / "out"
CLIENTS = 8
MiB = 2**20


def site_part(path: str) -> str:
    """Which part of the site a file is, for the size breakdown."""
    if path.startswith("runs/") and "/trials/" in path:
        return "trials pages (HTML)"
    if path.startswith("data/runs/") and "/trials/" in path:
        return "trial data (JSON, gzip)"
    if path.startswith("data/runs/") and path.endswith(".gz"):
        return "originals (gzip)"
    if path.startswith("runs/"):
        return "run pages"
    if path.startswith("assets/"):
        return "assets"
    return "other pages and data"


@dataclass
class Figure:
    name: str
    value: float | None
    unit: str
    goal: str = ""
    met: bool | None = None
    detail: str = ""


@dataclass
class Results:
    started: str
    command: str
    machine: dict[str, Any]
    corpus: dict[str, Any] = field(default_factory=dict)
    figures: list[Figure] = field(default_factory=list)
    timings: dict[str, Any] = field(default_factory=dict)
    budget: dict[str, float] = field(default_factory=dict)
    build_kinds: dict[str, float] = field(default_factory=dict)

    def add(self, figure: Figure) -> Figure:
        self.figures.append(figure)
        shown = "" if figure.met is None else (" MET" if figure.met else " NOT MET")
        value = "-" if figure.value is None else f"{figure.value:,.3g}"
        print(f"  {figure.name}: {value} {figure.unit}{shown} {('(' + figure.detail + ')') if figure.detail else ''}",
              flush=True)
        return figure


def log(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


def resample_store_of(db: Path) -> Path:
    """The folder of the database's resample store (:mod:`fmbench.comparison.resample_store`)."""
    from fmbench.comparison.resample_store import location

    folder = location(db)
    assert folder is not None
    return folder


def store_size(db: Path) -> tuple[int, int]:
    """``(entries, bytes)`` of the database's resample store."""
    from fmbench.comparison.resample_store import ResampleStore

    return ResampleStore(resample_store_of(db)).size()


def fresh(path: Path) -> Path:
    """No database at ``path``: not its file, its log, its writer's mark, nor its resample store."""
    for p in (path, path.with_name(path.name + ".wal"), path.with_name(path.name + ".writer"), resample_store_of(path)):
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
    return path


# --- the machine -------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    import duckdb
    import jinja2
    import pyarrow
    import pydantic

    import fmbench

    memory = None
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    memory = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            check=False).stdout.strip()
    return {
        "cores": os.cpu_count(),
        "memory_gib": memory,
        "system": f"{platform.system()} {platform.machine()}",
        "python": platform.python_version(),
        "duckdb": duckdb.__version__,
        "pydantic": pydantic.VERSION,
        "pyarrow": pyarrow.__version__,
        "jinja2": jinja2.__version__,
        "fmbench": fmbench.__version__,
        "commit": commit or None,
    }


# --- the corpus ----------------------------------------------------------------------------------


def corpus(out: Path, runs: int, trials: int, legacy: int, results: Results) -> list[Path]:
    from fmbench.fixtures.generate import generate_large_corpus

    folder = out / "corpus"
    stamp = folder / ".generated.json"
    wanted = {"runs": runs, "trials_per_run": trials, "legacy_runs": legacy, "seed": 7}
    if not (stamp.is_file() and json.loads(stamp.read_text()) == wanted):
        shutil.rmtree(folder, ignore_errors=True)
        log(f"generating the corpus: {runs} runs of about {trials} trials and {legacy} legacy files")
        seconds, _ = timed(lambda: generate_large_corpus(folder, runs=runs, trials_per_run=trials,
                                                         legacy_runs=legacy, seed=7))
        results.timings["generate corpus (s)"] = round(seconds, 1)
        stamp.write_text(json.dumps(wanted))
    files = sorted(p for p in folder.glob("*.json") if not p.name.startswith("."))
    sidecars = sorted(folder.glob("*.meta.yaml"))
    sizes = [p.stat().st_size for p in files]
    results.corpus = {
        **wanted,
        "files": len(files),
        "sidecars": len(sidecars),
        "megabytes": round(sum(sizes) / 1e6, 1),
        "largest_file_megabytes": round(max(sizes) / 1e6, 2),
    }
    return files


def held_back(files: Sequence[Path]) -> Path:
    """The run added for the incremental build: the newest on-device run file (by the date in its name)."""
    dated = [(p.stem[-10:], p.name, p) for p in files if "-on-device-" in p.name and re.search(r"\d{4}-\d\d-\d\d$", p.stem)]
    return max(dated)[2]


# --- ingest -------------------------------------------------------------------------------------------


def naive_ingest(files: Sequence[Path], db: Path) -> float:
    """What a first attempt does: json.load each file, then per-row executemany inserts of its rows."""
    import duckdb

    con = duckdb.connect(str(fresh(db)))
    con.execute("SET enable_progress_bar = false")
    con.execute(
        "CREATE TABLE runs (run VARCHAR, suite VARCHAR, model VARCHAR, device VARCHAR, hardware VARCHAR, "
        "system_version VARCHAR, build VARCHAR, started VARCHAR, ended VARCHAR, repetitions INTEGER, content VARCHAR)"
    )
    metric_keys = (
        "duration", "timeToFirstToken", "decodeDuration", "inputTokenCount", "outputTokenCount",
        "firstStreamUpdateTokenCount", "tokenCountSource", "outputTokensPerSecond", "outputCharactersPerSecond",
        "streamUpdateCount", "maximumStreamUpdateGap", "reasoningTokenCount", "contextSize", "contextUtilization",
        "startingResidentMemoryBytes", "peakObservedResidentMemoryBytes", "endingResidentMemoryBytes",
        "startingThermalState", "endingThermalState", "worstObservedThermalState", "startedAt", "endedAt",
    )
    trial_columns = 12 + len(metric_keys)
    con.execute(
        "CREATE TABLE trials (run VARCHAR, ordinal INTEGER, id VARCHAR, scenario VARCHAR, title VARCHAR, category VARCHAR, "
        "sample VARCHAR, prompt VARCHAR, checks VARCHAR, requested VARCHAR, executed VARCHAR, response VARCHAR, "
        + ", ".join(f'"{k}" VARCHAR' for k in metric_keys) + ")"
    )
    con.execute("CREATE TABLE checks (run VARCHAR, trial INTEGER, ordinal INTEGER, label VARCHAR, passed BOOLEAN, detail VARCHAR)")
    con.execute("CREATE TABLE failures (run VARCHAR, ordinal INTEGER, id VARCHAR, scenario VARCHAR, message VARCHAR)")
    started = time.perf_counter()
    for path in files:
        text = path.read_text(encoding="utf-8")
        doc = json.loads(text)
        env = doc.get("environment", {})
        con.execute("BEGIN TRANSACTION")
        con.execute(
            "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [path.name, doc.get("suite"), doc.get("model"), env.get("deviceName"), env.get("hardwareModel"),
             env.get("systemVersion"), env.get("systemBuild"), doc.get("startedAt"), doc.get("endedAt"),
             doc.get("repetitions"), text],
        )
        trials, checks = [], []
        for i, t in enumerate(doc.get("trials", [])):
            sample = t.get("sample") or t.get("scenario") or {}
            metrics = t.get("metrics", {})
            trials.append(
                [path.name, i, t.get("id"), t.get("scenarioID") or sample.get("id"), t.get("scenarioTitle") or sample.get("title"),
                 t.get("category") or sample.get("category"), sample.get("id"), sample.get("prompt"),
                 json.dumps(sample.get("checks")), t.get("requestedModel") or t.get("model"),
                 t.get("executedModel") or t.get("model"), t.get("response")]
                + [None if metrics.get(k) is None else str(metrics.get(k)) for k in metric_keys]
            )
            for j, c in enumerate((t.get("grade") or {}).get("checks", [])):
                checks.append([path.name, i, j, c.get("label"), c.get("passed"), c.get("detail")])
        assert all(len(r) == trial_columns for r in trials)
        if trials:
            con.executemany(f"INSERT INTO trials VALUES ({', '.join('?' * trial_columns)})", trials)
        if checks:
            con.executemany("INSERT INTO checks VALUES (?, ?, ?, ?, ?, ?)", checks)
        failures = [[path.name, i, f.get("id"), f.get("scenarioID"), f.get("message")] for i, f in enumerate(doc.get("failures", []))]
        if failures:
            con.executemany("INSERT INTO failures VALUES (?, ?, ?, ?, ?)", failures)
        con.execute("COMMIT")
    con.execute("CHECKPOINT")
    seconds = time.perf_counter() - started
    con.close()
    fresh(db)
    return seconds


_CHILD_SCRIPT = """
import json, resource, sys, time
kind, args = sys.argv[1], json.loads(sys.argv[2])
started = time.perf_counter()
if kind == "ingest":
    from fmbench.ingest import ingest_paths
    report = ingest_paths(args["files"], args["db"])
    errors = [o.message for o in report.outcomes if o.status == "error"]
    result = {"errors": errors[:3]}
elif kind == "floor":
    import duckdb
    con = duckdb.connect(args["db"])
    con.execute("SET enable_progress_bar = false")
    listing = ", ".join("'" + f.replace("'", "''") + "'" for f in args["files"])
    started = time.perf_counter()
    con.execute(f"CREATE TABLE documents AS SELECT * FROM read_json([{listing}], maximum_object_size = 1073741824)")
    con.execute("CHECKPOINT")
    con.close()
    result = {}
else:
    from fmbench.publish.build import build_site
    report = build_site(args["db"], args["site"])
    result = {
        "pages": report.pages, "data_files": report.data_files, "bytes_total": report.bytes_total,
        "rendered": list(report.rendered), "changed": list(report.changed),
        "seconds_by_kind": report.seconds_by_kind, "warnings": report.warnings,
        "regression_devices": sorted(getattr(report, "regression_devices", None) or []),
        "resamples_drawn": getattr(report, "resamples_drawn", None),
        "comparisons_reused": getattr(report, "comparisons_reused", None),
        "comparisons_made": getattr(report, "comparisons_made", None),
        "has_regression_devices": hasattr(report, "regression_devices"),
    }
result["wall"] = time.perf_counter() - started
with open("/proc/self/status", encoding="ascii") as status:
    result["peak"] = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
result["children_peak"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
print(json.dumps(result))
"""


@dataclass
class Measured:
    """One step run in a fresh process: its wall time (timed inside it), the CPU seconds of it and every process
    it started (user + system), the peak resident memory of the process and of its largest worker, and its result."""

    wall: float
    cpu: float
    peak: int
    children_peak: int
    result: dict[str, Any]


def in_child(kind: str, **args: Any) -> Measured:
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-P", "-c", _CHILD_SCRIPT, kind, json.dumps(args, default=str)],
                          capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{kind} failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Measured(result.pop("wall"), cpu, result.pop("peak"), result.pop("children_peak"), result)


def floor_read_json(files: Sequence[Path], db: Path) -> Measured:
    """DuckDB's own read_json loading the same files into one table (documents over 16 MiB need the raised limit)."""
    fresh(db)
    try:
        return in_child("floor", files=[str(p) for p in files], db=str(db))
    finally:
        fresh(db)


def fmbench_ingest(files: Sequence[Path], db: Path) -> Measured:
    fresh(db)
    measured = in_child("ingest", files=[str(p) for p in files], db=str(db))
    if measured.result["errors"]:
        raise SystemExit(f"ingest errors: {measured.result['errors']}")
    return measured


def fmbench_build(db: Path, site: Path) -> Measured:
    return in_child("build", db=str(db), site=str(site))


def ingest_budget(files: Sequence[Path], db: Path, corpus_mb: float) -> dict[str, float]:
    """Where an ingest's CPU goes: each stage's CPU time on ``files`` in one process, scaled to ``corpus_mb``.

    The stages are the ones a worker runs (read, validate, normalize, judge, rows, Arrow) and the ones
    the writer runs (inserts, commit), with the bulk settings of a big batch.
    """
    import gc
    import hashlib

    from fmbench.analysis.revisions import load_registry
    from fmbench.analysis.run import analyze
    from fmbench.ingest import rows as R
    from fmbench.ingest import writable
    from fmbench.ingest.prepare import PreparedRun, to_arrow
    from fmbench.ingest.writer import BULK_CHECKPOINT_THRESHOLD, Writer, write_prepared
    from fmbench.runfile.reader import parse_run
    from fmbench.runfile.record import to_record
    from fmbench.storage.originals import stored_form

    registry = load_registry()
    spent: dict[str, float] = {}

    def tick(stage: str, started: float) -> float:
        now = time.process_time()
        spent[stage] = spent.get(stage, 0.0) + now - started
        return now

    size = 0.0
    with writable(fresh(db)) as con:
        con.execute(f"SET checkpoint_threshold = '{BULK_CHECKPOINT_THRESHOLD}'")
        con.execute("SET threads = 1")
        writer = Writer(con, hold_cap=True)  # as a batch's writer: its memory cap held between files
        schemas = writer.schemas()
        for path in files:
            gc.disable()
            t = time.process_time()
            data = path.read_bytes()
            sha = hashlib.sha256(data).hexdigest()
            size += len(data) / 1e6
            t = tick("read + SHA-256", t)
            parsed = parse_run(data, path.name)
            t = tick("validate (pydantic)", t)
            record = to_record(parsed, path.name, data, sha)  # hashed once, as an ingest does
            t = tick("normalize (record)", t)
            analysis = analyze(record, registry)
            t = tick("figures, verdict, revision", t)
            columns = R.run_columns(analysis)
            run = {k: [v] for k, v in R.run_row(analysis, None).items()}
            t = tick("rows", t)
            tables = {name: to_arrow(c, schemas[name]) for name, c in columns.items() if c}
            tables["runs"] = to_arrow(run, schemas["runs"])
            t = tick("Arrow tables", t)
            stored = stored_form(data)
            prepared = PreparedRun(
                record.run_id, sha, path.name, analysis.verdict.level, stored, len(data), None, None, tables
            )
            t = tick("the original gzipped, as stored", t)
            del parsed, record, analysis, columns
            gc.enable()
            t = tick("freeing", t)
            write_prepared(writer, prepared)
            t = tick("DuckDB: insert + commit", t)
        writer.release_cap()
        t = time.process_time()
        con.execute("CHECKPOINT")
        tick("DuckDB: checkpoint", t)
    fresh(db)
    return {stage: round(seconds * corpus_mb / size, 1) for stage, seconds in spent.items()}


_PEAK_SCRIPT = """
import sys
from fmbench.ingest import ingest_paths, writable
if sys.argv[1] in ("ingest", "refuse"):
    limits = {"max_trials": int(sys.argv[5])} if len(sys.argv) > 5 else {}
    report = ingest_paths([sys.argv[2]], sys.argv[3], max_bytes=int(sys.argv[4]), **limits)
    assert report.ok == (sys.argv[1] == "ingest"), report.outcomes
else:
    with writable(sys.argv[3]):
        pass
with open("/proc/self/status", encoding="ascii") as status:  # this process's own peak (ru_maxrss counts the parent's before exec)
    print(next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:")))
"""


def peak_rss(mode: str, file: Path, db: Path, max_bytes: int | None = None, max_trials: int | None = None) -> int:
    """Peak resident memory (bytes) of a fresh Python process that ingests ``file`` (``refuse``: and sees it
    refused), or only opens a database."""
    from fmbench.runfile.reader import DEFAULT_MAX_BYTES

    fresh(db)
    trials = [] if max_trials is None else [str(max_trials)]
    done = subprocess.run([sys.executable, "-P", "-c", _PEAK_SCRIPT, mode, str(file), str(db),
                           str(max_bytes or DEFAULT_MAX_BYTES), *trials], capture_output=True, text=True, check=True)
    fresh(db)
    return int(done.stdout.strip().splitlines()[-1])


SHAPE_RUN = REPO / "fixtures" / "runs" / "iphone-17-pro-ios27-24a5264n-on-device-quick-2026-11-11.json"
"""The fixture run whose trials the odd shapes replace."""
TINY_TRIAL = {
    "id": "t", "scenarioID": "s", "scenarioTitle": "S", "category": "c", "sample": {"id": "s-001", "prompt": "p"},
    "requestedModel": "onDevice", "executedModel": "onDevice", "iteration": 0, "response": "", "grade": {"checks": []},
    "metrics": {"duration": 0.5},
}
"""The smallest trial a run file can hold and be read (218 bytes)."""


def shape_peaks(out: Path, results: Results) -> None:
    """Peak memory of ingesting runs of odd shapes: many empty trials, and as many tiny valid ones as the
    default trial limit takes. The bound is the realistic files' own: 5 x the file + 200 MiB."""
    from fmbench.runfile.reader import DEFAULT_MAX_TRIALS

    shapes = [
        ("1,000,000 empty trials, refused by the trial limit", [{}] * 1_000_000, "refuse", None),
        ("1,000,000 empty trials, the limit raised to 1,000,000 (too dense)", [{}] * 1_000_000, "refuse", 1_000_000),
        (f"{DEFAULT_MAX_TRIALS:,} tiny valid trials (the default limit)", [TINY_TRIAL] * DEFAULT_MAX_TRIALS, "ingest", None),
    ]
    document = json.loads(SHAPE_RUN.read_bytes())
    for name, trials, mode, max_trials in shapes:
        path = out / "shape.json"
        path.write_text(json.dumps({**document, "trials": trials, "summaries": []}), encoding="utf-8")
        size = path.stat().st_size
        log(f"peak memory of ingesting {name} ({size / MiB:.1f} MiB)")
        started = time.perf_counter()
        peak = peak_rss(mode, path, out / "peak.duckdb", max_trials=max_trials)
        seconds = time.perf_counter() - started
        limit = 5 * size + 200 * MiB
        results.add(Figure(f"peak memory, {name}", round(peak / MiB), "MiB", f"<= 5 x size + 200 MiB = {limit / MiB:.0f} MiB",
                           peak <= limit, f"{peak / limit:.2f} of the bound for {size / MiB:.1f} MiB, {seconds:.1f} s"))
        path.unlink()


# --- build --------------------------------------------------------------------------------------------


def trivial_pages(count: int, out: Path) -> float:
    """The floor of a build: ``count`` pages of a trivial Jinja template, no queries, written to files."""
    import jinja2

    shutil.rmtree(out, ignore_errors=True)
    env = jinja2.Environment(autoescape=True)
    template = env.from_string("<!doctype html><title>{{ title }}</title><h1>{{ title }}</h1><p>{{ body }}</p>\n")
    started = time.perf_counter()
    for i in range(count):
        target = out / f"p{i // 1000}" / f"{i}.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(template.render(title=f"Page {i}", body="text " * 20).encode("utf-8"))
    seconds = time.perf_counter() - started
    shutil.rmtree(out, ignore_errors=True)
    return seconds


def snapshot_times(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


def expected_outputs(db: Path, run_id: str, site: Path) -> set[str]:
    """What adding ``run_id`` should re-render, worked out from the database (not from the build's own record):
    its run and trial pages and data files, its device page, the pages of its scenarios, the comparisons of its
    device that involve its OS build, the device comparisons its device is in on its OS generation, the OS build pages of its device's
    builds, the PCC page for a PCC run, the leaderboards of its scenarios (and of their categories) and every board its
    device is on (a device's evidence is chosen among all its runs), coverage, and every index."""
    import duckdb

    from fmbench import urls
    from fmbench.publish.build import output_file
    from fmbench.views.trials import trial_pages

    con = duckdb.connect(str(db), read_only=True)
    try:
        hardware, device_name, os_build, os_generation, _route, file_name = con.execute(
            "SELECT hardware_model, device_name, os_build, os_generation, route, file_name FROM runs WHERE run_id = ?",
            [run_id],
        ).fetchone()
        scenarios = [s for (s,) in con.execute("SELECT scenario_id FROM scenario_figures WHERE run_id = ?", [run_id]).fetchall()]
        device_builds = [b for (b,) in con.execute(
            "SELECT DISTINCT os_build FROM runs WHERE coalesce(hardware_model, device_name) = coalesce(?, ?) "
            "AND os_build IS NOT NULL", [hardware, device_name]).fetchall()]
        pages = trial_pages(con, run_id)
        # the leaderboard pages of the categories of its scenarios that hold two workloads or more (a category of
        # one has no page of its own), and the leaderboards of those categories' other workloads (they link them)
        categories = [c for (c,) in con.execute(
            "SELECT category FROM scenario_figures WHERE category IN (SELECT category FROM scenario_figures WHERE "
            "scenario_id IN (SELECT scenario_id FROM scenario_figures WHERE run_id = ?)) "
            "GROUP BY category HAVING count(DISTINCT scenario_id) >= 2", [run_id]).fetchall()]
        others = [s for (s,) in con.execute(
            "SELECT DISTINCT scenario_id FROM scenario_figures WHERE list_contains(?, category)", [categories]
        ).fetchall()] if categories else []
        # a board stands each device on evidence chosen among all its runs: every board (and category) it is on
        device_scenarios = [s for (s,) in con.execute(
            "SELECT DISTINCT f.scenario_id FROM scenario_figures f JOIN runs r USING (run_id) WHERE r.hardware_model = ?",
            [hardware]).fetchall()] if hardware else []
        device_categories = [c for (c,) in con.execute(
            "SELECT category FROM scenario_figures WHERE category IN (SELECT f.category FROM scenario_figures f "
            "JOIN runs r USING (run_id) WHERE r.hardware_model = ?) GROUP BY category "
            "HAVING count(DISTINCT scenario_id) >= 2", [hardware]).fetchall()] if hardware else []
    finally:
        con.close()
    paths = [
        urls.home(), urls.runs(), urls.devices(), urls.scenarios(), urls.data(), urls.compare_index(), urls.regressions(),
        urls.regressions_feed(), urls.data_runs_index(), urls.data_search_index(), urls.revisions(),
        urls.device(hardware or device_name), urls.leaderboards(), urls.coverage(),
        urls.run(run_id), urls.data_figures(run_id), urls.data_source_gzip(run_id, file_name),
    ]
    paths += [urls.trials(run_id, s) for s in pages]
    paths += [p for s in scenarios for p in (urls.scenario(s), urls.leaderboard(s), urls.data_trials_json(run_id, s))]
    paths += [urls.leaderboard_category(c) for c in categories] + [urls.leaderboard(s) for s in others]
    paths += [urls.leaderboard(s) for s in device_scenarios] + [urls.leaderboard_category(c) for c in device_categories]
    # An OS build page reads every run of each device measured on it: the pages of the device's builds.
    paths += [urls.builds(), *(urls.build(b) for b in device_builds)]
    paths.append(urls.pcc())  # its on-device and PCC columns per workload read every route's boards
    expected = {output_file(p) for p in paths}
    # A device comparison reads every run of its two devices on its OS generation: each one the device is in, on the
    # run's generation.
    devices = site / "compare" / "devices"
    if hardware and devices.is_dir():
        for page in devices.glob(f"*/{os_generation}/index.html"):
            if urls.slug(hardware) in page.parent.parent.name.split(".."):
                expected.add(str(page.relative_to(site)))
    compare = site / "compare" / urls.slug(hardware or "")
    if hardware and compare.is_dir():
        for page in compare.glob("*/index.html"):
            baseline, _, candidate = page.parent.name.partition("..")
            if os_build in (baseline, candidate):
                expected.add(str(page.relative_to(site)))
    return expected


def touched_device_of(db: Path, run_id: str) -> str:
    """The device (its hardware model, else its name) of ``run_id``: the one regression report an added run changes."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        hardware, name = con.execute("SELECT hardware_model, device_name FROM runs WHERE run_id = ?", [run_id]).fetchone()
    finally:
        con.close()
    return str(hardware or name)


def gz(data: bytes) -> int:
    return len(gzip.compress(data, compresslevel=6))


FIRST_VISIT_GOAL = 600 * 1024
"""The most a first visit of the largest run page may download, gzipped: its HTML and every asset it loads."""


def first_visit_weight(site: Path, page: Path) -> tuple[int, dict[str, int]]:
    """The gzipped bytes a first visit of ``page`` downloads (its HTML, stylesheet, icon and scripts), and each
    asset's share."""
    html = page.read_bytes()
    # data-plotly: the chart library charts.js fetches when a chart comes into view, counted as part of the visit
    assets = sorted(set(re.findall(r'(?:src|href|data-plotly)="/(assets/[^"?]+)', html.decode("utf-8"))))
    asset_gz = {a: gz((site / a).read_bytes()) for a in assets}
    return gz(html) + sum(asset_gz.values()), asset_gz


# --- serve --------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, db: Path, log_file: Path, *options: str) -> None:
        self.port = free_port()
        self.log_file = log_file
        self.log = log_file.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-P", "-m", "fmbench", "serve", "--db", str(db), "--port", str(self.port), *options],
            stdout=self.log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if self.get("/api/runs")[0] == 200:
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise SystemExit(f"fmbench serve did not start; see {log_file}")

    def get(self, path: str, connection: http.client.HTTPConnection | None = None) -> tuple[int, int]:
        con = connection or http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        con.request("GET", path, headers={"Host": f"127.0.0.1:{self.port}"})
        response = con.getresponse()
        body = response.read()
        if connection is None:
            con.close()
        return response.status, len(body)

    def warmed_up(self, timeout: float = 900) -> float:
        """Wait until the server says its warm-up is done; the seconds it took, as it says."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.search(r"warmed up: \d+ comparison pages made in ([0-9.]+) s", self.log_file.read_text())
            if found:
                return float(found.group(1))
            time.sleep(0.2)
        raise SystemExit(f"fmbench serve did not finish its warm-up; see {self.log_file}")

    def cpu(self) -> float:
        """The server process's CPU seconds so far (user + system)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


def load(server: Server, path: str, requests: int) -> list[float]:
    """``requests`` GETs of ``path`` by :data:`CLIENTS` concurrent keep-alive clients; each latency in seconds."""
    latencies: list[float] = []
    lock = threading.Lock()
    remaining = [requests]
    failures: list[int] = []

    def client() -> None:
        con = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
        while True:
            with lock:
                if remaining[0] <= 0:
                    break
                remaining[0] -= 1
            started = time.perf_counter()
            status, _ = server.get(path, con)
            elapsed = time.perf_counter() - started
            with lock:
                latencies.append(elapsed)
                if status != 200:
                    failures.append(status)
        con.close()

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise SystemExit(f"{path}: {len(failures)} responses were not 200: {sorted(set(failures))}")
    return latencies


def first_request(db: Path, path: str, log_file: Path, *, warm_up: bool = False) -> tuple[float, float]:
    """A fresh server's first request of ``path``: its wall seconds and the server's CPU seconds for it (with
    ``warm_up``, asked once the server's own warm-up is done; otherwise the warm-up is turned off)."""
    server = Server(db, log_file, *(() if warm_up else ("--no-warm-up",)))
    try:
        if warm_up:
            server.warmed_up()
        before = server.cpu()
        cold, _ = timed(lambda: server.get(path))
        return cold, server.cpu() - before
    finally:
        server.stop()


def serve_figures(results: Results, label: str, db: Path, out: Path, requests: int) -> None:
    import duckdb

    from fmbench.views import site_context
    from fmbench.views.comparisons import comparison_instances
    from fmbench.views.render import Renderer

    con = duckdb.connect(str(db), read_only=True)
    try:
        pairs = comparison_instances(site_context(con, Renderer()))
        device = con.execute(
            "SELECT hardware_model FROM runs WHERE hardware_model IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1"
        ).fetchone()[0]
    finally:
        con.close()
    pair = pairs[0] if pairs else None
    paths = {
        "comparison page": f"/compare/{pair['device']}/{pair['baseline']}..{pair['candidate']}/?rule=latest"
        if pair else f"/compare/?device={device}",
        "API call": f"/api/runs?device={device}&route=onDevice",
    }
    # The first request of the comparison page in a fresh server: with the database's resample store emptied first
    # (cold: every side resampled, as on a database no build has read), then with the store as the builds left it
    # (warm; a fixture corpus that was never built has none, so it is measured cold only).
    store = resample_store_of(db)
    kept = store.with_name(store.name + ".kept")
    warm = store.is_dir()
    if warm:
        shutil.rmtree(kept, ignore_errors=True)
        store.rename(kept)
    try:
        cold, cold_cpu = first_request(db, paths["comparison page"], out / f"serve-{label}-cold.log")
        shutil.rmtree(store, ignore_errors=True)
        warmed, warmed_cpu = first_request(db, paths["comparison page"], out / f"serve-{label}-warmed.log", warm_up=True)
    finally:
        shutil.rmtree(store, ignore_errors=True)  # what the cold server stored: the load below starts as the builds left it
        if warm:
            kept.rename(store)
    results.add(Figure(
        f"serve {label}: comparison page, first request, resample store empty (cold)", round(cold * 1000, 1), "ms",
        "< 300 ms", cold < 0.300,
        f"{paths['comparison page']}: nothing kept yet, every side resampled for this request; "
        f"the server's CPU {cold_cpu * 1000:.0f} ms"))
    results.add(Figure(
        f"serve {label}: comparison page, first request after serve's own warm-up, resample store empty at start",
        round(warmed * 1000, 1), "ms", "< 300 ms", warmed < 0.300,
        f"{paths['comparison page']}: asked once the server said its warm-up was done (every comparison page made "
        f"in the background); the server's CPU {warmed_cpu * 1000:.0f} ms for the request"))
    if warm:
        first, first_cpu = first_request(db, paths["comparison page"], out / f"serve-{label}-warm.log")
        results.add(Figure(
            f"serve {label}: comparison page, first request, resample store filled by the builds (warm)",
            round(first * 1000, 1), "ms", "< 300 ms", first < 0.300,
            f"{paths['comparison page']}: nothing kept yet, the page rendered for this request, its sides read from "
            f"the store; the server's CPU {first_cpu * 1000:.0f} ms"))
    server = Server(db, out / f"serve-{label}.log")
    try:
        for what, path in paths.items():
            cold, _ = timed(lambda path=path: server.get(path))
            latencies = load(server, path, requests)
            ordered = sorted(latencies)
            p50, p99 = nearest_rank(ordered, 0.5), nearest_rank(ordered, 0.99)
            limit = 0.150 if what == "comparison page" else 0.050
            results.add(Figure(
                f"serve {label}: {what} p50", round(p50 * 1000, 2), "ms", detail=f"{path}, {requests} requests, {CLIENTS} clients"))
            results.add(Figure(
                f"serve {label}: {what} p99", round(p99 * 1000, 2), "ms", f"< {limit * 1000:.0f} ms", p99 < limit,
                f"first request (nothing cached{', resample store warm' if warm else ''}) {cold * 1000:.0f} ms; "
                f"max {max(latencies) * 1000:.1f} ms"))
    finally:
        server.stop()


# --- the run --------------------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> Results:
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    results = Results(
        started=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        command="make bench  (python benchmarks/run.py"
        + (f" --runs {args.runs} --trials {args.trials} --legacy {args.legacy}"
           if (args.runs, args.trials, args.legacy) != (200, 1000, 10) else "") + ")",
        machine=machine(),
    )
    log(f"machine: {results.machine}")
    files = corpus(out, args.runs, args.trials, args.legacy, results)
    extra = held_back(files)
    rest = [p for p in files if p != extra]
    rest_mb = sum(p.stat().st_size for p in rest) / 1e6
    results.corpus["held_back_for_incremental_build"] = extra.name
    log(f"corpus: {results.corpus}")

    # Ingest against DuckDB's own read_json, each twice, alternating (the machine may be shared): the best of each.
    # Each runs in a fresh process, so its CPU seconds (of it and every worker it starts) are its own.
    db = out / "large.duckdb"
    floors: list[Measured] = []
    ingests: list[Measured] = []
    for attempt in (1, 2):
        log(f"floor {attempt}: read_json of {len(rest)} files ({rest_mb:.0f} MB)")
        floors.append(floor_read_json(rest, out / "floor.duckdb"))
        log(f"fmbench ingest {attempt} of the same {len(rest)} files")
        ingests.append(fmbench_ingest(rest, db))
    floor_m, ingest_m = min(floors, key=lambda m: m.wall), min(ingests, key=lambda m: m.wall)
    floor, ingest_seconds = floor_m.wall, ingest_m.wall
    results.timings.update({"read_json floor (s)": [round(x.wall, 2) for x in floors],
                            "read_json floor (CPU s)": [round(x.cpu, 1) for x in floors],
                            "fmbench ingest (s)": [round(x.wall, 2) for x in ingests],
                            "fmbench ingest (CPU s)": [round(x.cpu, 1) for x in ingests]})
    results.add(Figure("ingest vs read_json floor", round(ingest_seconds / floor, 2), "x", "<= 1.5x",
                       ingest_seconds / floor <= 1.5,
                       f"best of two: {ingest_seconds:.1f} s vs {floor:.1f} s for {rest_mb:.0f} MB "
                       f"(ingests {', '.join(f'{x.wall:.1f}' for x in ingests)} s; floors {', '.join(f'{x.wall:.1f}' for x in floors)} s)"))
    results.add(Figure("ingest CPU seconds per MB", round(ingest_m.cpu / rest_mb, 4), "CPU s/MB", "report", None,
                       f"{ingest_m.cpu:.1f} CPU s for {rest_mb:.0f} MB, the ingest and its workers; the floor "
                       f"{floor_m.cpu / rest_mb:.4f} CPU s/MB ({floor_m.cpu:.1f} CPU s); "
                       f"{ingest_m.cpu / max(floor_m.cpu, 1e-9):.2f}x the floor's CPU"))
    results.add(Figure("peak memory of the whole ingest", round(max(ingest_m.peak, ingest_m.children_peak) / MiB), "MiB",
                       "report", None, f"the writer {ingest_m.peak / MiB:.0f} MiB, its largest worker "
                       f"{ingest_m.children_peak / MiB:.0f} MiB"))
    log("ingest CPU budget, stage by stage, on a sample")
    budget = ingest_budget(rest[:: max(1, len(rest) // 20)], out / "budget.duckdb", rest_mb)
    results.budget = budget
    results.add(Figure("ingest CPU, all stages in one process", round(sum(budget.values()), 1), "core-s", "",
                       None, ", ".join(f"{k} {v}" for k, v in budget.items())))

    # Against the naive path, on a sample (it is slow).
    sample = rest[:: max(1, len(rest) // args.naive_files)][: args.naive_files]
    sample_mb = sum(p.stat().st_size for p in sample) / 1e6
    log(f"naive path (json.load + executemany) on {len(sample)} files ({sample_mb:.0f} MB)")
    naive_seconds = naive_ingest(sample, out / "naive.duckdb")
    ours_sample = fmbench_ingest(sample, out / "sample.duckdb").wall
    fresh(out / "sample.duckdb")
    results.timings.update({"naive path, sample (s)": round(naive_seconds, 2), "fmbench ingest, sample (s)": round(ours_sample, 2)})
    results.add(Figure("ingest speed-up over the naive path", round(naive_seconds / ours_sample, 1), "x", ">= 10x",
                       naive_seconds / ours_sample >= 10,
                       f"{naive_seconds:.1f} s vs {ours_sample:.1f} s on {len(sample)} files, {sample_mb:.0f} MB"))

    # Peak memory of ingesting the largest file, in a fresh process.
    largest = max(files, key=lambda p: p.stat().st_size)
    size = largest.stat().st_size
    log(f"peak memory of ingesting {largest.name} ({size / 1e6:.1f} MB)")
    peak = peak_rss("ingest", largest, out / "peak.duckdb")
    baseline = peak_rss("open", largest, out / "peak.duckdb")
    limit = 5 * size + 200 * MiB
    results.add(Figure("peak memory, largest file", round(peak / MiB), "MiB", f"<= 5 x size + 200 MiB = {limit / MiB:.0f} MiB",
                       peak <= limit,
                       f"{peak / size:.1f}x the file's {size / MiB:.1f} MiB; a process that only opens the database peaks at "
                       f"{baseline / MiB:.0f} MiB"))

    # Peak memory of single big runs: one near the default --max-bytes, one beyond it (the limit raised).
    from fmbench.fixtures.generate import generate_large_corpus
    from fmbench.runfile.reader import DEFAULT_MAX_BYTES

    for trials, within_default in ((6000, True), (10000, False)):
        folder = out / f"single-run-{trials}"
        big = next(iter(sorted(folder.glob("*.json"))), None) if folder.is_dir() else None
        if big is None:
            big = generate_large_corpus(folder, runs=1, trials_per_run=trials, legacy_runs=0)[0]
        size = big.stat().st_size
        log(f"peak memory of ingesting one run of {trials} trials ({size / MiB:.1f} MiB)")
        peak = peak_rss("ingest", big, out / "peak.duckdb", max_bytes=max(size, DEFAULT_MAX_BYTES))
        limit = 5 * size + 200 * MiB
        results.add(Figure(f"peak memory, one run of {trials} trials", round(peak / MiB), "MiB",
                           f"<= 5 x size + 200 MiB = {limit / MiB:.0f} MiB", peak <= limit if within_default else None,
                           f"{peak / limit:.2f} of the bound for {size / MiB:.1f} MiB"
                           + ("" if within_default else f", over the default --max-bytes of {DEFAULT_MAX_BYTES / MiB:.0f} MiB")))

    shape_peaks(out, results)

    # The full build against the read_json floor (and, for scale, a floor of trivial pages).
    site = out / "site"
    shutil.rmtree(site, ignore_errors=True)

    # A full build from scratch: with an empty resample store, not one an earlier run of this harness left.
    shutil.rmtree(resample_store_of(db), ignore_errors=True)
    log("full build")
    built = fmbench_build(db, site)
    store_entries, store_bytes = store_size(db)
    report = built.result
    full_seconds = built.wall
    outputs = report["pages"] + report["data_files"]
    results.build_kinds = {k: round(v, 1) for k, v in sorted(report["seconds_by_kind"].items(), key=lambda kv: -kv[1])}
    trivial = trivial_pages(outputs, out / "trivial")
    results.timings.update({"full build (s)": round(full_seconds, 1), "full build (CPU s)": round(built.cpu, 1),
                            f"trivial Jinja, {outputs} pages (s)": round(trivial, 2)})
    results.add(Figure("full build vs read_json floor", round(full_seconds / floor, 2), "x", "<= 3x",
                       full_seconds / floor <= 3,
                       f"{full_seconds:.1f} s ({built.cpu:.0f} CPU s, {os.cpu_count()} cores) vs the ingest's floor "
                       f"{floor:.1f} s; {report['pages']} pages + {report['data_files']} data files, "
                       f"{report['bytes_total'] / MiB:,.0f} MiB"))
    results.add(Figure("resample store after the full build", round(store_bytes / MiB, 1), "MiB", "report", None,
                       f"{store_entries:,} entries beside the database (each side's resampled quantiles or means), "
                       f"{store_bytes / max(store_entries, 1) / 1024:.1f} KiB each; the full build resampled "
                       f"{built.result['resamples_drawn']} sides in its parent process"))
    results.add(Figure("peak memory of the full build", round(max(built.peak, built.children_peak) / MiB), "MiB", "report",
                       None, f"the build {built.peak / MiB:.0f} MiB, its largest worker {built.children_peak / MiB:.0f} MiB"))
    inputs = sum(p.stat().st_size for p in rest)
    by_part: dict[str, int] = {}
    for f in site.rglob("*"):
        if f.is_file():
            part = site_part(f.relative_to(site).as_posix())
            by_part[part] = by_part.get(part, 0) + f.stat().st_size
    results.add(Figure("site size vs its input run files (originals gzipped, the default)",
                       round(report["bytes_total"] / inputs, 2), "x", "<= 1x", report["bytes_total"] <= inputs,
                       f"{report['bytes_total'] / MiB:,.0f} MiB of site for {inputs / MiB:,.0f} MiB of run files: "
                       + ", ".join(f"{k} {v / MiB:,.1f} MiB" for k, v in sorted(by_part.items(), key=lambda kv: -kv[1]))))
    results.add(Figure("full build vs trivial-template floor", round(full_seconds / trivial, 1), "x slower", "report",
                       None, f"floor: {outputs} trivial pages in {trivial:.2f} s ({outputs / trivial:,.0f}/s); seconds by kind: "
                       + ", ".join(f"{k} {v}" for k, v in list(results.build_kinds.items())[:8])))

    # An unchanged rebuild.
    before = snapshot_times(site)
    again = fmbench_build(db, site)
    touched = [p for p, t in snapshot_times(site).items() if before.get(p) != t]
    results.add(Figure("unchanged rebuild: files written", len(touched) + len(again.result["changed"]), "files", "0",
                       not touched and not again.result["changed"] and not again.result["rendered"],
                       f"{len(again.result['rendered'])} rendered, {again.wall:.2f} s"))

    # Adding one run.
    from fmbench.analysis.revisions import fixtures_registry
    from fmbench.ingest import ingest_paths

    log(f"adding one run: {extra.name}")
    add_seconds, added = timed(lambda: ingest_paths([extra], db))
    (run_id,) = [o.run_id for o in added.outcomes if o.status == "ingested"]
    inc = fmbench_build(db, site)  # with the resample store the full build left
    incremental_seconds = inc.wall
    expected = expected_outputs(db, run_id, site)
    rendered = set(inc.result["rendered"])
    results.timings.update({"ingest of the added run (s)": round(add_seconds, 2), "incremental build (s)": round(incremental_seconds, 2),
                            "incremental build (CPU s)": round(inc.cpu, 1)})
    results.add(Figure("incremental build after adding one run vs full build", round(100 * incremental_seconds / full_seconds, 1),
                       "% of full", "<= 10%", incremental_seconds <= 0.10 * full_seconds,
                       f"{incremental_seconds:.1f} s ({inc.cpu:.1f} CPU s), {len(rendered)} of {outputs} files rendered, "
                       f"{inc.result['resamples_drawn']} sides resampled (the rest read from the full build's resample store), "
                       f"{inc.result['comparisons_made']} comparisons worked out and {inc.result['comparisons_reused']} taken "
                       "from the comparison cache"))
    unexpected, missing = sorted(rendered - expected), sorted(expected - rendered)
    results.add(Figure("incremental build re-renders exactly the pages the run touches", len(rendered), "files",
                       "its run and trial pages, device, scenarios, comparisons, PCC, indexes, data files",
                       not unexpected and not missing,
                       "as expected" if not unexpected and not missing else f"unexpected {unexpected[:5]}, missing {missing[:5]}"))
    touched_device = touched_device_of(db, run_id)
    recomputed = inc.result["regression_devices"]
    results.add(Figure("incremental build: devices whose regression report was worked out again", len(recomputed), "devices",
                       f"the touched device only ({touched_device})",
                       inc.result["has_regression_devices"] and recomputed == [touched_device],
                       ", ".join(recomputed) if inc.result["has_regression_devices"] else "not reported by this build"))

    # Page weight of the largest run page.
    sizes = {p: p.stat().st_size for p in (site / "runs").glob("*/index.html")}
    page = max(sizes, key=lambda p: sizes[p])
    html = page.read_bytes()
    first_visit, asset_gz = first_visit_weight(site, page)
    results.add(Figure("largest run page, HTML + embedded data", round(len(html) / 1024, 1), "KiB", "<= 300 KiB",
                       len(html) <= 300 * 1024, f"{page.parent.name}: {gz(html) / 1024:.1f} KiB gzipped; trials load on demand"))
    results.add(Figure("first visit of that page (HTML, CSS, scripts), gzip", round(first_visit / 1024, 1), "KiB",
                       f"<= {FIRST_VISIT_GOAL // 1024} KiB", first_visit <= FIRST_VISIT_GOAL,
                       ", ".join(f"{a.removeprefix('assets/')} {n / 1024:.0f} KiB" for a, n in asset_gz.items())))

    # Past one machine: the Parquet export.
    from fmbench.storage.dataset import export_parquet

    log("Parquet export")
    export_seconds, meta = timed(lambda: export_parquet(db, out / "parquet"))
    dataset_mb = sum(p.stat().st_size for p in (out / "parquet").rglob("*") if p.is_file()) / MiB
    results.timings["Parquet export (s)"] = round(export_seconds, 1)
    results.add(Figure("Parquet export", round(export_seconds, 1), "s", detail=f"{dataset_mb:,.0f} MiB, {len(meta['tables'])} tables, "
                       f"schema version {meta['schema_version']}"))

    # Serve: the fixture corpus and the large corpus.
    fixtures_db = out / "fixtures.duckdb"
    fresh(fixtures_db)
    ingest_paths([REPO / "fixtures" / "runs"], fixtures_db, registry=fixtures_registry())
    for label, database in (("fixture corpus", fixtures_db), ("large corpus", db)):
        log(f"serve: {label}")
        serve_figures(results, label, database, out, args.requests)
    return results


def markdown(results: Results) -> str:
    m = results.machine
    lines = [
        f"Run {results.started} with `{results.command}` on {m['cores']} cores, {m['memory_gib']} GiB, {m['system']}, "
        f"Python {m['python']}, duckdb {m['duckdb']}, pydantic {m['pydantic']}, pyarrow {m['pyarrow']}, "
        f"jinja2 {m['jinja2']} (fmbench {m['fmbench']}{', commit ' + m['commit'] if m['commit'] else ''}).",
        "",
        f"Corpus: {results.corpus.get('files')} run files ({results.corpus.get('runs')} current-generation runs of about "
        f"{results.corpus.get('trials_per_run')} trials, {results.corpus.get('legacy_runs')} legacy files), "
        f"{results.corpus.get('sidecars')} sidecars, {results.corpus.get('megabytes')} MB; the largest file "
        f"{results.corpus.get('largest_file_megabytes')} MB.",
        "",
        "| figure | value | goal | met |",
        "| --- | --- | --- | --- |",
    ]
    for f in results.figures:
        value = "-" if f.value is None else f"{f.value:,} {f.unit}"
        met = "" if f.met is None else ("yes" if f.met else "**no**")
        detail = f" ({f.detail})" if f.detail else ""
        lines.append(f"| {f.name}{detail} | {value} | {f.goal} | {met} |")
    lines += ["", "| timing | seconds |", "| --- | --- |"]
    lines += [f"| {k.removesuffix(' (s)')} | {v} |" for k, v in results.timings.items()]
    if results.budget:
        lines += ["", "| ingest stage (one process, scaled to the corpus) | CPU seconds |", "| --- | --- |"]
        lines += [f"| {k} | {v} |" for k, v in results.budget.items()]
    if results.build_kinds:
        lines += ["", "| full build: output kind | seconds |", "| --- | --- |"]
        lines += [f"| {k} | {v} |" for k, v in results.build_kinds.items()]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="working folder (git-ignored)")
    parser.add_argument("--runs", type=int, default=200, help="current-generation runs in the corpus")
    parser.add_argument("--trials", type=int, default=1000, help="requests per run")
    parser.add_argument("--legacy", type=int, default=10, help="legacy-format files in the corpus")
    parser.add_argument("--naive-files", type=int, default=6, help="files the naive path ingests")
    parser.add_argument("--requests", type=int, default=400, help="requests per measured URL")
    parser.add_argument("--shapes-only", action="store_true",
                        help="measure only the peak memory of the odd-shaped runs (empty and tiny trials), and print it")
    args = parser.parse_args(argv)
    if args.shapes_only:
        args.out.mkdir(parents=True, exist_ok=True)
        shapes = Results(started=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
                         command="python benchmarks/run.py --shapes-only", machine=machine())
        shape_peaks(args.out, shapes)
        print("\n".join(f"{f.name}: {f.value} {f.unit} ({f.goal}: {'met' if f.met else 'NOT met'}; {f.detail})"
                        for f in shapes.figures))
        return 0
    started = time.perf_counter()
    results = run(args)
    results.timings["whole harness (s)"] = round(time.perf_counter() - started, 1)
    (args.out / "results.json").write_text(
        json.dumps({**asdict(results), "figures": [asdict(f) for f in results.figures]}, indent=2) + "\n")
    (args.out / "results.md").write_text(markdown(results))
    print()
    print(markdown(results))
    print(f"written to {args.out / 'results.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
