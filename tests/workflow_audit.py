"""GitHub Actions workflows held to GitHub's schema (check-jsonschema) and to zizmor, a static security analyser."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def workflow_findings(*files: Path) -> tuple[str, list[str]]:
    """``check-jsonschema``'s verdict on GitHub's workflow schema and zizmor's findings of medium severity or above."""
    tools = Path(sys.executable).parent
    checker, zizmor = tools / "check-jsonschema", tools / "zizmor"
    assert checker.exists() and zizmor.exists(), "check-jsonschema or zizmor is missing: install the test extra"
    checked = subprocess.run(
        [str(checker), "--builtin-schema", "vendor.github-workflows", *map(str, files)],
        capture_output=True, text=True, check=False,
    )
    schema = "" if checked.returncode == 0 else checked.stdout + checked.stderr
    audited = subprocess.run(
        [str(zizmor), "--offline", "--no-progress", "--format", "json", "--min-severity", "medium", *map(str, files)],
        capture_output=True, text=True, check=False, env={"PATH": "/usr/bin:/bin", "HOME": str(files[0].parent)},
    )
    findings = json.loads(audited.stdout or "null")
    assert isinstance(findings, list), audited.stderr
    return schema, [_finding(f) for f in findings]


def _finding(finding: dict[str, Any]) -> str:
    """One zizmor finding as a line: what, how severe, where (file and line) and the text it is about."""
    where = (finding.get("locations") or [{}])[0]
    key = where.get("symbolic", {}).get("key", {}).get("Local", {})
    concrete = where.get("concrete", {})
    row = concrete.get("location", {}).get("start_point", {}).get("row")
    place = Path(str(key.get("verbatim_path") or key.get("given_path") or "?")).name + (f":{row + 1}" if isinstance(row, int) else "")
    return (f"{finding.get('ident')} ({finding.get('determinations', {}).get('severity')}): {finding.get('desc')} "
            f"at {place}: {(str(concrete.get('feature', '')).strip().splitlines() or [''])[0]}")
