"""A scenario's failing trials are grouped by sample on its trials page: 40 failing trials of 2 samples read as two
groups, each with its count, its failed checks and one response, the samples that failed every trial first."""

from __future__ import annotations

from fmbench.views import trials
from fmbench.views.trial_details import CheckDetail, TrialDetail


def _trial(ordinal: int, sample: str, passed: bool, response: str = "ok") -> TrialDetail:
    checks = [CheckDetail("title equals Buy milk", passed, None if passed else "Found Buy bread"),
              CheckDetail("dueDate is set", True, None)]
    return TrialDetail(
        ordinal, f"t{ordinal}", ordinal, sample, "prompt", None, response, "on-device", "on-device", None, None,
        "task passed" if passed else "task failed", checks, [], [], (), None,
    )


def _scenario() -> list[TrialDetail]:
    """60 trials of 3 samples in turn: sample -001 fails all 20, -002 fails 19 of 20 (its first passes), -003 none."""
    out = []
    for i in range(60):
        sample = f"task-capture-00{i % 3 + 1}"
        fails = sample == "task-capture-001" or (sample == "task-capture-002" and i >= 3)
        out.append(_trial(i + 1, sample, not fails, response=f"response of trial {i + 1}"))
    return out


def test_failing_trials_are_grouped_by_sample_every_trial_failing_first_with_count_checks_and_one_response() -> None:
    details = _scenario()
    groups = trials._failing_samples(details, trials._failing(details))
    assert [(g.sample_id, g.failed, g.trials) for g in groups] == [
        ("task-capture-001", 20, 20), ("task-capture-002", 19, 20),
    ]
    first = groups[0]
    assert first.checks == [("title equals Buy milk", 20)]  # the passed check is not listed
    assert (first.response, first.response_trial) == ("response of trial 1", 1)
    assert [t.number for t in first.failing][:3] == [1, 4, 7] and first.more == 0
    assert groups[1].response_trial == 5  # its first failing trial (its first, trial 2, passed)


def test_the_page_links_at_most_its_share_of_failing_trials_and_cuts_a_long_response() -> None:
    details = [_trial(i + 1, f"s-{i % 2}", False, response="x" * 5_000) for i in range(120)]
    groups = trials._failing_samples(details, trials._failing(details))
    assert sum(len(g.failing) for g in groups) == trials.FAILING_SHOWN
    assert [(len(g.failing), g.more) for g in groups] == [(50, 10), (0, 60)]
    assert all(len(g.response or "") == trials.RESPONSE_SHOWN + 1 and g.response.endswith("…") for g in groups)


def test_the_samples_whose_outcome_changed_against_the_previous_build_come_first_and_say_how_they_did_there() -> None:
    details = _scenario()
    # on the previous build -001 failed every trial too (no change), -002 passed all 20: it changed
    before = {"task-capture-001": (20, 20), "task-capture-002": (0, 20), "task-capture-003": (0, 20)}
    groups = trials._failing_samples(details, trials._failing(details), before)
    assert [(g.sample_id, g.changed, g.before) for g in groups] == [
        ("task-capture-002", True, (0, 20)), ("task-capture-001", False, (20, 20)),
    ]
    # a sample the previous build did not measure is not "changed": it keeps its place by count
    unmeasured = trials._failing_samples(details, trials._failing(details), {"task-capture-002": (19, 20)})
    assert [(g.sample_id, g.changed) for g in unmeasured] == [("task-capture-001", False), ("task-capture-002", False)]

