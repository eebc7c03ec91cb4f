"""What the bootstrap of :mod:`fmbench.analysis.stats` asks of the memory its caller keeps resamples in.

The owner of that memory (a build, a build worker, a server, one ``fmbench compare``) makes a
:class:`fmbench.comparison.resample_store.Resamples` and hands it down as ``kept=``; this layer names it only by
what it reads and calls, so it never imports the comparison layer above it.
"""

from __future__ import annotations

from typing import Any, Protocol


class KeptResamples(Protocol):
    """A side's resampled figures by the digest of its values: in memory, and in ``store`` when the owner has one
    (its ``load`` and ``save`` keep them beside the database)."""

    @property
    def store(self) -> Any: ...

    def recall(self, digest: bytes, which: tuple[float, ...] | str) -> Any:
        """What was kept in memory for a side's ``which`` (quantile levels, or ``"mean"``), or ``None``."""
        ...

    def remember(self, digest: bytes, which: tuple[float, ...] | str, found: Any, *, drawn: bool = False) -> None:
        """Keep ``found`` for the side's ``which``; ``drawn``: it was resampled just now."""
        ...
