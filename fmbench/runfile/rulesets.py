"""The benchmark's scoring rule sets and the commit table, as shipped data.

The rules behind a run's stored summaries changed over the benchmark's
history; they are kept as data (``fmbench/data/scoring_rules.yaml``), not as
branches in the figure code, and are not suite revisions: the task set did not
change. :mod:`fmbench.analysis.figures` computes every figure under a given rule set.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

import yaml

PassRateCounts = Literal["promptPassed", "taskPassed"]


@dataclass(frozen=True)
class RuleSet:
    name: str
    title: str
    since: str | None
    """The first commit of these rules (``None``: from the start)."""
    until: str | None
    """The commit that replaced them (``None``: still current)."""
    empty_checks_score: float | None
    """A check-less trial's constraint score; ``None``: left out of the mean."""
    empty_checks_prompt_pass: bool
    pass_rate_counts: PassRateCounts
    commits: tuple[str, ...]

    @property
    def period(self) -> str:
        """``before 60b596e`` for older rules, ``current, since 4e9fa34`` for the current ones."""
        if self.until is None:
            return f"current, since {self.since}" if self.since else "current"
        return f"before {self.until}"

    @property
    def label(self) -> str:
        """``rules B``; the rules before the first public commit are ``the legacy rules (AppBench era)``."""
        return f"the {self.name} rules ({self.title})" if self.name == "legacy" else f"rules {self.name}"


@dataclass(frozen=True)
class RuleBook:
    rule_sets: tuple[RuleSet, ...]
    current: RuleSet

    def by_name(self, name: str) -> RuleSet:
        for r in self.rule_sets:
            if r.name == name:
                return r
        raise KeyError(name)

    def for_commit(self, commit: str | None) -> RuleSet | None:
        """The rule set of a recorded commit, matched by prefix either way; ``None`` when unknown."""
        text = (commit or "").strip().lower()
        if len(text) < 4:  # empty (outside a git checkout) or too short to name one commit
            return None
        for r in self.rule_sets:
            for known in r.commits:
                if known.startswith(text) or text.startswith(known):
                    return r
        return None

    def in_checking_order(self, commit: str | None) -> tuple[RuleSet | None, list[RuleSet]]:
        """The commit's rule set (if known), then the others: current first, then older and older."""
        own = self.for_commit(commit)
        others = [self.current] + [r for r in reversed(self.rule_sets) if r is not self.current]
        order = ([own] if own else []) + [r for r in others if r is not own]
        return own, order


@cache
def rule_book() -> RuleBook:
    text = resources.files("fmbench").joinpath("data", "scoring_rules.yaml").read_text(encoding="utf-8")
    doc = yaml.safe_load(text)
    commits = doc["commits"]
    sets = tuple(
        RuleSet(
            name=name,
            title=str(e["title"]),
            since=e.get("since"),
            until=e.get("until"),
            empty_checks_score=None if e["empty_checks_score"] is None else float(e["empty_checks_score"]),
            empty_checks_prompt_pass=bool(e["empty_checks_prompt_pass"]),
            pass_rate_counts=e["pass_rate_counts"],
            commits=tuple(str(c) for c in commits.get(name, ())),
        )
        for name, e in doc["rule_sets"].items()
    )
    current = next(r for r in sets if r.name == doc["current"])
    return RuleBook(sets, current)


def current_rules() -> RuleSet:
    return rule_book().current
