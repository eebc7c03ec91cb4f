"""The build's pickled records are read without trusting them: fmbench's dataclasses and plain data only."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from fmbench import safe_pickle
from fmbench.stats import Interval


class _Calls:
    def __init__(self, target: object, *args: object) -> None:
        self.target, self.args = target, args

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (self.target, self.args)


def test_a_record_of_fmbench_dataclasses_reads_back_equal() -> None:
    value = {"interval": Interval(-1.5, 2.0, 0.95, "m"), "when": [1, "two", None]}
    assert safe_pickle.loads(pickle.dumps(value, protocol=5), "a record") == value


@pytest.mark.parametrize(
    "target",
    [print, Path.write_text, "fmbench.resample_store.ResampleStore", "fmbench.ingest.prepare.Preparer"],
    ids=["a builtin", "another library's function", "an fmbench class", "an fmbench class that starts processes"],
)
def test_a_tampered_record_that_calls_anything_but_a_dataclass_is_refused_before_the_call(
    target: object, capsys: pytest.CaptureFixture[str]
) -> None:
    if isinstance(target, str):
        module, _, name = target.rpartition(".")
        target = getattr(__import__(module, fromlist=[name]), name)
    data = pickle.dumps(_Calls(target, "called"), protocol=5)
    with pytest.raises(pickle.UnpicklingError, match="is not part of a record"):
        safe_pickle.loads(data, "a record")
    assert "called" not in capsys.readouterr().out
