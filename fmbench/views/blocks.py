"""The building blocks page contexts are made of: tables, cells, charts, banners, filters.

These are the objects the macros in ``templates/_macros.html`` lay out. They
hold text, never markup: the templates escape everything they print.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Cell:
    text: str | None
    href: str | None = None
    tone: str | None = None
    title: str | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    label: str
    numeric: bool = False
    help: str | None = None


@dataclass(frozen=True, slots=True)
class Row:
    cells: Sequence[Any]
    attrs: Mapping[str, str | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Table:
    id: str
    caption: str
    columns: Sequence[Column]
    rows: Sequence[Row]
    empty_text: str = "Nothing to show here yet."
    cards: bool = False
    """On a narrow screen, one card per row (each cell labelled with its column) instead of a table that scrolls
    sideways: for a table whose every column a reader needs (a comparison's verdicts)."""


@dataclass(frozen=True, slots=True)
class Chart:
    id: str
    title: str
    figure_json: dict[str, Any]
    table: Table
    note: str | None = None
    alt: str | None = None


@dataclass(frozen=True, slots=True)
class Banner:
    tone: str
    title: str
    body: str | Sequence[str] | None = None
    link_text: str | None = None
    link_href: str | None = None


@dataclass(frozen=True, slots=True)
class Option:
    value: str
    label: str


@dataclass(frozen=True, slots=True)
class FilterField:
    name: str
    label: str
    options: Sequence[Option]
    selected: str = ""


@dataclass(frozen=True, slots=True)
class FilterForm:
    action: str
    fields: Sequence[FilterField]
    noun: str = "rows"


@dataclass(frozen=True, slots=True)
class Pager:
    page: int
    pages: int
    prev_href: str | None
    next_href: str | None


@dataclass(frozen=True, slots=True)
class Condition:
    label: str
    value: Any
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Link:
    text: str
    href: str
    note: str | None = None
