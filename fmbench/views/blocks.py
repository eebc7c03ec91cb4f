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
    sort: float | int | str | None = None
    """The raw value the column sorts by (``data-sort``), where the text alone would sort wrongly; ``None``: the
    text (read as a number when it is one). A cell whose text is ``None`` sorts last as "not recorded"."""


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

    @property
    def numeric_classes(self) -> str:
        """The table's classes naming its numeric columns (``n3`` for the third): style.css aligns their cells
        from these, so no cell carries a class of its own (26,000 cells of the 40 x 1,000-run site did)."""
        numeric = [i for i, c in enumerate(self.columns, 1) if c.numeric]
        if numeric and numeric[-1] > NUMERIC_COLUMNS_STYLED:
            raise ValueError(f"table {self.id}: style.css aligns numeric columns up to the "
                             f"{NUMERIC_COLUMNS_STYLED}th, not the {numeric[-1]}th")
        return " ".join(f"n{i}" for i in numeric)


NUMERIC_COLUMNS_STYLED = 24
"""How many columns site/assets/style.css has numeric-column rules for (``.data.n1`` to ``.data.n24``)."""


@dataclass(frozen=True, slots=True)
class Chart:
    """A chart and the table of its numbers. ``marks`` says what its marks mean (its caption); ``empty``, when
    set, is the sentence shown in place of a chart that has no data to draw (nothing is drawn then): the chart's
    one value said as a number (``value_said``), else why there is no value at all (a blank chart, which gets no
    card of its own: see :attr:`blank`)."""

    id: str
    title: str
    figure_json: dict[str, Any]
    table: Table
    note: str | None = None
    alt: str | None = None
    marks: str | None = None
    empty: str | None = None
    value_said: bool = False

    @property
    def drawn(self) -> bool:
        return self.empty is None

    @property
    def blank(self) -> bool:
        """No value at all: neither drawn nor said as a number. A page lays out no card for it; its title is
        named once in a sentence beside the charts that are (``_macros.html``'s ``charts``)."""
        return self.empty is not None and not self.value_said

    @property
    def height(self) -> int:
        """The plot's height in CSS pixels, kept free before it is drawn (nothing moves when it is)."""
        return int(self.figure_json.get("layout", {}).get("height", 360))


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
class Condition:
    label: str
    value: Any
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Link:
    text: str
    href: str
    note: str | None = None
