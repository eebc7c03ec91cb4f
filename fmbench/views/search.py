"""Search: the page at ``search/`` and the index it reads, ``data/search.json``, written at build time.

The index lists every run, device, OS build, scenario and sample, the leaderboards
(every one, each scenario's and each category's) and the coverage page, with the words a
reader may type for it (run id, file name, device name and hardware model, OS
name and version, build id, route, suite, verdict, scenario id and title) and
the page it links to. The page's script (``search.js``) matches a query
against those words in the browser, so the static site searches without a
server, and ``serve`` answers the same page and the same index from the
registry. The runner reports an iPad's OS as iOS; an iPad's runs and builds
are found by "iPadOS" too, told from the hardware model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

from fmbench import urls
from fmbench.runfile import vocabulary as vocab
from fmbench.views import leaderboard_queries
from fmbench.views import search_queries as q
from fmbench.views.common import device_key, run_title
from fmbench.views.filters import Filters
from fmbench.views.page import Page
from fmbench.views.site import SiteContext

INDEX_FORMAT = 1
"""The version of ``data/search.json``'s layout."""

KIND_LABELS = {
    "run": "Run", "device": "Device", "build": "OS build", "scenario": "Scenario", "sample": "Sample",
    "leaderboard": "Leaderboard", "coverage": "Coverage",
}


@dataclass(frozen=True)
class SearchPage(Page):
    template: ClassVar[str] = "search.html"
    nav_active: ClassVar[str] = "search"
    query: str
    """The query of the URL when the server saw it (``serve``); the static page reads it in the browser."""
    index_url: str


def search_page(site: SiteContext, filters: Filters, q: str = "") -> SearchPage:
    return SearchPage("Search", q.strip(), site.url(urls.data_search_index()))


def os_names(run: dict[str, Any]) -> list[str]:
    """The names a reader may give the run's OS: the runner's, and "iPadOS" for an iPad (the runner says iOS)."""
    names = [run["system_name"]]
    model = run.get("hardware_model") or ""
    if model.startswith("iPad") and run["system_name"] == "iOS":
        names.append("iPadOS")
    return names


def _os_versions(run: dict[str, Any]) -> list[str]:
    return [f"{name} {run['system_version']}" for name in os_names(run)]


def _entry(kind: str, title: str, detail: str, url: str, terms: list[str]) -> dict[str, Any]:
    words = " ".join(dict.fromkeys(t for t in [title, detail, *terms] if t))
    return {"kind": kind, "label": KIND_LABELS[kind], "title": title, "detail": detail, "url": url, "terms": words}


def _run_entries(site: SiteContext, runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for r in runs:
        route = vocab.label("route", r["route"]) or r["route"]
        suite = vocab.label("suite", r["suite"]) or r["suite"]
        out.append(
            _entry(
                "run",
                run_title(r),
                f"run {r['run_id']} · {r['file_name']} · {r['verdict']}",
                site.url(urls.run(r["run_id"])),
                [
                    r["run_id"], r["file_name"], r["device_name"], r["hardware_model"] or "", *_os_versions(r),
                    r["os_build"] or "", route, r["route"], suite, r["suite"], r["verdict"],
                ],
            )
        )
    return out


def _device_entries(site: SiteContext, runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    devices: dict[str, list[dict[str, Any]]] = {}
    for r in runs:
        devices.setdefault(device_key(r), []).append(r)
    out = []
    for key in sorted(devices):
        its = devices[key]
        names = list(dict.fromkeys(r["device_name"] for r in its))
        oses = list(dict.fromkeys(v for r in its for v in _os_versions(r)))
        out.append(
            _entry(
                "device",
                f"{names[0]} ({key})" if key != names[0] else key,
                f"{len(its)} run(s) · {', '.join(oses)}",
                site.url(site.paths.device(key)),
                [key, *names, *oses],
            )
        )
    return out


def _build_entries(site: SiteContext, runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    builds: dict[str, list[dict[str, Any]]] = {}
    for r in sorted(runs, key=lambda r: (r["started_at"], r["run_id"])):  # in order of first appearance
        if r["os_build"]:
            builds.setdefault(r["os_build"], []).append(r)
    out = []
    for build, its in builds.items():
        oses = list(dict.fromkeys(v for r in its for v in _os_versions(r)))
        devices = list(dict.fromkeys(r["device_name"] for r in its))
        out.append(
            _entry(
                "build",
                f"{' · '.join(oses)} ({build})",
                f"{len(its)} run(s) on {', '.join(devices)}",
                site.url(site.paths.build(build)),
                [build, *oses, *devices],
            )
        )
    return out


def _scenario_entries(site: SiteContext, scenarios: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        _entry(
            "scenario",
            site.scenario_title(s["scenario_id"], s["title"]),
            f"{s['scenario_id']} · {vocab.label('category', s['category']) or 'no category'} · {s['run_count']} run(s)",
            site.url(site.paths.scenario(s["scenario_id"])),
            [s["scenario_id"], s["category"] or "", *s["titles"]],
        )
        for s in scenarios
    ]


def _sample_entries(site: SiteContext, samples: list[dict[str, Any]], titles: dict[str, str]) -> list[dict[str, Any]]:
    """Each sample of each scenario ("task-capture-007"), linking its scenario's trials in the newest run that
    measured it."""
    return [
        _entry(
            "sample",
            f"Sample {s['sample_id']}",
            f"{titles.get(s['scenario_id'], s['scenario_id'])} · {s['trials']:,} trial(s) in {s['runs']:,} run(s)",
            site.url(site.paths.trials(s["newest_run"], s["scenario_id"])),
            [s["sample_id"], s["scenario_id"]],
        )
        for s in samples
    ]


def _leaderboard_entries(site: SiteContext, scenarios: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The leaderboards (every one, each scenario's, each category's) and the coverage page."""
    words = ["leaderboard", "ranking", "fastest", "which device is fastest"]
    out = [
        _entry("leaderboard", "Leaderboards", "every workload's devices ranked, fastest first",
               site.url(urls.leaderboards()), words),
        _entry("coverage", "Coverage", "which devices were measured on which OS builds, per suite revision",
               site.url(urls.coverage()), ["coverage", "gaps", "measured", "what to measure next", "suite revision"]),
    ]
    out += [
        _entry("leaderboard", f"Leaderboard: {s['title']}", f"{s['scenario_id']} · devices ranked by median TTFT",
               site.url(site.paths.leaderboard(s["scenario_id"])), [s["scenario_id"], s["category"] or "", *words])
        for s in scenarios
    ]
    # a category of one workload has no page of its own: its workload's leaderboard is found above
    categories = leaderboard_queries.paged_categories(site.con)
    out += [
        _entry("leaderboard", f"Leaderboards: {vocab.label('category', c)}", "every board of the category",
               site.url(site.paths.leaderboard_category(c)), [c, *words])
        for c in categories
    ]
    return out


def search_index(site: SiteContext, filters: Filters) -> bytes:
    """``data/search.json``: every run, device, OS build, scenario and sample, the leaderboards and coverage, each
    with its words and its page."""
    runs = q.search_runs(site.con)
    scenarios = q.search_scenarios(site.con)
    entries = [
        *_build_entries(site, runs),
        *_device_entries(site, runs),
        *_scenario_entries(site, scenarios),
        *_sample_entries(
            site, q.search_samples(site.con), {s["scenario_id"]: site.scenario_title(s["scenario_id"], s["title"]) for s in scenarios}
        ),
        *_leaderboard_entries(site, scenarios),
        *_run_entries(site, runs),
    ]
    doc = {"format": INDEX_FORMAT, "entries": entries}
    return (json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
