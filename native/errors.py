"""Errors raised while reading Evaluations artifacts, run files and gate rules (all under FmbenchError)."""

from __future__ import annotations

from pathlib import Path

from fmbench.errors import FmbenchError, Problem, RunFileError


class ArtifactError(FmbenchError):
    """A file (or one line of a JSON Lines file) that could not be interpreted.

    ``where`` is a JSON path inside the document, such as ``results[3].Input``.
    ``str()`` names the file, the line (JSON Lines only) and the JSON path::

        run.xcevalresult: results[2].Input: not JSON (Expecting value at line 1 column 1)
        batch.jsonl line 3: no "results" array: not an evaluation result
    """

    def __init__(
        self,
        path: Path | str,
        message: str,
        *,
        line: int | None = None,
        where: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.message = message
        self.line = line
        self.where = where
        super().__init__(self.__str__())

    @property
    def location(self) -> str:
        """The file as given, with the line number for JSON Lines."""
        text = str(self.path)
        if self.line is not None:
            text += f" line {self.line}"
        return text

    def __str__(self) -> str:
        parts = [self.location]
        if self.where:
            parts.append(self.where)
        parts.append(self.message)
        return ": ".join(parts)

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (self.__class__, self.path, self.message, self.line, self.where))


def run_file_error(path: Path | str, message: str, where: str | None = None) -> RunFileError:
    """The error for a run file that cannot be replayed: fmbench's own, naming the file and the JSON path."""
    return RunFileError(str(path), [Problem(where or "", message)])


class GateRuleError(FmbenchError, ValueError):
    """A gate rule whose text cannot be parsed, such as ``"Prompt Pass ~ 1"``."""


def _rebuild(
    cls: type[ArtifactError],
    path: Path,
    message: str,
    line: int | None,
    where: str | None,
) -> ArtifactError:
    return cls(path, message, line=line, where=where)


class PipelineError(FmbenchError):
    """A pipeline manifest that cannot be run, named with its file and the place in it::

        ci.pipeline.json: schemaVersion: unknown schema version 'xceval.pipeline/v9' …
    """
