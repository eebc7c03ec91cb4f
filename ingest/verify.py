"""Nothing lost: check the database against the originals it keeps, and give the originals back.

:func:`verify_database` recomputes every stored source's SHA-256 and compares
it with the one it is stored under, then reads every source again and
recomputes its run's figures and verdict, and compares them with the stored
``scenario_figures`` and ``runs.verdict``. Every difference is reported.

:func:`export_originals` writes every original run file (and sidecar) back
out, byte for byte, under its own name.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from fmbench.analysis.display import terminal_value
from fmbench.analysis.revisions import Registry, load_registry
from fmbench.analysis.run import RunAnalysis, analyze_bytes
from fmbench.errors import (
    AnnotationError,
    DamagedDatabaseError,
    DatabaseError,
    FmbenchError,
    RunFileError,
)
from fmbench.ingest.rows import figure_columns
from fmbench.owned_files import place_files, record_beside
from fmbench.runfile.annotations import parse_annotations
from fmbench.storage.db import connect, default_db_path, reading
from fmbench.storage.originals import original_bytes
from fmbench.write_errors import writing

_RUN_COUNTS = ("trial_count", "failure_count", "warmup_failure_count")


@dataclass(frozen=True)
class Difference:
    """One thing the database holds that its originals no longer give."""

    file_name: str
    run_id: str | None
    kind: str
    """``sha256``, ``size``, ``unreadable``, ``verdict``, ``figure``, ``scenario``, ``orphan`` or ``annotation``."""
    where: str
    stored: Any = None
    recomputed: Any = None

    def __str__(self) -> str:
        run = f" (run {self.run_id})" if self.run_id else ""
        values = f": stored {self.stored!r}, recomputed {self.recomputed!r}" if self.kind != "unreadable" else ""
        return f"{terminal_value(self.file_name)}{run}: {self.kind} {terminal_value(self.where)}{values}"

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file_name,
            "run": self.run_id,
            "kind": self.kind,
            "where": self.where,
            "stored": _plain(self.stored),
            "recomputed": _plain(self.recomputed),
        }


@dataclass
class VerifyReport:
    sources: int = 0
    runs: int = 0
    differences: list[Difference] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences

    def describe(self) -> str:
        lines = [str(d) for d in self.differences]
        verdict = "every source and figure matches" if self.ok else f"{len(self.differences)} difference(s)"
        lines.append(f"{self.sources} source(s), {self.runs} run(s) checked: {verdict}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "sources": self.sources,
            "runs": self.runs,
            "ok": self.ok,
            "differences": [d.to_json() for d in self.differences],
        }


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _same(stored: Any, recomputed: Any) -> bool:
    if isinstance(stored, float) and isinstance(recomputed, (int, float)) and not isinstance(recomputed, bool):
        return math.isclose(stored, recomputed, rel_tol=1e-9, abs_tol=1e-12)
    return bool(stored == recomputed)


def _records(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    cursor = con.execute(sql, params)
    names = [d[0] for d in cursor.description or []]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _recomputed_figures(analysis: RunAnalysis) -> list[dict[str, Any]]:

    columns = figure_columns(analysis)
    count = len(next(iter(columns.values()))) if columns else 0
    return [{name: values[i] for name, values in columns.items()} for i in range(count)]


def _annotations_of(con: duckdb.DuckDBPyConnection, run_id: str, file_name: str, out: list[Difference]) -> Any:
    row = con.execute("SELECT file_name, sha256, content FROM annotations WHERE run_id = ?", [run_id]).fetchone()
    if row is None:
        return None
    name, sha, content = row[0], row[1], bytes(row[2])
    actual = hashlib.sha256(content).hexdigest()
    if actual != sha:
        out.append(Difference(file_name, run_id, "annotation", f"{name} sha256", sha, actual))
    try:
        return parse_annotations(content, name, actual)
    except AnnotationError as exc:
        out.append(Difference(file_name, run_id, "unreadable", f"{name}: {exc}"))
        return None


def _check_run(
    con: duckdb.DuckDBPyConnection, run: dict[str, Any], data: bytes, registry: Registry, out: list[Difference]
) -> None:
    run_id, file_name = run["run_id"], run["file_name"]
    annotations = _annotations_of(con, run_id, file_name, out)
    try:
        analysis = analyze_bytes(
            data, file_name, registry=registry, annotations=annotations, max_bytes=max(len(data), 1), max_trials=None
        )
    except (RunFileError, AnnotationError) as exc:
        out.append(Difference(file_name, run_id, "unreadable", f"the stored source no longer reads as a run: {exc}"))
        return
    if analysis.verdict.level != run["verdict"]:
        out.append(Difference(file_name, run_id, "verdict", "runs.verdict", run["verdict"], analysis.verdict.level))
    derived = {
        "scoring_rules": analysis.scoring.explained_by.name if analysis.scoring and analysis.scoring.explained_by else None,
        "is_simulator": bool(analysis.simulator and analysis.simulator.is_simulator),
    }
    for name, value in derived.items():
        if run[name] != value:
            out.append(Difference(file_name, run_id, "verdict", f"runs.{name}", run[name], value))
    counts = {
        "trial_count": len(analysis.record.trials),
        "failure_count": len(analysis.record.measured_failures),
        "warmup_failure_count": len(analysis.record.warmup_failures),
    }
    for name in _RUN_COUNTS:
        if run[name] != counts[name]:
            out.append(Difference(file_name, run_id, "figure", f"runs.{name}", run[name], counts[name]))
    stored = {
        r["scenario_id"]: r
        for r in _records(con, "SELECT * FROM scenario_figures WHERE run_id = ? ORDER BY ordinal", [run_id])
    }
    recomputed = {r["scenario_id"]: r for r in _recomputed_figures(analysis)}
    for scenario in stored.keys() - recomputed.keys():
        out.append(Difference(file_name, run_id, "scenario", scenario, "stored", "not in the source"))
    for scenario in recomputed.keys() - stored.keys():
        out.append(Difference(file_name, run_id, "scenario", scenario, "not stored", "in the source"))
    for scenario, fresh in recomputed.items():
        kept = stored.get(scenario)
        if kept is None:
            continue
        for column, value in fresh.items():
            if column != "run_id" and column in kept and not _same(kept[column], value):
                out.append(Difference(file_name, run_id, "figure", f"{scenario}.{column}", kept[column], value))


def verify_database(db: str | os.PathLike[str] | None = None, *, registry: Registry | None = None) -> VerifyReport:
    """Every stored source against its SHA-256, and every run's stored figures and verdict against its source."""
    registry = registry or load_registry()
    report = VerifyReport()
    path = default_db_path(db)
    with connect(path, read_only=True) as con:
        sources = con.execute("SELECT sha256, file_name FROM sources ORDER BY file_name, sha256").fetchall()
        runs = {
            r["source_sha256"]: r
            for r in _records(
                con,
                "SELECT run_id, source_sha256, file_name, verdict, trial_count, failure_count, "
                "warmup_failure_count, scoring_rules, is_simulator FROM runs ORDER BY run_id",
                [],
            )
        }
        report.sources, report.runs = len(sources), len(runs)
        out = report.differences
        for sha, file_name in sources:
            run = runs.pop(sha, None)
            run_id = run["run_id"] if run else None
            try:
                with reading(path, f"the stored source of {file_name}"):
                    row = con.execute(
                        "SELECT content, size_bytes, encoding FROM sources WHERE sha256 = ?", [sha]
                    ).fetchone()
                assert row is not None
                data, size = original_bytes(row[0], row[2], "sources.content"), row[1]
            except DatabaseError as exc:  # a damaged block or a stored gzip that does not decompress
                out.append(Difference(file_name, run_id, "unreadable", str(exc)))
                continue
            actual = hashlib.sha256(data).hexdigest()
            if actual != sha:
                out.append(Difference(file_name, run_id, "sha256", "sources.content", sha, actual))
            if size != len(data):
                out.append(Difference(file_name, run_id, "size", "sources.size_bytes", size, len(data)))
            if run is None:
                out.append(Difference(file_name, None, "orphan", "a source without a run", "source", "no run"))
                continue
            try:
                with reading(path, f"what the database holds of run {run['run_id']}"):
                    _check_run(con, run, data, registry, out)
            except DamagedDatabaseError as exc:
                out.append(Difference(file_name, run_id, "unreadable", str(exc)))
        for run in runs.values():
            out.append(Difference(run["file_name"], run["run_id"], "orphan", "a run without its source", "run", "no source"))
    return report


class ExportError(FmbenchError):
    """The originals could not be written where asked."""


def _safe_name(name: str, fallback: str) -> str:
    """A stored file name as a plain file name in the export folder (never a path out of it)."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return base if base not in ("", ".", "..") and "\x00" not in base else fallback


def _with_run_id(name: str, run_id: str) -> str:
    stem, dot, suffix = name.rpartition(".")
    return f"{stem}-{run_id}.{suffix}" if dot and stem else f"{name}-{run_id}"


def _sidecar_name(run_file: str, sidecar: str) -> str:
    """The sidecar beside its run under the name fmbench looks for: ``<run stem>.meta.yaml`` (or ``.yml``)."""
    suffix = ".meta.yml" if sidecar.endswith(".meta.yml") else ".meta.yaml"
    return run_file.removesuffix(".json") + suffix


def export_originals(db: str | os.PathLike[str] | None, out: str | os.PathLike[str], *, force: bool = False) -> list[Path]:
    """Write every stored run file, and its sidecar, into ``out`` byte for byte; return the paths written.

    Files keep their names; when two runs share a name, each is written as
    ``<name>-<run id>.json``. A sidecar takes its run's name, so the folder
    ingests again as it was. Every file is first written into a hidden folder
    beside ``out`` and moved into place only once all of them were read: a
    stored file that cannot be read (a damaged block, a gzip that does not
    decompress) leaves ``out`` as it was, and the error names it.

    A file of ``out`` is replaced only if it is the one this export wrote there last or already holds the same
    bytes, unless ``force``: a user's file (or one edited since) is refused, naming it, and nothing is written
    (:func:`fmbench.owned_files.place_files`).
    """
    folder = Path(out)
    path = default_db_path(db)
    try:
        with writing(folder, "the export folder"):
            folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"{folder}: cannot create the export folder: {exc.strerror}") from None
    # Beside the folder, not in it: one left by a killed export is never ingested with the folder.
    where = folder.resolve()
    staging = where.with_name(f".{where.name}.export-{os.getpid()}")
    try:
        try:
            with writing(folder, "the export folder"):
                shutil.rmtree(staging, ignore_errors=True)
                staging.mkdir()
        except OSError as exc:
            raise ExportError(f"{folder}: cannot write into the export folder: {exc.strerror}") from None
        try:
            names = _stage_originals(path, staging, folder)
        except DatabaseError as exc:
            raise ExportError(f"{exc}; nothing was exported into {folder}") from None
        try:
            return place_files(
                folder, [(name, staging / name) for name in names], record=record_beside(path, folder), force=force,
                what="an exported original",
            )
        except OSError as exc:
            raise ExportError(f"{folder}: an exported original cannot be written: {exc.strerror}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _stage_originals(path: Path, staging: Path, folder: Path) -> list[str]:
    """Every stored run file and sidecar written into ``staging``; their names, in order.

    An error writing one names the file it is to become in ``folder`` (the staging folder is fmbench's own)."""
    names: list[str] = []
    with connect(path, read_only=True) as con:
        rows = con.execute(
            "SELECT s.sha256, s.file_name, r.run_id FROM sources s LEFT JOIN runs r ON r.source_sha256 = s.sha256 "
            "ORDER BY s.file_name, r.run_id"
        ).fetchall()
        taken: dict[str, int] = {}
        for sha, file_name, run_id in rows:
            name = _safe_name(file_name, f"{run_id or sha[:12]}.json")
            taken[name] = taken.get(name, 0) + 1
        used: set[str] = set()
        for sha, file_name, run_id in rows:
            ident = run_id or sha[:12]
            name = _safe_name(file_name, f"{ident}.json")
            if taken[name] > 1:
                name = _with_run_id(name, ident)
            while name in used:
                name = _with_run_id(name, sha[:12])
            used.add(name)
            with reading(path, f"the stored original of {file_name}"):
                content = con.execute("SELECT content, encoding FROM sources WHERE sha256 = ?", [sha]).fetchone()
                assert content is not None
                _write(staging / name, original_bytes(content[0], content[1], file_name), folder / name)
                names.append(name)
                sidecar = con.execute(
                    "SELECT file_name, content FROM annotations WHERE run_id = ?", [run_id]
                ).fetchone()
            if sidecar is not None:
                side = _sidecar_name(name, sidecar[0])
                names.append(_write(staging / side, bytes(sidecar[1]), folder / side).name)
    return names


def _write(path: Path, data: bytes, shown: Path) -> Path:
    """Write a whole file or nothing: through a temporary file beside it, renamed into place.

    ``shown``: the path an error names (where the file is headed once every file is written)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with writing(shown, "an exported original"):
            temporary.write_bytes(data)
            os.replace(temporary, path)
    except OSError as exc:
        raise ExportError(f"{shown}: cannot be written: {exc.strerror}") from None
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()
    return path
