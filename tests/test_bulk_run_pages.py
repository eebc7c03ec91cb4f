"""A static build keeps one run's trials for all of that run's files; every file is what a page read alone gives.

The build reads a run's trials once (``SiteContext.bulk``) and its run page, trials pages and data files take
their figures, counts, failures and trial values from them; ``serve`` asks the database each time. Both must
give the same bytes, for every run: hostile text, the legacy format, agentic runs with tool calls, PCC runs with
fallbacks, and a run with a linked Evaluations replay.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from fmbench.dataset import open_database
from fmbench.filters import Filters
from fmbench.ingest import ingest_paths
from fmbench.native.store import ingest_artifacts
from fmbench.render import Renderer
from fmbench.views import DATA, PAGES, DataKind, PageKind, render_page, site_context
from fmbench.views.run_queries import GATED, EveryRun
from fmbench.views.site import SiteContext

from sitebuild import purpose_db
from testdata import FIXTURES, REPO

RUN_KINDS = ("run", "trials", "trials_page", "trials_csv", "trials_json", "figures_json")
AGENTIC = "macbook-pro-m5-macos27-26a5361b-on-device-agentic-2026-09-24.json"


def _replay_db(path: Path) -> Path:
    assert ingest_paths([FIXTURES / AGENTIC], path).ok
    native = ingest_artifacts([REPO / "fixtures" / "replays"], path)
    assert all(o.status == "ingested" for o in native.outcomes)
    return path


def _fixture_corpus_db(path: Path) -> Path:
    """Every fixture run: agentic runs with tool calls and final state on trials and failures, PCC runs whose
    scenarios ran on more than one executed model, annotations, stored summaries that differ from the
    recomputation and scenarios that never ran."""
    assert ingest_paths([FIXTURES], path).ok
    return path


def _output(site: SiteContext, kind: PageKind | DataKind, params: dict[str, object]) -> bytes:
    if isinstance(kind, PageKind):
        return render_page(site, kind, Filters.none(), data_as_of=None, **params).encode("utf-8")
    content: bytes = kind.produce(site, Filters.none(), **params)
    return content


@pytest.mark.parametrize(
    "make", [purpose_db, _replay_db, _fixture_corpus_db], ids=["purpose-built runs", "run with a replay", "fixture corpus"]
)
def test_every_file_of_every_run_is_the_same_with_its_trials_kept_as_read_alone(
    tmp_path: Path, make: Callable[[Path], Path]
) -> None:
    db = make(tmp_path / "runs.duckdb")
    kinds = [k for k in (*PAGES, *DATA) if k.name in RUN_KINDS]
    with open_database(db) as con:
        kept = site_context(con, Renderer())
        kept.bulk = True
        alone = site_context(con, Renderer())
        compared: dict[str, int] = {}
        replays = 0
        for kind in kinds:
            for params in kind.instances(alone):
                a = _output(kept, kind, params)
                b = _output(alone, kind, params)
                assert a == b, (kind.name, params)
                compared[kind.name] = compared.get(kind.name, 0) + 1
                replays += kind.name == "run" and b"Evaluations replay" in b
    assert set(compared) >= {"run", "trials", "trials_csv", "trials_json", "figures_json"}
    if make is _replay_db:
        assert replays == 1


def test_the_fixture_corpus_has_runs_with_and_without_rows_of_each_table_a_build_asks_about_once(
    tmp_path: Path,
) -> None:
    """The comparison above covers both answers of every question :class:`EveryRun` answers for all runs at once."""
    db = _fixture_corpus_db(tmp_path / "runs.duckdb")
    with open_database(db) as con:
        every = EveryRun.read(con)
    runs = set(every.runs)
    for name in GATED:
        assert set() < every.with_rows[name] < runs, name
    for per_run in (every.reasons, every.not_run, every.flags, every.figures):
        assert set() < set(per_run) <= runs
        assert set(per_run) < runs or per_run is every.figures
