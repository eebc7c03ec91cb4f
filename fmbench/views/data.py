"""The site's data files: original run files, trials as CSV, recomputed figures and trials as JSON."""

from __future__ import annotations

import base64
import csv
import io
import re
import uuid
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import duckdb
import orjson
from zlib_ng import gzip_ng

from fmbench import urls
from fmbench.analysis.configuration import CHOICES, columns
from fmbench.analysis.figures import token_count_source
from fmbench.errors import NotFoundError
from fmbench.storage.originals import gzipped_original, original_bytes
from fmbench.views.common import rows
from fmbench.views.filters import Filters
from fmbench.views.site import SiteContext
from fmbench.views.trial_details import (
    CSV_COLUMNS,
    ENVIRONMENT_LABELS,
    METRIC_LABELS,
    TRIAL_COLUMNS,
    TrialDetail,
    failure_json,
    run_trials,
    trial_columns,
)

_DOCUMENT_OPTIONS = (
    orjson.OPT_APPEND_NEWLINE | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_NON_STR_KEYS
)


def _json_bytes(doc: Any) -> bytes:
    """A data file readers may open (the runs index, a run's figures): compact UTF-8 JSON and a newline (a
    browser's JSON viewer indents it; indenting here made the runs index 40% larger), a value JSON has no type
    for (a time) written as its ``str``; orjson writes it in a fifteenth of ``json.dumps``' time."""
    return orjson.dumps(doc, default=str, option=_DOCUMENT_OPTIONS)


def _stored_source(site: SiteContext, run_id: str, file_name: str | None) -> tuple[bytes, str, str]:
    """``(stored bytes, encoding, file name)`` of a run's original file."""
    found = site.con.execute(
        "SELECT s.content, s.encoding, r.file_name FROM runs r JOIN sources s ON s.sha256 = r.source_sha256 "
        "WHERE r.run_id = ?",
        [run_id],
    ).fetchone()
    if found is None or (file_name is not None and urls.source_segment(found[2]) != file_name):
        raise NotFoundError(f"no source file for run {run_id!r}")
    return found[0], found[1], found[2]


def source_bytes(site: SiteContext, filters: Filters, run_id: str, file_name: str | None = None) -> bytes:
    """The run file exactly as it was ingested."""
    stored, encoding, name = _stored_source(site, run_id, file_name)
    return original_bytes(stored, encoding, f"{name} (run {run_id})")


def gzipped(content: bytes, level: int) -> bytes:
    """``content`` as a gzip file, the same bytes for the same content (no name or time in the header).

    Compressed with zlib-ng, whose deflate is about twice as fast as zlib's at the same level; any gzip reader
    (the browser's ``DecompressionStream``, ``gzip -d``) reads it.
    """
    return gzip_ng.compress(content, compresslevel=level, mtime=0)


DATA_GZIP_LEVEL = 6
"""The trial data: zlib-ng's level 6 takes about 0.4 times zlib level 6's time for about
1.1 times its size (level 7: 0.7 times the time, 0.96 times the size)."""


def source_gzip_bytes(site: SiteContext, filters: Filters, run_id: str, file_name: str | None = None) -> bytes:
    """The run file exactly as it was ingested, gzipped (the ``gzip`` originals policy): as the database keeps it."""
    stored, encoding, name = _stored_source(site, run_id, file_name)
    return gzipped_original(stored, encoding, f"{name} (run {run_id})")


def source_files(site: SiteContext, run_ids: Sequence[str]) -> Iterator[tuple[str, str, bytes, str]]:
    """``(run id, file name, stored bytes, encoding)`` of many runs (see :mod:`fmbench.storage.originals`).

    DuckDB reads one stored file by scanning the column that holds them all, so
    a few files are read one by one and many in one pass over the table.
    """
    wanted: dict[str, tuple[str, str]] = {}
    for i in range(0, len(run_ids), 512):
        for sha, run_id, name in site.con.execute(
            "SELECT source_sha256, run_id, file_name FROM runs WHERE list_contains(?, run_id)",
            [list(run_ids[i : i + 512])],
        ).fetchall():
            wanted[sha] = (run_id, name)
    if len(wanted) <= 8:
        for sha, (run_id, name) in sorted(wanted.items(), key=lambda kv: kv[1]):
            found = site.con.execute("SELECT content, encoding FROM sources WHERE sha256 = ?", [sha]).fetchone()
            if found is not None:
                yield run_id, name, found[0], found[1]
        return
    cursor = site.con.execute("SELECT sha256, content, encoding FROM sources")
    while batch := cursor.fetchmany(4):
        for sha, content, encoding in batch:
            if sha in wanted:
                run_id, name = wanted[sha]
                yield run_id, name, content, encoding


def trials_csv_text(con: duckdb.DuckDBPyConnection, run_id: str) -> str:
    """Every trial of a run as CSV, one row each (:data:`~fmbench.views.trial_details.CSV_COLUMNS`); empty cells
    are values the run did not record. Not part of the site (its trials are there once, as the trial data):
    ``fmbench export --trials-csv`` writes it."""
    found = trial_columns(con, f"SELECT {', '.join(TRIAL_COLUMNS)} FROM trials WHERE run_id = ? ORDER BY ordinal", [run_id])
    return csv_text(CSV_COLUMNS, zip(*[found[name] for name in CSV_COLUMNS], strict=True))


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet takes as the start of a formula in a cell (OWASP's CSV-injection guidance)."""
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def spreadsheet_cell(value: Any) -> Any:
    """A CSV cell a spreadsheet shows and never evaluates: text starting with ``=``, ``+``, ``-``, ``@``, a tab or a
    carriage return gets a leading ``'`` (a response ``=HYPERLINK(…)``, a trial id ``@SUM(…)``), as OWASP's
    CSV-injection guidance says. Numbers stay numbers: a number (``-1.5``), or text that is one plain number
    (``-42``), is written as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """``header`` and ``rows`` as the csv module writes them (the excel dialect: comma, double quote, quoted only
    where needed), each line ended by CRLF as RFC 4180 says (the csv module quotes a cell holding a carriage return
    only when the line ending holds one: with ``\\n`` alone such a cell split its row), every text cell a spreadsheet
    would evaluate neutralised (:func:`spreadsheet_cell`)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([spreadsheet_cell(h) for h in header])
    writer.writerows([spreadsheet_cell(v) for v in row] for row in rows)
    return buffer.getvalue()


def figures_json(site: SiteContext, filters: Filters, run_id: str) -> bytes:
    return _json_bytes(figures_document(site, run_id))


def figures_document(site: SiteContext, run_id: str) -> dict[str, Any]:
    """A run's conditions, verdict with reasons, and recomputed per-scenario figures."""
    data = site.run_data
    run = {k: v for k, v in data.run(run_id).items() if k != "extra_json"}
    reasons = data.reasons([run_id])[run_id]
    figures = [{k: v for k, v in f.items() if k != "run_id"} for f in data.figures([run_id])[run_id]]
    doc = seed_as_text(run)
    doc["token_count_source"] = token_count_source(f["token_count_source"] for f in figures)
    return {"run": doc, "verdictReasons": reasons, "scenarios": figures}


def seed_as_text(run: dict[str, Any]) -> dict[str, Any]:
    """The random seed as a string: it is an unsigned 64-bit value, and a browser reads JSON numbers as
    doubles, which hold integers exactly only up to 2^53."""
    seed = run.get("random_seed")
    return {**run, "random_seed": None if seed is None else str(seed)}


def _scenario_trials(site: SiteContext, run_id: str, scenario: str) -> tuple[str, list[Any], list[dict[str, Any]]]:
    """A scenario's id, every trial's detail and its measured failures (from the run's
    :func:`~fmbench.views.trial_details.run_trials`)."""
    bundle = run_trials(site, run_id)
    scenario_id = bundle.scenario_at(site.paths, scenario)[0]
    return scenario_id, bundle.details.get(scenario_id, []), bundle.failures.get(scenario_id, [])


def trials_json(site: SiteContext, filters: Filters, run_id: str, scenario: str) -> bytes:
    """A scenario's trials as data (every trial and failure, all text), gzipped: :func:`trials_document`.

    Compact JSON, gzipped: it is read by programs (``site/assets/trials.js`` with ``DecompressionStream('gzip')``
    lays out the scenario's trials from it), not by people, and it is the site's bulk: each trial of the site is
    held here once. The same trials give the same bytes (no time in the gzip header).
    """
    scenario_id, details, failures = _scenario_trials(site, run_id, scenario)
    return gzipped(compact_json(trials_document(run_id, scenario_id, details, failures)), DATA_GZIP_LEVEL)


TRIAL_FIELDS = (
    "ordinal", "trial_id", "iteration", "sample_id", "prompt", "instructions", "response", "requested_model",
    "executed_model", "fallback", "safety", "verdict", "checks", "tool_calls", "final_state", "thermal",
    "offline_success", "visual_fixture",
)


"""The fields of a trial in its data file's ``columns`` besides its metrics and environment: those of
:meth:`~fmbench.views.trial_details.TrialDetail.to_json`."""


def trials_document(
    run_id: str, scenario_id: str, details: Sequence[TrialDetail], failures: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """A scenario's trials by column: ``columns`` maps each of :data:`TRIAL_FIELDS` to a list of its values (one a
    trial, in the order they ran), and ``metrics`` and ``environment`` to a list of columns, one for each label of
    ``metric_labels`` and ``environment_labels`` (a value ``None``: not recorded).

    By column, not by trial: a column's values are alike (a metric's, a verdict's), so the file is about a quarter
    smaller gzipped, and no key is written once a trial. A column of :data:`DISTINCT_FIELDS` that repeats a value
    is written as ``{"distinct": [each value once], "at": [the index of each trial's value]}``: a sample's prompt
    comes back every repetition, too far apart for gzip's 32 KiB window to see. Trial ids that are all UUIDs as
    the runner writes them (upper-case hex, dashed) are written as ``{"uuids": base64 of their 16 bytes each}``:
    gzip keeps a random id in 16.5 bytes so, in 21.5 as text. :func:`trial_rows` (and ``site/assets/trials.js``)
    turn it back into trials.
    """
    rows = [t.to_json() for t in details]
    columns: dict[str, Any] = {name: [r[name] for r in rows] for name in TRIAL_FIELDS}
    for name in DISTINCT_FIELDS:
        columns[name] = _distinct(columns[name])
    columns["trial_id"] = _packed_ids(columns["trial_id"])
    columns["metrics"] = [[t.metrics[i] for t in details] for i in range(len(METRIC_LABELS))]
    columns["environment"] = [[t.environment[i] for t in details] for i in range(len(ENVIRONMENT_LABELS))]
    return {
        "run": run_id,
        "scenario": scenario_id,
        "count": len(rows),
        "metric_labels": list(METRIC_LABELS),
        "environment_labels": list(ENVIRONMENT_LABELS),
        "columns": columns,
        "failures": [failure_json(f) for f in failures],
    }


DISTINCT_FIELDS = ("prompt", "instructions", "response", "checks", "tool_calls", "final_state")
"""The trial data's text-heavy fields, each value written once (:func:`_distinct`): on the 40 x 1,000-trial
corpus the trial data is 9% smaller."""


def _distinct(values: list[Any]) -> list[Any] | dict[str, list[Any]]:
    """``values`` as ``{"distinct": [...], "at": [...]}`` if one repeats, else as they are."""
    at: list[int] = []
    index: dict[bytes, int] = {}
    distinct: list[Any] = []
    for value in values:
        key = orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATETIME, default=str)
        if key not in index:
            index[key] = len(distinct)
            distinct.append(value)
        at.append(index[key])
    return values if len(distinct) == len(values) else {"distinct": distinct, "at": at}


_UUID = re.compile(r"[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}")


def _packed_ids(ids: list[Any]) -> list[Any] | dict[str, str]:
    """``ids`` as ``{"uuids": base64}`` if every one is a runner-written UUID, else as they are."""
    if not ids or not all(isinstance(i, str) and _UUID.fullmatch(i) for i in ids):
        return ids
    return {"uuids": base64.b64encode(b"".join(uuid.UUID(i).bytes for i in ids)).decode("ascii")}


def _column(values: list[Any] | dict[str, Any]) -> list[Any]:
    if isinstance(values, dict) and "uuids" in values:
        raw = base64.b64decode(values["uuids"])
        return [str(uuid.UUID(bytes=raw[i:i + 16])).upper() for i in range(0, len(raw), 16)]
    if isinstance(values, dict):
        return [values["distinct"][i] for i in values["at"]]
    return values


def trial_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The trials of a :func:`trials_document`, one dict each (what ``TrialDetail.to_json`` gives)."""
    columns = {name: _column(values) for name, values in doc["columns"].items()}
    out = []
    for i in range(doc["count"]):
        row = {name: columns[name][i] for name in TRIAL_FIELDS}
        row["metrics"] = {label: columns["metrics"][j][i] for j, label in enumerate(doc["metric_labels"])}
        row["environment"] = {label: columns["environment"][j][i] for j, label in enumerate(doc["environment_labels"])}
        out.append(row)
    return out


_COMPACT_OPTIONS = orjson.OPT_APPEND_NEWLINE | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def compact_json(doc: Any) -> bytes:
    """``doc`` as compact UTF-8 JSON and a newline, written by orjson in about a tenth of ``json.dumps``' time.

    For strings, integers, booleans and null (all trial data holds) the bytes are those of ``json.dumps(doc,
    ensure_ascii=False, separators=(",", ":")) + "\\n"``; a float reads back as the same double, though a small
    one may be written in another form (``1e-7`` for ``1e-07``). A value JSON has no type for (a time included)
    is written as its ``str``.
    """
    return orjson.dumps(doc, default=str, option=_COMPACT_OPTIONS)


def runs_json(site: SiteContext, filters: Filters) -> bytes:
    """Every run with its conditions, verdict and per-scenario figures."""
    runs = rows(
        site.con,
        "SELECT run_id, file_name, source_sha256, generation, suite, route, device_name, hardware_model, "
        f"system_name, system_version, os_build, {columns(CHOICES)}, "
        "warmup_count, repetitions, sample_limit, started_at, ended_at, revision_id, revision_status, verdict "
        "FROM runs ORDER BY started_at, run_id",
    )
    figures: dict[str, list[dict[str, Any]]] = {}
    for f in rows(site.con, "SELECT * FROM scenario_figures ORDER BY run_id, ordinal"):
        figures.setdefault(f.pop("run_id"), []).append(f)
    for r in runs:
        r["scenarios"] = figures.get(r["run_id"], [])
        r["links"] = {
            "page": site.url(urls.run(r["run_id"])),
            **({"source": original[1]} if (original := site.original(r["run_id"], r["file_name"], r["source_sha256"])) else {}),
            "trials": [site.url(site.paths.data_trials_json(r["run_id"], f["scenario_id"])) for f in r["scenarios"]],
            "figures": site.url(urls.data_figures(r["run_id"])),
        }
    return _json_bytes({"runs": runs})
