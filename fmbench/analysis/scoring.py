"""Which of the benchmark's scoring rule sets explains a run's stored summaries.

The stored summaries are checked against the rule set of the run's commit
first (when the commit table knows it), then against the others, the current
rules first. A rule set that reproduces them explains the run ("stored under
rules B, before 60b596e"). A commit whose own rules do not explain it while
another set does is a flag, not a verdict. Only stored summaries that no rule
set reproduces are evidence of editing: their mismatches are the ones under
the commit's rules (or the current rules when the commit is unknown).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fmbench.analysis.figures import (
    CURRENT,
    ScenarioFigures,
    SummaryMismatch,
    compare_with_stored,
    scenario_figures,
    trial_figures,
)
from fmbench.runfile.record import RunRecord
from fmbench.runfile.rulesets import RuleSet, rule_book


@dataclass(frozen=True)
class StoredCheck:
    explained_by: RuleSet | None
    """The rule set that reproduces the stored summaries; ``None`` when none does (or nothing is stored)."""
    commit_rules: RuleSet | None
    """The rule set of the run's recorded commit, when the commit table knows it."""
    mismatches: list[SummaryMismatch] = field(default_factory=list)
    """Empty when a rule set explains the run; else the differences under the expected rules."""

    @property
    def statement(self) -> str | None:
        """``stored under rules B, before 60b596e``; ``None`` when no rule set explains the run."""
        r = self.explained_by
        return f"stored under {r.label}, {r.period}" if r else None

    @property
    def commit_flag(self) -> str | None:
        """Said when the commit's own rules do not explain the run and another set does."""
        own, found = self.commit_rules, self.explained_by
        if own is None or found is None or own is found:
            return None
        return (
            f"the recorded commit scores under {own.label} ({own.period}), but the stored summaries "
            f"match {found.label} ({found.period}) and not {own.label}"
        )


def _key(rules: RuleSet) -> tuple[object, ...]:
    return (rules.empty_checks_score, rules.empty_checks_prompt_pass, rules.pass_rate_counts)


def check_stored(run: RunRecord, figures: list[ScenarioFigures]) -> StoredCheck:
    """Check the stored summaries against each rule set in turn; ``figures`` are under the current rules."""
    book = rule_book()
    own, order = book.in_checking_order(run.environment.foundationModelsBenchCommit)
    if not run.summaries:
        return StoredCheck(None, own)
    # The rules differ only for trials with empty checks: without one, every set scores alike.
    varies = any(not t.checks for t in run.trials)
    memo: dict[tuple[object, ...], list[SummaryMismatch]] = {}

    def under(rules: RuleSet) -> list[SummaryMismatch]:
        key = _key(rules) if varies else ()
        if key not in memo:
            if rules is CURRENT or not varies or key == _key(CURRENT):
                memo[key] = compare_with_stored(run, figures)
            else:
                per_trial = [trial_figures(t, rules) for t in run.trials]
                memo[key] = compare_with_stored(run, scenario_figures(run, per_trial, rules))
        return memo[key]

    for rules in order:
        if not under(rules):
            return StoredCheck(rules, own)
    return StoredCheck(None, own, under(own or CURRENT))
