"""Per-sample tests: did one sample's pass rate change between two sides beyond chance?

A workload's task success is an average over its samples, so two prompts that went from passing every trial to
failing every trial can hide in a workload-level interval that still holds zero. Each sample is therefore tested
on its own, on its 2 × 2 table of passed and failed trials (baseline, candidate):

- **Fisher's exact test**, two-sided (:func:`fisher_exact`, scipy's ``fisher_exact``). With both margins fixed,
  the number of baseline passes is hypergeometric; the p-value is the probability, under "the sides do not differ",
  of every table with those margins that is no more probable than the one observed (scipy counts a table within a
  relative 1e-7 of the observed one's probability as a tie, which decides a tie of integer tables as exact
  arithmetic does; the tests check it against exact fractions).
- **Holm's step-down correction** (:func:`holm`) for the number of samples tested: with ``m`` p-values sorted
  ascending, the ``i``-th smallest (from 0) is rejected while it is at most ``α / (m − i)``; the first that is
  not stops the procedure. It keeps the chance of naming *any* unchanged sample below ``α`` (family-wise), as
  Bonferroni does, while rejecting at least as much.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

FISHER_METHOD = "Fisher's exact test, two-sided, on each sample's passed and failed trials"
HOLM_METHOD = "Holm's step-down correction for the number of samples tested"


def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """The two-sided p-value of Fisher's exact test on the table ``[[a, b], [c, d]]``.

    Rows are the sides (``a`` passed and ``b`` failed on one, ``c`` and ``d`` on the other). The p-value sums the
    hypergeometric probabilities of every table with the same margins whose probability is at most the observed
    table's. A table with an empty row or column has p = 1 (nothing could differ)."""
    if min(a, b, c, d) < 0:
        raise ValueError("a table of counts holds no negative count")
    if min(a + b, c + d, a + c, b + d) == 0:
        return 1.0
    # slow to import (scipy): only the per-sample tests need it
    from scipy.stats import fisher_exact as scipy_fisher

    return min(1.0, float(scipy_fisher([[a, b], [c, d]], alternative="two-sided")[1]))


@dataclass(frozen=True)
class HolmResult:
    adjusted: tuple[float, ...]
    """Each p-value adjusted (in the order given): ``max_{j ≤ i} min(1, (m − j) · p_(j))`` over the sorted ones."""
    rejected: tuple[bool, ...]
    """Whether each hypothesis is rejected at ``alpha`` (in the order given)."""


def holm(p_values: Sequence[float | Fraction], alpha: float) -> HolmResult:
    """Holm's step-down procedure on ``p_values`` at family-wise level ``alpha``.

    Ties keep their given order; a p-value is rejected exactly when its adjusted p-value is at most ``alpha``."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, not {alpha}")
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    rejected = [False] * m
    running = 0.0
    stopped = False
    for rank, i in enumerate(order):
        p = p_values[i]
        running = max(running, min(1.0, float((m - rank) * p)))
        adjusted[i] = running
        if not stopped and (m - rank) * p <= alpha:
            rejected[i] = True
        else:
            stopped = True
    return HolmResult(tuple(adjusted), tuple(rejected))
