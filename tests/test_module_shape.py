"""The shape of the package, read statically: no import cycle among fmbench's modules, every import inside a
function says why it is there, no module is over 800 lines and no function over 80.

Every module of ``fmbench/``, ``ingest/`` (``fmbench.ingest``) and ``native/`` (``fmbench.native``) is parsed
(never imported). Its imports of fmbench modules, at module level, inside functions and under
``if TYPE_CHECKING:``, make the graph: an import for annotations only never runs, but it still says the module
needs the other one to be read, so it counts for cycles and layers like any other. An edge is an
import a module writes (``from fmbench.views.common import x`` is an edge to ``fmbench.views.common``, not to
the package ``fmbench.views`` whose ``__init__`` Python also runs first).
"""

from __future__ import annotations

import ast
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
PACKAGES = {"fmbench": REPOSITORY / "fmbench", "fmbench.ingest": REPOSITORY / "ingest",
            "fmbench.native": REPOSITORY / "native"}
MAX_LINES = 800
MAX_FUNCTION_LINES = 80

# The layers, lowest first: a module imports only from its own layer or one below. The base modules (the package's
# version, its exceptions, the refused-write messages and the site's address scheme) sit under every layer; the
# top-level commands (cli, demo, project, scaffold, terminal) over all of them. fmbench.native is a slice of its
# own through the layers (artifacts read, stored, compared and shown beside the runs they replay).
LAYERS = ("runfile", "analysis", "storage", "ingest", "comparison", "views", "publish", "serving")
BASE = {
    "fmbench", "fmbench.errors", "fmbench.write_errors", "fmbench.urls", "fmbench.processes", "fmbench.redaction",
    "fmbench.owned_files",
}


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if any(p.startswith(".") or p == "__pycache__" for p in parts):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join((package, *parts))
            # fmbench/ingest or fmbench/native folders inside fmbench/ would shadow the mapped packages.
            found.setdefault(name, path)
    return found


MODULES = _modules()


def _resolve(module: str, path: Path, node: ast.ImportFrom | ast.Import) -> list[str]:
    """The fmbench modules an import statement loads (a name from a package that is a module: that module)."""
    targets: list[str] = []
    if isinstance(node, ast.Import):
        targets = [a.name for a in node.names]
    else:
        if node.level:
            base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join([*base, *([node.module] if node.module else [])])
        else:
            prefix = node.module or ""
        modules = [f"{prefix}.{a.name}" for a in node.names if f"{prefix}.{a.name}" in MODULES]
        # ``from package import module``: that module; ``from module import name``: the module.
        targets = modules if len(modules) == len(node.names) else [prefix, *modules]
    out = []
    for t in targets:
        if t in MODULES:
            out.append(t)
    return out


def _imports(module: str, path: Path) -> list[tuple[str, int, bool]]:
    """(imported module, line, inside a function) of each fmbench import, ``if TYPE_CHECKING:`` ones too."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[str, int, bool]] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                found.extend((t, child.lineno, in_function) for t in _resolve(module, path, child) if t != module)
            walk(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    walk(tree, False)
    return found


def _silent_function_imports(path: Path) -> list[int]:
    """The lines of imports inside a function (of anything, not only fmbench) with no comment saying why: on
    the import's own lines, or on the line above it or above the run of imports it is one of."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    nodes = {
        node.lineno: node
        for fn in ast.walk(ast.parse(text)) if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(fn) if isinstance(node, ast.Import | ast.ImportFrom)
    }
    covered = {i for n in nodes.values() for i in range(n.lineno, (n.end_lineno or n.lineno) + 1)}
    silent = []
    for line, node in sorted(nodes.items()):
        own = lines[line - 1:node.end_lineno or line]
        above = line - 1
        while above in covered:
            above -= 1
        if not any("#" in x for x in own) and not (above >= 1 and lines[above - 1].strip().startswith("#")):
            silent.append(line)
    return silent


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module, path in MODULES.items():
        for target, _line, _inside in _imports(module, path):
            graph[module].add(target)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph, as the modules around it (the first repeated at the end), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_modules_import_one_another_without_a_cycle() -> None:
    cycle = _cycle(_graph())
    assert cycle is None, "import cycle: " + " → ".join(cycle or [])


def test_an_import_for_annotations_only_counts_as_an_edge(tmp_path: Path) -> None:
    module = tmp_path / "annotated.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from fmbench.comparison.results import Comparison\n",
        encoding="utf-8",
    )
    assert _imports("fmbench.annotated", module) == [("fmbench.comparison.results", 4, False)]


def _layer(module: str) -> int | None:
    """The module's place among :data:`LAYERS` (``None``: a base module, a top-level command or fmbench.native)."""
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def test_every_layer_imports_only_from_itself_and_the_layers_below() -> None:
    upward = [
        f"{module} ({LAYERS[low]}) imports {target} ({LAYERS[high]}), line {line}"
        for module, path in MODULES.items()
        if (low := _layer(module)) is not None
        for target, line, _inside in _imports(module, path)
        if (high := _layer(target)) is not None and high > low
    ]
    assert not upward, "\n".join(upward)


def test_the_layers_import_from_no_top_level_command() -> None:
    tops = {m for m in MODULES if m.count(".") == 1 and m not in BASE and _layer(m) is None and m != "fmbench.native"}
    found = [
        f"{module} imports {target}, line {line}"
        for module, path in MODULES.items() if _layer(module) is not None
        for target, line, _inside in _imports(module, path) if target in tops
    ]
    assert not found, "\n".join(found)


def test_every_import_inside_a_function_says_why() -> None:
    silent = [
        f"{path.relative_to(REPOSITORY)}:{line}: {path.read_text(encoding='utf-8').splitlines()[line - 1].strip()}"
        for path in MODULES.values()
        for line in _silent_function_imports(path)
    ]
    assert not silent, "imports inside functions with no comment saying why:\n" + "\n".join(silent)


def test_no_module_is_over_800_lines() -> None:
    long = {str(p.relative_to(REPOSITORY)): n for p in MODULES.values()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, long


def _long_functions(path: Path) -> list[tuple[int, str, int]]:
    """(line, name, length) of each function of the module (methods and nested functions too) longer than
    :data:`MAX_FUNCTION_LINES`, counted from its ``def`` line (its decorators apart) to its last line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        (node.lineno, node.name, length)
        for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        if (length := (node.end_lineno or node.lineno) - node.lineno + 1) > MAX_FUNCTION_LINES
    ]


def test_no_function_is_over_80_lines() -> None:
    long = [
        f"{path.relative_to(REPOSITORY)}:{line}: {name} is {length} lines"
        for path in MODULES.values() for line, name, length in _long_functions(path)
    ]
    assert not long, "functions over 80 lines (split them into named steps):\n" + "\n".join(long)


def test_a_function_of_81_lines_is_reported_and_one_of_80_is_not(tmp_path: Path) -> None:
    for body, expected in ((79, []), (80, [(1, "long", 81)])):
        path = tmp_path / f"probe_{body}.py"
        path.write_text("def long() -> None:\n" + "    x = 1\n" * body, encoding="utf-8")
        assert _long_functions(path) == expected


CONSTANTS_READ_ONCE = {"hardware_models", "rule_book", "cldr_locale", "_nested_fields"}
"""The functions whose results ``functools.cache`` keeps: the package's own constants (CONTRIBUTING, the caches
row). A cache of anything read from a run or the database is passed down from its owner instead."""


def _cached_functions(path: Path) -> set[str]:
    """The functions of the module decorated with ``functools.cache`` or ``lru_cache`` (called or not)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                if name in {"cache", "lru_cache"}:
                    found.add(node.name)
    return found


def test_functools_keeps_only_the_packages_own_constants() -> None:
    cached = {name for path in MODULES.values() for name in _cached_functions(path)}
    assert cached == CONSTANTS_READ_ONCE
