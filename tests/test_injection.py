"""Nothing injected: untrusted text (model output, run files, sidecars, Markdown) reaches pages only as text.

The hostile run (tests/data/make_purpose_files.py, ``hostile_run``) holds markup,
template syntax, script break-outs, ``javascript:`` links, NUL, U+2028/U+2029,
an RTL override and a 1 MiB response in every text field a page shows. Here the
built and served HTML is checked as bytes; test_injection_browser.py opens the
same pages in Chromium.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from fmbench.publish.build import build_site
from fmbench.serving.serve import create_app
from fmbench.views.data import trial_rows
from fmbench.views.markdown_render import render_markdown
from fmbench.views.render import Renderer

from hostile import (
    HOSTILE,
    TRIALS_PAGE_FIELDS,
    assert_no_active_content,
    hostile_pages,
    laid_out_from_data,
    shown,
    tags,
    url_scheme,
)
from sitebuild import purpose_db, script_tags
from testdata import REPO

HOST = "127.0.0.1:8000"


# --- the static check: nothing marks data safe ----------------------------------------------


SOURCE_FOLDERS = ("fmbench", "native", "ingest")
MARKUP_ALLOWED = {Path("fmbench/views/markdown_render.py")}
"""Markup built from sanitized Markdown (nh3 allow-list) is the only markup Python makes."""
TOJSON_ALLOWED = {Path("templates/_macros.html")}
"""The chart JSON container: ``|tojson`` escapes <, >, & and ' inside <script type="application/json">."""


def _markup_constructions(tree: ast.AST) -> list[int]:
    """Lines that call Markup (under any alias), reach markupsafe.Markup, or turn autoescaping off."""
    aliases = {"Markup"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("markupsafe", "jinja2", "jinja2.utils"):
            aliases |= {a.asname or a.name for a in node.names if a.name == "Markup"}
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if (isinstance(func, ast.Name) and func.id in aliases) or (
                isinstance(func, ast.Attribute) and func.attr == "Markup"
            ):
                lines.append(node.lineno)
            for kw in node.keywords:
                if kw.arg == "autoescape" and isinstance(kw.value, ast.Constant) and not kw.value.value:
                    lines.append(node.lineno)
        elif (isinstance(node, ast.Attribute) and node.attr == "Markup" and isinstance(node.value, ast.Name)) or (isinstance(node, ast.FunctionDef) and node.name == "__html__"):
            lines.append(node.lineno)
    return sorted(set(lines))


def test_no_template_marks_data_safe_and_only_the_markdown_renderer_builds_markup() -> None:
    found = []
    for template in sorted((REPO / "templates").rglob("*")):
        if template.suffix not in (".html", ".xml", ".txt"):
            continue
        rel = template.relative_to(REPO)
        text = template.read_text(encoding="utf-8")
        for pattern in (r"\|\s*safe\b", r"autoescape\s+false", r"\|\s*tojson\b", r"\bMarkup\b"):
            for match in re.finditer(pattern, text):
                if "tojson" in pattern and rel in TOJSON_ALLOWED:
                    continue
                found.append(f"{rel}:{text.count(chr(10), 0, match.start()) + 1}: {match.group(0)}")
    for folder in SOURCE_FOLDERS:
        for source in sorted((REPO / folder).rglob("*.py")):
            rel = source.relative_to(REPO)
            if rel in MARKUP_ALLOWED:
                continue
            for line in _markup_constructions(ast.parse(source.read_text(encoding="utf-8"))):
                found.append(f"{rel}:{line}: builds Markup")
    assert found == []
    assert Renderer().env.autoescape is True


def test_the_static_check_would_catch_markup_built_in_python() -> None:
    caught = _markup_constructions(ast.parse(
        "from markupsafe import Markup as M\nimport markupsafe\nM(x)\nmarkupsafe.Markup(y)\n"
        "jinja2.Environment(autoescape=False)\nclass A:\n    def __html__(self): ...\n"
    ))
    assert caught == [3, 4, 5, 7]


# --- Markdown ------------------------------------------------------------------------------


HOSTILE_MARKDOWN = """\
# Method <script>alert(1)</script>

A [link](javascript:alert(1)), a [LINK](JaVaScRiPt:alert(2)), a [tab](java\tscript:alert(3)),
an [entity](&#106;avascript:alert(4)) and a [data link](data:text/html,<script>alert(5)</script>).

![image](javascript:alert(6))

<img src=x onerror=alert(7)>
<a href="javascript:alert(8)" onclick="alert(9)">anchor</a>
<div onmouseover="alert(10)" style="background:url(javascript:alert(11))">hover</div>
<iframe src="https://example.org"></iframe><object data="x"></object><embed src="x">
<svg onload=alert(12)></svg><math><mtext><script>alert(13)</script></mtext></math>
<form action="javascript:alert(14)"><input autofocus onfocus=alert(15)></form>
<base href="javascript:alert(16)//"><meta http-equiv="refresh" content="0;url=javascript:alert(17)">
<style>body { background: url(javascript:alert(18)) }</style>

A paragraph with attributes {: onclick="alert(19)" style="color:red" }

[kept](https://example.org/ok) and [mail](mailto:a@example.org) and [anchor](#task-success)

<!--<script>alert(20)</script>--> {{ 7*7 }} {% raw %}x{% endraw %}
"""


def test_hostile_markdown_loses_every_script_handler_and_javascript_link_and_keeps_the_safe_links() -> None:
    html = str(render_markdown(HOSTILE_MARKDOWN))
    assert_no_active_content(html, "markdown")
    found = tags(html)
    assert {t for t, _ in found} <= {"h1", "p", "a", "div", "em", "strong", "code", "pre", "ul", "ol", "li", "br"}
    assert all(name in ("href", "title", "id", "rel") for _, attrs in found for name, _ in attrs)
    hrefs = [v or "" for _, attrs in found for n, v in attrs if n == "href"]
    assert [h for h in hrefs if url_scheme(h)] == ["https://example.org/ok", "mailto:a@example.org"]
    assert "#task-success" in hrefs
    assert "<script" not in html.lower()
    assert "{{ 7*7 }}" in html  # Markdown is never a template


def test_the_methodology_page_source_renders_without_active_content() -> None:
    source = (REPO / "site" / "methodology.md").read_text(encoding="utf-8")
    assert_no_active_content(str(render_markdown(source)), "methodology.md")


# --- built and served pages ------------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return purpose_db(tmp_path_factory.mktemp("injection") / "injection.duckdb")


@pytest.fixture(scope="module")
def built(hostile_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("injection-site") / "_site"
    build_site(hostile_db, out)
    return out


def test_every_built_page_runs_only_fmbench_scripts(built: Path) -> None:
    pages = sorted(built.rglob("*.html"))
    assert len(pages) > 20
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert_no_active_content(html, str(page.relative_to(built)))
        assert len(script_tags(html)) == html.count("</script>"), page


def _data_texts(data: bytes) -> str:
    """Every string of a trials page's gzipped trial data, joined: where trials.js takes the page's texts from."""
    import gzip
    import json

    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(json.loads(gzip.decompress(data)))
    return "\n".join(found)


@pytest.mark.parametrize("page", list(hostile_pages()))
def test_every_hostile_text_field_is_on_the_built_page_escaped(built: Path, page: str) -> None:
    html = (built / page / "index.html").read_text(encoding="utf-8")
    assert "\x00" not in html
    if laid_out_from_data(page):  # the page's trials are laid out by trials.js from the data file it names
        (href,) = re.findall(r'class="trials-app" data-trials-data="/([^"]+)"', html)
        data = _data_texts((built / href).read_bytes())
        assert [field for field, text in hostile_pages()[page].items() if text not in data] == []
        return
    missing = [field for field, text in hostile_pages()[page].items() if shown(text) not in html]
    assert missing == []


@pytest.mark.parametrize("page", list(hostile_pages()))
def test_every_hostile_text_field_is_on_the_served_page_escaped(hostile_db: Path, page: str) -> None:
    client = create_app(hostile_db, host="127.0.0.1", port=8000).test_client()
    response = client.get("/" + page, headers={"Host": HOST})
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert_no_active_content(html, page)
    assert "script-src 'self'" in response.headers["Content-Security-Policy"]
    if laid_out_from_data(page):  # serve answers the data file the page names, from the same data kind
        (href,) = re.findall(r'class="trials-app" data-trials-data="/([^"]+)"', html)
        data = client.get("/" + href, headers={"Host": HOST})
        assert data.status_code == 200
        assert [field for field, text in hostile_pages()[page].items() if text not in _data_texts(data.get_data())] == []
        return
    missing = [field for field, text in hostile_pages()[page].items() if shown(text) not in html]
    assert missing == []


def test_data_files_and_the_api_give_the_hostile_text_back_exactly_as_json(hostile_db: Path, built: Path) -> None:
    import gzip
    import json

    client = create_app(hostile_db, host="127.0.0.1", port=8000).test_client()
    for path, kind in (
        (f"/data/runs/{HOSTILE}/trials/task-capture.json.gz", "application/gzip"),  # the data file, stored gzipped
        (f"/api/runs/{HOSTILE}/scenarios/task-capture/trials", "application/json"),
    ):
        response = client.get(path, headers={"Host": HOST})
        assert response.status_code == 200
        assert response.headers["Content-Type"].startswith(kind)
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        body = response.get_data()
        doc = json.loads(gzip.decompress(body) if kind == "application/gzip" else body)
        trials = trial_rows(doc) if kind == "application/gzip" else doc["trials"]
        assert {t["response"] for t in trials} >= {TRIALS_PAGE_FIELDS["response"], TRIALS_PAGE_FIELDS["1 MiB response"]}
    static = json.loads(gzip.decompress((built / f"data/runs/{HOSTILE}/trials/task-capture.json.gz").read_bytes()))
    static_trials = trial_rows(static)
    assert TRIALS_PAGE_FIELDS["prompt"] in {t["prompt"] for t in static_trials}


def test_the_built_trial_data_is_the_bytes_serve_gives_and_the_exported_csv_reads_back_exactly(
    hostile_db: Path, built: Path, tmp_path: Path
) -> None:
    """The build writes a scenario's trial data from the rows its trials page reads; serve reads them itself: the
    same bytes. The run's CSV (``fmbench export --trials-csv``) gives every hostile text back to a CSV reader as it
    was (quotes, newlines, markup, NUL, non-ASCII)."""
    import csv
    import io

    from fmbench.publish.trials_csv import export_trials_csv

    client = create_app(hostile_db, host="127.0.0.1", port=8000).test_client()
    for path in (f"data/runs/{HOSTILE}/trials/task-capture.json.gz",):
        response = client.get("/" + path, headers={"Host": HOST})
        assert response.status_code == 200
        assert response.get_data() == (built / path).read_bytes(), path
    export_trials_csv(hostile_db, tmp_path)
    text = (tmp_path / f"{HOSTILE}.trials.csv").read_text(encoding="utf-8")
    limit = csv.field_size_limit(2**24)  # the 1 MiB response is one field
    try:
        table = list(csv.DictReader(io.StringIO(text, newline="")))
    finally:
        csv.field_size_limit(limit)
    assert {TRIALS_PAGE_FIELDS["response"], TRIALS_PAGE_FIELDS["1 MiB response"]} <= {r["response"] for r in table}
    assert any(c in TRIALS_PAGE_FIELDS["response"] for c in ('"', "\n", "</script>"))


def test_the_built_trial_data_is_the_standard_compact_json_of_what_it_holds(built: Path) -> None:
    """Trial data is written by a faster encoder than the standard library's; its bytes stay the standard compact
    JSON of the same values (hostile text: markup, script break-outs, NUL, U+2028, RTL override, 1 MiB)."""
    import gzip
    import json

    files = sorted(built.glob(f"data/runs/{HOSTILE}/trials/*.json.gz"))
    assert files
    for path in files:
        raw = gzip.decompress(path.read_bytes())
        assert raw == (json.dumps(json.loads(raw), ensure_ascii=False, separators=(",", ":")) + "\n").encode(), path


def test_compact_json_reads_back_every_value_and_writes_text_as_the_standard_library_does() -> None:
    import json
    from datetime import UTC, datetime

    from fmbench.views.data import compact_json

    text = "".join(map(chr, range(0x20))) + '"\\</script>\u2028\u2029\u202e\x7f\ufeff é 😀'
    doc = {
        "text": text, "not recorded": None, "flags": [True, False], "ints": [0, -1, 2**63 - 1, -(2**63)],
        "nested": [{"k": text}, []], "when": datetime(2026, 11, 3, 9, 4, 31, tzinfo=UTC),
    }
    written = compact_json(doc)
    assert written == (json.dumps(doc, ensure_ascii=False, separators=(",", ":"), default=str) + "\n").encode()
    floats = [0.1, 1e-07, 1e-05, 1e16, 5e-324, 1.7976931348623157e308, -0.0, 123456.789]
    assert json.loads(compact_json(floats)) == floats
