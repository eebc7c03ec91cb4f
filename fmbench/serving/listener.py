"""The socket ``fmbench serve`` listens on: waitress, its settings in one place, and a bind that fails in one line.

Clients that hold connections open without finishing a request (slowloris: a request line sent a byte
or a line at a time) must not starve the others. waitress takes at most :data:`CONNECTION_LIMIT`
connections and closes one that says nothing for :data:`CHANNEL_TIMEOUT` seconds; a client that keeps
sending a little, so never falls idle, is closed once a request it began has taken
:data:`REQUEST_DEADLINE` seconds without arriving whole. docs/security.md lists these settings.
"""

from __future__ import annotations

import errno
import time
from typing import Any

from waitress.channel import HTTPChannel
from waitress.server import BaseWSGIServer, create_server
from waitress.task import ThreadedTaskDispatcher
from waitress.wasyncore import close_all

from fmbench.errors import FmbenchError

CONNECTION_LIMIT = 200
"""Connections open at once (waitress's default is 100); past it, new ones wait to be accepted. Kept under
macOS's default limit of 256 open files per process."""
CHANNEL_TIMEOUT = 15
"""Seconds a connection may send nothing (idle between requests, or stalled in one) before it is closed
(waitress's default is 120)."""
REQUEST_DEADLINE = 10
"""Seconds a request may take to arrive whole from its first byte (serve takes only GET requests, their
headers a few KiB); a client still sending after that is closed."""
CLEANUP_INTERVAL = 1
"""How often, in seconds, waitress looks for connections past their time (waitress's default is 30)."""
THREADS = 8
"""Requests answered at once."""

SETTINGS: dict[str, Any] = {
    "connection_limit": CONNECTION_LIMIT,
    "channel_timeout": CHANNEL_TIMEOUT,
    "cleanup_interval": CLEANUP_INTERVAL,
    "asyncore_use_poll": True,  # select() cannot watch a socket numbered past 1023
    "ident": "fmbench",
}


class ServeError(FmbenchError):
    """The server cannot listen where it was asked to."""


class _DeadlineChannel(HTTPChannel):
    """waitress's connection, closed when a request it began has not arrived whole within :data:`REQUEST_DEADLINE`.

    waitress's own timeout counts from the last byte received, so a client that sends one byte a second
    holds its connection for ever; this one counts from a request's first byte.
    """

    request_began: float | None = None

    def received(self, data: bytes) -> bool:
        began = self.request_began if self.request is not None else time.monotonic()
        accepted = bool(super().received(data))
        self.request_began = began if self.request is not None else None  # None: nothing half-received
        return accepted

    def readable(self) -> bool:
        # waitress asks every connection this at each turn of its loop (at least once a second).
        if self.request_began is not None and time.monotonic() - self.request_began > REQUEST_DEADLINE:
            self.request_began = None
            self.will_close = True  # waitress closes the connection at its next turn, as for its own timeout
        return bool(super().readable())


def _reason(exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return "the port is in use by another program; stop it or choose another --port"
    if exc.errno == errno.EADDRNOTAVAIL:
        return "the address is not one of this machine's; give --host an address it has (127.0.0.1 by default)"
    if exc.errno == errno.EACCES:
        return "not permitted (ports below 1024 need privileges); choose a --port from 1024 up"
    return exc.strerror or str(exc)


def listening_server(app: Any, host: str, port: int, *, threads: int = THREADS) -> Any:
    """A waitress server for ``app`` bound to ``host``:``port`` with :data:`SETTINGS`; ``.run()`` serves.

    A bind that fails (the port in use, an address not on this machine, a name that does not resolve)
    raises :class:`ServeError` naming the address.
    """
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    sockets: dict[int, Any] = {}
    workers = ThreadedTaskDispatcher()  # ours, so that a bind that fails leaves no thread behind
    workers.set_thread_count(threads)
    try:
        try:
            server = create_server(app, map=sockets, _dispatcher=workers, host=host, port=port, **SETTINGS)
        except OSError as exc:
            raise ServeError(f"cannot listen on {shown}: {_reason(exc)}") from None
        except ValueError as exc:  # waitress: a host or port it cannot resolve or parse
            raise ServeError(f"cannot listen on {shown}: {exc}") from None
    except ServeError:
        workers.shutdown(timeout=1)
        close_all(sockets)
        raise
    for listener in sockets.values():
        if isinstance(listener, BaseWSGIServer):
            listener.channel_class = _DeadlineChannel
    return server
