"""Other processes: whether one that left a folder behind (a build's staging) still runs, and the checkpoints a
long step (an ingest, a build, a build's worker processes) says how far it got to."""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists (one of another user's counts as alive: its folder is not ours to clear)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


class Checkpoints:
    """Told each stage a long step reaches; this one does nothing with it.

    The stages are named by the step that reaches them (see :func:`fmbench.ingest.ingest_paths` and
    :func:`fmbench.publish.build.build_site`). A caller that wants to stop the step at a stage (a test proving
    that a kill there leaves everything whole) passes a subclass whose :meth:`reached` stops it. A build hands
    its checkpoints to its worker processes, so a subclass must pickle (plain attributes, a module-level class).
    """

    def reached(self, stage: str) -> None:
        """The step is at ``stage``: nothing happens."""


NO_CHECKPOINTS = Checkpoints()
"""The checkpoints every step reports to unless given others: none stops anything."""
