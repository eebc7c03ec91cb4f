"""``fmbench build`` on a terminal shows its progress (resampling, then rendering, with counts) in 80 columns; never
when stderr is not a terminal, never with -q."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from testdata import FIXTURES

RUNS = sorted(FIXTURES.glob("*.json"))[:4]
ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def environment(home: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), "TERM": "xterm-256color", "COLUMNS": "80", "LINES": "24"}


def on_a_terminal(cwd: Path, *args: str) -> tuple[int, str, list[str]]:
    """Run fmbench with stderr on an 80-column pseudo-terminal: exit status, stdout, and every line the terminal
    was shown (each frame a bar drew, escapes taken out)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    process = subprocess.Popen([sys.executable, "-P", "-m", "fmbench", *args], cwd=cwd, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=follower, env=environment(cwd), text=True)
    os.close(follower)
    shown, deadline = b"", time.monotonic() + 600
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the terminal closed: every process holding it has exited
                    break
                if not chunk:
                    break
                shown += chunk
            elif process.poll() is not None:
                break
        out, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(leader)
    text = ESCAPE.sub("", shown.decode("utf-8", "replace"))
    return process.returncode, out, [line for line in re.split(r"[\r\n]+", text) if line.strip()]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    made = subprocess.run([sys.executable, "-P", "-m", "fmbench", "init", "p"], cwd=tmp_path, capture_output=True,
                          text=True, check=False, env=environment(tmp_path), timeout=120)
    assert made.returncode == 0, made.stderr
    for run in RUNS:
        shutil.copyfile(run, tmp_path / "p" / "runs" / run.name)
    return tmp_path / "p"


def test_build_on_a_terminal_shows_resampling_then_rendering_with_counts_in_80_columns(project: Path) -> None:
    code, out, lines = on_a_terminal(project, "build", "-j", "1")
    assert code == 0, lines
    rendering = [line for line in lines if line.startswith("rendering ")]
    assert rendering, lines
    counts = [tuple(map(int, m.groups())) for line in rendering if (m := re.search(r" (\d+)/(\d+) ", line))]
    assert counts and counts[-1][0] == counts[-1][1] > 0, rendering
    rendered = re.search(r", (\d+) rendered,", out)
    assert rendered and counts[-1][0] == int(rendered[1]), out
    resampling = [line for line in lines if line.startswith("resampling ")]
    assert resampling and all(re.search(r" \d+/\d+ ", line) for line in resampling), lines
    assert lines.index(resampling[0]) < lines.index(rendering[0])
    assert all(len(line) <= 80 for line in resampling + rendering), [len(line) for line in resampling + rendering]


def test_build_quiet_on_a_terminal_shows_no_progress(project: Path) -> None:
    code, _, lines = on_a_terminal(project, "build", "-j", "1", "-q")
    assert code == 0, lines
    assert not [line for line in lines if line.startswith(("rendering", "resampling", "ingesting"))], lines


def test_build_with_stderr_not_a_terminal_shows_no_progress(project: Path) -> None:
    done = subprocess.run([sys.executable, "-P", "-m", "fmbench", "build", "-j", "1"], cwd=project,
                          capture_output=True, text=True, check=False, env=environment(project), timeout=600)
    assert done.returncode == 0, done.stderr
    assert "rendering" not in done.stderr and "resampling" not in done.stderr and "\x1b[" not in done.stderr
