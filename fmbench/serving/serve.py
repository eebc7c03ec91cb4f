"""``fmbench serve``: the site, live from the database, on a real WSGI server.

A Flask application (an app factory with blueprints) that answers every page
with the same views and templates as the static build, plus a small JSON API.
Each request opens the database read-only for its own duration, so
``fmbench ingest`` in another terminal works while the server runs; a request
that meets the database busy gets 503 with ``Retry-After``.
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import os
import socket
import threading
import traceback
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
from flask import Blueprint, Flask, Response, current_app, g, jsonify, request
from werkzeug.exceptions import HTTPException

from fmbench import urls
from fmbench.analysis.tolerance import Tolerance
from fmbench.comparison.caches import Caches
from fmbench.errors import (
    DatabaseBusyError,
    DatabaseError,
    FilterError,
    FmbenchError,
    NotFoundError,
)
from fmbench.ingest import writable
from fmbench.ingest.mirror import reassign_revisions
from fmbench.redaction import redact
from fmbench.serving.warmup import WarmUp, pages_to_warm
from fmbench.serving.watch import start_runs_watcher, start_watcher
from fmbench.storage.dataset import dataset_connection
from fmbench.storage.db import connect, default_db_path
from fmbench.views import (
    NAVIGATION,
    DataKind,
    PageKind,
    content_policy,
    render_page,
    resolve,
    site_context,
)
from fmbench.views.api import compare_json, run_json, runs_json, trials_json
from fmbench.views.diagnostics import diagnostics_page, error_page
from fmbench.views.filters import FIELDS, Filters, closed_values
from fmbench.views.render import Renderer

CSP = content_policy.HEADER
MAX_QUERY_BYTES = 2048
REQUEST_DB_WAIT = 2.0
RETRY_AFTER_SECONDS = "2"


@dataclass
class Diagnostics:
    """What the folder watcher saw: files ingested and files that could not be."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    events: list[dict[str, str]] = field(default_factory=list)

    def add(self, status: str, path: str, message: str) -> None:
        with self.lock:
            self.events.append(
                {"time": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"), "status": status, "file": path, "message": message}
            )
            del self.events[:-200]

    def snapshot(self) -> list[dict[str, str]]:
        with self.lock:
            return list(reversed(self.events))


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str, port: int) -> set[str]:
    """The Host header values a browser sends for this server; anything else is DNS rebinding."""
    names = {host}
    if _is_loopback(host):
        names |= {"localhost", "127.0.0.1", "[::1]"}
    if host in ("0.0.0.0", "::"):

        names |= {"localhost", "127.0.0.1", socket.gethostname()}
    out = set()
    for n in names:
        shown = f"[{n}]" if ":" in n and not n.startswith("[") else n
        out.add(f"{shown}:{port}")
        if port == 80:
            out.add(shown)
    return out


# --- responses kept while the database is unchanged ------------------------------------------


class ResponseCache:
    """Successful responses by request, while the database stays as it was when they were made.

    A page is a function of the database and the request, and the database only
    changes when something ingests into it, which changes its file or its log
    (the *stamp*). So a response is kept under the stamp it was made from, and
    served again until the stamp changes; then every kept response is dropped.
    At most ``max_bytes`` of responses are kept (none larger than ``max_item``):
    one that would pass it drops the others first. Concurrent requests for the
    same page wait for one of them to make it.
    """

    def __init__(self, max_bytes: int = 128 * 2**20, max_item: int = 4 * 2**20) -> None:
        self.max_bytes = max_bytes
        self.max_item = max_item
        self._lock = threading.Lock()
        self._stamp: Hashable = None
        self._items: dict[Hashable, tuple[bytes, int, str]] = {}
        self._size = 0
        self._making: dict[Hashable, threading.Lock] = {}
        self.memo: dict[str, Any] = {}
        """Results several pages share (the regression report), for the current stamp."""

    def _at(self, stamp: Hashable) -> None:
        if stamp != self._stamp:
            self._stamp, self._items, self._size, self.memo = stamp, {}, 0, {}

    def get(self, stamp: Hashable, key: Hashable) -> tuple[bytes, int, str] | None:
        with self._lock:
            self._at(stamp)
            return self._items.get(key)

    def put(self, stamp: Hashable, key: Hashable, entry: tuple[bytes, int, str]) -> None:
        if len(entry[0]) > self.max_item:
            return
        with self._lock:
            self._at(stamp)
            if key in self._items:
                return
            if self._size + len(entry[0]) > self.max_bytes:
                self._items, self._size = {}, 0
            self._items[key] = entry
            self._size += len(entry[0])

    def shared_memo(self, stamp: Hashable) -> dict[str, Any]:
        with self._lock:
            self._at(stamp)
            return self.memo

    @contextlib.contextmanager
    def making(self, key: Hashable) -> Iterator[None]:
        with self._lock:
            lock = self._making.setdefault(key, threading.Lock())
        with lock:
            yield
        with self._lock:
            if self._making.get(key) is lock and not lock.locked():
                del self._making[key]


def database_stamp(db: str, dataset: Any) -> Hashable:
    """What changes whenever the database does: its file's and its log's size and time (a dataset never changes)."""
    if dataset is not None:
        return ("dataset", id(dataset))
    path = Path(db)
    try:
        st = path.stat()
    except OSError:
        return None
    try:
        log = path.with_name(path.name + ".wal").stat()
        wal: tuple[int, int] | None = (log.st_mtime_ns, log.st_size)
    except OSError:
        wal = None
    return (st.st_mtime_ns, st.st_size, st.st_ino, wal)


def cached(view: Callable[..., Response]) -> Callable[..., Response]:
    """Serve a view's successful response again while the database is unchanged (see :class:`ResponseCache`)."""

    @functools.wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Response:
        cache: ResponseCache | None = current_app.config.get("FMBENCH_CACHE")
        stamp = database_stamp(current_app.config["FMBENCH_DB"], current_app.config.get("FMBENCH_DATASET"))
        if stamp is not None and current_app.config.get("FMBENCH_PROJECT") is not None:
            stamp = (stamp, project_stamp(current_app.config["FMBENCH_PROJECT"]))
        if cache is None or stamp is None:
            return view(*args, **kwargs)
        key = (request.path, request.query_string)
        found = cache.get(stamp, key)
        if found is None:
            with cache.making(key):
                found = cache.get(stamp, key)
                if found is None:
                    g.fmbench_stamp = stamp
                    response = view(*args, **kwargs)
                    if response.status_code != 200 or response.is_streamed:
                        return response
                    found = (response.get_data(), response.status_code, response.content_type or "")
                    cache.put(stamp, key, found)
        body, status, content_type = found
        return Response(body, status=status, content_type=content_type)

    return wrapper


def project_stamp(project: Any) -> Hashable:
    """What changes whenever the project's settings, registry or methodology notes do."""
    out = []
    for path in (project.file, project.revisions_file, project.methodology_file):
        try:
            st = path.stat()
            out.append((st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            out.append(None)
    return tuple(out)


_sync_lock = threading.Lock()
_reload_lock = threading.Lock()


def _file_stamp(path: Path) -> Hashable:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _log(line: str) -> None:
    current_app.config["FMBENCH_ECHO"](line)


def current_project() -> Any:
    """The app's project, read again when its ``fmbench.toml`` changed (the site's identity, links and settings with
    it), and the change logged; a file that no longer reads keeps the settings before, and the log says why once."""
    project = current_app.config.get("FMBENCH_PROJECT")
    if project is None:
        return None
    stamp = _file_stamp(project.file)
    if stamp == current_app.config.get("FMBENCH_PROJECT_STAMP"):
        return project
    with _reload_lock:
        project = current_app.config["FMBENCH_PROJECT"]
        if stamp == current_app.config.get("FMBENCH_PROJECT_STAMP"):
            return project
        try:
            fresh = project.reloaded()
            renderer = Renderer(mode="serve", base_url="/", identity=fresh.identity())
            links = fresh.source_links()
        except FmbenchError as exc:
            current_app.config["FMBENCH_PROJECT_STAMP"] = stamp
            _log(f"reload: {project.file} not reloaded, the settings before are kept: {exc}")
            return project
        current_app.config.update(
            FMBENCH_PROJECT=fresh, FMBENCH_RENDERER=renderer, FMBENCH_ASSETS=renderer.assets,
            FMBENCH_SOURCE_LINKS=links, FMBENCH_PROJECT_STAMP=stamp,
        )
        _log(f"reload: {fresh.file} changed; its settings apply from this request on")
        return fresh


def _note_reloads(project: Any) -> None:
    """Log each change of the registry or the methodology notes once (they are read again on the next request)."""
    for name, path in (("revisions", project.revisions_file), ("methodology", project.methodology_file)):
        stamp = _file_stamp(path)
        key = f"FMBENCH_STAMP_{name}"
        if key not in current_app.config:
            current_app.config[key] = stamp
        elif current_app.config[key] != stamp:
            current_app.config[key] = stamp
            _log(f"reload: {path} changed; pages show it from this request on")


def _project_sources() -> tuple[Any, str]:
    """A project's registry and methodology notes as they are now (the runs' revisions assigned again when the
    registry changed); without a project, the registry the app was made with (``None``: the default) and no notes."""
    project = current_project()
    if project is None:
        return current_app.config.get("FMBENCH_REGISTRY"), ""
    _note_reloads(project)
    registry = project.registry()
    if current_app.config.get("FMBENCH_DATASET") is None and current_app.config.get("FMBENCH_SYNCED") is not registry:
        with _sync_lock:
            if current_app.config.get("FMBENCH_SYNCED") is not registry:

                with writable(current_app.config["FMBENCH_DB"], wait=REQUEST_DB_WAIT) as con:
                    reassign_revisions(con, registry)
                current_app.config["FMBENCH_SYNCED"] = registry
    return registry, project.methodology()


# --- per-request database ----------------------------------------------------------------


def _site() -> Any:
    if "site" not in g:
        registry, methodology = _project_sources()
        dataset = current_app.config.get("FMBENCH_DATASET")
        if dataset is not None:  # a Parquet dataset: one in-memory DuckDB of views, a cursor per request
            g.db_cm = contextlib.closing(dataset.cursor())
        else:
            g.db_cm = connect(current_app.config["FMBENCH_DB"], read_only=True, wait=REQUEST_DB_WAIT)
        con = g.db_cm.__enter__()
        renderer: Renderer = current_app.config["FMBENCH_RENDERER"]
        g.site = site_context(con, renderer, registry, methodology)
        g.site.source_links = current_app.config["FMBENCH_SOURCE_LINKS"]
        g.site.caches = current_app.config["FMBENCH_CACHES"]
        project = current_app.config.get("FMBENCH_PROJECT")  # as current_project() just read it
        if project is not None:

            g.site.tolerance = Tolerance.of(project.config.publishing.practical_change)
            g.site.originals = project.originals()
        cache: ResponseCache | None = current_app.config.get("FMBENCH_CACHE")
        stamp = g.get("fmbench_stamp")
        if cache is not None and stamp is not None:
            g.site.memo = cache.shared_memo(stamp)  # the regression report, made once per database state
    return g.site


def _close_db(_: BaseException | None) -> None:
    cm = g.pop("db_cm", None)
    g.pop("site", None)
    if cm is not None:
        cm.__exit__(None, None, None)


# --- blueprints -----------------------------------------------------------------------------

pages = Blueprint("pages", __name__)
api = Blueprint("api", __name__, url_prefix="/api")
assets = Blueprint("assets", __name__)


STRICT_VALUES = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}
"""What ``strict=`` takes (a comparison page's option and the API's)."""


def _strict(value: str) -> bool:
    if value not in STRICT_VALUES:
        raise FilterError(f"strict: {value[:40]!r} is not one of {', '.join(STRICT_VALUES)}")
    return STRICT_VALUES[value]


def _parse_filters(args: dict[str, str], allowed: Iterable[str] = FIELDS) -> Filters:
    """The filters of a query string; a route or suite is checked against the values the database can hold."""
    closed = closed_values(_site().con) if {"route", "suite"} & set(args) else None
    return Filters.parse(args, allowed=allowed, closed=closed)


def _filters_for(kind: PageKind | DataKind) -> tuple[Filters, dict[str, Any]]:
    """The page's filters and its other options, from the query string (anything else is a 400)."""
    args = request.args.to_dict(flat=True)
    options: dict[str, Any] = {}
    if isinstance(kind, PageKind):
        for name in kind.options:
            if name in args:
                value = args.pop(name)
                options[name] = _strict(value) if name == "strict" else value
    allowed = kind.filters if isinstance(kind, PageKind) else ()
    return _parse_filters(args, allowed), options


@pages.route("/", defaults={"path": ""})
@pages.route("/<path:path>")
@cached
def page(path: str) -> Response:
    found = resolve(path)
    if found is None:
        if path and not path.endswith("/") and resolve(path + "/"):
            return Response(status=308, headers={"Location": request.script_root + "/" + path + "/"})
        raise NotFoundError(f"no page at /{path}")
    kind, params = found
    filters, options = _filters_for(kind)
    params.update(options)
    site = _site()
    if isinstance(kind, PageKind):
        html = render_page(site, kind, filters, **params)
        return Response(html, mimetype="text/html")
    return Response(kind.produce(site, filters, **params), content_type=kind.content_type)


@pages.route("/diagnostics/")
def diagnostics() -> Response:
    renderer: Renderer = current_app.config["FMBENCH_RENDERER"]

    context = diagnostics_page(renderer.url, current_app.config["FMBENCH_DIAGNOSTICS"], current_app.config.get("FMBENCH_WATCH"))
    return Response(renderer.render(context.template, context), mimetype="text/html")


@assets.route("/assets/<name>")
def asset(name: str) -> Response:
    files = current_app.config["FMBENCH_ASSETS"]
    if name not in files:  # only the site's own assets, by exact name: no paths, no traversal
        raise NotFoundError(f"no asset {name!r}")
    path: Path = files[name]
    kind = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}.get(path.suffix.lower())
    if kind is not None:
        kind += "; charset=utf-8"
    else:
        kind = {".png": "image/png", ".ico": "image/x-icon"}.get(path.suffix.lower(), "application/octet-stream")
    response = Response(path.read_bytes(), content_type=kind)
    response.headers["Cache-Control"] = "public, max-age=31536000, immutable" if request.args.get("v") else "no-cache"
    return response


@api.route("/runs")
@cached
def api_runs() -> Response:

    filters = _parse_filters(request.args.to_dict(flat=True))
    return jsonify(runs_json(_site(), filters))


@api.route("/runs/<run_id>")
@cached
def api_run(run_id: str) -> Response:

    Filters.parse(request.args.to_dict(flat=True), allowed=())
    return jsonify(run_json(_site(), run_id))


@api.route("/runs/<run_id>/scenarios/<scenario>/trials")
@cached
def api_trials(run_id: str, scenario: str) -> Response:

    page_no = _int_arg("page", 1, 1, 1_000_000)
    per_page = _int_arg("per_page", urls.TRIALS_PER_PAGE, 1, 500)
    unknown = set(request.args) - {"page", "per_page"}
    if unknown:
        raise FilterError(f"unknown parameter {sorted(unknown)[0]!r}; use page and per_page")
    return jsonify(trials_json(_site(), run_id, scenario, page_no, per_page))


@api.route("/compare")
@cached
def api_compare() -> Response:

    args = request.args.to_dict(flat=True)
    allowed = {"device", "baseline", "candidate", "route", "suite", "rule", "strict"}
    unknown = set(args) - allowed
    if unknown:
        raise FilterError(f"unknown parameter {sorted(unknown)[0]!r}; use {', '.join(sorted(allowed))}")
    for name in ("device", "baseline", "candidate"):
        if not args.get(name):
            raise FilterError(f"missing parameter {name!r}: /api/compare?device=Mac17,2&baseline=BUILD&candidate=BUILD")
    if "strict" in args:
        args["strict"] = "true" if _strict(args["strict"]) else "false"
    closed = closed_values(_site().con) if {"route", "suite"} & set(args) else {}
    for name in ("route", "suite"):
        if name in args and args[name] not in closed[name]:
            raise FilterError(f"{name}: {args[name][:40]!r} is not one of {', '.join(sorted(closed[name]))}")
    return jsonify(compare_json(_site(), args))


def _int_arg(name: str, default: int, low: int, high: int) -> int:
    raw = request.args.get(name)
    if raw is None:
        return default
    if not raw.isdigit() or not (low <= int(raw) <= high):
        raise FilterError(f"{name} must be a whole number from {low} to {high}")
    return int(raw)


# --- the application ------------------------------------------------------------------------


def _wants_json() -> bool:
    return request.path.startswith("/api/")


def _error(status: int, title: str, message: str, headers: dict[str, str] | None = None) -> Response:
    if _wants_json():
        response = jsonify({"error": {"status": status, "title": title, "message": message}})
        response.status_code = status
    else:
        renderer: Renderer = current_app.config["FMBENCH_RENDERER"]

        try:
            page = error_page(status, title, message)
            html = renderer.render(page.template, page)
        except Exception:  # the error page must never fail into a traceback
            html = f"<!doctype html><title>{status}</title><h1>{status} {title}</h1>"
        response = Response(html, status=status, mimetype="text/html")
    for k, v in (headers or {}).items():
        response.headers[k] = v
    return response


def create_app(
    db: str | os.PathLike[str] | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    watch: str | os.PathLike[str] | None = None,
    extra_hosts: Iterable[str] = (),
    parquet: str | os.PathLike[str] | None = None,
    cache: bool = True,
    project: Any = None,
    registry: Any = None,
) -> Flask:
    """The Flask application over one database file, or over a Parquet dataset (``parquet``).

    ``cache``: serve a page again without rendering it while the database is unchanged.
    ``project``: a publisher's project (:class:`fmbench.project.Project`): its site identity, and its
    registry and methodology notes read again whenever their files change.
    ``registry``: the suite-revision registry outside a project (``None``: the benchmark's public history;
    the demo gives the fixtures' registry).
    """
    app = Flask(__name__, static_folder=None)
    if parquet is not None and watch is not None:
        raise FmbenchError("a Parquet dataset is read only: --watch needs the DuckDB file")
    renderer = Renderer(
        mode="serve", base_url="/", identity=project.identity() if project is not None else None, navigation=NAVIGATION
    )
    app.config.update(
        FMBENCH_DB=str(parquet) if parquet is not None else str(default_db_path(db)),
        FMBENCH_DATASET=dataset_connection(parquet) if parquet is not None else None,
        FMBENCH_RENDERER=renderer,
        FMBENCH_ASSETS=renderer.assets,
        FMBENCH_PROJECT=project,
        FMBENCH_PROJECT_STAMP=_file_stamp(project.file) if project is not None else None,
        FMBENCH_ECHO=app.logger.warning,
        FMBENCH_REGISTRY=registry,
        FMBENCH_SOURCE_LINKS=project.source_links() if project is not None else {},
        FMBENCH_SYNCED=None,
        FMBENCH_HOSTS=allowed_hosts(host, port) | set(extra_hosts),
        FMBENCH_DIAGNOSTICS=Diagnostics(),
        FMBENCH_CACHE=ResponseCache() if cache else None,
        FMBENCH_WATCH=str(watch) if watch else None,
        MAX_CONTENT_LENGTH=64 * 1024,
        PROPAGATE_EXCEPTIONS=False,
        TRAP_HTTP_EXCEPTIONS=False,
        DEBUG=False,
        TESTING=False,
    )
    app.debug = False
    # The server's caches, handed to every request's site: the resampled sides it met, and the build's, beside the
    # database (a comparison's first request reads them).
    app.config["FMBENCH_CACHES"] = Caches.beside(app.config["FMBENCH_DB"])
    app.register_blueprint(assets)
    app.register_blueprint(api)
    app.register_blueprint(pages)
    app.teardown_appcontext(_close_db)
    _register_request_checks(app)
    _register_error_pages(app)
    return app


def _register_request_checks(app: Flask) -> None:
    """Refuse what this read-only server never answers (another host name, a long query, a write, a repeated
    parameter, a dot-name path) before any view runs, and give every response the site's security headers."""

    @app.before_request
    def guard() -> Response | None:
        # Our own allowlist, not Flask's TRUSTED_HOSTS: that one (Flask 3.1, above our floor of 3.0) compares the
        # name without the port, so it would answer "localhost:9999" too, and it refuses with werkzeug's bare 400
        # rather than this server's error page; the tests hold both (a wrong port refused, the page shown).
        if request.host not in current_app.config["FMBENCH_HOSTS"]:
            return _error(400, "Bad request", "This server does not answer for that host name.")
        if len(request.query_string) > MAX_QUERY_BYTES:
            return _error(414, "Query too long", f"Query strings are limited to {MAX_QUERY_BYTES} bytes.")
        if request.method not in ("GET", "HEAD"):
            return _error(405, "Method not allowed", "This server only reads.")
        for name in request.args:  # one value each: a second one would be dropped silently
            given = len(request.args.getlist(name))
            if given > 1:
                return _error(400, "Bad request", f"parameter {name[:40]!r} is given {given} times; give it once")
        if any(part.startswith(".") for part in request.path.split("/")):
            # No page, data file or asset of the site has a dot-name: such a path is never served (as a static
            # host should not serve a site's dot-files), whatever a route would make of it.
            return _error(404, "Not found", "No page at this address.")
        return None

    @app.after_request
    def headers(response: Response) -> Response:
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Cross-Origin-Resource-Policy"] = "same-origin"
        if "Cache-Control" not in response.headers:
            response.headers["Cache-Control"] = "no-store"
        return response


def _register_error_pages(app: Flask) -> None:
    """Answer each kind of failure with its status and one sentence (an HTML error page, or JSON under ``/api/``);
    a database held by a writer is 503 with ``Retry-After``, anything unexpected 500 with its traceback logged."""

    @app.errorhandler(FilterError)
    def bad_filter(exc: FilterError) -> Response:
        return _error(400, "Bad request", str(exc))

    @app.errorhandler(NotFoundError)
    def not_found(exc: NotFoundError) -> Response:
        return _error(404, "Not found", str(exc))

    @app.errorhandler(DatabaseBusyError)
    def busy(exc: DatabaseBusyError) -> Response:
        return _error(
            503, "Busy", "The database is being written by another fmbench process; try again in a moment.",
            {"Retry-After": RETRY_AFTER_SECONDS},
        )

    @app.errorhandler(DatabaseError)
    def database(exc: DatabaseError) -> Response:
        return _error(503, "Database unavailable", str(exc), {"Retry-After": RETRY_AFTER_SECONDS})

    @app.errorhandler(FmbenchError)
    def domain(exc: FmbenchError) -> Response:
        return _error(400, "Bad request", str(exc))

    @app.errorhandler(HTTPException)
    def http(exc: HTTPException) -> Response:
        return _error(exc.code or 500, exc.name, exc.description or exc.name)

    @app.errorhandler(Exception)
    def crash(exc: Exception) -> Response:
        if _is_lock_conflict(exc):
            return busy(DatabaseBusyError(str(exc)))
        app.logger.error("unexpected error on %s\n%s", request.path, "".join(traceback.format_exception(exc)))
        return _error(500, "Internal error", "fmbench could not render this page; the details are in the server's log.")


def comparison_pages(app: Flask) -> list[str]:
    """The paths of the comparison pages ``app`` serves, from the database as it is now (what a warm-up makes)."""
    with app.test_request_context("/", headers={"Host": serving_host(app)}):
        return pages_to_warm(_site())


def serving_host(app: Flask) -> str:
    """One Host header ``app`` answers for (its own requests carry it)."""
    return sorted(app.config["FMBENCH_HOSTS"])[0]


def start_warm_up(app: Flask, echo: Any = print) -> WarmUp:
    """Make every comparison page of ``app`` in the background, at low priority (see :mod:`fmbench.serving.warmup`)."""
    warm = WarmUp(app, lambda: comparison_pages(app), serving_host(app), echo=echo)
    warm.start()
    return warm


def _is_lock_conflict(exc: Exception) -> bool:

    return isinstance(exc, duckdb.Error) and "lock" in str(exc).lower()


def describe_exposure(host: str, port: int) -> str | None:
    """What listening on ``host`` exposes, when it is not loopback only."""
    if _is_loopback(host):
        return None
    return (
        f"warning: listening on {host}:{port} exposes every ingested run, its responses and its original "
        "files to anyone who can reach this machine on that address"
    )


def run_server(
    db: str | os.PathLike[str] | None,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    watch: str | os.PathLike[str] | None = None,
    threads: int = 8,
    echo: Any = print,
    parquet: str | os.PathLike[str] | None = None,
    project: Any = None,
    max_bytes: int | None = None,
    registry: Any = None,
    max_trials: int | None = None,
    warm_up: bool = True,
) -> None:
    """Serve until interrupted, with waitress (never Flask's development server or debugger), its socket
    and settings from :mod:`fmbench.serving.listener`; a bind that fails raises its ``ServeError`` (one line).

    ``parquet``: serve a Parquet dataset (``fmbench export --parquet``) instead of the database.
    ``project``: serve a publisher's project (see :func:`create_app`).
    ``max_bytes``, ``max_trials``: the largest run file, and most trials, the watcher ingests (the reader's
    defaults when not given).
    ``warm_up``: make the comparison pages in the background once serving (see :mod:`fmbench.serving.warmup`).
    """
    # waitress is loaded only by the command that serves.
    from fmbench.serving.listener import listening_server

    if parquet is not None:
        app = create_app(host=host, port=port, watch=watch, parquet=parquet, project=project, registry=registry)
        db_path: Path | str = str(parquet)
    else:
        db_path = default_db_path(db)
        # A watcher writes, so it migrates as it opens; a reader refuses an older database and says
        # to run `fmbench migrate`. A missing database is created empty, before any reader arrives.
        if db_path.exists() and not watch:
            with connect(db_path, read_only=True):
                pass
        else:
            with writable(db_path):
                pass
        app = create_app(db_path, host=host, port=port, watch=watch, project=project, registry=registry)
    app.config["FMBENCH_ECHO"] = echo  # reloads of the project's files are said where the server talks
    server = listening_server(app, host, port, threads=threads)  # bound before the watcher starts
    if watch:

        limit: dict[str, int] = {} if max_bytes is None else {"max_bytes": max_bytes}
        if max_trials is not None:
            limit["max_trials"] = max_trials
        start_watcher(
            Path(watch), Path(db_path), app.config["FMBENCH_DIAGNOSTICS"], echo=echo,
            project=project.root if project is not None else None, **limit,
        )
    elif project is not None and parquet is None:  # the runs folder, mirrored as it changes (added, changed, removed)
        limit = {} if max_bytes is None else {"max_bytes": max_bytes}
        if max_trials is not None:
            limit["max_trials"] = max_trials
        start_runs_watcher(project.root, project.runs_dir, Path(db_path), app.config["FMBENCH_DIAGNOSTICS"],
                           echo=echo, **limit)
    warning = describe_exposure(host, port)
    if warning:
        echo(warning)
    shown = f"[{host}]" if ":" in host else host
    app.config["FMBENCH_RENDERER"].prepare()  # the templates compiled before the first request, not during it
    echo(f"fmbench serving {redact(str(db_path))} at http://{shown}:{port}/ (Ctrl-C to stop)")
    warming = start_warm_up(app, echo=echo) if warm_up else None
    try:
        server.run()
    finally:
        if warming is not None:
            warming.stop()

