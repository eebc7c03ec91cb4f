"""Where every page lives, relative to the site root. The static build and ``serve`` share these."""

from __future__ import annotations

import re

_UNSAFE = re.compile(r"[^A-Za-z0-9,._-]+")

TRIALS_PER_PAGE = 50


def slug(key: str) -> str:
    """A path segment for a device, build or scenario key (keys are data: never trusted as paths)."""
    cleaned = _UNSAFE.sub("-", key).strip("-.")
    return cleaned or "unnamed"


def home() -> str:
    return ""


def runs() -> str:
    return "runs/"


def run(run_id: str) -> str:
    return f"runs/{run_id}/"


def trials(run_id: str, scenario: str, page: int = 1) -> str:
    base = f"runs/{run_id}/trials/{slug(scenario)}/"
    return base if page <= 1 else f"{base}page-{page}/"


def devices() -> str:
    return "devices/"


def device(device: str) -> str:
    return f"devices/{slug(device)}/"


def scenarios() -> str:
    return "scenarios/"


def scenario(scenario: str) -> str:
    return f"scenarios/{slug(scenario)}/"


def pcc() -> str:
    return "pcc/"


def compare_index() -> str:
    return "compare/"


def comparison(device: str, baseline: str, candidate: str) -> str:
    return f"compare/{slug(device)}/{slug(baseline)}..{slug(candidate)}/"


def regressions() -> str:
    return "regressions/"


def regressions_feed() -> str:
    return "regressions/feed.xml"


def revisions() -> str:
    return "revisions/"


def methodology(anchor: str = "") -> str:
    return "methodology/" + (f"#{anchor}" if anchor else "")


def data() -> str:
    return "data/"


def data_runs_index() -> str:
    return "data/runs.json"


def data_source(run_id: str, file_name: str) -> str:
    return f"data/runs/{run_id}/{slug(file_name)}"


def data_source_gzip(run_id: str, file_name: str) -> str:
    """The original run file gzipped (the ``gzip`` originals policy)."""
    return data_source(run_id, file_name) + ".gz"


def data_trials_csv(run_id: str) -> str:
    """Every trial of a run as CSV, gzipped (the trial data is the site's bulk)."""
    return f"data/runs/{run_id}/trials.csv.gz"


def data_figures(run_id: str) -> str:
    return f"data/runs/{run_id}/figures.json"


def data_trials_json(run_id: str, scenario: str) -> str:
    """A scenario's trials as data: compact JSON, gzipped (a browser reads it with ``DecompressionStream``)."""
    return f"data/runs/{run_id}/trials/{slug(scenario)}.json.gz"




def builds() -> str:
    return "builds/"


def build(build: str) -> str:
    return f"builds/{slug(build)}/"


def device_comparison(device_a: str, device_b: str, generation: int | str) -> str:
    return f"compare/devices/{slug(device_a)}..{slug(device_b)}/{generation}/"


def search() -> str:
    return "search/"


def data_search_index() -> str:
    """The search page's index, written at build time."""
    return "data/search.json"
