"""What the in-memory caches kept earn: a full build of the fixture corpus, in one process, with each
switched off in turn (the resample store emptied before each build, as ``make bench`` measures a full build).

    .venv/bin/python benchmarks/caches.py [--repeat 3]

Switched off: ``Resamples.MEMORY = 1`` (each side read back from the store, or drawn again where it has none), and
``ComparisonCache.SIDES_KEPT = 0`` (each side's trials read again for every comparison it is in).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path


def _build(db: Path, out: Path) -> float:
    from fmbench.comparison.resample_store import location
    from fmbench.publish.build import build_site

    shutil.rmtree(location(db), ignore_errors=True)  # type: ignore[arg-type]
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(db.with_name(db.name + ".builds"), ignore_errors=True)
    started = time.perf_counter()
    build_site(db, out, jobs=1)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    repeat = parser.parse_args().repeat

    from fmbench.comparison.cache import ComparisonCache
    from fmbench.comparison.resample_store import Resamples
    from fmbench.ingest import ingest_paths

    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "db.duckdb"
        assert ingest_paths([Path(__file__).resolve().parents[1] / "fixtures" / "runs"], db).ok
        out = Path(folder) / "site"
        _build(db, out)  # warm: imports, templates
        variants = {"both kept": (Resamples.MEMORY, ComparisonCache.SIDES_KEPT), "no resample memory": (1, None),
                    "no side trials kept": (None, 0)}
        times: dict[str, list[float]] = {name: [] for name in variants}
        defaults = (Resamples.MEMORY, ComparisonCache.SIDES_KEPT)
        for _ in range(repeat):
            for name, (memory, sides) in variants.items():
                Resamples.MEMORY = defaults[0] if memory is None else memory
                ComparisonCache.SIDES_KEPT = defaults[1] if sides is None else sides
                times[name].append(_build(db, out))
        Resamples.MEMORY, ComparisonCache.SIDES_KEPT = defaults
    base = min(times["both kept"])
    for name, found in times.items():
        print(f"{name:24} best {min(found):6.2f} s  ({(min(found) - base) / base:+.1%})  all {found}")


if __name__ == "__main__":
    main()
