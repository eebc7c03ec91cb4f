"""Lighthouse (mobile preset) on one page of every page kind of the fixture site, served locally, gzipped as a
static host serves it: prints each kind's performance and accessibility scores, with the total blocking time
and the largest contentful paint behind the performance score. A benchmark, never a test: the goal is
performance >= 95 and accessibility 100 on every page kind.

    python benchmarks/lighthouse.py [--site DIR] [--out benchmarks/out/lighthouse] [--kinds home,runs/*] [--cpu auto|4]

The CPU slowdown is scaled to the machine (``--cpu auto``, the default): Lighthouse's mobile preset slows a
fast desktop's CPU 4 times to stand for a phone; a machine that is already slower (a busy CI runner) is slowed
less, never below 1, from the benchmark index a first run measures. ``--cpu 4`` is Lighthouse's own setting.

Lighthouse 12.2.3 runs on Node (20 or newer) with Debian's chromium (``CHROME_PATH``, else ``chromium`` on the
PATH). Its command comes from ``FMBENCH_LIGHTHOUSE`` (the path of a ``lighthouse`` executable) or from a cache
folder outside the repository (``FMBENCH_LIGHTHOUSE_CACHE``, default ``~/.cache/fmbench/lighthouse``), where
``npm i -E lighthouse@12.2.3`` is run once when it is missing. Without ``--site``, the fixture corpus is
ingested and built into ``--out`` first.
"""

from __future__ import annotations

import argparse
import gzip
import json
import mimetypes
import os
import shutil
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "benchmarks" / "out" / "lighthouse"
LIGHTHOUSE_VERSION = "12.2.3"
WORDS = {"trials"}
"""Path segments that name a kind of page rather than one of its instances."""
COMPRESSED = {"text/html", "text/css", "text/javascript", "application/javascript", "application/json",
              "image/svg+xml", "text/plain", "application/atom+xml"}


def lighthouse_command() -> list[str]:
    given = os.environ.get("FMBENCH_LIGHTHOUSE")
    if given:
        return [given]
    cache = Path(os.environ.get("FMBENCH_LIGHTHOUSE_CACHE", Path.home() / ".cache" / "fmbench" / "lighthouse"))
    exe = cache / "node_modules" / ".bin" / "lighthouse"
    if not exe.exists():
        cache.mkdir(parents=True, exist_ok=True)
        print(f"installing lighthouse {LIGHTHOUSE_VERSION} into {cache} ...", file=sys.stderr)
        subprocess.run(["npm", "i", "-E", f"lighthouse@{LIGHTHOUSE_VERSION}", "--no-audit", "--no-fund"],
                       cwd=cache, check=True, stdout=subprocess.DEVNULL)
    return [str(exe)]


def chrome_path() -> str:
    found = os.environ.get("CHROME_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        raise SystemExit("no chromium: set CHROME_PATH")
    return found


def build_fixture_site(out: Path) -> Path:
    from fmbench.analysis.revisions import fixtures_registry
    from fmbench.ingest import ingest_paths
    from fmbench.publish.build import build_site

    registry = fixtures_registry()
    out.mkdir(parents=True, exist_ok=True)
    db = out / "fixtures.duckdb"
    site = out / "_site"
    if db.exists():
        db.unlink()
    shutil.rmtree(site, ignore_errors=True)
    report = ingest_paths([REPO / "fixtures" / "runs"], db, registry=registry)
    if not report.ok:
        raise SystemExit("the fixture corpus did not ingest")
    build_site(db, site, registry=registry)
    return site


def kind_of(path: str) -> str:
    parts = path.split("/")[:-1]  # ".../index.html"
    return "/".join(p if i == 0 or p in WORDS else "*" for i, p in enumerate(parts)) or "home"


def one_page_per_kind(site: Path) -> dict[str, str]:
    """Per page kind, one page: the first that draws a chart when the kind has one (the heavier first visit),
    else the first."""
    chosen: dict[str, tuple[bool, str]] = {}
    for page in sorted(site.rglob("index.html")):
        path = page.relative_to(site).as_posix()
        charted = "data-chart=" in page.read_text(encoding="utf-8")
        kind = kind_of(path)
        if kind not in chosen or (charted and not chosen[kind][0]):
            chosen[kind] = (charted, path.removesuffix("index.html"))
    return {kind: path for kind, (_, path) in sorted(chosen.items())}


class _Handler(SimpleHTTPRequestHandler):
    """Serves the site as a static host does: text gzipped when the browser accepts it."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            if not self.path.split("?")[0].endswith("/"):
                super().do_GET()
                return
            path = path / "index.html"
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if not path.is_file() or kind not in COMPRESSED or "gzip" not in self.headers.get("Accept-Encoding", ""):
            super().do_GET()
            return
        body = gzip.compress(path.read_bytes(), compresslevel=6)
        self.send_response(200)
        self.send_header("Content-Type", kind + ("; charset=utf-8" if kind.startswith("text/") else ""))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def serve(site: Path) -> tuple[ThreadingHTTPServer, str]:
    handler = lambda *a, **k: _Handler(*a, directory=str(site), **k)  # noqa: E731
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


REFERENCE_INDEX = 450
"""The benchmark index of the machine Lighthouse's mobile preset assumes (its CPU slowdown of 4 turns a desktop
of about 1,800 into a phone of about 450). On a slower or busier machine the slowdown is scaled down (never
below 1), or every figure of main-thread work is that much too high."""


def multiplier_for(benchmark_index: float) -> float:
    return round(min(4.0, max(1.0, benchmark_index / REFERENCE_INDEX)), 2)


def score(command: list[str], url: str, chrome: str, report: Path, cpu: float | None = None) -> dict[str, Any]:
    subprocess.run(
        [*command, url, "--only-categories=performance,accessibility", "--output=json", f"--output-path={report}",
         "--quiet", "--chrome-flags=--headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage",
         *([f"--throttling.cpuSlowdownMultiplier={cpu}"] if cpu is not None else [])],
        check=True, env={**os.environ, "CHROME_PATH": chrome},
    )
    result = json.loads(report.read_text(encoding="utf-8"))
    audits = result["audits"]
    return {
        "benchmark_index": round(result["environment"]["benchmarkIndex"]),
        "performance": round(result["categories"]["performance"]["score"] * 100),
        "accessibility": round(result["categories"]["accessibility"]["score"] * 100),
        "tbt_ms": round(audits["total-blocking-time"]["numericValue"]),
        "lcp_ms": round(audits["largest-contentful-paint"]["numericValue"]),
        "fcp_ms": round(audits["first-contentful-paint"]["numericValue"]),
        "cls": round(audits["cumulative-layout-shift"]["numericValue"], 3),
        "failed_accessibility": sorted(
            a["id"] for a in (audits[r["id"]] for r in result["categories"]["accessibility"]["auditRefs"])
            if a.get("score") is not None and a["score"] < 1
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a built site (default: build the fixture corpus into --out)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--kinds", help="only these page kinds, comma-separated (as printed)")
    parser.add_argument("--cpu", default="auto",
                        help="CPU slowdown: a number (4 is Lighthouse's own), or auto (default): scaled to this "
                             "machine's benchmark index, measured by a first run")
    args = parser.parse_args(argv)
    command = lighthouse_command()
    chrome = chrome_path()
    site = args.site or build_fixture_site(args.out)
    pages = one_page_per_kind(site)
    if args.kinds:
        wanted = set(args.kinds.split(","))
        pages = {k: p for k, p in pages.items() if k in wanted}
    server, base = serve(site)
    reports = args.out / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, Any]] = {}
    try:
        if args.cpu == "auto":
            probe = score(command, base, chrome, reports / "calibration.json")
            cpu = multiplier_for(probe["benchmark_index"])
            print(f"benchmark index {probe['benchmark_index']}: CPU slowdown {cpu} (Lighthouse's own: 4 at "
                  f"{4 * REFERENCE_INDEX} and above)")
        else:
            cpu = float(args.cpu)
        print(f"{'page kind':<28} {'perf':>4} {'a11y':>4} {'TBT ms':>7} {'LCP ms':>7} {'CLS':>6} {'index':>5}  page")
        for kind, path in pages.items():
            name = kind.replace("/", "_").replace("*", "x") or "home"
            r = score(command, base + path, chrome, reports / f"{name}.json", cpu)
            results[kind] = {"page": path, **r}
            print(f"{kind:<28} {r['performance']:>4} {r['accessibility']:>4} {r['tbt_ms']:>7} {r['lcp_ms']:>7} "
                  f"{r['cls']:>6} {r['benchmark_index']:>5}  /{path}" + (f"  (a11y: {', '.join(r['failed_accessibility'])})"
                                               if r["failed_accessibility"] else ""), flush=True)
    finally:
        server.shutdown()
    (args.out / "results.json").write_text(json.dumps({"cpu_slowdown": cpu, "pages": results}, indent=2) + "\n",
                                           encoding="utf-8")
    met = all(r["performance"] >= 95 and r["accessibility"] == 100 for r in results.values())
    print(f"goal (performance >= 95, accessibility 100 on every page kind): {'met' if met else 'not met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
