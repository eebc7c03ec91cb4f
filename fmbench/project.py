"""A publisher's project: ``fmbench.toml``, found from the current folder upward, read and checked.

A project is a folder (usually a git repository) that holds the publisher's
run files, their suite-revision registry, their methodology notes and the
settings of their site. Every command finds it from the current folder
upward, or from ``--project DIR``. Where a setting can also come from a flag
or the environment, the order is: the flag, then the environment
(``FMBENCH_DB``), then the project file, then fmbench's default.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal
from urllib.parse import quote, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from fmbench import DISTRIBUTION, __version__
from fmbench.analysis.revisions import load_registry, parse_registry, read_registry_text
from fmbench.analysis.tolerance import Tolerance
from fmbench.errors import FmbenchError
from fmbench.ingest import collect_run_files
from fmbench.ingest.mirror import mirror_runs
from fmbench.install_source import install_warning, installed_source
from fmbench.publish.build import build_site
from fmbench.publish.summary import summarize_build
from fmbench.redaction import address_problem
from fmbench.runfile.record import run_id_for
from fmbench.runfile.user_files import FileTooLarge, UnreadableFile, read_text, sha256_of
from fmbench.storage.db import ENV_DB
from fmbench.views.methodology import PublisherNotes, publisher_notes
from fmbench.views.render import SiteIdentity

if TYPE_CHECKING:
    from fmbench.ingest.mirror import MirrorReport
    from fmbench.publish.build import BuildReport
    from fmbench.publish.summary import BuildSummary

PROJECT_FILE = "fmbench.toml"
PROJECT_FORMAT = 1
DEFAULT_INSTALL = f"{DISTRIBUTION}=={__version__}"
"""``[publishing] install`` when the file has none: this fmbench release, from PyPI."""


MAX_PROJECT_FILE_BYTES = 1024 * 1024
"""fmbench.toml is a few dozen lines; a megabyte is far past any."""
MAX_METHODOLOGY_BYTES = 256 * 1024
"""A publisher's methodology notes, by default (``[publishing] methodology_max_bytes``): ten times fmbench's own
methodology (rendering grows with the text: 4 MB took a minute and a gigabyte)."""
MAX_TOML_DEPTH = 32
"""How deeply fmbench.toml may nest arrays and inline tables (tomllib's parser recurses on each level)."""


class ProjectError(FmbenchError):
    """The project file is missing, unreadable or wrong; the message names the file and the key."""


class _Strict(BaseModel):
    # Each field's docstring is its description: docs/reference/configuration.md is generated from them.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, use_attribute_docstrings=True)


_URL_TABS_AND_NEWLINES = re.compile("[\t\n\r]")
_URL_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_CONTROLS = re.compile("[\x00-\x1f\x7f]")


class FooterLink(_Strict):
    label: Annotated[str, Field(min_length=1)]
    """The link's text."""
    url: Annotated[str, Field(min_length=1)]
    """An http(s) or mailto: link, or a path on the site."""

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        # The scheme is judged as a browser reads the link: leading and trailing C0 controls and spaces
        # stripped, tabs and line breaks inside removed (" javascript:" and "java\tscript:" run script).
        url = _URL_TABS_AND_NEWLINES.sub("", value.strip("".join(map(chr, range(0x21)))))
        if _CONTROLS.search(url):
            raise ValueError("a link holds no control characters")
        scheme = _URL_SCHEME.match(url)
        if scheme and scheme.group(1).lower() not in ("http", "https", "mailto"):
            raise ValueError("expected an http(s) or mailto: link, or a path on the site")
        if not url:
            raise ValueError("expected an http(s) or mailto: link, or a path on the site, not blank")
        return url


def _absolute_http(value: str, what: str) -> str:
    if value and not value.startswith(("https://", "http://")):
        raise ValueError(f"expected an absolute http(s) URL such as https://owner.github.io/repo/ for {what}, or \"\"")
    problem = address_problem(value)  # published in every page (og:url, rel=alternate, the Atom feed)
    if problem:
        raise ValueError(f"{problem} for {what}")
    if value and not urlsplit(value).hostname:
        raise ValueError(f"expected a URL naming a host, such as https://owner.github.io/repo/, for {what}")
    return value


class SiteSettings(_Strict):
    title: Annotated[str, Field(min_length=1)] = "FoundationModelsBench results"
    """The site's title, in every page's header and title."""
    description: str = ""
    """One sentence about the site, for search engines and link previews."""
    site_url: str = ""
    """The absolute URL the site is published at; its path is the site's base path."""
    favicon: str = ""
    """A file of the project (.svg, .png or .ico) used as the site's icon; empty: fmbench's own."""
    footer_links: list[FooterLink] = Field(default_factory=list)
    """Links shown in every page's footer, one ``[[site.footer_links]]`` table each (``label`` and ``url``)."""

    @field_validator("site_url")
    @classmethod
    def _site_url(cls, value: str) -> str:
        value = _absolute_http(value, "the published site")
        return value if not value or value.endswith("/") else value + "/"

    @field_validator("favicon")
    @classmethod
    def _favicon(cls, value: str) -> str:
        if value and Path(value).suffix.lower() not in (".svg", ".png", ".ico"):
            raise ValueError("expected a .svg, .png or .ico file of the project, or \"\"")
        return value


class RepositorySettings(_Strict):
    url: str = ""
    """Where the project's files can be browsed (``https://github.com/owner/repo``), for links to run files."""
    branch: Annotated[str, Field(min_length=1)] = "main"
    """The branch the run files are linked at."""
    runs_path: Annotated[str, Field(min_length=1)] = "runs"
    """The runs folder's path inside the repository."""

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        return _absolute_http(value, "the repository").rstrip("/")


class PathSettings(_Strict):
    runs: Annotated[str, Field(min_length=1)] = "runs"
    """The run files (and their ``.meta.yaml`` sidecars); ``fmbench build`` makes the database hold exactly these."""
    database: Annotated[str, Field(min_length=1)] = "fmbench.duckdb"
    """The DuckDB database, rebuilt from the runs folder (not committed; cached between CI builds)."""
    output: Annotated[str, Field(min_length=1)] = "_site"
    """Where ``fmbench build`` writes the site."""
    revisions: Annotated[str, Field(min_length=1)] = "revisions.yaml"
    """The site's suite-revision registry (docs/reference/revisions.md)."""
    methodology: Annotated[str, Field(min_length=1)] = "methodology.md"
    """The publisher's methodology notes, shown on the methodology page."""


class PracticalChange(_Strict):
    """The smallest change a comparison calls better or worse, beside the interval (:mod:`fmbench.analysis.tolerance`)."""

    latency: Annotated[float, Field(ge=0)] = 0.05
    """Relative, for times (TTFT, duration): 0.05 is 5 %."""
    throughput: Annotated[float, Field(ge=0)] = 0.05
    """Relative, for tokens and characters per second."""
    memory: Annotated[float, Field(ge=0)] = 0.05
    """Relative, for peak memory."""
    rates: Annotated[float, Field(ge=0)] = 5.0
    """In percentage points, for pass and success rates."""


class PublishingSettings(_Strict):
    originals: Literal["gzip", "link", "copy"] | None = None
    """How the site carries the original run files: ``gzip`` (each gzipped, byte-identical once decompressed, its
    SHA-256 shown), ``link`` (to the file in the repository, from ``[repository]``; no copy) or ``copy`` (as ingested).
    Not set: ``link`` when the project names its repository (the files are there already), else ``gzip``
    (see :meth:`Project.originals`)."""
    install: Annotated[str, Field(min_length=1)] = DEFAULT_INSTALL
    """What the project's Pages workflow installs, as ``pip install "<install>"``: a requirement, a wheel file of the
    repository or a git URL. ``fmbench init`` writes what the fmbench that wrote the project was installed from (a
    release's version, or a git URL at its commit); installed from a checkout or a wheel file, it says how to set it."""
    practical_change: PracticalChange = PracticalChange()
    """The smallest change a comparison calls better or worse, beside its interval (the keys below)."""
    methodology_max_bytes: Annotated[int, Field(ge=1)] = MAX_METHODOLOGY_BYTES
    """The largest methodology notes file (``paths.methodology``) a build or ``serve`` reads, in bytes, counted as
    it is read; a longer file is refused in one line naming it. Rendering grows with the text (4 MB took a minute
    and a gigabyte): raise it only as far as the notes need."""
    strict: bool = False
    """Whether ``fmbench build`` exits 1 when a run file of the runs folder cannot be read, or a sidecar cannot be
    read or holds an unknown key (after building the site); ``fmbench build --strict`` turns it on for one build."""

    @field_validator("install")
    @classmethod
    def _install(cls, value: str) -> str:
        if value != value.strip() or "\n" in value or "\r" in value:
            raise ValueError(f"expected one requirement, wheel file or git URL for pip on one line, such as {DEFAULT_INSTALL!r}")
        if value.startswith("-"):
            raise ValueError(f"expected a requirement, wheel file or git URL for pip, not a pip option, such as {DEFAULT_INSTALL!r}")
        return value


class ProjectConfig(_Strict):
    format: Literal[1] = PROJECT_FORMAT
    """The version of this file's layout; 1."""
    site: SiteSettings = SiteSettings()
    """The site's title, description, address, icon and footer links."""
    repository: RepositorySettings = RepositorySettings()
    """Where the project's files can be browsed, for links to the run files."""
    paths: PathSettings = PathSettings()
    """Where the project's files are, relative to ``fmbench.toml``'s folder."""
    publishing: PublishingSettings = PublishingSettings()
    """How the site is built and published."""


_EXPECTED = {
    "string_type": "expected text",
    "float_type": "expected a number",
    "int_type": "expected a whole number",
    "bool_type": "expected true or false",
    "dict_type": "expected a table",
    "model_type": "expected a table",
    "tuple_type": "expected a list",
    "list_type": "expected a list",
}


def _key(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _describe(error: dict[str, Any], model: type[BaseModel]) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        parent: Any = model
        for part in error["loc"][:-1]:
            if isinstance(part, int):
                continue
            annotation = parent.model_fields[part].annotation
            parent = getattr(annotation, "__args__", (annotation,))[0] if not isinstance(annotation, type) else annotation
        known = ", ".join(parent.model_fields) if isinstance(parent, type) and issubclass(parent, BaseModel) else ""
        return "unknown key" + (f" (known here: {known})" if known else "")
    if kind in _EXPECTED:
        return f"{_EXPECTED[kind]}, got {type(error.get('input')).__name__.replace('str', 'text')} {error.get('input')!r}"
    message = str(error["msg"]).removeprefix("Value error, ")
    return message[0].lower() + message[1:] if message else kind


def toml_too_deep(text: str, limit: int) -> tuple[int, int] | None:
    """The line and column (from 1) where ``text``'s arrays and inline tables first nest past ``limit``
    levels, or ``None``. Brackets inside strings and comments do not count. Python's TOML parser recurses
    once a level, so a file nested thousands deep must be refused before it is parsed."""
    depth = 0
    line, start = 1, 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line, start = line + 1, i + 1
        elif c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif c in "\"'":
            quote = c * 3 if text.startswith(c * 3, i) else c
            j = i + len(quote)
            while j < n and not text.startswith(quote, j):
                if c == '"' and text[j] == "\\":
                    j += 1
                elif text[j] == "\n":
                    if len(quote) == 1:
                        break  # an unclosed one-line string: the parser says so
                    line, start = line + 1, j + 1
                j += 1
            i = j + len(quote)
            continue
        elif c in "[{":
            depth += 1
            if depth > limit:
                return line, i - start + 1
        elif c in "]}":
            depth = max(0, depth - 1)
        i += 1
    return None


def parse_config(text: str, source: str) -> ProjectConfig:
    """The settings in ``text`` (the contents of ``source``); one line naming the file and the key if wrong."""
    too_deep = toml_too_deep(text, MAX_TOML_DEPTH)
    if too_deep is not None:
        line, column = too_deep
        raise ProjectError(
            f"{source}: line {line}, column {column}: arrays and inline tables nested more than {MAX_TOML_DEPTH} "
            "levels deep; no setting needs more than two"
        )
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProjectError(f"{source}: not valid TOML: {exc}") from None
    try:
        return ProjectConfig.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        more = exc.error_count() - 1
        suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        raise ProjectError(f"{source}: {_key(first['loc'])}: {_describe(dict(first), ProjectConfig)}{suffix}") from None


@dataclass(frozen=True)
class Project:
    """A project folder and its settings, with every path resolved against the folder."""

    root: Path
    config: ProjectConfig
    _cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def file(self) -> Path:
        return self.root / PROJECT_FILE

    def path(self, relative: str) -> Path:
        return (self.root / relative).resolve() if not Path(relative).is_absolute() else Path(relative)

    @property
    def runs_dir(self) -> Path:
        return self.path(self.config.paths.runs)

    @property
    def database(self) -> Path:
        return self.path(self.config.paths.database)

    @property
    def output(self) -> Path:
        return self.path(self.config.paths.output)

    @property
    def revisions_file(self) -> Path:
        return self.path(self.config.paths.revisions)

    @property
    def methodology_file(self) -> Path:
        return self.path(self.config.paths.methodology)

    def require_runs_dir(self) -> Path:
        if not self.runs_dir.is_dir():
            raise ProjectError(
                f"{self.runs_dir}: the runs folder of {self.file} (paths.runs = {self.config.paths.runs!r}) "
                "does not exist; create it and put run files in it, or fix paths.runs"
            )
        return self.runs_dir

    def registry(self) -> Any:
        """The publisher's suite-revision registry (read again whenever its file changes)."""

        path = self.revisions_file
        try:
            stat = path.stat()
            text_key = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            raise ProjectError(
                f"{path}: the suite-revision registry of {self.file} (paths.revisions) does not exist; "
                "restore it or fix paths.revisions"
            ) from None
        cached = self._cache.get("registry")
        if cached is None or cached[0] != text_key:
            cached = (text_key, parse_registry(read_registry_text(path), str(path)))
            self._cache["registry"] = cached
        return cached[1]

    def methodology(self) -> str:
        """The publisher's methodology notes as the site shows them (empty when the file is absent): without the
        placeholder text ``fmbench init`` wrote (see :func:`fmbench.views.methodology.publisher_notes`)."""
        return self.methodology_notes().text

    def methodology_notes(self) -> PublisherNotes:
        """The publisher's methodology notes, and which of ``fmbench init``'s placeholder sections they still hold."""
        try:
            text = read_text(self.methodology_file, self.config.publishing.methodology_max_bytes)
        except FileNotFoundError:
            return publisher_notes("")
        except FileTooLarge as exc:
            raise ProjectError(
                f"{self.methodology_file}: {exc.reason} for methodology notes (the whole of fmbench's own "
                f"methodology is 23 KB); shorten it, link to a longer text, or raise [publishing] "
                f"methodology_max_bytes in {self.file}"
            ) from None
        except UnreadableFile as exc:
            raise ProjectError(str(exc)) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ProjectError(f"{self.methodology_file}: cannot be read: {exc}") from None
        return publisher_notes(text)

    def identity(self) -> Any:

        site = self.config.site
        favicon = None
        if site.favicon:
            favicon = self.path(site.favicon).resolve()  # a symbolic link is judged by where it leads
            if not favicon.is_relative_to(self.root.resolve()):
                raise ProjectError(
                    f"{self.file}: site.favicon: {site.favicon!r} is outside the project folder; "
                    "put the icon in the project and name it relative to it"
                )
            if not favicon.is_file():
                raise ProjectError(f"{self.file}: site.favicon: {favicon} does not exist; add the file or set favicon = \"\"")
        return SiteIdentity(
            title=site.title,
            description=site.description,
            site_url=site.site_url,
            footer_links=tuple((link.label, link.url) for link in site.footer_links),
            repository_url=self.runs_url(),
            favicon=favicon,
        )

    def runs_url(self) -> str:
        """Where the run files can be browsed in the repository (``…/tree/main/runs``), or empty."""
        repo = self.config.repository
        if not repo.url:
            return ""
        return f"{repo.url}/tree/{repo.branch}/{repo.runs_path.strip('/')}"

    def source_links(self) -> dict[str, str]:
        """Run id -> the run file's page in the repository, for every run file of the runs folder (none without
        ``repository.url``)."""


        repo = self.config.repository
        if not repo.url or not self.runs_dir.is_dir():
            return {}
        files, _ = collect_run_files([self.runs_dir])
        links = {}
        for path in files:
            try:
                run_id = run_id_for(sha256_of(path))
            except (UnreadableFile, OSError):  # swapped for a FIFO or gone since listed: the mirroring names it
                continue
            relative = path.relative_to(self.runs_dir).as_posix()
            links.setdefault(run_id, f"{repo.url}/blob/{repo.branch}/{repo.runs_path.strip('/')}/{quote(relative)}")
        return links

    def originals(self) -> str:
        """The originals policy the site is built with: the one set, else ``link`` where the repository is known."""
        chosen = self.config.publishing.originals
        if chosen is not None:
            return chosen
        return "link" if self.config.repository.url else "gzip"

    def base_url(self) -> str:
        """The path of ``site_url`` (``/repo/`` for ``https://owner.github.io/repo/``), or ``/``."""

        return urlsplit(self.config.site.site_url).path or "/" if self.config.site.site_url else "/"

    def reloaded(self) -> Project:
        """The project as its ``fmbench.toml`` says now (``serve`` reloads an edited file); a file that no longer
        reads raises :class:`ProjectError`, as loading does."""
        return load_project(self.root)

    def database_for(self, given: str | os.PathLike[str] | None) -> Path:
        """The flag, then ``$FMBENCH_DB``, then the project's database."""
        if given:
            return Path(given)
        env = os.environ.get(ENV_DB)
        return Path(env) if env else self.database


def load_project(root: str | os.PathLike[str]) -> Project:
    folder = Path(root).resolve()
    file = folder / PROJECT_FILE
    try:
        text = read_text(file, MAX_PROJECT_FILE_BYTES)
    except FileTooLarge as exc:
        raise ProjectError(f"{file}: {exc.reason} for the settings file; a project's settings are a few lines") from None
    except UnreadableFile as exc:
        raise ProjectError(str(exc)) from None
    except FileNotFoundError:
        raise ProjectError(f"{folder}: holds no {PROJECT_FILE}; run `fmbench init {root}` to make it a project") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProjectError(f"{file}: cannot be read: {exc}") from None
    return Project(folder, parse_config(text, str(file)))


def find_project_root(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The nearest folder from ``start`` (default: the current folder) upward that holds ``fmbench.toml``."""
    here = Path(start if start is not None else os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / PROJECT_FILE).is_file():
            return folder
    return None


def discover_project(given: str | os.PathLike[str] | None = None) -> Project | None:
    """The project of ``--project DIR`` (which must be one), else the one around the current folder, else none."""
    if given is not None:
        return load_project(given)
    root = find_project_root()
    return load_project(root) if root is not None else None


def build_project(
    project: Project,
    *,
    db: str | os.PathLike[str] | None = None,
    parquet: str | None = None,
    out: str | os.PathLike[str] | None = None,
    base_url: str | None = None,
    echo: Any = None,
    max_bytes: int | None = None,
    originals: str | None = None,
    jobs: int | None = None,
    strict: bool = False,
    max_trials: int | None = None,
    progress: Any = None,
    build_progress: Any = None,
) -> ProjectBuild:
    """Mirror the runs folder into the database (not for a Parquet dataset), then build the project's site.

    A run file that cannot be read is left out and named in the summary; the site holds every other run.
    ``max_bytes``, ``max_trials``: the largest run file, and most trials, the mirroring ingests (the reader's
    defaults when not given).
    ``originals``: overrides the project's ``[publishing] originals``.
    ``jobs``: processes that render at once (see :func:`fmbench.publish.build.build_site`).
    ``strict``: the summary fails the build when a file was refused (so does the project's ``[publishing] strict``).
    ``progress(done, total, name)``: called as mirroring ingests files (a terminal's progress bar).
    ``build_progress(stage, done, total)``: called as the site is built (see :func:`fmbench.publish.build.build_site`).

    ``echo`` is given each change mirroring made (an ingested, replaced or dropped file); the files it could not
    read are in the summary.
    """

    registry = project.registry()
    identity = project.identity()
    methodology = project.methodology()
    mirrored = None
    if parquet is not None:
        source: str | Path = parquet
    else:
        source = project.database_for(db)
        limit = {} if max_bytes is None else {"max_bytes": max_bytes}
        if max_trials is not None:
            limit["max_trials"] = max_trials
        mirrored = mirror_runs(project.require_runs_dir(), source, registry, progress=progress, **limit)
        if echo is not None:
            for line in mirrored.describe_lines(errors=False):
                echo(line)
    report = build_site(
        source,
        out if out is not None else project.output,
        base_url=base_url if base_url is not None else project.base_url(),
        registry=registry,
        identity=identity,
        methodology=methodology,
        source_links=project.source_links() if parquet is None else {},
        tolerance=Tolerance.of(project.config.publishing.practical_change),
        originals=originals if originals is not None else project.originals(),
        jobs=jobs,
        progress=build_progress,
    )
    summary = summarize_build(
        source, registry=registry, mirrored=mirrored, project=project,
        strict=strict or project.config.publishing.strict,
    )
    warning = install_warning(project.config.publishing.install, installed_source(), str(project.file))
    return ProjectBuild(mirrored, report, summary, warning)


def run_build(
    project: Project | None,
    *,
    db: str | os.PathLike[str] | None = None,
    parquet: str | None = None,
    out: str | os.PathLike[str] | None = None,
    base_url: str | None = None,
    originals: str | None = None,
    strict: bool = False,
    jobs: int | None = None,
    echo: Any = None,
    max_bytes: int | None = None,
    max_trials: int | None = None,
    progress: Any = None,
    build_progress: Any = None,
) -> ProjectBuild:
    """What ``fmbench build`` does: in a project, :func:`build_project` with these arguments; else the site of
    the database (or Parquet dataset) alone, into ``out`` (default ``_site``), and its summary by the default
    registry (``echo``, ``max_bytes``, ``max_trials`` and ``progress`` are about mirroring a project's runs).
    """
    if project is not None:
        return build_project(
            project, db=db, parquet=parquet, out=out, base_url=base_url, echo=echo, max_bytes=max_bytes,
            originals=originals, jobs=jobs, strict=strict, max_trials=max_trials, progress=progress,
            build_progress=build_progress,
        )
    source = parquet if parquet is not None else db
    report = build_site(
        source, out if out is not None else "_site", base_url=base_url or "/", originals=originals or "gzip",
        jobs=jobs, progress=build_progress,
    )
    return ProjectBuild(None, report, summarize_build(source, registry=load_registry(), strict=strict))


@dataclass(frozen=True)
class ProjectBuild:
    """What building a project did: mirroring its runs folder (``None`` for a dataset), the build, its summary."""

    mirrored: MirrorReport | None
    report: BuildReport
    summary: BuildSummary
    install_warning: str = ""
    """One line when the project's workflow cannot install the fmbench it names (:mod:`fmbench.install_source`)."""
