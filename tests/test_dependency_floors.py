"""The minimum versions ``pyproject.toml`` declares are true: with every direct dependency at its floor, fmbench
ingests the fixture corpus, builds its site, serves it and compares two of its runs.

Marked ``packaging``: it installs this checkout into a fresh venv with a constraints file pinning each runtime
dependency to ``==floor`` (pip's cache makes a second run quick), so it needs the package index.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest
from packaging.version import Version

from testdata import FIXTURES, REPO

BASELINE = "iphone-17-pro-ios27-24a5256a-on-device-performance-2026-10-29.json"
CANDIDATE = "iphone-17-pro-ios27-24a5264n-on-device-performance-2026-11-03.json"


def floors() -> dict[str, str]:
    """Each runtime dependency's declared floor (``name>=floor``), by name."""
    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    found = {}
    for requirement in declared:
        match = re.match(r"([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9.]*)", requirement)
        assert match, f"{requirement!r}: a runtime dependency declares its floor as name>=VERSION"
        found[match[1]] = match[2]
    return found


def run(*args: str | Path, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, check=False,
                          timeout=timeout, env={"PATH": "/usr/bin:/bin", "HOME": str(cwd)})


def test_every_runtime_dependency_declares_a_floor() -> None:
    assert len(floors()) == len(
        tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"])


@pytest.mark.packaging
def test_fmbench_ingests_builds_serves_and_compares_with_every_dependency_at_its_declared_floor(tmp_path: Path) -> None:
    constraints = tmp_path / "floors.txt"
    constraints.write_text("".join(f"{name}=={floor}\n" for name, floor in floors().items()), encoding="utf-8")
    venv = tmp_path / "venv"
    made = run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    installed = run(sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--constraint", constraints,
                    REPO, cwd=tmp_path)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    listed = run(sys.executable, "-m", "pip", "--python", python, "list", "--format=freeze", cwd=tmp_path)
    versions = dict(line.lower().replace("_", "-").split("==", 1) for line in listed.stdout.splitlines() if "==" in line)
    for name, floor in floors().items():
        assert Version(versions[name.lower().replace("_", "-")]) == Version(floor), (name, floor, versions)

    fmbench = (python, "-P", "-m", "fmbench")
    db, out = tmp_path / "floors.duckdb", tmp_path / "site"
    demo = run(*fmbench, "demo", "--no-serve", "--db", db, "--out", out, cwd=tmp_path)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert (out / "index.html").is_file()

    compared = run(*fmbench, "compare", "--db", db, FIXTURES / BASELINE, FIXTURES / CANDIDATE, cwd=tmp_path)
    assert compared.returncode == 0, compared.stdout[-3000:] + compared.stderr[-3000:]
    assert compared.stdout.strip()

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([*map(str, fmbench), "serve", "--db", str(db), "--port", str(port), "--no-warm-up"],
                              cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as response:
                    assert response.status == 200 and "</html>" in response.read().decode("utf-8")
                    break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "fmbench serve did not answer"
                time.sleep(0.3)
    finally:
        server.terminate()
        server.wait(timeout=10)
