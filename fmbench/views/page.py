"""The base of every page context: what the layout (``base.html``) reads from each page.

A page context is a frozen dataclass subclassing :class:`Page`. Its fields are what
its template lays out (each becomes a template name); the class itself says which
template renders it, which navigation entry it marks current and whether it draws
charts, so no view repeats them and no template guesses.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from fmbench.views.blocks import Chart, Table


def draws_a_chart(value: Any) -> bool:
    """Whether a page's value holds a chart with data to draw: itself, or in its lists, mappings and nested dataclasses (a table's
    rows are never searched: a table holds text)."""
    if isinstance(value, Chart):
        return value.drawn
    if isinstance(value, (str, bytes, Table)) or value is None:
        return False
    if isinstance(value, Mapping):
        return any(draws_a_chart(v) for v in value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(draws_a_chart(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(draws_a_chart(getattr(value, f.name)) for f in dataclasses.fields(value))
    return False


@dataclass(frozen=True)
class Page:
    title: str
    """The page's ``<title>`` and first heading."""

    template: ClassVar[str]
    """The Jinja2 template under ``templates/`` that lays the page out."""
    nav_active: ClassVar[str] = ""
    """The navigation entry shown as current: the name of a page kind in ``fmbench.views.NAVIGATION``, or "" for
    none (``tests/test_navigation.py`` holds every page class to it)."""

    @property
    def uses_charts(self) -> bool:
        """Whether this page draws a chart (a :class:`~fmbench.views.blocks.Chart` among its fields, however
        deep): only then does the layout load the chart code, so a page of a kind that can chart but has nothing
        to chart this time (a legacy run, a device measured once) loads none."""
        return any(draws_a_chart(getattr(self, f.name)) for f in dataclasses.fields(self))
