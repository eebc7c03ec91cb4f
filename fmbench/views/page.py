"""The base of every page context: what the layout (``base.html``) reads from each page.

A page context is a frozen dataclass subclassing :class:`Page`. Its fields are what
its template lays out (each becomes a template name); the class itself says which
template renders it, which navigation entry it marks current and whether it draws
charts, so no view repeats them and no template guesses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class Page:
    title: str
    """The page's ``<title>`` and first heading."""

    template: ClassVar[str]
    """The Jinja2 template under ``templates/`` that lays the page out."""
    nav_active: ClassVar[str] = ""
    """The key of the navigation entry shown as current: "home", "runs", "devices", "scenarios", "pcc",
    "builds", "compare", "regressions", "data", "revisions", "methodology", "search", or "" for none."""
    uses_charts: ClassVar[bool] = False
    """True when the template draws charts (``m.chart()``): the layout then loads the chart library."""
