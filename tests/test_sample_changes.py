"""Samples whose outcome changed (Fisher's exact test, Holm's correction) and every compared figure's smallest
detectable change, on a corpus of two builds of one Mac where three samples flip (tests/data/compare/flipped_samples.py)."""

from __future__ import annotations

import importlib.util
import json
import sys
from fractions import Fraction
from math import comb
from pathlib import Path
from statistics import NormalDist
from types import ModuleType
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from fmbench.analysis import detectable, sample_tests
from fmbench.analysis import figure_catalog as fc
from fmbench.analysis.revisions import fixtures_registry
from fmbench.analysis.stats import Interval
from fmbench.analysis.tolerance import DEFAULT_TOLERANCE
from fmbench.cli import main
from fmbench.comparison.cache import CODEC
from fmbench.comparison.compare import compare_runs
from fmbench.ingest import ingest_paths
from fmbench.views import PAGES, render_page, site_context
from fmbench.views.comparisons import comparison_page
from fmbench.views.filters import Filters
from fmbench.views.render import Renderer

from testdata import DATA


def _load(name: str, path: Path) -> ModuleType:
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


flips = _load("fmbench_flipped_samples", DATA / "compare" / "flipped_samples.py")


# --- Fisher's exact test ---------------------------------------------------------------------------------


def test_fisher_on_twenty_passes_against_twenty_failures_is_two_tables_of_all_those_with_its_margins() -> None:
    # Only the observed table and its mirror image are as extreme: p = 2 / C(40, 20).
    assert sample_tests.fisher_exact(20, 0, 0, 20) == pytest.approx(float(Fraction(2, comb(40, 20))), rel=1e-12)
    assert sample_tests.fisher_exact(20, 0, 0, 20) == pytest.approx(1.4508889e-11, rel=1e-7)


def test_fisher_gives_the_textbook_values() -> None:
    # Fisher's lady tasting tea, three of four cups right: p = 34/70 (two-sided).
    assert sample_tests.fisher_exact(3, 1, 1, 3) == pytest.approx(34 / 70, rel=1e-12)
    # Agresti's and Wikipedia's example [[1, 9], [11, 3]]: p ≈ 0.002759.
    assert float(sample_tests.fisher_exact(1, 9, 11, 3)) == pytest.approx(0.0027594562, rel=1e-8)
    # Five of five against none of five: 2 / C(10, 5).
    assert sample_tests.fisher_exact(5, 0, 0, 5) == pytest.approx(2 / 252, rel=1e-12)


def _exact_fisher(a: int, b: int, c: int, d: int) -> Fraction:
    """The two-sided p-value in exact arithmetic (what fmbench computed before it called scipy)."""
    row1, row2, col1 = a + b, c + d, a + c
    weight = [comb(row1, x) * comb(row2, col1 - x) for x in range(max(0, col1 - row2), min(row1, col1) + 1)]
    observed = comb(row1, a) * comb(row2, col1 - a)
    return min(Fraction(1), Fraction(sum(w for w in weight if w <= observed), comb(row1 + row2, col1)))


def test_fisher_from_scipy_matches_exact_arithmetic_on_every_small_table_ties_included() -> None:
    # Every table of up to 7 passes and 7 failures a side, and the sizes a sample has (20 repetitions):
    # ties between tables of equal probability (a symmetric table's mirror) are decided as exact arithmetic does.
    tables = [(a, b, c, d) for a in range(8) for b in range(8) for c in range(8) for d in range(8)]
    tables += [(a, 20 - a, c, 20 - c) for a in range(21) for c in range(21)]
    for table in tables:
        exact = _exact_fisher(*table)
        assert sample_tests.fisher_exact(*table) == pytest.approx(float(exact), rel=1e-9, abs=1e-15), table


def test_fisher_is_one_where_nothing_differs_and_the_same_for_a_transposed_or_mirrored_table() -> None:
    assert sample_tests.fisher_exact(20, 0, 20, 0) == 1
    assert sample_tests.fisher_exact(7, 3, 7, 3) == 1
    assert sample_tests.fisher_exact(0, 0, 4, 6) == 1
    assert sample_tests.fisher_exact(1, 9, 11, 3) == sample_tests.fisher_exact(1, 11, 9, 3)
    assert sample_tests.fisher_exact(1, 9, 11, 3) == sample_tests.fisher_exact(11, 3, 1, 9)
    with pytest.raises(ValueError, match="negative"):
        sample_tests.fisher_exact(-1, 2, 3, 4)


# --- Holm's correction ------------------------------------------------------------------------------------


def test_holm_steps_down_and_stops_at_the_first_p_value_it_cannot_reject() -> None:
    found = sample_tests.holm([0.01, 0.04, 0.03, 0.005], 0.05)
    # Sorted: 0.005 × 4 = 0.02 and 0.01 × 3 = 0.03 are rejected; 0.03 × 2 = 0.06 is not, and that stops it.
    assert found.rejected == (True, False, False, True)
    assert found.adjusted == pytest.approx((0.03, 0.06, 0.06, 0.02))


def test_holm_rejects_what_bonferroni_would_not() -> None:
    # Bonferroni keeps 0.04 (0.04 × 2 > 0.05); Holm's second step compares it with 0.05 / 1.
    assert sample_tests.holm([0.01, 0.04], 0.05).rejected == (True, True)
    assert sample_tests.holm([0.03, 0.04], 0.05).rejected == (False, False)
    assert sample_tests.holm([], 0.05).rejected == ()


# --- the smallest detectable change -----------------------------------------------------------------------


def test_the_smallest_detectable_change_is_the_change_found_80_percent_of_the_time() -> None:
    # At 99 %: z = 2.5758, z_0.8 = 0.8416; half-width 0.14 is a standard error of 0.14 / 2.5758.
    found = detectable.smallest_detectable_change(Interval(-0.28, 0.0, 0.99, "m"))
    assert found == pytest.approx(0.14 * (2.5758293 + 0.8416212) / 2.5758293, rel=1e-6)
    # At 95 % it is 1.43 times half the width (half the width alone is found half of the time).
    assert detectable.smallest_detectable_change(Interval(-1.0, 1.0, 0.95, "m")) == pytest.approx(1.4294, rel=1e-4)
    assert detectable.smallest_detectable_change(None) is None
    assert detectable.detectable_text("rate", 0.14) == "±14.0 pp"
    assert detectable.detectable_text("seconds", 0.0312) == "±0.031 s"


_COUNTS: dict[str, Any] = {"runs": (1, 1), "samples": (25, 25), "repetitions": (20, 20)}


def test_too_few_to_tell_names_repetitions_when_trial_noise_carries_the_variance() -> None:
    # (0.14 / 0.05)² = 7.84: the variance must fall 7.84 times. Trial noise carries 95 % of it: repetitions divide
    # that share only, so 0.95 / (1 / 7.84 − 0.05) = 12.25 times the repetitions; or 7.84 times the samples.
    sentence = detectable.too_few_to_tell("inconclusive", 0.14, 1.0, "rate", DEFAULT_TOLERANCE, **_COUNTS,
                                          noise_share=0.95)
    assert sentence is not None
    assert "±14.0 pp, above the practical threshold of ±5 points" in sentence
    assert "about 95% is trial-to-trial noise within samples and 5% the differences between samples" in sentence
    assert "13 runs of the same samples per side (now 1)" in sentence
    assert "245 trials of each sample per side (now 20)" in sentence
    assert "or about 196 samples per side (now 25)" in sentence


def test_too_few_to_tell_names_samples_when_the_differences_between_samples_keep_it_above() -> None:
    # Half the variance from the samples: more repetitions leave that half, above 1 / 7.84 of the whole.
    sentence = detectable.too_few_to_tell("inconclusive", 0.14, 1.0, "rate", DEFAULT_TOLERANCE, **_COUNTS,
                                          noise_share=0.5)
    assert sentence is not None
    assert "More runs or repetitions of the same samples cannot bring it to the threshold" in sentence
    assert "about 196 samples per side (now 25) would" in sentence
    # A relative threshold: 0.05 s on a 0.5 s baseline is 10%, twice the 5% threshold, so 4 times the samples.
    latency = detectable.too_few_to_tell("inconclusive", 0.05, 0.5, "seconds", DEFAULT_TOLERANCE,
                                         runs=(2, 3), samples=(20, 30), repetitions=(20, 20), noise_share=0.2)
    assert latency is not None and "(10.0% of the baseline)" in latency
    assert "80 samples on the baseline and 120 on the candidate (now 20 and 30)" in latency


def test_the_advice_divides_the_variance_as_it_promises() -> None:
    for share in (0.2, 0.6, 0.9, 0.99, 1.0):
        for factor in (1.5, 4.0, 9.0):
            advice = detectable.advise(factor, share)
            assert advice.samples == factor  # every share divided
            if advice.repetitions is None:
                assert 1 - share >= 1 / factor
            else:
                assert share / advice.repetitions + (1 - share) == pytest.approx(1 / factor)


def test_the_variance_split_finds_trial_noise_and_sample_differences() -> None:
    # Samples of equal means, noisy trials: all trial noise. Samples of different means, identical trials: none.
    noisy = [[[0.0, 1.0] * 5 for _ in range(10)]]
    assert detectable.variance_split(noisy, noisy) == pytest.approx(1.0)
    steady = [[[float(i)] * 10 for i in range(10)]]
    assert detectable.variance_split(steady, steady) == 0.0
    # Paired, with the same sample effects on both sides: the differences between samples cancel.
    ids = [[f"s{i}" for i in range(10)]]
    shifted = [[[float(i) + 0.5 + (0.1 if t % 2 else -0.1) for t in range(10)] for i in range(10)]]
    assert detectable.variance_split(steady, shifted, samples=(ids, ids), paired=True) == pytest.approx(1.0)
    assert detectable.variance_split(steady, shifted, samples=(ids, ids), paired=False) < 0.01


def test_too_few_to_tell_is_said_only_of_an_inconclusive_figure_that_could_not_see_the_threshold() -> None:
    args: dict[str, Any] = {**_COUNTS, "noise_share": 0.5}
    assert detectable.too_few_to_tell("inconclusive", 0.04, 1.0, "rate", DEFAULT_TOLERANCE, **args) is None
    assert detectable.too_few_to_tell("worse", 0.14, 1.0, "rate", DEFAULT_TOLERANCE, **args) is None
    assert detectable.too_few_to_tell("within tolerance", 0.14, 1.0, "rate", DEFAULT_TOLERANCE, **args) is None
    assert detectable.too_few_to_tell("inconclusive", None, 1.0, "rate", DEFAULT_TOLERANCE, **args) is None
    # A relative threshold with a baseline of 0 has nothing to be relative to.
    assert detectable.too_few_to_tell("inconclusive", 0.5, 0.0, "seconds", DEFAULT_TOLERANCE, **args) is None


# --- the corpus --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    folder = tmp_path_factory.mktemp("flipped")
    written = flips.write_corpus(folder / "runs")
    db = folder / "flipped.duckdb"
    report = ingest_paths([folder / "runs"], db, registry=fixtures_registry())
    assert report.ok, [o.message for o in report.outcomes]
    ids = {Path(o.path).name: o.run_id for o in report.outcomes}
    return db, {"baseline": ids[written.baseline.name], "candidate": ids[written.candidate.name],
                "baseline_file": str(written.baseline), "candidate_file": str(written.candidate)}


@pytest.fixture(scope="module")
def compared(corpus: tuple[Path, dict[str, str]]) -> dict[str, Any]:
    db, ids = corpus
    result = CliRunner().invoke(main, ["compare", ids["baseline"], ids["candidate"], "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_compare_json_holds_exactly_the_flipped_samples_newly_failing_first_with_both_responses(
    compared: dict[str, Any],
) -> None:
    found = compared["sample_changes"]
    assert found["tested"] == 50  # 25 samples of each of two workloads, attempted on both sides
    assert "Fisher's exact test" in found["method"] and "Holm" in found["method"]
    changes = found["changes"]
    assert [(c["scenario_id"], c["sample_id"], c["direction"]) for c in changes] == [
        ("task-capture", "task-capture-007", "newly failing"),
        ("task-capture", "task-capture-019", "newly failing"),
        ("journal-summary", "journal-summary-011", "newly passing"),
    ]
    first = changes[0]
    assert first["title"] == "Natural-language task capture"
    assert (first["baseline"]["passed"], first["baseline"]["trials"]) == (20, 20)
    assert (first["candidate"]["passed"], first["candidate"]["trials"]) == (0, 20)
    assert first["change"] == -1.0
    assert first["p_value"] == pytest.approx(2 / comb(40, 20))
    assert first["adjusted_p_value"] == pytest.approx(50 * 2 / comb(40, 20))
    assert first["baseline"]["failing_checks"] == []
    assert first["candidate"]["failing_checks"] == [{"label": "Excludes “Smith”", "failed": 20}]
    assert first["baseline"]["response"] == flips.PASSING_RESPONSE and first["baseline"]["response_passed"] is True
    assert first["candidate"]["response"] == flips.HOSTILE_RESPONSE and first["candidate"]["response_passed"] is False
    assert changes[1]["candidate"]["response"] == flips.FAILING_RESPONSE
    passing = changes[2]
    assert (passing["baseline"]["passed"], passing["candidate"]["passed"]) == (0, 20)
    assert passing["baseline"]["response"] == flips.FAILING_RESPONSE
    assert passing["candidate"]["response"] == flips.PASSING_RESPONSE
    assert {c["sample_id"] for c in changes} == set(flips.FLIPPED)


def _task_success_detectable(compared: dict[str, Any]) -> str:
    """Task capture's task success smallest detectable change as a reader sees it (it follows the interval)."""
    task = next(s for s in compared["scenarios"] if s["scenario_id"] == "task-capture")
    success = next(f for f in task["figures"] if f["key"] == "task_success")
    text = detectable.detectable_text("rate", success["smallest_detectable_change"])
    assert text is not None
    return text


def test_two_run_files_compared_with_no_database_name_the_same_samples(corpus: tuple[Path, dict[str, str]]) -> None:
    _db, ids = corpus
    result = CliRunner().invoke(main, ["compare", ids["baseline_file"], ids["candidate_file"], "--json"])
    assert result.exit_code == 0, result.output
    changes = json.loads(result.output)["sample_changes"]["changes"]
    assert [(c["sample_id"], c["direction"]) for c in changes] == [
        ("task-capture-007", "newly failing"), ("task-capture-019", "newly failing"),
        ("journal-summary-011", "newly passing"),
    ]


def test_the_workload_verdict_keeps_its_own_interval_beside_the_sample_list(compared: dict[str, Any]) -> None:
    task = next(s for s in compared["scenarios"] if s["scenario_id"] == "task-capture")
    success = next(f for f in task["figures"] if f["key"] == "task_success")
    assert (success["baseline"], success["candidate"]) == (1.0, pytest.approx(0.92))
    assert success["verdict"] == "inconclusive"
    assert success["interval"]["low"] < 0 < success["interval"]["high"]


def _tested_figures(compared: dict[str, Any]) -> int:
    """The figures this corpus's comparison tests, from the catalog: every compared figure of each workload but a
    maximum (peak memory: its change is shown, not tested); the corpus records every value each one needs."""
    per_workload = [f for f in fc.CATALOG.compared() if f.statistic != "maximum"]
    assert per_workload
    return len(compared["scenarios"]) * len(per_workload)


def test_every_compared_figure_carries_its_smallest_detectable_change(compared: dict[str, Any]) -> None:
    figures = [f for s in compared["scenarios"] for f in s["figures"]]
    assert figures and all("smallest_detectable_change" in f for f in figures)
    tested = [f for f in figures if f["interval"]]
    assert len(tested) == _tested_figures(compared) == compared["tested_figures"]
    for f in tested:
        half = (f["interval"]["high"] - f["interval"]["low"]) / 2
        z = NormalDist().inv_cdf(1 - (1 - f["interval"]["confidence"]) / 2)
        assert f["smallest_detectable_change"] == pytest.approx(half * (z + NormalDist().inv_cdf(0.8)) / z)
    # The definition is stated with the figures.
    assert compared["smallest_detectable_change"]["power"] == 0.8
    assert "80% of the time" in compared["smallest_detectable_change"]["definition"]
    assert set(compared["verdicts"]) == {"better", "worse", "within tolerance", "inconclusive"}
    assert all(f["smallest_detectable_change"] is None for f in figures if not f["interval"])


def test_an_inconclusive_figure_the_runs_could_not_see_says_too_few_to_tell_and_others_do_not(
    compared: dict[str, Any],
) -> None:
    by = {(s["scenario_id"], f["key"]): f for s in compared["scenarios"] for f in s["figures"]}
    success = by[("task-capture", "task_success")]
    assert success["smallest_detectable_change"] > 0.05
    sentence = success["too_few_to_tell"]
    assert sentence.startswith("Too few to tell")
    assert "above the practical threshold of ±5 points" in sentence
    assert "samples per side (now 25)" in sentence
    # Median TTFT lies within tolerance: its interval could have seen a change of 5%, so no such sentence.
    ttft = by[("task-capture", "ttft_median")]
    assert ttft["verdict"] == "within tolerance"
    assert ttft["smallest_detectable_change"] / ttft["baseline"] < 0.05
    assert ttft["too_few_to_tell"] is None
    assert by[("task-capture", "peak_memory")]["too_few_to_tell"] is None


def test_compare_as_text_and_markdown_lists_the_changed_samples_and_the_smallest_detectable_changes(
    corpus: tuple[Path, dict[str, str]], compared: dict[str, Any],
) -> None:
    db, ids = corpus
    result = CliRunner().invoke(main, ["compare", ids["baseline"], ids["candidate"], "--db", str(db)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "samples whose outcome changed:" in out
    assert "3 of 50 sample(s) tested changed beyond chance (2 newly failing, 1 newly passing)" in out
    assert out.index("sample task-capture-007") < out.index("sample task-capture-019") < out.index(
        "sample journal-summary-011")
    assert "20/20 passed → 0/20 passed" in out and "detectable" in out
    assert _task_success_detectable(compared) in out
    assert "task-capture, Task success: Too few to tell" in out
    markdown = CliRunner().invoke(main, ["compare", ids["baseline"], ids["candidate"], "--db", str(db), "--markdown"])
    assert markdown.exit_code == 0
    assert "## Samples whose outcome changed" in markdown.output
    assert "&lt;script>alert" in markdown.output and "<script>" not in markdown.output


def test_the_comparison_page_lists_the_flipped_samples_with_both_responses_escaped(
    corpus: tuple[Path, dict[str, str]], compared: dict[str, Any],
) -> None:
    db, ids = corpus
    con = duckdb.connect(str(db), read_only=True)
    try:
        site = site_context(con, Renderer(), registry=fixtures_registry())
        args = {"device": flips.DEVICE, "baseline": flips.BASELINE_BUILD, "candidate": flips.CANDIDATE_BUILD}
        page = comparison_page(site, Filters(), **args)
        # The headline names the flipped samples first, the biggest group first.
        assert page.verdict.startswith("2 samples of Natural-language task capture now fail every trial; "
                                       "1 sample of Journal summary now passes every trial"), page.verdict
        (section,) = page.sections
        assert section.samples is not None
        assert [(x.sample_id, x.direction) for x in section.samples.changes] == [
            ("task-capture-007", "newly failing"), ("task-capture-019", "newly failing"),
            ("journal-summary-011", "newly passing"),
        ]
        first = section.samples.changes[0]
        assert [(side.name, side.passed, side.response) for side in first.sides] == [
            ("Baseline", "20/20 passed", flips.PASSING_RESPONSE), ("Candidate", "0/20 passed", flips.HOSTILE_RESPONSE),
        ]
        assert first.sides[1].checks == ["Excludes “Smith”: failed 20 of 20"]
        assert [(side.run, side.run_href) for side in first.sides] == [
            (ids["baseline"], f"/runs/{ids['baseline']}/"), (ids["candidate"], f"/runs/{ids['candidate']}/")]
        assert any(t.startswith("Natural-language task capture, Task success: Too few to tell")
                   for t in section.samples.too_few)
        # Every compared figure's smallest detectable change, beside its practical threshold.
        listed = section.samples.detectable
        assert len(listed.rows) == _tested_figures(compared)
        assert [c.key for c in listed.columns] == ["scenario", "figure", "detectable", "threshold", "verdict"]
        success = next(r for r in listed.rows if r.cells[:2] == ["Natural-language task capture", "Task success"])
        assert success.cells[2:] == [_task_success_detectable(compared), "±5 points", "inconclusive (too few to tell)"]
        # The verdict table says it beside the verdict.
        assert section.table is not None
        verdict_at = [c.key for c in section.table.columns].index("verdict")
        verdict = next(r for r in section.table.rows if r.cells[0] == "Natural-language task capture"
                       and r.cells[1] == "Task success").cells[verdict_at]
        assert verdict.text == "inconclusive (too few to tell)"
        (kind,) = [k for k in PAGES if k.name == "comparison"]
        html = render_page(site, kind, Filters(), **args)
    finally:
        con.close()
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&#39;flipped&#39;)&lt;/script&gt;&lt;b&gt;Call Mr. Smith&lt;/b&gt; &amp; Dr. Lee" in html
    # The list sits under the verdicts: after the figure table, before how the intervals are computed.
    listed = html.index("Samples whose outcome changed")
    assert html.index('id="figures-cfg-') < listed < html.index("How the intervals are computed")
    assert html.index("task-capture-007") < html.index("task-capture-019") < html.index("journal-summary-011")
    assert html.count("<pre>Call Dr. Lee</pre>") == 3  # the passing side of each flipped sample
    assert "Smallest detectable" in html and "What these runs could not tell" in html


def test_serve_shows_the_same_samples_and_the_api_carries_them_with_every_smallest_detectable_change(
    corpus: tuple[Path, dict[str, str]],
) -> None:
    from fmbench.serving.serve import create_app

    db, _ids = corpus
    client = create_app(db, host="127.0.0.1", port=8000, registry=fixtures_registry()).test_client()
    headers = {"Host": "127.0.0.1:8000"}
    page = client.get(f"/compare/{flips.DEVICE}/{flips.BASELINE_BUILD}..{flips.CANDIDATE_BUILD}/", headers=headers)
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert "Samples whose outcome changed" in text and "&lt;script&gt;alert" in text and "<script>alert" not in text
    api = client.get("/api/compare", headers=headers, query_string={
        "device": flips.DEVICE, "baseline": flips.BASELINE_BUILD, "candidate": flips.CANDIDATE_BUILD})
    assert api.status_code == 200
    (cmp,) = api.get_json()["comparisons"]
    assert [c["sample_id"] for c in cmp["sample_changes"]["changes"]] == list(flips.FLIPPED)
    assert all("smallest_detectable_change" in f for s in cmp["scenarios"] for f in s["figures"])


def test_a_kept_comparison_reads_back_with_its_sample_changes(corpus: tuple[Path, dict[str, str]]) -> None:
    db, ids = corpus
    made = compare_runs(ids["baseline"], ids["candidate"], db)
    assert made.sample_changes is not None
    back = CODEC.loads(CODEC.dumps(made))
    assert back.sample_changes == made.sample_changes
    assert [f.too_few_to_tell for s in back.scenarios for f in s.figures] == [
        f.too_few_to_tell for s in made.scenarios for f in s.figures]
    notes = " ".join(made.method_notes)
    assert "80% of the time" in notes and "over the 50 sample(s) both sides attempted" in notes


def test_the_methodology_page_states_the_per_sample_test_and_the_detectable_change() -> None:
    text = (Path(__file__).resolve().parents[1] / "site" / "methodology.md").read_text(encoding="utf-8")
    assert "## Samples whose outcome changed {#sample-changes}" in text
    assert "Fisher's exact" in text and "Holm's" in text
    assert "## The smallest detectable change {#detectable}" in text and "80% of\nthe time" in text
    # The verdicts, in the vocabulary every output uses, and nothing inconclusive called unchanged.
    for verdict in ("**Better** or **worse**", "**Within tolerance**", "**Inconclusive**"):
        assert verdict in text
    assert "no detectable change" not in text
