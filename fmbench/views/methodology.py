"""The methodology page's source: fmbench's own text with a publisher's notes merged in.

Both are Markdown split at their ``##`` headings. A publisher's section whose
heading matches one of fmbench's (by its text, or by its ``{#id}``) replaces
it; any other section of theirs is added at the end, and their text before
the first heading follows fmbench's introduction. The sections that state
the verdict and comparison rules can only be added to: a publisher's section
with one of their headings is appended to fmbench's, never put in its place,
so a site cannot restate what publishable means or how a change is judged.

The notes ``fmbench init`` writes (:data:`PUBLISHER_TEMPLATE`) are a
placeholder, not the publisher's words: a section of theirs that still holds
the template's text is left out of the page (:func:`publisher_notes`), and the
build says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from importlib import resources

PROTECTED = frozenset({"verdicts", "comparisons"})
"""The ids of fmbench's sections that a publisher can add to but not replace."""

_HEADING = re.compile(r"^##\s+(?P<text>.*?)\s*(?:\{#(?P<id>[A-Za-z0-9_-]+)\})?\s*$")
_FENCE = re.compile(r"^(```|~~~)")


@dataclass
class Section:
    heading: str
    """The whole heading line (empty for the text before the first heading)."""
    key: str
    """The heading's text, lower-case with single spaces."""
    anchor: str | None
    body: list[str]

    def text(self) -> str:
        lines = [self.heading, *self.body] if self.heading else self.body
        return "\n".join(lines).strip("\n")


def _key(text: str) -> str:
    return " ".join(text.lower().split())


def split_sections(source: str) -> list[Section]:
    """The text before the first ``##`` heading, then one section per heading (fenced code is not split)."""
    sections = [Section("", "", None, [])]
    fenced = False
    for line in source.splitlines():
        if _FENCE.match(line.strip()):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        if match:
            sections.append(Section(line, _key(match["text"]), match["id"], []))
        else:
            sections[-1].body.append(line)
    return sections


def fmbench_methodology() -> str:
    return resources.files("fmbench.site").joinpath("methodology.md").read_text(encoding="utf-8")


def merge_methodology(own: str, publisher: str) -> str:
    """fmbench's methodology (``own``) with the publisher's sections merged in (see the module's text)."""
    ours = split_sections(own)
    theirs = split_sections(publisher)
    intro = theirs[0]
    if intro.body and intro.body[0].startswith("# "):
        intro.body = intro.body[1:]  # their page title: the page has its own
    by_key = {s.key: s for s in ours[1:]}
    by_anchor = {s.anchor: s for s in ours[1:] if s.anchor}
    added: list[Section] = []
    for section in theirs[1:]:
        target = by_anchor.get(section.anchor) if section.anchor else None
        target = target or by_key.get(section.key)
        if target is None:
            added.append(section)
        elif target.anchor in PROTECTED:
            target.body += ["", "*Added by this site's publisher:*", "", *section.body]
        else:
            target.body = ["", "*This section is this site's publisher's own.*", "", *section.body]
    parts = [ours[0].text()]
    if intro.text().strip():
        parts.append(intro.text())
    parts += [s.text() for s in ours[1:]]
    parts += [s.text() for s in added]
    return "\n\n".join(p for p in parts if p.strip()) + "\n"


PUBLISHER_TEMPLATE = """\
# Notes of this site's publisher

<!--
These notes are shown on the site's Methodology page together with fmbench's
own methodology. Each `## Heading` section here is added to the page; a section
whose heading is the same as one of fmbench's replaces it (match the heading
text, or its {#id}). The sections "Publishable, exploratory, invalid" and "How
comparisons are labelled" can only be added to: what you write under those
headings follows fmbench's text. The Markdown is sanitized: no scripts, no
raw HTML beyond simple formatting.
-->

## How these runs were made {#our-runs}

Describe your devices, how you ran the benchmark (the command and its
options), where the devices were and what else ran on them, and anything a
reader should know before comparing these runs with others.
"""
"""What ``fmbench init`` writes into a project's ``methodology.md``: a title, a comment saying how the notes are
merged, and one placeholder section for the publisher to replace."""


@dataclass(frozen=True)
class PublisherNotes:
    """A project's methodology notes as the site shows them."""

    text: str
    """The notes less every section still holding :data:`PUBLISHER_TEMPLATE`'s text (all of it when none does)."""
    template_sections: tuple[str, ...]
    """The headings of the placeholder sections left out (empty when the publisher replaced them)."""


_ANCHOR = re.compile(r"\s*\{#[A-Za-z0-9_-]+\}\s*$")


def _words(section: Section) -> str:
    return " ".join(section.text().split())


def publisher_notes(source: str) -> PublisherNotes:
    """``source`` (a project's ``methodology.md``) without the text ``fmbench init`` wrote into it, and which of
    that template's sections it still held: the site never presents the template as the publisher's words."""
    template = {_words(s) for s in split_sections(PUBLISHER_TEMPLATE) if s.text().strip()}
    sections = split_sections(source)
    placeholder = [_words(s) in template for s in sections]
    if not any(placeholder):
        return PublisherNotes(source, ())
    left_out = tuple(
        _ANCHOR.sub("", s.heading.removeprefix("##")).strip()
        for s, left in zip(sections, placeholder, strict=True) if left and s.heading
    )
    text = "\n\n".join(s.text() for s, left in zip(sections, placeholder, strict=True) if not left and s.text().strip())
    return PublisherNotes(text + "\n" if text else "", left_out)


class _Headings(HTMLParser):
    """The ``<h2 id=...>`` headings of rendered HTML, in order: ``(id, text)``."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str]] = []
        self._open: tuple[str, list[str]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "h2":
            anchor = dict(attrs).get("id")
            self._open = (anchor, []) if anchor else None

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._open[1].append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2" and self._open is not None:
            self.found.append((self._open[0], " ".join("".join(self._open[1]).split())))
            self._open = None


def contents(html: str) -> list[tuple[str, str]]:
    """The sections of a rendered methodology, ``(anchor, heading)`` per ``##`` heading in order: the page's
    contents list links each one by the id its heading was rendered with."""
    parser = _Headings()
    parser.feed(html)
    parser.close()
    return parser.found
