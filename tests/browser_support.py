"""Real servers and a real headless Chromium for browser tests (Debian's chromium, driven by Playwright)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def chromium_path() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail("Debian's chromium is not installed: `make test` installs it (apt-get install chromium)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"{url} did not answer within {timeout:.0f} s")


@contextmanager
def process(args: list[str], url: str, cwd: Path | None = None) -> Iterator[subprocess.Popen[bytes]]:
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(args, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
        try:
            try:
                wait_for(url)
            except AssertionError:
                log.seek(0)
                raise AssertionError(f"{args[0]} did not start: {log.read().decode(errors='replace')[-2000:]}") from None
            yield proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextmanager
def static_server(folder: Path) -> Iterator[str]:
    """Any static host will do; Python's own serves the built folder as one would."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    with process([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(folder)], url):
        yield url


@contextmanager
def fmbench_server(db: Path, watch: Path | None = None, *options: str) -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    exe = str(Path(sys.executable).parent / "fmbench")
    args = [exe, "serve", "--db", str(db), "--port", str(port), *options]
    if watch is not None:
        args += ["--watch", str(watch)]
    with process(args, url):
        yield url


DRAW_EVERY_CHART = """async (timeout) => {
  const shown = p => (p.checkVisibility ? p.checkVisibility() : p.offsetParent !== null);  // not in a closed <details>
  const plots = Array.from(document.querySelectorAll('[data-chart]')).filter(shown);
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  for (const p of plots) {
    p.scrollIntoView({block: 'center'});
    const t0 = performance.now();
    while (!p.querySelector('.main-svg') && !p.hidden && performance.now() - t0 < timeout) await sleep(50);
  }
  window.scrollTo(0, 0);
  return plots.filter(p => !p.querySelector('.main-svg')).map(p => p.dataset.chart);
}"""
"""Scrolls to each chart shown (charts.js draws a chart when it comes into view) and waits for it: the charts
left undrawn, by id."""


def draw_every_chart(page: Any, timeout_ms: int = 15000) -> list[str]:
    """Every chart the page shows, drawn (each scrolled into view in turn); returns those that were not."""
    return list(page.evaluate(DRAW_EVERY_CHART, timeout_ms))


AXE = Path(__file__).parent / "vendor" / "axe.min.js"
"""axe-core, vendored for the accessibility checks (tests/vendor/README.md)."""


def axe_violations(browser: Any, base: str, paths: list[str], scheme: str) -> dict[str, list[str]]:
    """axe-core's default rules on each page under ``base``, in the ``light`` or ``dark`` scheme:
    the violations found, by path (a chart is drawn first, perhaps in a section not yet opened)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    context.add_init_script(path=str(AXE))
    page = context.new_page()
    found: dict[str, list[str]] = {}
    try:
        for path in paths:
            response = page.goto(base + path, wait_until="networkidle")
            assert response is not None and response.status == 200, path
            assert draw_every_chart(page) == [], path
            violations = page.evaluate(
                "async () => (await axe.run(document)).violations.map("
                "v => v.id + ' (' + v.impact + '): ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', '))"
            )
            if violations:
                found[path] = violations
    finally:
        context.close()
    return found
