"""Peak memory of fmbench meeting files it must not read whole: /dev/zero and a million-row artifact.

Each command runs as its own process, started by a small parent process that reports the peak resident
memory of its child (``RUSAGE_CHILDREN``), so every figure is one command's alone. Prints one JSON object a
line: the command, its exit status, seconds and peak MiB.

    python benchmarks/hostile_reading.py [--rows 1000000] [--full]

``--full`` also times the artifact read whole (both limits raised) by ``native samples`` and ``native
convert``, which takes a few minutes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_MEASURE = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode\n"
    "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def write_artifact(path: Path, rows: int) -> Path:
    """A result document of ``rows`` rows of about 50 bytes each."""
    with path.open("w", encoding="utf-8") as f:
        f.write('{"evaluationID": "E1", "resultID": "R1", "results": [')
        for i in range(rows):
            f.write(("," if i else "") + '{"Input": "{}", "Score": {"kind": "score", "value": ' + str(i % 2) + "}}")
        f.write("]}")
    return path


def measure(label: str, *args: str) -> dict[str, object]:
    command = [sys.executable, "-m", "fmbench", *args]
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _MEASURE, *command], capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - started
    code, peak_kib = (int(x) for x in out.stdout.split())
    return {"case": label, "exit": code, "seconds": round(seconds, 2), "peak_mib": round(peak_kib / 1024)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--full", action="store_true", help="also read the artifact whole, both limits raised")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        artifact = write_artifact(Path(tmp) / "big.xcevalresult", options.rows)
        size = artifact.stat().st_size
        print(json.dumps({"artifact_rows": options.rows, "artifact_bytes": size}))
        link = Path(tmp) / "run.json"
        link.symlink_to("/dev/zero")
        cases = [
            ("summarize /dev/zero", "summarize", "/dev/zero"),
            ("summarize a link to /dev/zero", "summarize", str(link)),
            ("native samples, default limits", "native", "samples", str(artifact)),
            ("native ingest, default limits", "native", "ingest", str(artifact), "--db", str(Path(tmp) / "x.duckdb")),
            ("native samples, --max-bytes raised (the row limit refuses)",
             "native", "samples", str(artifact), "--max-bytes", str(size)),
        ]
        if options.full:
            raised = ("--max-bytes", str(size), "--max-rows", str(options.rows))
            cases.append(("native samples, both limits raised (every row read)",
                          "native", "samples", str(artifact), *raised))
            cases.append(("native convert to JSON Lines, both limits raised (every row read)",
                          "native", "convert", str(artifact), str(Path(tmp) / "big.jsonl"), *raised))
        for label, *args in cases:
            print(json.dumps(measure(label, *args)), flush=True)


if __name__ == "__main__":
    main()
