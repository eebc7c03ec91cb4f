"""What each page and data file is made from: the runs it reads, named without rendering it.

The static build keeps, per output file, a fingerprint of its inputs (the
fingerprint of every run it reads, and of the site's code, templates and
settings). A rebuild renders only the files whose fingerprint changed. Each
kind in :mod:`fmbench.views` names its runs with one of the functions here;
``None`` means every run (the indexes, and pages that rank or count runs).

A run's fingerprint covers everything a page can show about it: its bytes
(the run id and source SHA-256), when it was ingested (an updated sidecar
re-ingests it), its verdict and revision, its sidecar, the Evaluations
rows linked to it, and the one name of each of its workloads on the site (the
newest run's title: a newer run that renames a workload changes the pages of
every run that measured it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb

from fmbench import urls
from fmbench.analysis.os_builds import build_sort_key
from fmbench.storage.queries import named_rows, scenario_titles


@dataclass(frozen=True)
class RunFacts:
    run_id: str
    fingerprint: str
    device: str
    """``coalesce(hardware_model, device_name)``: the device key of device pages and filters."""
    hardware_model: str | None
    os_build: str | None
    os_generation: int | None
    route: str
    verdict: str
    started_at: datetime
    ingested_at: datetime
    scenarios: frozenset[str]
    """The path segments of the run's scenarios."""
    categories: frozenset[tuple[str, str]] = frozenset()
    """Each of its scenarios' path segment with the path segment of the category it records for it."""


class RunIndex:
    """Every run's facts, read in a few queries, for deciding what a rebuild must render."""

    def __init__(self, runs: Iterable[RunFacts], paths: urls.SitePaths | None = None) -> None:
        self.runs = {r.run_id: r for r in runs}
        self.paths = paths if paths is not None else urls.SitePaths.of()
        """The site's path segments, by which a page's parameters name its device, builds and scenario."""
        self.all_fingerprint = _digest(sorted(f"{r.run_id}={r.fingerprint}" for r in self.runs.values()))

    @classmethod
    def read(cls, con: duckdb.DuckDBPyConnection, paths: urls.SitePaths | None = None) -> RunIndex:
        """``paths``: the site's (read from ``con`` when not given)."""
        paths = paths if paths is not None else urls.SitePaths.read(con)
        scenarios: dict[str, set[str]] = {}
        names: dict[str, list[tuple[str, str | None]]] = {}
        titles = scenario_titles(con)
        categories: dict[str, set[tuple[str, str]]] = {}
        for run_id, scenario_id, category in con.execute(
            "SELECT run_id, scenario_id, category FROM scenario_figures"
        ).fetchall():
            scenarios.setdefault(run_id, set()).add(paths.scenarios.of(scenario_id))
            names.setdefault(run_id, []).append((scenario_id, titles.get(scenario_id)))
            if category is not None:
                categories.setdefault(run_id, set()).add(
                    (paths.scenarios.of(scenario_id), paths.categories.of(category))
                )
        links = dict(con.execute(_LINKS).fetchall()) if _has_table(con, "evaluation_rows") else {}
        facts = []
        for row in named_rows(con.execute(
            "SELECT r.run_id, r.source_sha256, r.ingested_at, r.verdict, r.revision_id, r.revision_status, r.route, "
            "r.os_build, r.os_generation, r.hardware_model, coalesce(r.hardware_model, r.device_name) AS device, "
            "r.started_at, a.sha256 AS annotation "
            "FROM runs r LEFT JOIN annotations a USING (run_id)"
        )):
            run_id = row["run_id"]
            fingerprint = _digest(
                [run_id, row["source_sha256"], row["ingested_at"].isoformat(), row["verdict"], row["revision_id"],
                 row["revision_status"], row["annotation"], links.get(run_id), sorted(names.get(run_id, ()))]
            )
            facts.append(
                RunFacts(
                    run_id=run_id, fingerprint=fingerprint, device=row["device"], hardware_model=row["hardware_model"],
                    os_build=row["os_build"], os_generation=row["os_generation"], route=row["route"],
                    verdict=row["verdict"], started_at=row["started_at"], ingested_at=row["ingested_at"],
                    scenarios=frozenset(scenarios.get(run_id, ())),
                    categories=frozenset(categories.get(run_id, ())),
                )
            )
        return cls(facts, paths)

    def fingerprint(self, run_ids: Collection[str] | None) -> str:
        """The fingerprint of a set of runs (``None``: every run)."""
        if run_ids is None:
            return self.all_fingerprint
        return _digest(sorted(f"{r}={self.runs[r].fingerprint}" for r in run_ids if r in self.runs))

    def newest_ingest(self, run_ids: Collection[str] | None) -> datetime | None:
        """When the newest of these runs was ingested: the time the page's data last changed."""
        chosen = self.runs.values() if run_ids is None else (self.runs[r] for r in run_ids if r in self.runs)
        return max((r.ingested_at for r in chosen), default=None)


_LINKS = """
WITH linked AS (SELECT DISTINCT linked_run_id AS run_id, evaluation_key FROM evaluation_rows WHERE linked_run_id IS NOT NULL)
SELECT l.run_id, md5(string_agg(
    concat_ws(':', r.evaluation_key, r.row_index, coalesce(r.linked_run_id, '-'), coalesce(r.linked_owner, '-'),
              coalesce(CAST(r.linked_ordinal AS VARCHAR), '-')),
    ',' ORDER BY r.evaluation_key, r.row_index))
FROM linked l JOIN evaluation_rows r USING (evaluation_key)
GROUP BY l.run_id
"""
"""Per run, every row of the Evaluations documents linked to it, with its link (the replay section's input)."""


def _has_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    found = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name]).fetchone()
    return bool(found and found[0])


def _digest(parts: Iterable[Any]) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(repr(p).encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()


# --- the runs each kind reads ------------------------------------------------------------------

Inputs = Collection[str] | None


def every_run(index: RunIndex, params: dict[str, Any]) -> Inputs:
    return None


def no_run(index: RunIndex, params: dict[str, Any]) -> Inputs:
    return ()


def the_run(index: RunIndex, params: dict[str, Any]) -> Inputs:
    return (params["run_id"],)


def the_run_and_its_earlier_builds(index: RunIndex, params: dict[str, Any]) -> Inputs:
    """The run and every run of its device and route on an earlier OS build (version order): a trials page sets its
    samples against the device's previous build measured with the run's configuration."""
    run = index.runs.get(params["run_id"])
    if run is None or run.hardware_model is None or run.os_build is None:
        return (params["run_id"],)
    mine = build_sort_key(run.os_build)
    return [
        r.run_id for r in index.runs.values()
        if r.run_id == run.run_id or (r.hardware_model == run.hardware_model and r.route == run.route
                                      and r.os_build is not None and build_sort_key(r.os_build) < mine)
    ]


def device_runs(index: RunIndex, params: dict[str, Any]) -> Inputs:
    device = index.paths.devices.name(params["device"])
    return [r.run_id for r in index.runs.values() if r.device == device]


def scenario_runs(index: RunIndex, params: dict[str, Any]) -> Inputs:
    return [r.run_id for r in index.runs.values() if params["scenario"] in r.scenarios]


def leaderboard_runs(index: RunIndex, params: dict[str, Any]) -> Inputs:
    """A scenario's leaderboard: the scenario's runs, and those of the other workloads of its category (whether the
    category has a page of its own, which the board links, depends on them), and every run of their devices (the
    evidence a device stands on is chosen among them)."""
    scenario = params["scenario"]
    held = {c for r in index.runs.values() for s, c in r.categories if s == scenario}
    scenarios = {s for r in index.runs.values() for s, c in r.categories if c in held} | {scenario}
    return _with_their_devices(index, [r for r in index.runs.values() if r.scenarios & scenarios])


def _with_their_devices(index: RunIndex, measured: list[Any]) -> Inputs:
    """The runs given and every run of their devices: a board stands each device on its builds' evidence, chosen
    among all the device's runs of the configuration (:mod:`fmbench.comparison.evidence`)."""
    devices = {r.hardware_model for r in measured if r.hardware_model is not None}
    ids = {r.run_id for r in measured}
    return [r.run_id for r in index.runs.values() if r.run_id in ids or r.hardware_model in devices]


def category_runs(index: RunIndex, params: dict[str, Any]) -> Inputs:
    """Every run of a scenario some run records in the category (a category's leaderboards: a run may record
    another category for the same scenario, and its boards are still on the page)."""
    scenarios = {s for r in index.runs.values() for s, c in r.categories if c == params["category"]}
    return _with_their_devices(index, [r for r in index.runs.values() if r.scenarios & scenarios])


def comparison_runs(index: RunIndex, params: dict[str, Any]) -> Inputs:
    """Every run: a section names the change points dated to its builds, and which change points the list keeps
    depends on every test of it (its false-discovery control), so any run can change the page. (Its sides are
    chosen from the device's runs on either build; the comparison cache keeps their comparisons.)"""
    return None


def build_runs(index: RunIndex, params: dict[str, Any]) -> Inputs:
    """Every run of each device measured on the build (its previous builds give what changed)."""
    build = index.paths.builds.name(params["build"])
    devices = {r.device for r in index.runs.values() if r.os_build is not None and r.os_build == build}
    return [r.run_id for r in index.runs.values() if r.device in devices]


def device_pair_runs(index: RunIndex, params: dict[str, Any]) -> Inputs:
    """Every run of the two devices on the page's OS generation (each side is its newest build of the generation with
    the configuration; runs of other generations are not on the page)."""
    wanted = (index.paths.devices.name(params["device_a"]), index.paths.devices.name(params["device_b"]))
    generation = str(params["generation"])
    return [
        r.run_id for r in index.runs.values()
        if r.hardware_model is not None and r.hardware_model in wanted and str(r.os_generation) == generation
    ]
