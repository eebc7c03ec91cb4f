"""The content security policy of every page, written once.

``fmbench serve`` sends it as a header. A static host (GitHub Pages and most
others) sends no headers, so every page also carries it in ``<meta
http-equiv="Content-Security-Policy">``: the same policy but for what a meta
tag cannot say (browsers ignore ``frame-ancestors`` there). Pages hold no
inline script, so ``script-src 'self'`` fits them; Plotly sets inline styles, and
draws a chart's PNG download from an image of its SVG at a ``blob:`` address of the page's own.
"""

from __future__ import annotations

DIRECTIVES: tuple[tuple[str, str], ...] = (
    ("default-src", "'self'"),
    ("script-src", "'self'"),
    ("style-src", "'self' 'unsafe-inline'"),
    ("img-src", "'self' data: blob:"),
    ("connect-src", "'self'"),
    ("object-src", "'none'"),
    ("base-uri", "'none'"),
    ("frame-ancestors", "'none'"),
    ("form-action", "'self'"),
)

HEADER_ONLY = frozenset({"frame-ancestors", "report-uri", "sandbox"})
"""Directives a browser ignores in a meta tag."""


def _policy(directives: tuple[tuple[str, str], ...]) -> str:
    return "; ".join(f"{name} {value}" for name, value in directives)


HEADER = _policy(DIRECTIVES)
"""The policy ``serve`` sends as the ``Content-Security-Policy`` header."""

META = _policy(tuple((name, value) for name, value in DIRECTIVES if name not in HEADER_ONLY))
"""The policy every page carries in its ``<meta http-equiv="Content-Security-Policy">``."""
