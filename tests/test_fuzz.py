"""A short libFuzzer run (atheris) of the run-file reader in the normal suite: only RunFileError escapes.

The harness is tests/fuzz/fuzz_run_reader.py; run it by hand for longer. Here it
runs for a fixed number of seconds from a seed corpus of the committed good and
bad files, and any other exception (or a refusal naming no place) fails it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testdata import BAD, REPO, RUNS

pytest.importorskip("atheris", reason="atheris has wheels for x86-64 Linux only (the test extra installs it there)")

HARNESS = REPO / "tests" / "fuzz" / "fuzz_run_reader.py"
SECONDS = 6


def test_a_time_boxed_fuzz_of_the_run_file_reader_lets_only_run_file_errors_escape(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for seed in [RUNS / "purpose-current.json", *sorted(BAD.glob("*.json"))]:
        shutil.copy(seed, corpus / seed.name)
    result = subprocess.run(
        [
            sys.executable, "-P", str(HARNESS), str(corpus),
            f"-max_total_time={SECONDS}", "-seed=1", "-max_len=32768", "-timeout=30", "-rss_limit_mb=2048",
            f"-artifact_prefix={tmp_path}/", "-print_final_stats=1",
        ],
        capture_output=True, text=True, check=False, timeout=SECONDS + 60,
    )
    log = result.stderr[-4000:]
    assert result.returncode == 0, log
    assert "Done " in result.stderr and " runs in " in result.stderr, log
    assert not list(tmp_path.glob("crash-*")) and not list(tmp_path.glob("timeout-*")), log
    runs = int(result.stderr.rsplit("Done ", 1)[1].split(" runs", 1)[0])
    assert runs > 500, log
