"""What one build, one build worker, one server or one ``fmbench compare`` keeps while it compares.

A :class:`Caches` is made by its owner and passed down explicitly, through
:class:`fmbench.views.site.SiteContext` (``caches``) to the comparisons a page
makes, and from there (:func:`fmbench.comparison.compare.compare_selected`'s ``caches``) to
the resampling of :mod:`fmbench.analysis.stats`. No module keeps one of its own, so two
owners in one process (two tests, a server beside a build) never share or see
each other's: they share only the resample store's files beside their database.

- ``resamples``: the sides resampled, in memory and in the store beside the
  database (:class:`fmbench.comparison.resample_store.Resamples`, arrays in NumPy's
  ``.npz``).
- ``comparisons``: a static build's comparisons, read from and written to its
  records beside the database (:class:`fmbench.comparison.cache.ComparisonCache`,
  JSON); ``None`` anywhere else.

Every stored form is JSON or ``.npz`` with a format version: an entry of another
version, or one that cannot be read, is ignored and worked out again. Nothing of
a cache is ever unpickled.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fmbench.comparison.resample_store import Resamples, store_for

if TYPE_CHECKING:
    from fmbench.comparison.cache import ComparisonCache


@dataclass
class Caches:
    """The caches of one owner (see the module's documentation)."""

    resamples: Resamples = field(default_factory=Resamples)
    comparisons: ComparisonCache | None = None

    @classmethod
    def beside(cls, source: str | os.PathLike[str] | None) -> Caches:
        """Caches whose resamples are kept in the store beside a database file or local dataset (if it has one)."""
        return cls(Resamples(store_for(source)))
