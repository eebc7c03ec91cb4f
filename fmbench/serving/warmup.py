"""serve warms itself: after it starts, the comparison pages are made in the background, at low priority.

A comparison's first request on a database no build has read resamples both its sides (thousands of two-stage
resamples each); that is about a second on a large corpus. :class:`WarmUp` asks the application for every
comparison page, one at a time on its own niced thread, before a reader does: each page goes through the same
view and response cache as a reader's request (the sides it resamples are kept in the resample store too), so a
reader's first visit after the warm-up is served from what it made. A page a reader asks for while the warm-up
is still running is rendered for that reader as it would be without one; the warm-up's own request of it then
waits for that rendering and finds it kept. The warm-up stops between two pages when the server stops.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from flask import Flask

from fmbench.views import PAGES
from fmbench.views.site import SiteContext

WARMED_KINDS = ("comparison", "device_comparison")
"""The page kinds whose first request resamples comparison sides."""
NICENESS = 10
"""How much lower than the serving threads the warm-up thread runs (where the system allows a thread its own)."""


def pages_to_warm(site: SiteContext) -> list[str]:
    """The site paths (``/compare/…/``) of every comparison page of the database as it is."""
    paths: list[str] = []
    for kind in PAGES:
        if kind.name in WARMED_KINDS:
            assert kind.path is not None
            paths.extend("/" + kind.path(**params) for params in kind.instances(site))
    return paths


@dataclass
class WarmUp:
    """The background warm-up of one application (start it once; stop it when the server stops)."""

    app: Flask
    paths: Callable[[], Iterable[str]]
    """The pages to make, listed when the warm-up starts."""
    host: str
    """A Host header the application answers for."""
    echo: Callable[[str], None] = print
    stopping: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    warmed: int = 0
    failed: int = 0
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="fmbench-warm-up", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self.stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        lower_own_priority()
        started = time.monotonic()
        try:
            client = self.app.test_client()
            for path in self.paths():
                if self.stopping.is_set():
                    return
                response = client.get(path, headers={"Host": self.host})
                if response.status_code == 200:
                    self.warmed += 1
                else:
                    self.failed += 1
                response.close()
            if not self.stopping.is_set():
                failed = f"; {self.failed} could not be made (see the server's log)" if self.failed else ""
                self.echo(f"warmed up: {self.warmed} comparison pages made in {time.monotonic() - started:.1f} s{failed}")
        except Exception as exc:  # a warm-up is an optimisation: a failure leaves the pages to be made on request
            self.echo(f"warm-up stopped: {exc}")
        finally:
            self.done.set()


def lower_own_priority() -> None:
    """Lower the calling thread's scheduling priority by :data:`NICENESS` (Linux schedules each thread on its own;
    elsewhere the call would lower the whole process, so it is left alone)."""
    if not hasattr(os, "setpriority") or not os.path.isdir(f"/proc/self/task/{threading.get_native_id()}"):
        return
    try:
        current = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), min(19, current + NICENESS))
    except OSError:
        pass
