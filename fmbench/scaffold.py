"""``fmbench init``: a new project folder with everything a publisher needs to put results on GitHub Pages.

It writes ``fmbench.toml`` (the site's settings, every key with its default
and a comment), ``revisions.yaml`` (the publisher's suite-revision registry,
seeded with the benchmark's public history), ``methodology.md`` (their own
notes), ``runs/`` with a short README, the GitHub Actions workflow that
builds and deploys the site, and a ``.gitignore``. A folder that already
holds a project is refused, and so is any file that would be overwritten.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from fmbench import DISTRIBUTION, __version__
from fmbench.analysis.revisions import public_registry_text
from fmbench.errors import FmbenchError
from fmbench.install_source import InstallSource, install_warning, installed_source
from fmbench.project import (
    DEFAULT_INSTALL,
    MAX_METHODOLOGY_BYTES,
    PROJECT_FILE,
    ProjectError,
    find_project_root,
    parse_config,
)
from fmbench.views.methodology import PUBLISHER_TEMPLATE
from fmbench.write_errors import WriteError, writing

WORKFLOW = Path(".github/workflows/publish.yml")

_GITHUB_REMOTE = re.compile(r"github\.com[:/](?P<owner>[A-Za-z0-9_.-]+)/(?P<repo>[A-Za-z0-9_.-]+?)(?:\.git)?/?$")


@dataclass(frozen=True)
class InitReport:
    root: Path
    files: tuple[Path, ...]
    site_url: str
    install_warning: str = ""
    """One line when the workflow cannot install the fmbench that wrote the project (see
    :mod:`fmbench.install_source`), else empty."""


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def github_urls(remote: str) -> tuple[str, str]:
    """The Pages address and repository address of a GitHub remote, or two empty strings."""
    match = _GITHUB_REMOTE.search(remote.strip())
    if not match:
        return "", ""
    owner, repo = match["owner"], match["repo"]
    repository = f"https://github.com/{owner}/{repo}"
    if repo.lower() == f"{owner.lower()}.github.io":
        return f"https://{owner.lower()}.github.io/", repository
    return f"https://{owner.lower()}.github.io/{repo}/", repository


def repository_for_pages(site_url: str) -> str:
    """``https://github.com/owner/repo`` for a GitHub Pages address ``https://owner.github.io/repo/``, else empty."""
    match = re.fullmatch(r"https://(?P<owner>[A-Za-z0-9-]+)\.github\.io/(?P<repo>[A-Za-z0-9_.-]+)/?", site_url.strip())
    if match:
        return f"https://github.com/{match['owner']}/{match['repo']}"
    match = re.fullmatch(r"https://(?P<owner>[A-Za-z0-9-]+)\.github\.io/?", site_url.strip())
    return f"https://github.com/{match['owner']}/{match['owner']}.github.io" if match else ""


def _origin(folder: Path) -> str:
    try:
        found = subprocess.run(
            ["git", "-C", str(folder), "config", "--get", "remote.origin.url"],
            capture_output=True, text=True, timeout=10, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return found.stdout.strip() if found.returncode == 0 else ""


def project_toml(title: str, site_url: str, repository_url: str, install: str = DEFAULT_INSTALL) -> str:
    return f"""# fmbench project: the settings of this results site. `fmbench build` in this folder (or below it)
# reads them; `fmbench --help` lists the commands. Paths are relative to this file's folder.
format = 1

[site]
title = {_toml_string(title)}
description = {_toml_string(f"{title}: FoundationModelsBench runs on Apple devices, every figure recomputed from the trials.")}
# The absolute address the site is published at. Its path is where every link starts (a GitHub
# Pages project site lives at https://OWNER.github.io/REPOSITORY/); the Atom feed and the
# OpenGraph tags use the whole address. Empty: the site is built for the root of a host.
site_url = {_toml_string(site_url)}
# The site's icon: a .svg, .png or .ico file of this project. Empty: fmbench's own.
favicon = ""
# Links shown in every page's footer, one [[site.footer_links]] table each:
# [[site.footer_links]]
# label = "About these runs"
# url = "https://example.org/about"

[repository]
# Where this project's files can be browsed, for links to the run files.
url = {_toml_string(repository_url)}
branch = "main"
# The runs folder's path inside the repository.
runs_path = "runs"

[paths]
# (.github/workflows/publish.yml names the runs folder, the database and the output too: change
# them there as well.)
# Run files (and their .meta.yaml sidecars); `fmbench build` makes the database hold exactly these.
runs = "runs"
# The DuckDB database (rebuilt from the runs folder; not committed, cached between CI builds).
database = "fmbench.duckdb"
# Where `fmbench build` writes the site.
output = "_site"
# This site's suite-revision registry and methodology notes.
revisions = "revisions.yaml"
methodology = "methodology.md"

[publishing]
# How the site carries the original run files: "gzip" (compressed copies, byte-identical once
# decompressed, each one's SHA-256 shown), "link" (links into the repository above, no copy) or
# "copy" (the files as they are). Unset, it is "link" when [repository] names the repository (the
# files are there already) and "gzip" otherwise. `fmbench build --originals` overrides it.
# originals = "link"
# What .github/workflows/publish.yml installs to build the site, as `pip install "<install>"`: the
# fmbench that wrote this project, as it was installed (a release from PyPI, or a git URL at its
# commit). To build with another fmbench, name a release ("{DEFAULT_INSTALL}"), a wheel
# file of this repository ("wheels/{DISTRIBUTION.replace("-", "_")}-{__version__}-py3-none-any.whl") or a git
# URL ("{DISTRIBUTION} @ git+https://github.com/OWNER/fmbench@COMMIT").
install = {_toml_string(install)}
# A run file that cannot be read is left out of the site and named; with strict = true the build
# then exits 1 (after building the site of the others), so CI fails. `fmbench build --strict` too.
strict = false
# The largest methodology notes file (paths.methodology) a build or `fmbench serve` reads, in bytes,
# counted as it is read; a longer one is refused. Rendering grows with the text: raise it only as
# far as the notes need.
methodology_max_bytes = {MAX_METHODOLOGY_BYTES}

# The smallest change called better or worse, beside the statistical test: a change whose interval
# excludes zero but whose size is under it reads "within tolerance". The site's comparisons,
# regressions and feed and `fmbench compare` in this folder use it.
[publishing.practical_change]
latency = 0.05     # relative: 5 % of a time (TTFT, duration)
throughput = 0.05  # relative: 5 % of tokens or characters per second
memory = 0.05      # relative: 5 % of peak memory
rates = 5.0        # percentage points of a pass or success rate
"""


REVISIONS_YAML = public_registry_text()
"""The benchmark's public revision history, as shipped in ``fmbench/data/revisions.yaml``."""


METHODOLOGY_MD = PUBLISHER_TEMPLATE
"""What ``fmbench init`` writes into ``methodology.md`` (:data:`fmbench.views.methodology.PUBLISHER_TEMPLATE`)."""


RUNS_README = """\
# Run files

Put the JSON files FoundationModelsBench writes here, one per run, in any
folder below this one. Published files are usually named
`<device>-<os-build>-<model>-<suite>-<date>.json`
(`macbook-pro-m5-macos27-26A5353q-on-device-quick-2026-06-12.json`); the name
is a hint for people, fmbench reads what is inside. Never edit a run file: a
file whose stored summaries disagree with its trials is judged invalid.

Facts a run file cannot hold go into a sidecar beside it with the same name
and `.meta.yaml` in place of `.json` (`<run>.meta.yaml`): how a Private Cloud
Compute run was connected, the location, the entitlement check, a note, and
corrections of recorded fields with their reason. Other files here, such as
the runner's Markdown summaries, are ignored.

`fmbench build` makes the site hold exactly the runs in this folder: a new
file is added, a changed file replaces its run, and a deleted file's run is
removed.
"""


GITIGNORE = """\
# Built by `fmbench build` from the files in this repository.
/{database}
/{database}.wal
/{database}.writer
/{database}.resamples/
/{database}.builds/
/{output}/
/.{output}.staging-*/
/.{output}.previous-*/
"""


ACTIONS: dict[str, tuple[str, str]] = {
    "actions/checkout": ("3d3c42e5aac5ba805825da76410c181273ba90b1", "v7.0.1"),
    "actions/setup-python": ("5fda3b95a4ea91299a34e894583c3862153e4b97", "v7.0.0"),
    "actions/cache/restore": ("27d5ce7f107fe9357f9df03efb73ab90386fccae", "v5.0.5"),
    "actions/cache/save": ("27d5ce7f107fe9357f9df03efb73ab90386fccae", "v5.0.5"),
    "actions/upload-pages-artifact": ("fc324d3547104276b827a68afc52ff2a11cc49c9", "v5.0.0"),
    "actions/deploy-pages": ("cd2ce8fcbc39b97be8ca5fce6e763baed58fa128", "v5.0.0"),
}
"""Every action the generated workflow uses: the full commit of its newest release, and that release.

Read from each action's own repository (the commit the release tag points at); a tag can be moved,
a commit cannot, so the workflow names the commit and keeps the release in a comment."""


def _uses(action: str) -> str:
    commit, release = ACTIONS[action]
    return f"{action}@{commit} # {release}"


_WORKFLOW_HEAD = """\
# Builds this project's results site with fmbench on every push to main and publishes it on
# GitHub Pages. Turn Pages on once: Settings > Pages > Build and deployment > Source: GitHub Actions.
name: Publish results

on:
  push:
    branches: [main]
  workflow_dispatch:

# Nothing for the workflow as a whole: each job is granted what it needs, no more.
permissions: {}

# One deployment at a time; a push while one runs waits for it instead of cancelling it.
concurrency:
  group: pages
  cancel-in-progress: false

jobs:
"""
"""The workflow's name, its triggers, its empty default permissions and its one-deployment-at-a-time rule."""


def _build_job(database: str, output: str, inputs: str) -> str:
    """The workflow's build job: install fmbench, restore the incremental build's cache, build, save, upload.

    ``inputs`` are the quoted globs of every file the site is built from, for the cache key."""
    fallback = DEFAULT_INSTALL
    return f"""\
  build:
    name: Build the site
    runs-on: ubuntu-latest
    # This job reads the run files: it can read the repository and nothing else.
    permissions:
      contents: read # to check out the run files and the project's settings
    steps:
      - uses: {_uses("actions/checkout")}
        with:
          persist-credentials: false
      - uses: {_uses("actions/setup-python")}
        with:
          python-version: "3.12"
      # What [publishing] install in {PROJECT_FILE} names: a requirement ({fallback}), a wheel
      # file of this repository or a git URL. Change it there to upgrade.
      - name: Install fmbench
        id: fmbench
        run: |
          install="$(python -c 'import tomllib; print(tomllib.load(open("{PROJECT_FILE}", "rb")).get("publishing", {{}}).get("install", "{fallback}"))')"
          python -m pip install "$install"
          echo "version=$(python -c 'import fmbench; print(fmbench.__version__)')" >> "$GITHUB_OUTPUT"
      # The database, the resampled intervals and the build's records kept beside it, and the previous
      # site, so the build is incremental: an exact hit when no input of the site changed (the
      # runs, the settings, the registry, the methodology and the fmbench version), else the newest
      # cache of this fmbench version.
      - name: Restore the database, its resample store and the previous site
        id: restore
        uses: {_uses("actions/cache/restore")}
        with:
          path: |
            {database}
            {database}.resamples
            {database}.builds
            {output}
          key: fmbench-${{{{ steps.fmbench.outputs.version }}}}-${{{{ hashFiles({inputs}) }}}}
          restore-keys: |
            fmbench-${{{{ steps.fmbench.outputs.version }}}}-
      - name: Build the site
        run: fmbench build
      - name: Save the database, its resample store and the site
        if: steps.restore.outputs.cache-hit != 'true'
        uses: {_uses("actions/cache/save")}
        with:
          path: |
            {database}
            {database}.resamples
            {database}.builds
            {output}
          key: ${{{{ steps.restore.outputs.cache-primary-key }}}}
      - uses: {_uses("actions/upload-pages-artifact")}
        with:
          path: {output}

"""


def _deploy_job() -> str:
    """The workflow's deploy job: the only one allowed to write to Pages."""
    return f"""\
  deploy:
    name: Deploy to GitHub Pages
    needs: build
    runs-on: ubuntu-latest
    # Only the deployment may write to Pages and ask for the token that proves it is this workflow.
    permissions:
      pages: write # to publish the uploaded site
      id-token: write # to prove to Pages that the deployment comes from this workflow
    environment:
      name: github-pages
      url: ${{{{ steps.deployment.outputs.page_url }}}}
    steps:
      - id: deployment
        uses: {_uses("actions/deploy-pages")}
"""


def workflow_yaml(database: str, output: str, runs: str, revisions: str = "revisions.yaml",
                  methodology: str = "methodology.md") -> str:
    """The Pages workflow of a new project; the paths are the project's ``[paths]``."""
    inputs = ", ".join(f"'{path}'" for path in (f"{runs}/**", PROJECT_FILE, revisions, methodology))
    return _WORKFLOW_HEAD + _build_job(database, output, inputs) + _deploy_job()


def _write(path: Path, text: str, what: str, written: list[Path], made: list[Path]) -> None:
    """Write one new file (and the folders it needs, recorded in ``made``); a refused write names the path."""
    missing = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
    try:
        with writing(path, what):
            path.parent.mkdir(parents=True, exist_ok=True)
            made.extend(reversed(missing))
            with path.open("x", encoding="utf-8") as f:
                written.append(path)  # from here on it is ours to remove, even when the writing fails half-way
                f.write(text)
    except FileExistsError:
        raise ProjectError(f"{path}: already exists; fmbench init writes only new files (move it away, or init another folder)") from None
    except WriteError:
        raise
    except OSError as exc:
        raise ProjectError(f"{path}: cannot be written: {exc.strerror or exc}") from None


def _undo(written: list[Path], made: list[Path]) -> None:
    """Remove what a failed init wrote: its files, then the folders it made (only while empty)."""
    for path in reversed(written):
        with suppress(OSError):
            path.unlink(missing_ok=True)
    for folder in reversed(made):
        with suppress(OSError):
            folder.rmdir()


def init_project(
    folder: str | os.PathLike[str], *, title: str | None = None, site_url: str | None = None,
    source: InstallSource | None = None,
) -> InitReport:
    """Write a new project into ``folder`` (created if needed); refuse one inside or holding a project.

    ``[publishing] install`` names how this fmbench was installed (``source``, default: read from its
    ``direct_url.json``); when the workflow cannot install that, the report's ``install_warning`` says how to set it.
    """
    root = Path(folder).resolve()
    if root.exists() and not root.is_dir():
        raise ProjectError(f"{root}: is a file, not a folder; give fmbench init a folder")
    existing = find_project_root(root) if root.exists() else find_project_root(_nearest(root))
    if existing is not None:
        raise ProjectError(
            f"{existing / PROJECT_FILE}: {root} already belongs to this fmbench project; "
            "edit it, or init a folder outside it"
        )
    remote_site, repository = github_urls(_origin(root)) if (root / ".git").exists() else ("", "")
    url = site_url if site_url is not None else remote_site
    repository = repository or repository_for_pages(url)
    name = title if title is not None else "FoundationModelsBench results"
    source = source if source is not None else installed_source()
    install = source.requirement or DEFAULT_INSTALL
    config_text = project_toml(name, url, repository, install)
    config = parse_config(config_text, f"{root / PROJECT_FILE} (--title or --site-url)")
    paths = config.paths
    written: list[Path] = []
    made: list[Path] = [p for p in (*reversed(root.parents), root) if not p.exists()]
    try:
        with writing(root, "the project folder"):
            root.mkdir(parents=True, exist_ok=True)
    except WriteError:
        _undo([], made)
        raise
    except OSError as exc:
        _undo([], made)
        raise ProjectError(f"{root}: cannot be created: {exc.strerror or exc}") from None
    files = [
        (root / PROJECT_FILE, config_text, "the project settings"),
        (root / paths.revisions, REVISIONS_YAML, "the suite-revision registry"),
        (root / paths.methodology, METHODOLOGY_MD, "the methodology notes"),
        (root / paths.runs / "README.md", RUNS_README, "the runs folder's README"),
        (root / WORKFLOW, workflow_yaml(paths.database, paths.output, paths.runs, paths.revisions, paths.methodology),
         "the Pages workflow"),
        (root / ".gitignore", GITIGNORE.format(database=paths.database, output=paths.output), "the .gitignore"),
    ]
    for path, _, _ in files:
        if path.exists():
            _undo([], made)
            raise ProjectError(f"{path}: already exists; fmbench init writes only new files (move it away, or init another folder)")
    try:
        for path, text, what in files:
            _write(path, text, what, written, made)
    except FmbenchError:
        _undo(written, made)
        raise
    return InitReport(root, tuple(written), config.site.site_url, install_warning(install, source, PROJECT_FILE))


def _nearest(path: Path) -> Path:
    """``path`` or its nearest existing parent."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path
