"""The site's Jinja environment escapes every printed value, shows a NUL character, and checks a row's filter keys."""

from __future__ import annotations

import jinja2
import markupsafe
import pytest

from fmbench.views.render import Renderer, attr_key


@pytest.mark.parametrize(
    ("value", "printed"),
    [
        ("plain", "plain"),
        ("<script>alert('x')</script> & \"q\"", "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &#34;q&#34;"),
        ("NUL \x00 twice \x00", "NUL \ufffd twice \ufffd"),
        ("<b>\x00</b>", "&lt;b&gt;\ufffd&lt;/b&gt;"),
        ("{{ template }}", "{{ template }}"),
        (-12, "-12"),
        (None, "None"),
        (markupsafe.Markup("<b>made by a macro</b>"), "<b>made by a macro</b>"),
    ],
    ids=repr,
)
def test_a_printed_value_is_escaped_and_a_nul_shows_as_the_replacement_character(value: object, printed: str) -> None:
    assert Renderer().env.from_string("{{ v }}").render(v=value) == printed


def test_an_undefined_name_is_an_error_not_an_empty_text() -> None:
    with pytest.raises(jinja2.UndefinedError):
        Renderer().env.from_string("{{ o.absent }}").render(o=object())


def test_a_row_filter_key_is_printed_exactly_when_the_former_template_check_printed_it() -> None:
    # The table macro asks `k is attr_key` (one Python call a key) instead of a chain of Jinja filters a key
    # and row; both keep a-z, 0-9, _ and - only, and leave out everything else.
    former = jinja2.Environment().from_string(
        '{{ (k is string and k and (k|list|reject("in", "abcdefghijklmnopqrstuvwxyz0123456789_-")|list|length) == 0)'
        '|string }}'
    )
    keys = ["os_build", "device", "route-1", "", "OS", "a b", "é", "x\n", "\nx", "1", "a.b", "a\u0130", "_", "-",
            "data-f-x", "k\x00", None, 5, 0.5, True, ("a",)]
    for k in keys:
        assert attr_key(k) == (former.render(k=k) == "True"), repr(k)
