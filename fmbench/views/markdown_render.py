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


_LINK = re.compile(r"\[([^\]\n]+)\]\((\S+?)\)")
_STRONG = re.compile(r"(\*\*|__)(\S(?:[^\n]*?\S)?)\1")
_CODE = re.compile(r"`([^`\n]+)`")


def markdown_as_text(source: str) -> str:
    """A publisher's note written in Markdown (``**bold**``, `` `code` ``, ``[text](url)``) as the plain words a
    reader sees, for a table cell that shows text, never markup: "**fallback enabled**" is "fallback enabled", a
    link "text (url)"."""
    return _CODE.sub(r"\1", _STRONG.sub(r"\2", _LINK.sub(r"\1 (\2)", source)))
