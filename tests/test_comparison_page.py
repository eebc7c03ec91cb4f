"""OS-build comparison pages of the fixture corpus: their intervals are the seeded resamples' (unchanged when the
resampling got faster), and a page served with its configurations computed side by side is the built one."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import duckdb
import pytest

from fmbench.analysis.revisions import fixtures_registry
from fmbench.ingest import ingest_paths
from fmbench.views import comparison_blocks, comparisons, site_context
from fmbench.views.comparisons import build_comparison, build_pairs, comparison_page
from fmbench.views.filters import Filters
from fmbench.views.render import Renderer

from testdata import FIXTURES

INTERVALS_DIGEST = "8479b494daf094de619564774bd1e3c32af8fb66f8999459bf667ad3cf1dcfe1"
"""SHA-256 of every interval of every comparison page of the fixture corpus (84 of them), as the seeded cluster
bootstrap draws them since the intervals of sides that ran the same samples are paired by sample (63 of them). A
change of the resampling that changes a published interval must change this on purpose."""
UNPAIRED_DIGEST = "39d46e30318fb811e9d20ca5192a8d20bfce198cd24b09ce9be0dd3982f61370"
"""SHA-256 of the 21 intervals that are not paired: the same as the seeded cluster bootstrap drew them before its
resampling was made faster, and before pairing (the unpaired draw did not change)."""


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("comparisons") / "corpus.duckdb"
    assert ingest_paths([FIXTURES], path, registry=fixtures_registry()).ok
    return path


def test_every_interval_of_the_fixture_corpus_comparisons_is_the_one_published_before(db: Path) -> None:
    con = duckdb.connect(str(db), read_only=True)
    try:
        site = site_context(con, Renderer())
        rows = []
        paired: list[bool] = []
        for device, a, b in sorted(build_pairs(site)):
            found = build_comparison(site, {"device": device, "baseline": a, "candidate": b}).to_json()
            for cmp in found["comparisons"]:
                for s in cmp["scenarios"]:
                    rows += [
                        [f"{device}/{a}..{b}", cmp["configuration"], s["scenario_id"], f["key"],
                         repr(f["interval"]["low"]), repr(f["interval"]["high"])]
                        for f in s["figures"] if f["interval"]
                    ]
                    paired += [f["interval"]["paired"] for f in s["figures"] if f["interval"]]
    finally:
        con.close()
    assert len(rows) == 84 and sum(paired) == 63
    assert hashlib.sha256(json.dumps(rows).encode()).hexdigest() == INTERVALS_DIGEST
    unpaired = [row for row, p in zip(rows, paired, strict=True) if not p]
    assert hashlib.sha256(json.dumps(unpaired).encode()).hexdigest() == UNPAIRED_DIGEST


def test_a_served_page_computes_its_configurations_side_by_side_into_the_built_page(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    device, baseline, candidate = "Mac17,2", "25B78", "26A5378f"  # two configurations measured on both builds
    con = duckdb.connect(str(db), read_only=True)
    try:
        built = comparison_page(site_context(con, Renderer(mode="static")), Filters.none(), device, baseline, candidate)
        threads: set[str] = set()
        section = comparisons._section

        def watched(*args, **kwargs):  # type: ignore[no-untyped-def]
            import threading

            threads.add(threading.current_thread().name)
            return section(*args, **kwargs)

        monkeypatch.setattr(comparisons, "_section", watched)
        monkeypatch.setattr(comparison_blocks.os, "cpu_count", lambda: 2)
        served = comparison_page(site_context(con, Renderer(mode="serve")), Filters.none(), device, baseline, candidate)
    finally:
        con.close()
    assert len(built.sections) == 2 and all(s.refused is None for s in built.sections)
    assert threads and "MainThread" not in threads  # on the pool's threads
    assert served.sections == built.sections
