"""No pickle anywhere: a built site, its records and the resample store hold JSON and NumPy's .npz only, and
loading any of them never unpickles (a pickle payload where a cache entry goes is ignored and worked out again)."""

from __future__ import annotations

import io
import json
import math
import pickle
import re
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from fmbench.analysis import stats
from fmbench.comparison.cache import CODEC
from fmbench.comparison.resample_store import ENTRY, Resamples, ResampleStore, location
from fmbench.comparison.results import FigureComparison
from fmbench.ingest import ingest_paths
from fmbench.publish.build import build_site
from fmbench.publish.state import state_folder
from fmbench.storage.cache_json import Codec

from testdata import FIXTURES

REPOSITORY = Path(__file__).resolve().parents[1]
PICKLE_HEADER = re.compile(rb"\A\x80[\x02-\x05]")
"""How a pickle of protocol 2 to 5 begins."""


class _Boom:
    """A payload that would create ``marker`` if it were ever unpickled."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def test_a_built_site_its_records_and_its_resample_store_hold_no_pickle(tmp_path: Path) -> None:
    db = tmp_path / "db.duckdb"
    assert ingest_paths(sorted(FIXTURES.glob("iphone-17-pro-*.json")), db).ok
    site = tmp_path / "site"
    build_site(db, site)
    records, store = state_folder(db, site), location(db)
    assert store is not None
    for folder in (site, records, store):
        files = _files(folder)
        assert files
        for path in files:
            assert path.suffix not in (".pickle", ".pkl"), path
            data = path.read_bytes()
            assert not PICKLE_HEADER.match(data), path
    for path in _files(records):
        json.loads(path.read_text())  # every record is JSON
    entries = _files(store)
    assert entries and all(p.suffix == ENTRY for p in entries)
    for path in entries:
        with np.load(path, allow_pickle=False) as found:  # and every entry an .npz of plain arrays
            assert all(found[name].dtype != object for name in found.files)


def test_no_module_of_fmbench_reads_or_writes_a_pickle_file() -> None:
    sources = [p for folder in ("fmbench", "ingest", "native") for p in sorted((REPOSITORY / folder).rglob("*.py"))]
    assert sources
    for path in sources:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import pickle|from pickle import|import dill|import shelve)", text, re.M), path
        assert "pickle.load" not in text and "pickle.dump" not in text, path


def test_a_resample_entry_holding_a_pickled_array_is_ignored_and_never_unpickled(tmp_path: Path) -> None:
    side = [[[12.5, 3.25, 7.0], [1.5, 9.75], [4.0, 4.0, 8.5, 2.25]]]
    store = ResampleStore(tmp_path / "store")
    computed = stats.resampled_quantiles(side, kept=Resamples(store)).tobytes()
    (entry,) = (tmp_path / "store").glob(f"??/*{ENTRY}")
    with np.load(entry) as honest:
        key = honest["key"]
    marker = tmp_path / "unpickled"
    payload = np.empty(1, dtype=object)
    payload[0] = _Boom(marker)
    buffer = io.BytesIO()
    np.savez(buffer, key=key, a0=payload)  # an .npz of the right key whose array is a pickle
    entry.write_bytes(buffer.getvalue())

    kept = Resamples(store)
    assert stats.resampled_quantiles(side, kept=kept).tobytes() == computed
    assert kept.drawn == 1 and store.ignored == 1 and not marker.exists()


def test_a_comparison_is_kept_as_json_and_read_back_to_the_same_value_bit_for_bit() -> None:
    figure = FigureComparison(
        key="ttft_p50", label="TTFT p50", unit="seconds", better="lower", baseline=0.1 + 0.2, candidate=-0.0,
        delta=math.inf, relative_delta=None,
        interval=stats.Interval(low=-math.inf, high=5e-324, confidence=0.9973, method="cluster"),
        verdict="better", note="é \ud800",
    )
    value = {"figures": (figure, [figure]), "when": datetime(2026, 11, 2, 9, 30, 1, 5, tzinfo=UTC), "nan": math.nan}
    text = CODEC.dumps(value)
    assert text.isascii() and "NaN" not in text and "Infinity" not in text
    found = CODEC.loads(text)
    assert found["figures"] == (figure, [figure]) and isinstance(found["figures"], tuple)
    assert found["when"] == value["when"] and math.isnan(found["nan"])
    assert math.copysign(1, found["figures"][0].candidate) == -1  # -0.0 stays -0.0
    assert CODEC.dumps(found) == text


@pytest.mark.parametrize(
    "text",
    [
        '{"@": "ResampleStore", "folder": "x"}',  # a class it was not given
        '{"@": "Interval", "low": 0.0}',  # not the class's fields
        '{"@": "Interval", "low": 0, "high": 1, "confidence": 1, "method": "m", "extra": 1}',
        '{"@t": [1], "@dt": "2026-01-01"}',  # two tags
        '{"@pickle": "gASV"}',  # a tag it does not write
        '{"@f": "NaN-ish"}',
        "NaN",
    ],
)
def test_a_kept_value_of_anything_but_the_classes_given_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        Codec([stats.Interval]).loads(text)


def test_a_pickle_where_a_kept_value_goes_is_refused_unread(tmp_path: Path) -> None:
    marker = tmp_path / "unpickled"
    with pytest.raises(ValueError):
        CODEC.loads(pickle.dumps(_Boom(marker)))
    assert not marker.exists()
