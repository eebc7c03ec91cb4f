"""``fmbench serve``'s socket: a bind that fails is one line naming the address, and slow clients starve no one.

Real sockets on 127.0.0.1 and a real waitress server (``fmbench serve`` in a process of its own); the
address that is not on this machine (192.0.2.1, TEST-NET-1) is only ever bound to, never sent to.
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from fmbench.cli import main
from fmbench.ingest import ingest_paths
from fmbench.serving.listener import CONNECTION_LIMIT, REQUEST_DEADLINE

from browser_support import fmbench_server, free_port
from testdata import RUNS

SLOW_CLIENTS = 150


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("serve-socket") / "serve.duckdb"
    assert ingest_paths([RUNS / "purpose-current.json"], path).ok
    return path


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def test_serve_on_a_port_in_use_is_one_line_naming_the_address(db: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, out = invoke("serve", "--db", str(db), "--port", str(port))
    assert code == 1 and "Traceback" not in out and "Errno" not in out
    assert out == f"Error: cannot listen on 127.0.0.1:{port}: the port is in use by another program; stop it or choose another --port\n"


def test_serve_on_an_address_not_on_this_machine_is_one_line_naming_it(db: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("192.0.2.1", 0))
        except OSError:
            pass
        else:
            pytest.skip("this machine has the documentation address 192.0.2.1")
    port = free_port()
    code, out = invoke("serve", "--db", str(db), "--host", "192.0.2.1", "--port", str(port))
    assert code == 1 and "Traceback" not in out and "Errno" not in out
    assert out.splitlines() == [
        f"Error: cannot listen on 192.0.2.1:{port}: the address is not one of this machine's; "
        "give --host an address it has (127.0.0.1 by default)"
    ]


class _Dribblers:
    """Connections that each send a request line, then one header line at a time, never the blank line."""

    def __init__(self, port: int, count: int) -> None:
        self.sockets = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(count)]
        for s in self.sockets:
            s.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
        self.closed_by_server: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._dribble, daemon=True)
        self._thread.start()

    def _dribble(self) -> None:
        n = 0
        while not self._stop.wait(0.5):
            n += 1
            for i, s in enumerate(self.sockets):
                if i in self.closed_by_server:
                    continue
                try:
                    s.sendall(f"X-Slow-{n}: a\r\n".encode())
                except OSError:  # the server closed it
                    self.closed_by_server.add(i)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        for s in self.sockets:
            s.close()


@pytest.fixture
def server(db: Path) -> Iterator[int]:
    with fmbench_server(db) as url:
        yield int(url.rsplit(":", 1)[1].strip("/"))


def _get(port: int, timeout: float) -> tuple[int, float]:
    start = time.monotonic()
    con = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        con.request("GET", "/", headers={"Host": f"127.0.0.1:{port}"})
        response = con.getresponse()
        response.read()
        return response.status, time.monotonic() - start
    finally:
        con.close()


def test_serve_keeps_answering_while_150_slow_clients_dribble_a_request(server: int) -> None:
    assert SLOW_CLIENTS < CONNECTION_LIMIT
    slow = _Dribblers(server, SLOW_CLIENTS)
    try:
        time.sleep(1.0)  # every slow client has sent more than its first line and is being held
        for _ in range(3):
            status, seconds = _get(server, timeout=5)
            assert status == 200 and seconds < 5
        # A request begun REQUEST_DEADLINE seconds ago and still not whole is closed, though it never fell idle.
        deadline = time.monotonic() + REQUEST_DEADLINE + 10
        while len(slow.closed_by_server) < SLOW_CLIENTS and time.monotonic() < deadline:
            time.sleep(0.5)
        assert len(slow.closed_by_server) == SLOW_CLIENTS
        status, _ = _get(server, timeout=5)
        assert status == 200
    finally:
        slow.close()
