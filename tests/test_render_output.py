"""The site's Jinja environment prints exactly what Jinja itself prints: every page the same bytes.

fmbench compiles its templates with its own code generator (one call per printed value); these
tests hold it to Jinja's own output and to markupsafe's escaping, on the hostile run's pages above all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
import markupsafe
import pytest

from fmbench.dataset import open_database
from fmbench.filters import Filters
from fmbench.render import PrintingEnvironment, Renderer, html_text, visible_text
from fmbench.views import PageKind, everything, render_page, site_context

from hostile import HOSTILE
from sitebuild import purpose_db

VALUES = [
    "",
    "plain",
    "<script>alert('x')</script> & \"quoted\"",
    "NUL \x00 in text, \x00 twice",
    "\u2028\u2029 \u202e right-to-left",
    "{{ template }} {% syntax %}",
    0,
    -12,
    True,
    False,
    None,
    3.25,
    markupsafe.escape("<b>already escaped</b>"),
    ("a", "<b>"),
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_html_text_is_markupsafes_escape_of_the_visible_text(value: object) -> None:
    assert html_text(value) == str(markupsafe.escape(visible_text(value)))


def _plain(renderer: Renderer) -> jinja2.Environment:
    """Jinja's own environment with the site's options."""
    env = jinja2.Environment(
        loader=renderer.env.loader,
        autoescape=True,
        finalize=visible_text,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(renderer.env.globals)
    env.tests.update(renderer.env.tests)  # Jinja's, and the site's own (``attr_key``)
    return env


def test_a_template_with_loops_macros_blocks_and_filters_prints_as_jinja_prints_it() -> None:
    source = (
        "{% macro cell(v) %}<td>{{ v }}</td>{% endmacro %}"
        "{% set block %}<b>{{ values[2] }}</b>{% endset %}"
        "<p>{{ values[0] }} and {{ values[1] }}: {{ block }}</p>\n"
        "{% for v in values %}<i>{{ v }}</i>{{ cell(v) }}{% if v is none %}none{% else %}{{ v }}!{% endif %}{% endfor %}"
        "{% filter upper %}{{ values[2] }} {{ values[3] }}{% endfilter %}"
        "{{ 'const <x>' }}{{ 1 + 2 }}{{ values|length }}{{ values[2] ~ '<y>' }}"
        "{% autoescape false %}{{ '<raw>' }}{% endautoescape %}"
    )
    options: dict[str, Any] = {"autoescape": True, "finalize": visible_text, "trim_blocks": True, "lstrip_blocks": True}
    ours = PrintingEnvironment(**options).from_string(source).render(values=VALUES)
    theirs = jinja2.Environment(**options).from_string(source).render(values=VALUES)
    assert ours == theirs
    assert "&lt;script&gt;" in ours and "\ufffd" in ours and "<raw>" in ours


LOOP_TEMPLATES = {
    "base.html": "<main>{% block body %}{% endblock %}</main>{% for v in values %}[{{ v }}]{% endfor %}",
    "_row.html": "<tr>{% for v in row %}<td>{{ v }}</td>{% endfor %}</tr>",
    "page.html": (
        '{% extends "base.html" %}'
        "{% for v in values %}outside every block: never printed {{ v }}{% endfor %}"
        "{% macro cell(v) %}{% for c in v|string %}{{ c }}{% endfor %}{% endmacro %}"
        "{% block body %}"
        "{% for v in values %}<i>{{ v }}</i>{% for w in pair %}{{ w }}{{ loop.index }}{% endfor %}"
        "{% set row = pair %}{% include '_row.html' %}{{ cell(v) }}"
        "{% if loop.last %}last{% endif %}{% else %}nothing{% endfor %}"
        "{% for v in [] %}{{ v }}{% else %}empty: {{ values[2] }}{% endfor %}"
        "{% for v in values if v is not none %}({{ v }}){% endfor %}"
        "{% for item in tree recursive %}<li>{{ item.name }}{% if item.children %}<ul>{{ loop(item.children) }}</ul>"
        "{% endif %}</li>{% endfor %}"
        "{% for k, v in pairs %}{% set seen = k %}{{ seen }}={{ v }};{% endfor %}"
        "{% set captured %}{% for v in pair %}<{{ v }}>{% endfor %}{% endset %}{{ captured }}"
        "{% endblock %}"
    ),
}


def test_loops_print_as_jinja_prints_them_in_every_kind_of_frame() -> None:
    """A loop joins its body's text once per iteration: nested, recursive, with else, a filter, loop variables,
    an include or a macro inside, in a block of a child template and outside it (where nothing prints)."""
    options: dict[str, Any] = {"autoescape": True, "finalize": visible_text, "trim_blocks": True, "lstrip_blocks": True}
    loader = jinja2.DictLoader(LOOP_TEMPLATES)
    context = {
        "values": VALUES,
        "pair": ["<a>", "b\x00"],
        "tree": [{"name": "<root>", "children": [{"name": "leaf & co", "children": []}]}],
        "pairs": [("k<", "v>"), ("x", None)],
    }
    ours = PrintingEnvironment(loader=loader, **options).get_template("page.html").render(**context)
    theirs = jinja2.Environment(loader=loader, **options).get_template("page.html").render(**context)
    assert ours == theirs
    assert "never printed" not in ours and "&lt;root&gt;" in ours and "empty: " in ours


class _Slotted:
    __slots__ = ("present",)

    def __init__(self) -> None:
        self.present = "<attr>"


def test_attributes_and_none_tests_print_as_jinja_prints_them() -> None:
    """``name.attribute`` is Python's getattr, then an item of that name, then undefined; ``is none`` is ``is None``."""
    source = (
        "{{ d.key }}|{{ d.get }}|{{ o.present }}|{{ (d).key }}|{{ d['key'] }}|{{ t.missing is none }}"
        "|{{ d.key is none }}|{{ n is none }}|{{ z is none }}|{{ nothing is none }}|{{ o.present is not none }}"
        "|{% for k in [d, o] %}{{ k.key is defined }}{{ k.present is defined }}{% endfor %}"
        "|{{ m.k.deeper }}"
    )
    context = {"d": {"key": "<v>", "get": "item, not the method"}, "o": _Slotted(), "t": (), "n": None, "z": 0,
               "m": {"k": {"deeper": "&"}}}
    for undefined in (jinja2.Undefined, jinja2.StrictUndefined):
        options: dict[str, Any] = {"autoescape": True, "finalize": visible_text, "undefined": undefined}
        ours = PrintingEnvironment(**options).from_string(source).render(**context)
        theirs = jinja2.Environment(**options).from_string(source).render(**context)
        assert ours == theirs
        assert ours.startswith("&lt;v&gt;|&lt;built-in method get")
    strict = PrintingEnvironment(autoescape=True, finalize=visible_text, undefined=jinja2.StrictUndefined)
    with pytest.raises(jinja2.UndefinedError):
        strict.from_string("{{ o.absent }}").render(o=_Slotted())


def test_a_loop_yields_its_bodys_text_once_per_iteration() -> None:
    source = "{% for v in values %}<i>{{ v }}</i> and {{ v }}{% if v %}!{% endif %}{% endfor %}"
    template = PrintingEnvironment(autoescape=True, finalize=visible_text).from_string(source)
    pieces = list(template.generate(values=VALUES))
    assert len(pieces) == len(VALUES)
    assert pieces[2] == "<i>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &#34;quoted&#34;</i> and " + (
        "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &#34;quoted&#34;!"
    )


def test_a_loop_that_can_break_or_continue_prints_as_jinja_prints_it() -> None:
    source = (
        "{% for v in values %}[{{ v }}]{% if v is none %}{% continue %}{% endif %}|"
        "{% if v == 3.25 %}{% break %}{% endif %}{% endfor %}"
    )
    options: dict[str, Any] = {"autoescape": True, "finalize": visible_text, "extensions": ["jinja2.ext.loopcontrols"]}
    ours = PrintingEnvironment(**options).from_string(source).render(values=VALUES)
    theirs = jinja2.Environment(**options).from_string(source).render(values=VALUES)
    assert ours == theirs
    assert ours.endswith("[False]|[None][3.25]|")


def test_every_page_of_the_hostile_runs_site_is_what_jinja_itself_renders(tmp_path: Path) -> None:
    db = purpose_db(tmp_path / "purpose.duckdb")
    with open_database(db) as con:
        ours = site_context(con, Renderer())
        theirs = site_context(con, Renderer())
        theirs.renderer.env = _plain(theirs.renderer)
        compared = 0
        for path, kind, params in everything(ours):
            if not isinstance(kind, PageKind):
                continue
            a = render_page(ours, kind, Filters.none(), **params)
            b = render_page(theirs, kind, Filters.none(), **params)
            assert a == b, path
            compared += 1
        hostile_trials = [p for p, k, params in everything(ours) if k.name == "trials" and params["run_id"] == HOSTILE]
    assert compared > 20 and hostile_trials


def test_a_row_filter_key_is_printed_exactly_when_the_former_template_check_printed_it() -> None:
    # The table macro asks `k is attr_key` (one Python call a key) instead of a chain of Jinja filters a key
    # and row; both keep a-z, 0-9, _ and - only, and leave out everything else.
    import jinja2

    from fmbench.render import attr_key

    former = jinja2.Environment().from_string(
        '{{ (k is string and k and (k|list|reject("in", "abcdefghijklmnopqrstuvwxyz0123456789_-")|list|length) == 0)'
        '|string }}'
    )
    keys = ["os_build", "device", "route-1", "", "OS", "a b", "é", "x\n", "\nx", "1", "a.b", "a\u0130", "_", "-",
            "data-f-x", "k\x00", None, 5, 0.5, True, ("a",)]
    for k in keys:
        assert attr_key(k) == (former.render(k=k) == "True"), repr(k)
