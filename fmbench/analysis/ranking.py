"""Putting devices in order: ranks with ties, and the quality × speed Pareto front.

A leaderboard orders its entries by one figure, best first. Two entries next to each other are *tied* when the
interval on their difference holds zero (the runs cannot tell them apart): the lower one then shows the rank
of the one above it, so a tie carries down a chain (A tied with B, B tied with C: all three share A's rank,
even where A and C alone would be told apart; the words say which neighbours are tied). After a tie the next
entry that is told apart from its neighbour takes its place in the order (1, 1, 3), as sports tables do.
An entry without a value is not ranked and comes last.

The Pareto front of a quality × speed chart holds each entry that no other entry beats on both at once: none
has at least its quality and at most its latency with one of the two strictly better.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

T = TypeVar("T")
Better = Literal["higher", "lower"]


@dataclass(frozen=True)
class Ranked(Generic[T]):
    """One entry in its place: its rank (``None``: no value, not ranked) and whether it is tied with the entry
    above it."""

    item: T
    rank: int | None
    tied_above: bool = False
    tied_below: bool = False

    @property
    def tied(self) -> bool:
        return self.tied_above or self.tied_below


def rank(
    items: Sequence[T],
    value: Callable[[T], float | None],
    better: Better,
    tied: Callable[[T, T], bool],
) -> list[Ranked[T]]:
    """``items`` best first by ``value`` (ties of equal values kept in the order given), each with its rank.

    ``tied(above, below)`` says whether two neighbours cannot be told apart (their difference's interval holds
    zero); it is asked only of neighbours that both have a value."""
    valued = [i for i in items if value(i) is not None]
    order = sorted(valued, key=lambda i: value(i) if better == "lower" else -(value(i) or 0.0))  # type: ignore[arg-type,operator]
    ties = [tied(a, b) for a, b in itertools.pairwise(order)]
    out: list[Ranked[T]] = []
    for position, item in enumerate(order):
        above = position > 0 and ties[position - 1]
        below = position < len(ties) and ties[position]
        place = out[-1].rank if above else position + 1
        out.append(Ranked(item, place, above, below))
    out += [Ranked(i, None) for i in items if value(i) is None]
    return out


def pareto_front(points: Sequence[tuple[float | None, float | None]]) -> list[bool]:
    """Per point ``(latency, quality)`` (lower latency and higher quality are better), whether it is on the
    front. A point missing either value is never on it and never beats another."""
    whole = [(x, y) for x, y in points if x is not None and y is not None and not (math.isnan(x) or math.isnan(y))]

    def beaten(x: float, y: float) -> bool:
        return any(ox <= x and oy >= y and (ox < x or oy > y) for ox, oy in whole)

    return [
        x is not None and y is not None and (x, y) in whole and not beaten(x, y)
        for x, y in points
    ]


def percentile_bounds(resampled: Sequence[float], confidence: float) -> tuple[float, float]:
    """The ``α/2`` and ``1 − α/2`` nearest-rank percentiles of one side's resampled figure: the interval of the
    figure itself (the same rule :mod:`fmbench.analysis.stats` takes of resampled differences)."""
    ordered = sorted(resampled)
    if not ordered:
        raise ValueError("no resamples to take an interval of")
    alpha = 1 - confidence
    n = len(ordered)
    low = ordered[min(max(math.ceil(alpha / 2 * n) - 1, 0), n - 1)]
    high = ordered[min(max(math.ceil((1 - alpha / 2) * n) - 1, 0), n - 1)]
    return float(low), float(high)
