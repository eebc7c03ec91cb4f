"""Compiled templates are kept between processes: a later process loads the code instead of compiling it,
gets exactly the code compiling gives, never takes another generator's code, and renders all the same
when the cache folder cannot be written."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import pytest

from fmbench.render import PrintingEnvironment, Renderer
from fmbench.template_cache import TemplateCache, generator_digest, template_cache

TEMPLATES = str(resources.files("fmbench.templates"))


class CountingEnvironment(PrintingEnvironment):
    compiled: list[str]

    def compile(self, source: Any, name: str | None = None, filename: str | None = None, *args: Any,
                **kwargs: Any) -> Any:
        self.compiled.append(name or "")
        return super().compile(source, name, filename, *args, **kwargs)


def environment(cache: TemplateCache | None) -> CountingEnvironment:
    env = CountingEnvironment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, bytecode_cache=cache,
                              trim_blocks=True, lstrip_blocks=True)
    env.compiled = []
    return env


def names() -> list[str]:
    """The site's templates (as :meth:`fmbench.render.Renderer.prepare` lists them: no compiled Python beside)."""
    return [n for n in jinja2.FileSystemLoader(TEMPLATES).list_templates() if n.endswith((".html", ".xml"))]


def test_a_second_process_loads_every_template_compiled_instead_of_compiling_it(tmp_path: Path) -> None:
    first = environment(TemplateCache(tmp_path))
    for name in names():
        first.get_template(name)
    assert sorted(first.compiled) == sorted(names())
    second = environment(TemplateCache(tmp_path))
    for name in names():
        second.get_template(name)
    assert second.compiled == []


def test_the_cached_code_is_the_code_compiling_gives(tmp_path: Path) -> None:
    environment(TemplateCache(tmp_path)).get_template("_macros.html")
    cached = environment(TemplateCache(tmp_path)).get_template("_macros.html")
    compiled = environment(None).get_template("_macros.html")
    assert cached.root_render_func.__code__ == compiled.root_render_func.__code__
    assert cached.module.__dict__.keys() == compiled.module.__dict__.keys()


def test_a_changed_template_is_compiled_again(tmp_path: Path) -> None:
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "page.html").write_text("one {{ x }}", encoding="utf-8")

    def env() -> CountingEnvironment:
        e = CountingEnvironment(loader=jinja2.FileSystemLoader(str(folder)), bytecode_cache=TemplateCache(tmp_path))
        e.compiled = []
        return e

    assert env().get_template("page.html").render(x=1) == "one 1"
    (folder / "page.html").write_text("two {{ x }}", encoding="utf-8")
    again = env()
    assert again.get_template("page.html").render(x=1) == "two 1"
    assert again.compiled == ["page.html"]


def test_another_generators_code_is_never_loaded_and_is_swept_away(tmp_path: Path) -> None:
    environment(TemplateCache(tmp_path, digest="0" * 16)).get_template("_macros.html")
    old = list(tmp_path.iterdir())
    assert old
    current = environment(TemplateCache(tmp_path))
    current.get_template("_macros.html")
    assert current.compiled == ["_macros.html"]
    assert not any(p.exists() for p in old)
    assert all(generator_digest() in p.name for p in tmp_path.iterdir())


def test_the_digest_follows_the_code_generators_source() -> None:
    assert len(generator_digest()) == 16
    assert TemplateCache(digest="a" * 16).pattern != TemplateCache(digest="b" * 16).pattern


def test_a_cache_folder_that_cannot_be_written_still_renders_every_page(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("", encoding="utf-8")
    env = environment(TemplateCache(not_a_folder))
    template = env.get_template("_macros.html")
    assert template is not None and env.compiled == ["_macros.html"]


def test_an_unreadable_entry_is_compiled_again(tmp_path: Path) -> None:
    environment(TemplateCache(tmp_path)).get_template("_macros.html")
    for entry in tmp_path.iterdir():
        entry.write_bytes(b"not compiled code")
    again = environment(TemplateCache(tmp_path))
    again.get_template("_macros.html")
    assert again.compiled == ["_macros.html"]


def test_the_site_renderer_keeps_its_compiled_templates_unless_told_not_to(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(Renderer().env.bytecode_cache, TemplateCache)
    monkeypatch.setenv("FMBENCH_TEMPLATE_CACHE", "off")
    assert template_cache() is None
    assert Renderer().env.bytecode_cache is None
