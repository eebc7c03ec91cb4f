"""The site context: what every view is given (the database, the URL builder, the revision registry)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import duckdb

from fmbench import urls
from fmbench.analysis.revisions import Registry
from fmbench.analysis.tolerance import DEFAULT_TOLERANCE, Tolerance
from fmbench.comparison.caches import Caches
from fmbench.comparison.evidence import EvidenceIndex
from fmbench.comparison.history_changes import ChangeList, list_changes
from fmbench.comparison.regressions import RegressionReport, find_build_changes
from fmbench.comparison.selection import RunCatalog
from fmbench.storage.queries import scenario_titles
from fmbench.urls import SitePaths, segments_of
from fmbench.views.render import Renderer
from fmbench.views.run_queries import RunData

_EVIDENCE = "evidence"
_REGRESSIONS = "regressions"
_CHANGE_LIST = "change_list"
"""Where :meth:`SiteContext.evidence` and :meth:`SiteContext.regressions` keep what they made (the memo ``serve``
shares between the requests of one database state)."""


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
    tolerance: Tolerance = DEFAULT_TOLERANCE
    """The practical threshold comparisons apply (a project's ``[publishing.practical_change]``)."""
    caches: Caches = field(default_factory=Caches)
    """What the comparisons of this build or server keep (:class:`fmbench.comparison.caches.Caches`): made by the build (with its
    comparison cache) or the server's application factory, each with the resample store beside its database."""
    run_data: RunData = field(init=False)
    """What the run pages and data files ask of the per-run tables: about the runs asked for (a request), or about
    every run at once (a static build's, :class:`~fmbench.views.run_queries.RunData` made with ``every_run``)."""
    _kept: dict[str, tuple[str, Any]] = field(default_factory=dict)
    _once_lock: threading.RLock = field(default_factory=threading.RLock)

    def __post_init__(self) -> None:
        self.run_data = RunData(self.con)

    def once(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()``, made once for this build or request. A comparison's sections run on threads, each with
        its cursor, and may ask for the same thing together: one computes it (on :attr:`con`, which serves one
        call at a time) while the others wait."""
        if key in self.memo:
            return self.memo[key]
        with self._once_lock:
            if key not in self.memo:
                self.memo[key] = compute()
            return self.memo[key]

    def kept(self, kind: str, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()`` for ``key``, kept until a ``key`` of another value is asked for under the same ``kind``
        (one run's trials, which all of its pages and files read: every run's would not fit in memory)."""
        found = self._kept.get(kind)
        if found is None or found[0] != key:
            self._kept.pop(kind, None)  # let the previous one go before the next is read
            found = self._kept[kind] = (key, compute())
        return found[1]

    def forget_kept(self) -> None:
        """Let go of everything :meth:`kept` holds."""
        self._kept.clear()

    def run_catalog(self) -> RunCatalog:
        """Every run's :class:`fmbench.comparison.selection.RunInfo`, read once for all the comparisons a build (or a request,
        or ``serve`` while the database stays as it is) selects sides for."""
        catalog: RunCatalog = self.once("run_catalog", lambda: RunCatalog.read(self.con))
        return catalog

    def evidence(self) -> EvidenceIndex:
        """Which runs stand for every device, configuration and OS build (:mod:`fmbench.comparison.evidence`): the
        one selection every page asks, made once per build or request from :meth:`run_catalog`."""
        index: EvidenceIndex = self.once(_EVIDENCE, lambda: EvidenceIndex.of(self.run_catalog()))
        return index

    def regressions(self) -> RegressionReport:
        """Every build step of every device and configuration (each side its :meth:`evidence`), made once per build
        or request, or the one the build made and :meth:`keep_regressions` gave."""
        report: RegressionReport = self.once(
            _REGRESSIONS, lambda: find_build_changes(self.con, tolerance=self.tolerance, caches=self.caches)
        )
        return report

    def change_list(self) -> ChangeList:
        """The change points of every build history and the samples whose outcome changed, each family under its
        own false-discovery control (:mod:`fmbench.comparison.history_changes`): what home, `/regressions/` and
        its feed list, made once per build or request from :meth:`evidence` and :meth:`regressions`."""
        found: ChangeList = self.once(_CHANGE_LIST, lambda: list_changes(
            self.con, self.regressions(), index=self.evidence(), caches=self.caches,
            titles={sid: self.scenario_title(sid) for sid in self._titles()},
        ))
        return found

    def _titles(self) -> dict[str, str]:
        titles: dict[str, str] = self.once("scenario_titles", lambda: scenario_titles(self.con))
        return titles

    def keep_regressions(self, report: RegressionReport) -> None:
        """The build's regression report (made device by device, some reused from the previous build)."""
        with self._once_lock:
            self.memo[_REGRESSIONS] = report

    def scenario_title(self, scenario_id: str, own: str | None = None) -> str:
        """The one name of a workload on every page (the newest run's title of it,
        :func:`fmbench.storage.queries.scenario_titles`, read once per build or request); ``own``, then its id,
        for a scenario no run measured."""
        titles: dict[str, str] = self.once("scenario_titles", lambda: scenario_titles(self.con))
        return titles.get(scenario_id) or own or scenario_id

    def original(self, run_id: str, file_name: str, sha256: str) -> tuple[str, str, str] | None:
        """The original run file as the site carries it under its originals policy: ``(label, href, note)``,
        or ``None`` when it is linked and the run has no link to the publisher's repository."""

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
