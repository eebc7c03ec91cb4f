"""CSV text written column by column is what Python's csv module writes, byte for byte."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fmbench.csv_text import QUOTED_FOR, columns_csv_text, csv_text, field


def _csv_module(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


TEXTS = ["", "plain", "a,b", 'say "hi"', "two\nlines", "carriage\rreturn", "\r\n", "NUL \x00", "é ü 日本", " spaced "]
COLUMNS: dict[str, list[Any]] = {
    "text": TEXTS,
    "repeated text": ["nominal", "fair", "nominal", None, "a,b", "a,b", 'q"', "nominal", "fair", "nominal"],
    "float": [0.0, -0.0, 1e-7, 1e16, 0.1, float("nan"), float("inf"), -float("inf"), None, 2.5],
    "int": [0, 0, 1, -1, 2**64 - 1, None, 7, 7, 7, 7],
    "bool": [True, False, None, True, True, False, False, True, None, True],
    "timestamp": [datetime(2026, 10, 24, 10, 3, 29), datetime(2026, 10, 24, 10, 3, 29, 120000), None,
                  datetime(2026, 10, 24, 10, 3, 29), datetime(1, 1, 1), datetime(2026, 1, 1, tzinfo=UTC),
                  datetime(2026, 10, 24, 10, 3, 29), datetime(2026, 10, 24, 10, 3, 29), None, None],
    "date": [date(2026, 1, 1)] * 10,
    "mixed": [1, True, 1.0, "1", None, 0, False, 0.0, -0.0, "0"],
    "unhashable": [[1, 2], ["a,b"], None, [], {"k": "v"}, [1, 2], [1, 2], [1, 2], [1, 2], [1, 2]],
    "empty": [None] * 10,
}


def test_a_column_of_each_kind_is_written_as_the_csv_module_writes_it() -> None:
    header = list(COLUMNS)
    rows = list(zip(*COLUMNS.values(), strict=True))
    assert csv_text(header, rows) == _csv_module(header, rows)


@pytest.mark.parametrize("name", list(COLUMNS))
def test_each_column_alone_beside_an_id_is_written_as_the_csv_module_writes_it(name: str) -> None:
    rows = [(i, v) for i, v in enumerate(COLUMNS[name])]
    assert csv_text(["id", name], rows) == _csv_module(["id", name], rows)


def test_the_characters_that_quote_a_field_are_the_csv_modules() -> None:
    for char in (",", '"', "\n", "\r"):
        assert (field(f"a{char}b") != f"a{char}b") == (char in QUOTED_FOR)
    assert {",", '"', "\n"} <= set(QUOTED_FOR)


def test_no_rows_one_column_and_rows_of_other_lengths_follow_the_csv_modules_rules() -> None:
    assert csv_text(["a", "b"], []) == _csv_module(["a", "b"], []) == "a,b\n"
    single: list[tuple[Any, ...]] = [("",), (None,), ("x",)]
    assert csv_text(["only"], single) == _csv_module(["only"], single)
    ragged: list[tuple[Any, ...]] = [(1, 2), (3,), (4, 5, 6)]
    assert csv_text(["a", "b"], ragged) == _csv_module(["a", "b"], ragged)


_VALUE = st.one_of(
    st.none(),
    st.text(alphabet=st.sampled_from(list('ab ,"\n\r\x00é')), max_size=6),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=2, max_value=5).flatmap(
    lambda width: st.lists(st.lists(_VALUE, min_size=width, max_size=width), max_size=12).map(
        lambda rows: (width, rows)
    )
))
def test_any_rows_of_scalars_are_written_as_the_csv_module_writes_them(shape: tuple[int, list[list[Any]]]) -> None:
    width, rows = shape
    header = [f"c{i}" for i in range(width)]
    assert csv_text(header, rows) == _csv_module(header, rows)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([st.floats(), st.integers(), st.booleans(), st.text(max_size=4)]).flatmap(
    lambda values: st.lists(st.one_of(st.none(), values), max_size=16)
))
def test_a_column_of_one_type_with_repeats_and_nulls_is_written_as_the_csv_module_writes_it(column: list[Any]) -> None:
    rows = [(i, v, v) for i, v in enumerate(column)]
    assert csv_text(["id", "a", "b"], rows) == _csv_module(["id", "a", "b"], rows)


def test_rows_given_column_by_column_are_written_as_the_same_rows() -> None:
    header = list(COLUMNS)
    columns = list(COLUMNS.values())
    rows = list(zip(*columns, strict=True))
    assert columns_csv_text(header, columns) == _csv_module(header, rows)
    assert columns_csv_text(["a", "b"], [[], []]) == "a,b\n"
    assert columns_csv_text(["only"], [["", None, "x"]]) == _csv_module(["only"], [("",), (None,), ("x",)])
    with pytest.raises(ValueError, match="2 column names for 1 columns"):
        columns_csv_text(["a", "b"], [[1]])
    with pytest.raises(ValueError, match="lengths"):
        columns_csv_text(["a", "b"], [[1], [1, 2]])
