"""The site's stylesheet is whole: every block it opens it closes, and a rule written at the top level (no indent)
is never swallowed by an ``@media`` block left open above it (a merge that drops a closing brace would otherwise
make every later rule apply on phones or in print only, with no error anywhere)."""

from __future__ import annotations

import re

from testdata import REPO

STYLE = REPO / "site" / "assets" / "style.css"


def test_every_block_of_the_stylesheet_is_closed_and_no_top_level_rule_sits_inside_a_media_block() -> None:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group().count("\n"), STYLE.read_text(encoding="utf-8"), flags=re.S)
    depth = 0
    swallowed = []
    for number, line in enumerate(text.split("\n"), 1):
        if depth > 0 and line.strip() and not line[0].isspace() and not line.startswith("}"):
            swallowed.append((number, line))
        depth += line.count("{") - line.count("}")
        assert depth >= 0, f"line {number} closes a block that is not open"
    assert swallowed == []
    assert depth == 0
