"""CSV text written column by column: what Python's :mod:`csv` writer writes, in about three fifths of its time.

The trials CSV of a run is about a thousand rows of 45 values, most of them repeated down their column (counts,
labels, booleans) and a few long texts (the responses). :func:`csv_text` formats each column at once, each
distinct value of a column once, and joins the rows, instead of the csv module turning every value into text
and scanning it in turn. The text is that of ``csv.writer(buffer, lineterminator="\\n")`` (the excel dialect:
comma, double quote, quotes only where needed) byte for byte: ``None`` is an empty field, a float is its
``repr``, any other value its ``str``; a field is quoted when it holds a character the csv module quotes for
(found out from the csv module itself, see :data:`QUOTED_FOR`), a quote doubled.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime
from typing import Any


def _csv_module_quotes(char: str) -> bool:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow([f"a{char}b", "c"])
    return buffer.getvalue().startswith('"')


QUOTED_FOR = tuple(c for c in (",", '"', "\n", "\r") if _csv_module_quotes(c))
"""The characters that make the csv module quote a field (with Python 3.11: comma, quote and newline; a
carriage return is written as it is)."""


def field(value: Any) -> str:
    """One value as the csv module writes it in a row of more than one field."""
    if value is None:
        return ""
    text = repr(value) if type(value) is float else str(value)
    for char in QUOTED_FOR:
        if char in text:
            return '"' + text.replace('"', '""') + '"'
    return text


_UNQUOTED: dict[type, Callable[[Any], str]] = {float: repr, int: str, bool: str, datetime: str, date: str}
"""Types whose text never holds a comma, a quote or a line break, and how the csv module turns them into text."""


def _column(values: Sequence[Any]) -> list[str]:
    """A column's fields, formatted at once for the column's one type: floats each by ``repr`` (they seldom
    repeat; and 0.0 and -0.0 would be one key of a dict), other values each distinct one once. A column that
    mixes types (1 and True would be one key) or holds unhashable values is formatted value by value."""
    kinds = set(map(type, values))
    nulls = type(None) in kinds
    kinds.discard(type(None))
    if len(kinds) != 1:
        return list(map(field, values))
    (kind,) = kinds
    if kind is float:
        texts = list(map(repr, values))
        return [t if t != "None" else "" for t in texts] if nulls else texts
    try:
        distinct = set(values)
    except TypeError:
        return list(map(field, values))
    if 2 * len(distinct) > len(values):  # mostly distinct (ids, responses): no gain in a dict of them
        return list(map(_UNQUOTED.get(kind, field), values)) if not nulls else list(map(field, values))
    fmt = _UNQUOTED.get(kind, field)
    texts_of = {value: fmt(value) for value in distinct}
    if nulls:
        texts_of[None] = ""
    return list(map(texts_of.__getitem__, values))


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """``header`` and ``rows`` (each as long as the header) as CSV text, one line each, ``\\n`` after each line."""
    found = list(rows)
    if len(header) < 2 or any(len(r) != len(header) for r in found):
        buffer = io.StringIO()  # rows of one field, or rows of other lengths: the csv module's own rules
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(found)
        return buffer.getvalue()
    return columns_csv_text(header, list(zip(*found, strict=True)) if found else [[] for _ in header])


def columns_csv_text(header: Sequence[str], columns: Sequence[Sequence[Any]]) -> str:
    """:func:`csv_text` of rows given column by column: ``columns[i]`` holds every row's value of ``header[i]``."""
    if len(columns) != len(header) or len({len(c) for c in columns}) > 1:
        raise ValueError(f"{len(header)} column names for {len(columns)} columns of lengths {sorted({len(c) for c in columns})}")
    if len(header) < 2:
        return csv_text(header, zip(*columns, strict=True))
    lines = [",".join(map(field, header))]
    if columns and columns[0]:
        lines += map(",".join, zip(*map(_column, columns), strict=True))
    return "\n".join(lines) + "\n"
