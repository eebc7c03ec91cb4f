"""Product code holds no hook for tests: no module of the package reads an environment variable only tests set.

A test that needs to stop an ingest or a build part-way passes it a checkpoint object
(:class:`fmbench.processes.Checkpoints`, see tests/stopping.py) instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
PACKAGES = ("fmbench", "ingest", "native")
TEST_PREFIX = "FMBENCH_TEST"


def _product_modules() -> list[Path]:
    return sorted(
        path for folder in PACKAGES for path in (REPOSITORY / folder).rglob("*.py")
        if not any(part.startswith(".") or part == "__pycache__" for part in path.relative_to(REPOSITORY).parts)
    )


def _test_variables(source: str) -> list[tuple[int, str]]:
    """Where code names a ``FMBENCH_TEST…`` variable (a string constant starting so): line and name."""
    return [
        (node.lineno, node.value)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(TEST_PREFIX)
    ]


def test_no_product_module_reads_an_environment_variable_only_tests_set() -> None:
    modules = _product_modules()
    assert len(modules) > 50  # the package's modules were found
    found = [
        f"{path.relative_to(REPOSITORY)}:{line}: {name}"
        for path in modules
        for line, name in _test_variables(path.read_text(encoding="utf-8"))
    ]
    mentioned = [str(p.relative_to(REPOSITORY)) for p in modules if TEST_PREFIX in p.read_text(encoding="utf-8")]
    assert found == [] and mentioned == [], "\n".join(found + mentioned)


def test_the_check_finds_a_test_variable_read_from_the_environment() -> None:
    hooked = 'import os\n\nif os.environ.get("FMBENCH_TEST_KILL_AT") == "render":\n    os._exit(9)\n'
    assert _test_variables(hooked) == [(3, "FMBENCH_TEST_KILL_AT")]
    assert TEST_PREFIX in hooked
