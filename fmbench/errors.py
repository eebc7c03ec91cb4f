"""Domain exceptions. The CLI turns them into one-line messages; nothing else does."""

from __future__ import annotations

from dataclasses import dataclass


class FmbenchError(Exception):
    """Base of every error fmbench raises on purpose (a user's mistake or bad data)."""

    excerpt: str = ""
    """Lines of the input shown under the one-line message (a parser's place, marked with a caret), or empty."""


def source_excerpt(text: str, places: list[tuple[int, int]]) -> str:
    """The lines of ``text`` at ``places`` (0-based line and column, as YAML's marks count), each numbered with a
    caret under its column, as a compiler shows a syntax error."""
    lines = text.splitlines()
    out: list[str] = []
    width = len(str(max((line for line, _ in places), default=0) + 1))
    for line, column in sorted(set(places)):
        shown = lines[line] if 0 <= line < len(lines) else ""
        out.append(f"  {line + 1:>{width}} | {shown}")
        out.append(f"  {'':>{width}} | {' ' * column}^")
    return "\n".join(out)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input, and where: a JSON path or a line and column."""

    where: str
    message: str
    line: int | None = None
    """Where it is in the file's text, when the place is a line and column (broken JSON); else ``None``."""
    column: int | None = None

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


class RunFileError(FmbenchError):
    """A run file that cannot be read as a run. Names the file and every problem's place."""

    def __init__(self, file: str, problems: list[Problem], *, more: int = 0) -> None:
        """``more``: how many further problems were found but not listed (the reader lists a few hundred)."""
        self.file = file
        self.problems = problems
        self.more = more
        super().__init__(self.describe())

    @property
    def position(self) -> tuple[int | None, int | None]:
        """The line and column of the first problem, where it has them (broken JSON)."""
        first = self.problems[0] if self.problems else None
        return (first.line, first.column) if first is not None else (None, None)

    def describe(self, limit: int = 3) -> str:
        shown = "; ".join(str(p) for p in self.problems[:limit])
        more = len(self.problems) + self.more - limit
        suffix = f" (and {more:,} more problem{'s' if more > 1 else ''})" if more > 0 else ""
        return f"{self.file}: {shown}{suffix}"


class AnnotationError(FmbenchError):
    """A sidecar annotation file that cannot be read."""


class RegistryError(FmbenchError):
    """The suite revision registry is malformed."""


class DatabaseError(FmbenchError):
    """The database cannot be used as it is (wrong version, not an fmbench database)."""


class DamagedDatabaseError(DatabaseError):
    """A block of the database file fails its checksum: what it holds cannot be read."""


class DatabaseBusyError(DatabaseError):
    """Another process holds the database; try again in a moment."""


class NotFoundError(FmbenchError):
    """A run, device, scenario or page that does not exist."""


class FilterError(FmbenchError):
    """A filter field or value that fmbench does not accept."""
