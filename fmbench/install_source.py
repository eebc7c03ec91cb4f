"""Where the running fmbench was installed from, and what a project's Pages workflow can install in its place.

pip records how it installed a distribution that did not come from a package index in the distribution's
``direct_url.json`` (PEP 610): a VCS URL and the commit it resolved to, an archive (a wheel or an sdist) by URL,
or a local folder (``editable`` when installed with ``-e``). A release from an index has no such file.

From that, :func:`installed_source` says what ``[publishing] install`` should hold so that the workflow installs
the same fmbench: a release pins ``fmbench-publish==VERSION``; a VCS install pins its URL at the commit; an archive
from an http(s) URL is named by that URL. A local folder, an editable checkout or a wheel file on this machine is
something the workflow cannot reach: there is then no requirement, and :attr:`InstallSource.advice` says how to set
one. Only the standard library is imported here, so a bare install can answer.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from fmbench import DISTRIBUTION, __version__

Kind = Literal["release", "vcs", "archive", "local archive", "folder", "editable"]


@dataclass(frozen=True)
class InstallSource:
    """How fmbench was installed, and the ``[publishing] install`` that installs it again (``None``: nothing can)."""

    kind: Kind
    requirement: str | None
    location: str = ""
    """The URL or path pip installed from (empty for a release)."""

    @property
    def installable(self) -> bool:
        return self.requirement is not None

    @property
    def local_vcs(self) -> bool:
        """A VCS install from a repository on this machine (``git+file://``): pinned, but no runner can reach it."""
        return self.kind == "vcs" and urlsplit(self.location).scheme == "file"

    def advice(self, project_file: str = "fmbench.toml") -> str:
        """One line for a project whose workflow cannot install this fmbench (empty when it can)."""
        if self.installable and not self.local_vcs:
            return ""
        what = {
            "vcs": f"from a git repository on this machine ({self.location})",
            "local archive": f"from a file on this machine ({self.location})",
            "folder": f"from a folder on this machine ({self.location})",
            "editable": f"as an editable checkout ({self.location})",
        }.get(self.kind, f"from {self.location}")
        pinned = checkout_pin(Path(self.location)) if self.kind in ("folder", "editable") else None
        url = (
            f"(\"{pinned}\": this checkout's origin at its commit, once that commit is pushed)" if pinned else
            f"(\"{DISTRIBUTION} @ git+https://github.com/OWNER/fmbench@COMMIT\", OWNER and COMMIT those of the "
            "repository you installed from)"
        )
        return (
            f"fmbench {__version__} was installed {what}, which .github/workflows/publish.yml cannot install: "
            f"set [publishing] install in {project_file} to a git URL {url}, a wheel file committed to the project, "
            f"or \"{DISTRIBUTION}==VERSION\" for a release on PyPI"
        )


_SSH_REMOTE = re.compile(r"^(?:ssh://)?git@(?P<host>[^:/]+)[:/](?P<path>.+)$")


def checkout_pin(folder: Path) -> str | None:
    """``fmbench-publish @ git+URL@COMMIT`` for a git checkout with an https (or GitHub-style ssh) ``origin``: the
    requirement a workflow could install once the commit is pushed; ``None`` when the folder is no such checkout."""
    def git(*args: str) -> str:
        try:
            done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=10,
                                  check=False)
        except (OSError, subprocess.SubprocessError):
            return ""
        return done.stdout.strip() if done.returncode == 0 else ""

    if not folder.is_dir():
        return None
    origin, commit = git("config", "--get", "remote.origin.url"), git("rev-parse", "--verify", "HEAD")
    ssh = _SSH_REMOTE.match(origin)
    if ssh:
        origin = f"https://{ssh['host']}/{ssh['path']}"
    if not origin.startswith("https://") or not re.fullmatch(r"[0-9a-f]{40}", commit):
        return None
    return f"{DISTRIBUTION} @ git+{origin}@{commit}"


def _path(url: str) -> str:
    parts = urlsplit(url)
    return unquote(parts.path) if parts.scheme == "file" else url


def source_of(direct_url: dict[str, Any] | None, version: str = __version__) -> InstallSource:
    """What a ``direct_url.json`` (``None``: the distribution has none, so it came from an index) says."""
    if direct_url is None:
        return InstallSource("release", f"{DISTRIBUTION}=={version}")
    url = str(direct_url.get("url", ""))
    subdirectory = direct_url.get("subdirectory")
    fragment = f"#subdirectory={subdirectory}" if subdirectory else ""
    vcs = direct_url.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs") and vcs.get("commit_id"):
        return InstallSource("vcs", f"{DISTRIBUTION} @ {vcs['vcs']}+{url}@{vcs['commit_id']}{fragment}", url)
    local = urlsplit(url).scheme == "file"
    if "archive_info" in direct_url:
        if local:
            return InstallSource("local archive", None, _path(url))
        return InstallSource("archive", f"{DISTRIBUTION} @ {url}{fragment}", url)
    dir_info = direct_url.get("dir_info")
    editable = isinstance(dir_info, dict) and bool(dir_info.get("editable"))
    return InstallSource("editable" if editable else "folder", None, _path(url))


def installed_source(distribution: str = DISTRIBUTION) -> InstallSource:
    """How the running fmbench was installed, read from its distribution's ``direct_url.json``.

    Not installed as a distribution at all (run from a source folder): a folder, which no workflow can install.
    """
    try:
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        return InstallSource("folder", None, "a source folder, not installed")
    text = dist.read_text("direct_url.json")
    try:
        data = json.loads(text) if text else None
    except ValueError:
        data = None
    return source_of(data if isinstance(data, dict) else None, dist.version)


def install_warning(configured: str, source: InstallSource, project_file: str = "fmbench.toml") -> str:
    """One line when a project's ``[publishing] install`` leaves its workflow unable to install fmbench, else empty.

    It is said while the setting still names what ``fmbench init`` wrote for an install the workflow cannot repeat:
    this version's release (which the local install is not) or a repository on this machine. A setting the
    publisher changed is theirs.
    """
    if source.local_vcs and configured == source.requirement:
        return source.advice(project_file)
    if not source.installable and configured == f"{DISTRIBUTION}=={__version__}":
        return source.advice(project_file)
    return ""
