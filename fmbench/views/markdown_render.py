"""Markdown from the site's sources, rendered and then sanitized.

This is one of the two places fmbench hands markup to a template (the other
is a chart's JSON container): the HTML is cleaned with an allow-list first, so
a script, an event handler or a ``javascript:`` link in the source never
reaches a page.
"""

from __future__ import annotations

import re

import markdown
import nh3
from markupsafe import Markup

_TAGS = {
    "a", "abbr", "blockquote", "br", "code", "dd", "del", "div", "dl", "dt", "em", "h1", "h2", "h3", "h4",
    "h5", "h6", "hr", "li", "ol", "p", "pre", "span", "strong", "sub", "sup", "table", "tbody", "td", "th",
    "thead", "tr", "ul",
}
_ATTRIBUTES = {
    "a": {"href", "title"},
    "abbr": {"title"},
    "td": {"align"},
    "th": {"align"},
    **{h: {"id"} for h in ("h1", "h2", "h3", "h4", "h5", "h6")},
}


def render_markdown(source: str) -> Markup:
    html = markdown.markdown(source, extensions=["attr_list", "tables", "fenced_code", "toc", "sane_lists"])
    clean = nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer",
    )
    return Markup(clean)  # sanitized above: the allow-listed tags and attributes only


_STRONG = re.compile(r"(?<![\w*])\*\*(\S(?:[^*\n]*?\S)?)\*\*(?![\w*])")


def markdown_as_text(source: str) -> str:
    """A publisher's note as the words a reader sees, for a cell that shows text, never markup: its Markdown bold
    ("**fallback enabled**") is the plain words ("fallback enabled"); anything else is shown as written."""
    return _STRONG.sub(r"\1", source)
