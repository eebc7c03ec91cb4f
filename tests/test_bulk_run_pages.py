"""A page served for one request is the page a static build writes, for every file of every run.

A build asks the per-run tables about every run at once (:class:`~fmbench.views.run_queries.RunData` made with
``every_run``) and keeps one run's trials for all of that run's files; a request asks about its run alone. Both
go through the same code, and must give the same bytes for every run: hostile text, the legacy format, agentic
runs with tool calls, PCC runs with fallbacks, and a run with a linked Evaluations replay.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from fmbench.analysis.revisions import fixtures_registry
from fmbench.ingest import ingest_paths
from fmbench.native.store import ingest_artifacts
from fmbench.storage.dataset import open_database
from fmbench.views import DATA, PAGES, DataKind, PageKind, render_page, site_context
from fmbench.views.filters import Filters
from fmbench.views.render import Renderer
from fmbench.views.run_queries import GATES, LINKED_REPLAY, RunData
from fmbench.views.site import SiteContext

from sitebuild import purpose_db
from testdata import FIXTURES, REPO

RUN_KINDS = ("run", "trials", "trials_json", "figures_json")
AGENTIC = "macbook-pro-m5-macos27-26a5361b-on-device-agentic-2026-09-24.json"


def _replay_db(path: Path) -> Path:
    assert ingest_paths([FIXTURES / AGENTIC], path).ok
    native = ingest_artifacts([REPO / "fixtures" / "replays"], path)
    assert all(o.status == "ingested" for o in native.outcomes)
    return path


def _fixture_corpus_db(path: Path) -> Path:
    """Every fixture run: agentic runs with tool calls and final state on trials and failures, PCC runs whose
    scenarios ran on more than one executed model, annotations, stored summaries that differ from the
    recomputation and scenarios that never ran; judged by the fixtures' own revisions, as the demo judges them
    (under the public registry every fixture run's commit is unknown, so every run would carry a reason)."""
    assert ingest_paths([FIXTURES], path, registry=fixtures_registry()).ok
    return path


def _output(site: SiteContext, kind: PageKind | DataKind, params: dict[str, object]) -> bytes:
    if isinstance(kind, PageKind):
        return render_page(site, kind, Filters.none(), data_as_of=None, **params).encode("utf-8")
    content: bytes = kind.produce(site, Filters.none(), **params)
    return content


@pytest.mark.parametrize(
    "make", [purpose_db, _replay_db, _fixture_corpus_db], ids=["purpose-built runs", "run with a replay", "fixture corpus"]
)
def test_every_file_of_every_run_served_for_one_request_is_the_file_a_build_writes(
    tmp_path: Path, make: Callable[[Path], Path]
) -> None:
    db = make(tmp_path / "runs.duckdb")
    kinds = [k for k in (*PAGES, *DATA) if k.name in RUN_KINDS]
    with open_database(db) as con:
        build = site_context(con, Renderer())
        build.run_data = RunData(con, every_run=True)
        compared: dict[str, int] = {}
        replays = 0
        for kind in kinds:
            for params in kind.instances(build):
                a = _output(build, kind, params)
                b = _output(site_context(con, Renderer()), kind, params)  # a request: a site of its own
                assert a == b, (kind.name, params)
                compared[kind.name] = compared.get(kind.name, 0) + 1
                replays += kind.name == "run" and b"Evaluations replay" in b
    assert set(compared) == set(RUN_KINDS)
    if make is _replay_db:
        assert replays == 1


def _with_rows(answers: dict[str, object]) -> set[str]:
    return {run_id for run_id, answer in answers.items() if answer}


def test_the_fixture_corpus_has_runs_with_and_without_rows_of_each_table_a_build_asks_about_once(
    tmp_path: Path,
) -> None:
    """The comparison above covers both answers of every question :class:`RunData` answers for all runs at once."""
    db = _fixture_corpus_db(tmp_path / "runs.duckdb")
    with open_database(db) as con:
        data = RunData(con, every_run=True)
        runs = {r for (r,) in con.execute("SELECT run_id FROM runs").fetchall()}
        rows_in = data.rows_in(sorted(runs))
        for name in GATES:
            assert set() < {r for r, gates in rows_in.items() if name in gates} < runs, name
        for per_run in (data.reasons, data.not_run, data.flags, data.mismatches, data.annotation):
            assert set() < _with_rows(per_run(sorted(runs))) < runs, per_run.__name__
        assert _with_rows(data.figures(sorted(runs))) == runs


def test_a_build_reads_each_answer_for_every_run_at_once_and_a_request_for_its_run_alone(tmp_path: Path) -> None:
    db = _fixture_corpus_db(tmp_path / "runs.duckdb")
    with open_database(db) as con:
        runs = sorted(r for (r,) in con.execute("SELECT run_id FROM runs").fetchall())
        build, request = RunData(con, every_run=True), RunData(con)
        first = build.figures(runs[:1])
        assert set(first) == set(runs[:1])
        assert set(build._answers["figures"]) == set(runs)  # one question read every run's answer
        assert set(request.figures(runs[:1])) == set(runs[:1])
        assert set(request._answers["figures"]) == set(runs[:1])
        for run_id in runs:
            assert build.figures([run_id]) == RunData(con).figures([run_id])
            assert build.rows_in([run_id]) == RunData(con).rows_in([run_id])
        assert build.runs(["no-such-run"]) == {"no-such-run": None}
        assert not any(LINKED_REPLAY in gates for gates in build.rows_in(runs).values())
