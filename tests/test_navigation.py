"""The site's navigation comes from the page registry: every kind a reader should reach has an entry, each page
marks the entry of its kind, and no page names an entry that does not exist."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import fmbench.views
from fmbench.views import NAVIGATION, NAVIGATION_ORDER, PAGES
from fmbench.views.page import Page
from fmbench.views.render import Renderer

from sitebuild import fixture_site


def _page_classes() -> list[type[Page]]:
    """Every page class of ``fmbench.views`` (each of its modules imported)."""
    for module in pkgutil.iter_modules(fmbench.views.__path__):
        importlib.import_module(f"fmbench.views.{module.name}")
    found: list[type[Page]] = []
    todo = list(Page.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_every_page_class_marks_an_entry_of_the_navigation_or_none() -> None:
    keys = {entry.key for entry in NAVIGATION}
    classes = _page_classes()
    assert len(classes) >= 20
    wrong = {cls.__name__: cls.nav_active for cls in classes if cls.nav_active not in keys | {""}}
    assert wrong == {}


def test_the_navigation_holds_every_labelled_kind_of_the_registry_in_order_and_nothing_else() -> None:
    labelled = {kind.name for kind in PAGES if kind.nav}
    assert set(NAVIGATION_ORDER) == labelled and len(NAVIGATION_ORDER) == len(labelled)
    assert [e.key for e in NAVIGATION] == list(NAVIGATION_ORDER)
    assert {"leaderboards", "coverage"} <= labelled  # the two a reader could not reach before
    by_name = {kind.name: kind for kind in PAGES}
    for entry in NAVIGATION:
        kind = by_name[entry.key]
        assert kind.route == entry.path and "{" not in kind.route  # a kind of one page, at its own path
        assert entry.label == kind.nav


def test_a_leaderboard_page_marks_leaderboards_and_coverage_marks_coverage(tmp_path: Path) -> None:
    _, site = fixture_site(tmp_path)
    current = re.compile(r'<nav class="site-nav".*?</nav>', re.S)
    marked: dict[str, list[str]] = {}
    for path in ("leaderboards/", "coverage/", "scenarios/", "runs/", "compare/"):
        nav = current.search((site / path / "index.html").read_text(encoding="utf-8"))
        assert nav is not None, path
        marked[path] = re.findall(r'aria-current="page">([^<]+)<', nav.group(0))
        assert len(re.findall(r"<li>", nav.group(0))) == len(NAVIGATION)
    boards = [p for p in site.glob("leaderboards/*/index.html") if p.parent.name != "category"]
    assert boards
    nav = current.search(boards[0].read_text(encoding="utf-8"))
    assert nav is not None
    marked["a leaderboard"] = re.findall(r'aria-current="page">([^<]+)<', nav.group(0))
    assert marked == {
        "leaderboards/": ["Leaderboards"], "coverage/": ["Coverage"], "scenarios/": ["Scenarios"], "runs/": ["Runs"],
        "compare/": ["Compare"], "a leaderboard": ["Leaderboards"],
    }


def test_a_renderer_without_navigation_lays_out_an_empty_list() -> None:
    html = Renderer().env.from_string(
        '{% for e in navigation %}<a href="{{ url(e.path) }}">{{ e.label }}</a>{% endfor %}'
    ).render()
    assert html == ""
    full = Renderer(navigation=NAVIGATION).env.from_string(
        '{% for e in navigation %}<a href="{{ url(e.path) }}">{{ e.label }}</a>{% endfor %}'
    ).render()
    assert '<a href="/leaderboards/">Leaderboards</a>' in full and '<a href="/coverage/">Coverage</a>' in full
