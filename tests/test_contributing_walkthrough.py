"""CONTRIBUTING's walk-through of a figure works as written: its entry is a figure the catalog does not have yet,
and with the entry added where it says, the figure, comparison and sample-change tests pass (run in a pytest of
their own, the entry added by ``tests/walkthrough_figure.py`` before any test runs)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from fmbench.analysis import figure_catalog as fc

from testdata import REPO

CHOSEN = [
    "tests/test_figure_catalog.py",
    "tests/test_sample_changes.py::test_every_compared_figure_carries_its_smallest_detectable_change",
    "tests/test_sample_changes.py::test_the_comparison_page_lists_the_flipped_samples_with_both_responses_escaped",
    "tests/test_page_contexts.py::test_comparison_states_its_verdicts_in_one_sentence_and_lists_expected_differences_apart",
    "tests/test_comparison_page.py::test_every_interval_of_the_fixture_corpus_comparisons_is_the_one_published_before",
    "tests/test_regressions.py::test_a_slower_build_is_listed_as_a_regression_with_its_size_direction_and_verdict",
    "tests/test_regressions.py::test_a_faster_build_is_listed_as_an_improvement_not_a_regression",
    "tests/test_real_files.py::test_an_all_failed_run_page_says_no_measured_trial_and_shows_attempt_figures_and_failures",
    "tests/test_comparison_trial_grouping.py::test_a_sides_trials_grouped_by_columns_are_bit_for_bit_the_trial_by_trial_walk",
]
"""The figure, comparison and sample-change tests that read the catalog's figures, compared or shown: each one
pinned the shipped catalog before, and failed with an entry added. A test that builds in worker processes or in a
new process is not among them: such a process imports the catalog as shipped, without the plugin's entry (with the
entry written into ``_FIGURES`` itself, the incremental, parallel and stored-resample builds match a full build)."""


def _walkthrough() -> tuple[str, str]:
    """The ``Figure(...)`` entry of CONTRIBUTING's figure walk-through and the figure it is added after."""
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text[text.index("## A figure") :]
    section = section[: section.index("\n## ", 1)]
    (entry,) = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    (after,) = re.findall(r"here after\s+`(\w+)`", section)
    return entry, after


def test_the_walkthrough_adds_a_figure_the_catalog_does_not_have_yet_where_its_column_fits() -> None:
    entry, after = _walkthrough()
    figure = eval(entry.strip().removesuffix(","), dict(vars(fc)))  # the repository's own text, not a user's
    assert isinstance(figure, fc.Figure)
    assert figure.key not in {f.key for f in fc.CATALOG.figures}
    assert figure.column not in {f.column for f in fc.CATALOG.figures}
    assert after in {f.key for f in fc.CATALOG.figures}
    added = fc.CATALOG.with_figure(figure, after=after)
    assert added.columns("run")[added.columns("run").index(fc.CATALOG[after].column or "") + 1] == figure.column
    assert figure in added.compared()  # compared: the walk-through's step on the family of intervals applies


def test_the_figure_comparison_and_sample_change_tests_pass_with_the_walkthroughs_figure_added() -> None:
    entry, after = _walkthrough()
    env = {**os.environ, "WALKTHROUGH_FIGURE": entry, "WALKTHROUGH_AFTER": after,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "tests"), os.environ.get("PYTHONPATH")]))}
    run = subprocess.run(
        [sys.executable, "-P", "-m", "pytest", "-p", "walkthrough_figure", "-p", "no:cacheprovider", "-q", *CHOSEN],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    key = re.search(r'Figure\("(\w+)"', entry)
    assert key and re.search(rf"catalog with the walk-through's figure: .*\b{key.group(1)}\b", run.stdout)
    passed = re.search(r"\b(\d+) passed\b", run.stdout)
    assert passed and int(passed.group(1)) >= len(CHOSEN) and "failed" not in run.stdout and "skipped" not in run.stdout
