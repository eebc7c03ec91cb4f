"""The site context: what every view is given (the database, the URL builder, the revision registry)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import duckdb

from fmbench.caches import Caches
from fmbench.render import Renderer
from fmbench.revisions import Registry
from fmbench.tolerance import DEFAULT_TOLERANCE, Tolerance
from fmbench.urls import SitePaths, segments_of


@dataclass
class SiteContext:
    """What every view needs: the database, the URL builder and the revision registry.

    ``memo`` keeps results that several pages of one build (or one request) share,
    such as the regression report, so they are computed once.
    """

    con: duckdb.DuckDBPyConnection
    renderer: Renderer
    registry: Registry
    memo: dict[str, Any] = field(default_factory=dict)
    methodology: str = ""
    """The publisher's methodology notes (Markdown), merged into fmbench's on the methodology page."""
    source_links: dict[str, str] = field(default_factory=dict)
    """Run id -> where its file can be browsed in the publisher's repository (a project's)."""
    originals: str = "gzip"
    """How the site carries the original run files: ``gzip`` (each gzipped, byte-identical once decompressed),
    ``link`` (to the file in the publisher's repository, no copy) or ``copy`` (as ingested)."""
    bulk: bool = False
    """True in the static build: one run's trial details are kept for all of its pages and data files."""
    tolerance: Tolerance = DEFAULT_TOLERANCE
    """The practical threshold comparisons apply (a project's ``[publishing.practical_change]``)."""
    caches: Caches = field(default_factory=Caches)
    """What the comparisons of this build or server keep (:class:`fmbench.caches.Caches`): made by the build (with its
    comparison cache) or the server's application factory, each with the resample store beside its database."""
    _run_trials: Any = None

    def once(self, key: str, compute: Callable[[], Any]) -> Any:
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]

    def run_catalog(self) -> Any:
        """In a bulk build, every run's :class:`fmbench.selection.RunInfo`, read once for all the comparisons the build
        selects sides for; otherwise ``None``: a request reads the database as it is."""
        if not self.bulk:
            return None
        from fmbench.selection import RunCatalog

        return self.once("run_catalog", lambda: RunCatalog.read(self.con))

    def run_trials(self, run_id: str) -> Any:
        """In a bulk build, what all trial pages and files of ``run_id`` read (:class:`fmbench.views.runs.RunTrials`,
        the last run asked for is kept); otherwise ``None``, and each page reads only its own trials."""
        if not self.bulk:
            return None
        if self._run_trials is None or self._run_trials.run_id != run_id:
            from fmbench.views.runs import every_run, run_trials

            self._run_trials = run_trials(self.con, run_id, every_run(self))
        return self._run_trials

    def original(self, run_id: str, file_name: str, sha256: str) -> tuple[str, str, str] | None:
        """The original run file as the site carries it under its originals policy: ``(label, href, note)``,
        or ``None`` when it is linked and the run has no link to the publisher's repository."""
        from fmbench import urls

        if self.originals == "link":
            link = self.source_links.get(run_id)
            if link is None:
                return None
            return file_name, link, f"in the publisher's repository; SHA-256 {sha256}"
        if self.originals == "gzip":
            return (
                f"{file_name}.gz", self.url(urls.data_source_gzip(run_id, file_name)),
                f"gzip; decompresses to the exact bytes ingested, SHA-256 {sha256}",
            )
        return file_name, self.url(urls.data_source(run_id, file_name)), f"byte-identical to what was ingested, SHA-256 {sha256}"

    @property
    def paths(self) -> SitePaths:
        """The path segment of every device, OS build and scenario of the site, read once (per build, or per database
        state in ``serve``): the one way a view turns a name into a path, and a request path back to a name."""
        return SitePaths(lambda kind: self.once(f"site_paths:{kind}", lambda: segments_of(self.con, kind)))

    @property
    def url(self) -> Callable[[str], str]:
        return self.renderer.url
