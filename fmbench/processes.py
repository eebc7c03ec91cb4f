"""Other processes: whether one that left a folder behind (a build's staging) still runs."""

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
