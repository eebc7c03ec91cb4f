"""One Jinja2 environment for every page, static or served.

Autoescaping is on for everything; undefined names are errors. The globals
``url``, ``asset`` and ``site`` are the only way templates build links, so a
``--base-url`` moves the whole site under a sub-path.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from fmbench import __version__
from fmbench.views import content_policy

_TIME_FORMAT = "%Y-%m-%d %H:%M UTC"

_ATTR_KEY = re.compile(r"[a-z0-9_-]+")


def attr_key(value: object) -> bool:
    """The template test ``is attr_key``: a table row's filter key fit to print as ``data-f-<key>``, a non-empty
    string of ``a``-``z``, ``0``-``9``, ``_`` and ``-`` (any other key is left out of the row)."""
    return isinstance(value, str) and _ATTR_KEY.fullmatch(value) is not None


def visible_text(value: Any) -> Any:
    """Every printed value: a NUL character, which HTML drops without a trace, shows as U+FFFD."""
    if isinstance(value, str) and "\x00" in value:
        return value.replace("\x00", "\ufffd")
    return value


def assets_dir() -> Path:
    return Path(str(resources.files("fmbench.site").joinpath("assets")))


def asset_files() -> dict[str, Path]:
    """Every shared asset by name: the site's own files, among them the chart library (``plotly.min.js``, a
    build of plotly.js with the scatter trace alone, from ``tools/plotly/``; its version and licence in ``plotly.LICENSE.txt``)."""
    return {p.name: p for p in sorted(assets_dir().iterdir()) if p.is_file()}


DEFAULT_DESCRIPTION = (
    "Apple Foundation Models benchmark results (on-device and Private Cloud Compute), every figure recomputed "
    "from the trials."
)


@dataclass(frozen=True)
class SiteIdentity:
    """Who publishes the site: its name, description, address, footer links and icon (from ``fmbench.toml``)."""

    title: str = "fmbench"
    description: str = DEFAULT_DESCRIPTION
    site_url: str = ""
    """The absolute URL the site is published at (empty: not known, as in a local preview)."""
    footer_links: tuple[tuple[str, str], ...] = ()
    repository_url: str = ""
    """Where the run files can be browsed (a repository's runs folder), or empty."""
    favicon: Path | None = None
    """The publisher's icon file; ``None``: fmbench's own ``favicon.svg``."""

    def fingerprint(self) -> str:
        icon = hashlib.sha256(self.favicon.read_bytes()).hexdigest() if self.favicon else ""
        return repr((self.title, self.description, self.site_url, self.footer_links, self.repository_url, icon))


@dataclass(frozen=True)
class SiteInfo:
    title: str
    generated_at: str
    version: str
    mode: str
    description: str = DEFAULT_DESCRIPTION
    site_url: str = ""
    footer_links: tuple[tuple[str, str], ...] = ()
    repository_url: str = ""
    favicon: str = "favicon.svg"


@dataclass(frozen=True)
class NavEntry:
    """One entry of the site's navigation (built from the page registry, ``fmbench.views.NAVIGATION``)."""

    key: str
    """The page kind's name: a page whose class's ``nav_active`` is this marks the entry as current."""
    label: str
    path: str


def normalize_base_url(base_url: str) -> str:
    """``/`` or ``/sub/path/`` (an absolute URL keeps its scheme and host)."""
    base = base_url.strip() or "/"
    if not base.endswith("/"):
        base += "/"
    if not base.startswith(("/", "http://", "https://")):
        base = "/" + base
    return base


class Renderer:
    def __init__(
        self,
        *,
        mode: str = "static",
        base_url: str = "/",
        generated_at: datetime | None = None,
        identity: SiteIdentity | None = None,
        navigation: tuple[NavEntry, ...] = (),
    ) -> None:
        """``navigation``: the site's navigation entries (``fmbench.views.NAVIGATION``; empty: none, as in a
        test that renders one template alone)."""
        self.mode = mode
        self.base_url = normalize_base_url(base_url)
        when = generated_at or datetime.now(UTC)
        self.identity = identity or SiteIdentity()
        self.assets = asset_files()
        favicon = "favicon.svg"
        if self.identity.favicon is not None:
            favicon = "favicon" + self.identity.favicon.suffix.lower()
            self.assets.pop("favicon.svg", None)
            self.assets[favicon] = self.identity.favicon
        i = self.identity
        self.site = SiteInfo(
            i.title, when.strftime(_TIME_FORMAT), __version__, mode, i.description, i.site_url, i.footer_links,
            i.repository_url, favicon,
        )
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(resources.files("fmbench.templates"))),
            autoescape=True,
            finalize=visible_text,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            auto_reload=False,  # templates ship with the package; checking their files on every page costs a stat each
        )
        # a chart's figure (|tojson) without the spaces after "," and ":": a tenth of the site's chart data
        self.env.policies["json.dumps_kwargs"] = {"sort_keys": True, "separators": (",", ":")}
        self.env.globals.update(
            url=self.url, asset=self.asset, site=self.site, content_policy=content_policy.META, navigation=navigation
        )
        self.env.tests["attr_key"] = attr_key

    def url(self, path: str) -> str:
        return self.base_url + path.lstrip("/")

    def prepare(self) -> None:
        """Compile every template and hash the assets now (about 0.15 CPU-seconds), so that a server's first request
        of a page does neither."""
        self._asset_versions  # noqa: B018 (a cached property, computed here)
        for name in self.env.list_templates(extensions=("html", "xml")):
            self.env.get_template(name)

    @cached_property
    def _asset_versions(self) -> dict[str, str]:
        return {
            name: hashlib.sha256(path.read_bytes()).hexdigest()[:10] for name, path in self.assets.items()
        }

    def asset(self, name: str) -> str:
        version = self._asset_versions.get(name)
        return self.url(f"assets/{name}") + (f"?v={version}" if version else "")

    def render(self, template: str, context: Any, *, data_as_of: datetime | bool | None = False) -> str:
        """Render a page template with a page context (a dataclass; its fields become names).

        ``data_as_of``: when the page's data last changed (the static build passes the
        newest ingest time of the runs the page reads, ``None`` for a page that reads
        none), printed in the footer instead of the renderer's own time, so a page
        rebuilt from the same data is the same bytes.
        """
        if dataclasses.is_dataclass(context) and not isinstance(context, type):
            names = {f.name: getattr(context, f.name) for f in dataclasses.fields(context)}
        else:
            names = dict(context)
        names.setdefault("page", context)
        for name in ("nav_active", "uses_charts"):  # class-level on a Page (fmbench.views.page)
            if hasattr(context, name):
                names.setdefault(name, getattr(context, name))
        if data_as_of is not False:
            names["generated_at"] = data_as_of.strftime(_TIME_FORMAT) if isinstance(data_as_of, datetime) else ""
        return self.env.get_template(template).render(**names)
