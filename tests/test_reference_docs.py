"""docs/reference/ is complete and current: every fmbench.toml key, revisions.yaml key, sidecar key and command
(with each option), as fmbench.reference generates them from the code (``python tools/reference.py`` rewrites
them)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import click
import pytest

from fmbench.analysis.revisions import REVISION_KEYS, Revision, parse_registry
from fmbench.reference import commands, config_keys, reference_pages
from fmbench.runfile.annotations import SIDECAR_KEYS, parse_annotations

from testdata import REPO

DOCS = REPO / "docs"


@pytest.mark.parametrize("name", sorted(reference_pages()))
def test_each_reference_page_is_the_one_the_code_generates(name: str) -> None:
    path = DOCS / name
    assert path.is_file(), f"docs/{name} is missing: run python tools/reference.py"
    assert path.read_text(encoding="utf-8") == reference_pages()[name], f"docs/{name} is out of date: run python tools/reference.py"


def test_the_configuration_page_lists_every_key_of_the_model_with_a_meaning() -> None:
    page = (DOCS / "reference" / "configuration.md").read_text(encoding="utf-8")
    keys = config_keys()
    assert {"site.title", "publishing.install", "publishing.practical_change.rates", "site.footer_links[].url"} <= {
        k for k, *_ in keys}
    for key, _kind, _default, meaning in keys:
        assert f"| `{key}` |" in page, key
        assert meaning, f"{key} has no docstring in fmbench/project.py"


def test_the_revisions_page_lists_every_key_a_revision_holds() -> None:
    assert list(REVISION_KEYS) == [f.name for f in dataclasses.fields(Revision)]
    page = (DOCS / "reference" / "revisions.md").read_text(encoding="utf-8")
    for key in REVISION_KEYS:
        assert f"| `{key}` |" in page, key
    registry = parse_registry(
        "format: 1\nrevisions:\n  - {id: r1, date: 2026-01-02, title: t, summary: s, changes: [c], reason: r,\n"
        "     benchmark_commits: [abc], fixture_fingerprints: [f], current: true}\n", "r.yaml")
    assert registry.current.benchmark_commits == ("abc",) and registry.current.fixture_fingerprints == ("f",)


def test_the_sidecars_page_lists_every_key_a_sidecar_may_hold_and_no_other() -> None:
    page = (DOCS / "reference" / "sidecars.md").read_text(encoding="utf-8")
    for key in SIDECAR_KEYS:
        assert f"| `{key}` |" in page, key
    every = (b"connection: wifi\nlocation: x\nentitlement: present\nnote: n\ncorrections: []\n"
             b"simulator: false\nevidence: e\n")
    assert parse_annotations(every, "a.meta.yaml", "0" * 64).problems == ()
    assert {line.split(":")[0] for line in every.decode().splitlines()} == set(SIDECAR_KEYS)


def test_the_commands_page_holds_every_command_and_option() -> None:
    page = (DOCS / "reference" / "commands.md").read_text(encoding="utf-8")
    found = commands()
    names = {name for name, _ in found}
    assert {"fmbench init", "fmbench build", "fmbench serve", "fmbench migrate", "fmbench native"} <= names
    for name, command in found:
        assert f"## `{name}`" in page, name
        for option in command.params:
            if isinstance(option, click.Option) and not option.hidden:
                assert f"`{option.opts[0]}`" in page.split(f"## `{name}`", 1)[1], (name, option.opts[0])


def test_the_generator_script_reports_nothing_to_do_on_a_current_tree() -> None:
    done = subprocess.run([sys.executable, "-P", str(REPO / "tools" / "reference.py"), "--check"],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
