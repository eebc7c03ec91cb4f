"""The methodology page explains, in a reader's words, each interval a comparison can state and what it claims, and
the coverage it states is the coverage study's (``benchmarks/coverage.py``, its table in ``benchmarks/README.md``)."""

from __future__ import annotations

import re
from pathlib import Path

from fmbench.analysis import clustered_quantile, stats

ROOT = Path(__file__).resolve().parents[1]


def _section(heading: str) -> str:
    text = (ROOT / "site" / "methodology.md").read_text(encoding="utf-8")
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


def _study() -> dict[str, list[tuple[float, float]]]:
    """Per pairing, each figure's (coverage in %, width over the spread) from the README's coverage table."""
    rows: dict[str, list[tuple[float, float]]] = {"paired": [], "unpaired": []}
    readme = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Calibration: coverage, width, power and advice", 1)[1]
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 8 and cells[0] in rows:
            rows[cells[0]].append((float(cells[3].rstrip(" %")), float(cells[5])))
    return rows


def test_the_methodology_page_explains_each_kind_of_interval_a_comparison_states() -> None:
    section = " ".join(_section("## How comparisons are labelled {#comparisons}").split())
    # The cluster bootstrap (stats.CLUSTER_METHOD): samples drawn again, their trials as measured.
    assert "cluster bootstrap" in stats.CLUSTER_METHOD and "cluster bootstrap" in section
    assert "each resample draws the samples with replacement" in section
    assert "The trials are not drawn again inside a sample" in section
    # Paired sides of one run (stats.PAIRED_NOISE_METHOD): a normal interval from the trials' noise.
    assert "normal interval" in stats.PAIRED_NOISE_METHOD
    assert "a normal interval about the exact difference whose variance is that noise" in section
    # Unpaired quantiles of one run a side (clustered_quantile.METHOD): Student's t from the samples' shares.
    assert "Student's t" in clustered_quantile.METHOD and "Student's t interval" in section
    # What an interval claims, what it does not, and the verdicts it allows.
    assert "What the interval claims" in section and "What it does not claim" in section
    assert "run-to-run variation was not measured" in section
    assert "**Verdicts** say no more than the interval" in section


def test_the_coverage_the_methodology_page_states_is_the_coverage_studys() -> None:
    section = " ".join(_section("## How comparisons are labelled {#comparisons}").split())
    study = _study()
    assert len(study["paired"]) == len(study["unpaired"]) == 5
    found = re.search(r"Where both sides ran the same samples, a 95% interval held the true change in "
                      r"([\d.]+)% to ([\d.]+)% of pairs for every figure, at ([\d.]+) to ([\d.]+) times", section)
    assert found is not None
    for mode, match in (("paired", found), ("unpaired", re.search(
            r"Where the sides ran different samples it held it in ([\d.]+)% to ([\d.]+)% of pairs for every "
            r"figure, at ([\d.]+) to ([\d.]+) times", section))):
        assert match is not None
        coverage, width = zip(*study[mode], strict=True)
        assert [float(g) for g in match.groups()] == [min(coverage), max(coverage), min(width), max(width)]
        # The study's goal, which the page's claim rests on: within 2 points of 95 %, at most 1.15 times the spread.
        assert all(abs(c - 95.0) <= 2.0 for c in coverage) and max(width) <= 1.15
