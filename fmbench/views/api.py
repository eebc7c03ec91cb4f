"""The JSON API of ``fmbench serve``: the same queries and view models as the pages, as data.

| endpoint | returns |
| --- | --- |
| ``GET /api/runs?os_build=&device=&route=&suite=&revision=&verdict=`` | the matching runs, newest first |
| ``GET /api/runs/<run_id>`` | one run: conditions, verdict with reasons, recomputed scenario figures |
| ``GET /api/runs/<run_id>/scenarios/<scenario>/trials?page=&per_page=`` | a scenario's trials, paginated |
| ``GET /api/compare?device=&baseline=&candidate=[&route=&suite=&rule=&strict=]`` | a comparison of two OS builds |

Errors are ``{"error": {"status", "title", "message"}}`` with 400 for a bad
parameter, 404 for an unknown run or scenario, 503 (with ``Retry-After``)
while another process writes the database.
"""

from __future__ import annotations

import math
from typing import Any

from fmbench import urls
from fmbench.errors import NotFoundError
from fmbench.storage.queries import token_sources
from fmbench.views.comparisons import build_comparison
from fmbench.views.data import figures_document, seed_as_text
from fmbench.views.filters import Filters
from fmbench.views.runs import filtered_runs
from fmbench.views.site import SiteContext
from fmbench.views.trial_details import failure_json, failure_rows, trial_details
from fmbench.views.trials import scenario_at


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.strftime("%Y-%m-%dT%H:%M:%SZ") if hasattr(v, "strftime") else v) for k, v in row.items()}


def runs_json(site: SiteContext, filters: Filters) -> dict[str, Any]:
    found = [_plain(seed_as_text(r)) for r in filtered_runs(site.con, filters)]
    sources = token_sources(site.con, [r["run_id"] for r in found])
    for r in found:
        r["url"] = site.url(urls.run(r["run_id"]))
        r["token_count_source"] = sources.run(r["run_id"])
    return {"filters": dict(filters.values), "count": len(found), "runs": found}


def run_json(site: SiteContext, run_id: str) -> dict[str, Any]:
    doc = figures_document(site, run_id)
    doc["run"] = _plain(doc["run"])
    doc["url"] = site.url(urls.run(run_id))
    return doc


def trials_json(site: SiteContext, run_id: str, scenario: str, page: int, per_page: int) -> dict[str, Any]:
    if not site.con.execute("SELECT 1 FROM runs WHERE run_id = ?", [run_id]).fetchone():
        raise NotFoundError(f"no run {run_id!r}")
    scenario_id, _, total = scenario_at(site, run_id, scenario)
    pages = max(1, math.ceil(total / per_page))
    if page > pages:
        raise NotFoundError(f"no page {page}: {scenario_id} has {pages} page(s) of {per_page}")
    details = trial_details(site.con, run_id, scenario_id, offset=(page - 1) * per_page, limit=per_page)
    return {
        "run": run_id,
        "scenario": scenario_id,
        "page": page,
        "perPage": per_page,
        "pages": pages,
        "total": total,
        "trials": [t.to_json() for t in details],
        "failures": [failure_json(f) for f in failure_rows(site.con, run_id, scenario_id)],
    }


def compare_json(site: SiteContext, args: dict[str, str]) -> dict[str, Any]:

    comparison = build_comparison(site, args)
    return comparison.to_json()
