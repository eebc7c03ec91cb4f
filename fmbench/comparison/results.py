"""What a comparison gives as a whole, with its JSON, text and Markdown (its scenarios and figures are in
:mod:`fmbench.comparison.scenario_results`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from fmbench.analysis import clustered_quantile, detectable, stats
from fmbench.analysis import tolerance as tol
from fmbench.analysis.display import confidence_text
from fmbench.comparison import text as comparison_text
from fmbench.comparison.rules import SPEED_NOTE, Caveat, Difference, Kind
from fmbench.comparison.sample_changes import SampleChanges
from fmbench.comparison.scenario_results import (
    DroppedScenario,
    FigureComparison,
    ScenarioComparison,
)
from fmbench.comparison.selection import RULE_DESCRIPTIONS, AttemptRule, Side

Multiplicity = Literal["none", "bonferroni"]


@dataclass(frozen=True)
class Comparison:
    kind: Kind
    label: str
    title: str
    rule: AttemptRule
    baseline: Side
    candidate: Side
    differences: tuple[Difference, ...]
    caveats: tuple[Caveat, ...]
    scenarios: tuple[ScenarioComparison, ...]
    dropped: tuple[DroppedScenario, ...]
    strict_os: bool
    speed_comparable: bool
    confidence: float
    """The confidence the caller asked for (per figure, or family-wise under Bonferroni)."""
    figure_confidence: float
    """The level each interval was computed at."""
    multiplicity: Multiplicity
    tested_figures: int
    tolerance: tol.Tolerance = tol.DEFAULT_TOLERANCE
    """The practical threshold a change must pass to be better or worse."""
    sample_changes: SampleChanges | None = None
    """The samples whose pass rate changed beyond chance (:mod:`fmbench.comparison.sample_changes`)."""
    expected_differences: tuple[Difference, ...] = ()
    """What differs between any two runs (the runs, their start times, the order seed): listed apart from
    :attr:`differences`, which can explain a change."""

    @property
    def verdict_sentence(self) -> str:
        """The comparison's verdicts in one sentence: what got worse or better beyond the practical threshold,
        how many lie within tolerance and how many are inconclusive (:func:`fmbench.comparison.text.verdict_sentence`)."""
        return comparison_text.verdict_sentence([(None, self)])

    @property
    def rule_description(self) -> str:
        return RULE_DESCRIPTIONS[self.rule]

    def scenario(self, scenario_id: str) -> ScenarioComparison:
        return next(s for s in self.scenarios if s.scenario_id == scenario_id)

    def changes(self) -> list[tuple[ScenarioComparison, FigureComparison]]:
        """Every figure that got better or worse: its interval excludes zero and the change passes the practical
        threshold."""
        return [(s, f) for s in self.scenarios for f in s.figures if f.verdict in ("better", "worse")]

    @property
    def pairing_note(self) -> str | None:
        """Whether the intervals are paired by sample, over the workloads that have one (``None``: none has)."""
        found = [s for s in self.scenarios if s.paired is not None]
        if not found:
            return None
        unpaired = [s.title for s in found if not s.paired]
        if not unpaired:
            return ("Intervals are paired by sample: both sides ran the same samples. With one run a side and ten or "
                    f"more samples, each repeated: {stats.PAIRED_NOISE_METHOD}. Otherwise each resample draws the "
                    "sample ids once for both sides (runs are still drawn per side).")
        if len(unpaired) == len(found):
            return ("Intervals are not paired by sample: the sides did not run the same samples, so each side's "
                    "samples are resampled alone.")
        return ("Intervals are paired by sample where both sides ran the same samples; not in "
                f"{', '.join(unpaired)}, whose sides did not, so each side's samples are resampled alone there.")

    @property
    def run_variation_note(self) -> str | None:
        """Whether run-to-run variation was measured (a side of several runs): ``None`` when each side has one run."""
        runs = (("baseline", len(self.baseline.run_ids)), ("candidate", len(self.candidate.run_ids)))
        several = [f"the {name}'s {n} runs" for name, n in runs if n > 1]
        if not several:
            return None
        single = [name for name, n in runs if n == 1]
        return (f"Run-to-run variation was measured: {' and '.join(several)} are resampled as runs first, then "
                "samples (each with its trials as measured), so the intervals cover how a repeat of those runs would "
                "differ"
                + (f"; the {single[0]} has one run, whose run-to-run variation was not measured" if single else "")
                + ".")

    @property
    def method_notes(self) -> tuple[str, ...]:
        level = f"{confidence_text(self.figure_confidence)}"
        notes = [
            f"Intervals are {level} intervals on candidate − baseline"
            + (
                f" (Bonferroni: a family-wise {confidence_text(self.confidence)} over {self.tested_figures} tested figures)"
                if self.multiplicity == "bonferroni"
                else ""
            )
            + ".",
            f"Medians and p90s: {stats.CLUSTER_METHOD}; where the sides ran samples of their own, one run each and "
            f"ten or more samples: {clustered_quantile.METHOD}.",
            f"Task success and completed prompt pass: {stats.CLUSTER_RATE_METHOD}.",
            f"Mean constraint score: {stats.CLUSTER_MEAN_METHOD}.",
            *(n for n in (self.pairing_note, self.run_variation_note) if n),
            "Peak memory is a maximum: its change is shown, not tested.",
            "A verdict is better or worse only when the interval excludes zero and the change exceeds the "
            f"practical threshold ({self.tolerance.describe('seconds')} for latency, "
            f"{self.tolerance.describe('tokens/s')} for throughput, {self.tolerance.describe('bytes')} for memory, "
            f"{self.tolerance.describe('rate')} for rates); within tolerance only when the whole interval lies inside "
            "the threshold; otherwise inconclusive: these runs cannot tell a change of the threshold's size from none.",
            f"{detectable.DEFINITION}",
        ]
        if self.sample_changes is not None:
            notes.append(
                f"Samples whose outcome changed: {self.sample_changes.method}, a family-wise "
                f"{confidence_text(self.sample_changes.confidence)} over the {self.sample_changes.tested} "
                "sample(s) both sides attempted."
            )
        if len(self.baseline.run_ids) == 1 and len(self.candidate.run_ids) == 1:
            notes.append(
                "One run per side: run-to-run variation was not measured, so the intervals cover the samples "
                "and trials of these two runs only, not how a repeat of either run would differ."
            )
        return tuple(notes)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "label": self.label,
            "title": self.title,
            "rule": self.rule,
            "rule_description": self.rule_description,
            "strict_os": self.strict_os,
            "speed_comparable": self.speed_comparable,
            "speed_note": None if self.speed_comparable else SPEED_NOTE,
            "confidence": self.confidence,
            "figure_confidence": self.figure_confidence,
            "multiplicity": self.multiplicity,
            "tested_figures": self.tested_figures,
            "methods": list(self.method_notes),
            "verdicts": dict(tol.VERDICT_MEANINGS),
            "smallest_detectable_change": {"definition": detectable.DEFINITION, "power": detectable.POWER},
            "baseline": self.baseline.to_json(),
            "candidate": self.candidate.to_json(),
            "differences": [x.to_json() for x in self.differences],
            "expected_differences": [x.to_json() for x in self.expected_differences],
            "verdict": self.verdict_sentence,
            "caveats": [c.to_json() for c in self.caveats],
            "dropped": [x.to_json() for x in self.dropped],
            "scenarios": [s.to_json() for s in self.scenarios],
            "sample_changes": self.sample_changes.to_json() if self.sample_changes else None,
        }

    def to_markdown(self) -> str:
        return comparison_text.markdown(self)

    def to_text(self) -> str:
        return comparison_text.text(self)

