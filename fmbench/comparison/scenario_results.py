"""What a comparison gives per figure and per scenario (a :class:`~fmbench.comparison.results.Comparison` holds
them), with their JSON.

They sit below :mod:`fmbench.comparison.text`, which words them, and :mod:`fmbench.comparison.results`, whose
comparison is worded by it: neither imports the other's module in a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from fmbench.analysis import detectable, stats
from fmbench.analysis import display as d

Better = Literal["higher", "lower"]
FigureVerdict = Literal[
    "better",
    "worse",
    "inconclusive",
    "within tolerance",
    "not recorded",
    "not comparable",
    "too few trials",
    "not tested",
    "no measured trial",
]


@dataclass(frozen=True)
class FigureComparison:
    key: str
    label: str
    unit: str
    better: Better
    """The direction that is better: ``higher`` or ``lower``."""
    baseline: float | None
    candidate: float | None
    delta: float | None
    """candidate − baseline; ``None`` when a side has no value or the figure is not comparable."""
    relative_delta: float | None
    """delta / |baseline|; ``None`` when the baseline is 0 or missing."""
    interval: stats.Interval | None
    verdict: FigureVerdict
    note: str | None = None
    baseline_absent: str = d.NOT_RECORDED
    """What the baseline's value reads when it has none: ``not recorded``, or ``no measured trial``."""
    candidate_absent: str = d.NOT_RECORDED
    too_few_to_tell: str | None = None
    """Beside an inconclusive figure whose smallest detectable change is above the practical threshold: that the
    runs were too few to tell, and which data would narrow it (:func:`fmbench.analysis.detectable.too_few_to_tell`)."""

    @property
    def smallest_detectable_change(self) -> float | None:
        """The true change detected 80% of the time at the interval's confidence, in the figure's unit
        (:mod:`fmbench.analysis.detectable`); ``None`` without an interval."""
        return detectable.smallest_detectable_change(self.interval)

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "unit": self.unit,
            "better": self.better,
            "baseline": self.baseline,
            "candidate": self.candidate,
            "delta": self.delta,
            "relative_delta": self.relative_delta,
            "interval": self.interval.to_json() if self.interval else None,
            "smallest_detectable_change": self.smallest_detectable_change,
            "verdict": self.verdict,
            "too_few_to_tell": self.too_few_to_tell,
            "note": self.note,
            "baseline_absent": None if self.baseline is not None else self.baseline_absent,
            "candidate_absent": None if self.candidate is not None else self.candidate_absent,
        }


@dataclass(frozen=True)
class ScenarioComparison:
    scenario_id: str
    title: str
    category: str | None
    baseline_trials: int
    baseline_attempts: int
    candidate_trials: int
    candidate_attempts: int
    figures: tuple[FigureComparison, ...]
    note: str | None = None

    def figure(self, key: str) -> FigureComparison:
        return next(f for f in self.figures if f.key == key)

    @property
    def paired(self) -> bool | None:
        """Its intervals paired by sample (:mod:`fmbench.analysis.pairing`): ``True`` when every one was, ``False``
        when one was not, ``None`` when it has no interval."""
        found = [f.interval.paired for f in self.figures if f.interval is not None]
        return all(found) if found else None

    @property
    def pairing(self) -> str | None:
        """Whether its intervals are paired by sample, as a reader reads it (``None``: it has no interval)."""
        if self.paired is None:
            return None
        if self.paired:
            return ("paired by sample: both sides ran the same samples (one run a side, ten or more samples: the change on "
                    "them, from their trials' noise; else drawn once per resample for both)")
        tested = [f for f in self.figures if f.interval is not None]
        unpaired = [f.label for f in tested if not f.interval or not f.interval.paired]
        if len(unpaired) == len(tested):
            return "not paired by sample: the sides did not run the same samples, so each side's are resampled alone"
        return (f"partly paired by sample: {', '.join(unpaired)} not paired (the sides did not record it for the same "
                "samples, so each side's are resampled alone)")

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario_id": self.scenario_id,
            "title": self.title,
            "category": self.category,
            "baseline": {"trials": self.baseline_trials, "attempts": self.baseline_attempts},
            "candidate": {"trials": self.candidate_trials, "attempts": self.candidate_attempts},
            "note": self.note,
            "paired": self.paired,
            "pairing": self.pairing,
            "figures": [f.to_json() for f in self.figures],
        }


@dataclass(frozen=True)
class DroppedScenario:
    scenario_id: str
    title: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"scenario_id": self.scenario_id, "title": self.title, "reason": self.reason}
