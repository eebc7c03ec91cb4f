"""What run pages and data files ask of the per-run tables, always for a batch of runs (:class:`RunData`).

Every question takes run ids and answers a dict keyed by run id. A static build asks about every run at once:
the first question about any run reads the answer for all of them, one query per table for the build instead
of one per table and run (each of which scans the table's run ids: about a millisecond a query on a corpus of
200 runs). A request asks about its run alone. Both go through the same methods, so a page served for one
request is the page a build writes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import duckdb

from fmbench.errors import NotFoundError
from fmbench.storage.queries import token_sources
from fmbench.views.common import rows

T = TypeVar("T")

GATES = {
    "agentic trials": "SELECT run_id FROM trials WHERE category = 'agenticToolUse'",
    "scenarios on several executed models": (
        "SELECT run_id FROM trials GROUP BY run_id, scenario_id HAVING count(DISTINCT executed_model) > 1"
    ),
    "trial tool calls": "SELECT run_id FROM tool_calls WHERE owner = 'trial'",
    "trial final state": "SELECT run_id FROM final_state WHERE owner = 'trial'",
    "failure tool calls": "SELECT run_id FROM tool_calls WHERE owner = 'failure'",
    "failure final state": "SELECT run_id FROM final_state WHERE owner = 'failure'",
}
"""Questions of the large per-trial tables that most runs have no rows for: which of the runs have any (then the
page asks its run's rows, and a run without any asks nothing)."""

def _none() -> None:
    return None


LINKED_REPLAY = "linked evaluation rows"
"""The gate of a run's Evaluations replay: rows of an Evaluations file linked to the run (a database that never
ingested one has no such table)."""
_LINKED_REPLAY_SQL = "SELECT linked_run_id AS run_id FROM evaluation_rows WHERE linked_run_id IS NOT NULL"


class RunData:
    """The per-run tables' answers for run pages, trial pages and run data files, read in batches and kept.

    ``every_run`` (a static build): a question about any run reads its answer for every run at once; otherwise
    only the runs asked about are read. Each answer is what one run's own query gives (the same rows in the same
    order) and is not to be changed; a run with no rows of a table gets an empty list (or ``None``).
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, *, every_run: bool = False) -> None:
        self.con = con
        self.every_run = every_run
        self._answers: dict[str, dict[str, Any]] = {}
        self._every: list[str] | None = None

    # --- the questions ---------------------------------------------------------------------------

    def runs(self, run_ids: Sequence[str]) -> dict[str, dict[str, Any] | None]:
        """Every stored column of each run (``None``: no such run)."""
        return self._ask("runs", run_ids, lambda batch: self._by_run(
            rows(self.con, f"SELECT * FROM runs WHERE {self._where(batch)}", self._params(batch)), keep_id=True,
            single=True,
        ), _none)

    def figures(self, run_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        """Each run's scenario figures (every column), in the run's order of its scenarios, each with the token
        count source of its trials."""

        def read(batch: list[str]) -> dict[str, list[dict[str, Any]]]:
            found = self._by_run(rows(
                self.con, f"SELECT * FROM scenario_figures WHERE {self._where(batch)} ORDER BY run_id, ordinal",
                self._params(batch),
            ), keep_id=True)
            sources = token_sources(self.con, sorted(found))
            return {
                run_id: [{**f, "token_count_source": sources.scenario(run_id, f["scenario_id"])} for f in figures]
                for run_id, figures in found.items()
            }

        return self._ask("figures", run_ids, read)

    def reasons(self, run_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        """The reasons of each run's verdict (level, code, message), in order."""
        return self._ask("reasons", run_ids, lambda batch: self._by_run(rows(
            self.con,
            f"SELECT run_id, level, code, message FROM verdict_reasons WHERE {self._where(batch)} "
            "ORDER BY run_id, ordinal",
            self._params(batch),
        )))

    def not_run(self, run_ids: Sequence[str]) -> dict[str, list[str]]:
        """Scenarios each file's summaries hold with no trial and no failure, in the summaries' order."""

        def read(batch: list[str]) -> dict[str, list[str]]:
            out: dict[str, list[str]] = {}
            for run_id, sid in self.con.execute(
                "SELECT s.run_id, s.scenario_id FROM stored_summaries s WHERE "
                f"{self._where(batch, 's.run_id')} AND s.scenario_id NOT IN "
                "(SELECT f.scenario_id FROM scenario_figures f WHERE f.run_id = s.run_id) ORDER BY s.run_id, s.ordinal",
                self._params(batch),
            ).fetchall():
                out.setdefault(run_id, []).append(sid)
            return out

        return self._ask("not run", run_ids, read)

    def flags(self, run_ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
        """The reader's notes on each file (location, message), in order."""

        def read(batch: list[str]) -> dict[str, list[tuple[str, str]]]:
            out: dict[str, list[tuple[str, str]]] = {}
            for run_id, loc, msg in self.con.execute(
                f"SELECT run_id, location, message FROM run_flags WHERE {self._where(batch)} ORDER BY run_id, ordinal",
                self._params(batch),
            ).fetchall():
                out.setdefault(run_id, []).append((loc, msg))
            return out

        return self._ask("flags", run_ids, read)

    def mismatches(self, run_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        """Where each file's stored summaries disagree with the recomputation (in the order they were stored)."""
        return self._ask("mismatches", run_ids, lambda batch: self._by_run(rows(
            self.con,
            f"SELECT run_id, scenario_id, field, stored_json, recomputed_json FROM summary_mismatches "
            f"WHERE {self._where(batch)}",
            self._params(batch),
        )))

    def annotation(self, run_ids: Sequence[str]) -> dict[str, dict[str, Any] | None]:
        """Each run's operator annotation (``None``: none)."""
        return self._ask("annotation", run_ids, lambda batch: self._by_run(rows(
            self.con,
            "SELECT run_id, file_name, sha256, connection, location, entitlement, note, corrections_json "
            f"FROM annotations WHERE {self._where(batch)}",
            self._params(batch),
        ), single=True), _none)

    def rows_in(self, run_ids: Sequence[str]) -> dict[str, frozenset[str]]:
        """For each run, which of :data:`GATES` (and :data:`LINKED_REPLAY`) it has any rows in: one query."""

        def read(batch: list[str]) -> dict[str, frozenset[str]]:
            gates = dict(GATES)
            if self._has_table("evaluation_rows"):
                gates[LINKED_REPLAY] = _LINKED_REPLAY_SQL
            names = list(gates)
            sql = " UNION ALL ".join(
                f"SELECT DISTINCT {i} AS gate, run_id FROM ({source}) WHERE {self._where(batch)}"
                for i, source in enumerate(gates.values())
            )
            found: dict[str, set[str]] = {}
            for i, run_id in self.con.execute(sql, self._params(batch) * len(names)).fetchall():
                found.setdefault(run_id, set()).add(names[i])
            return {run_id: frozenset(names) for run_id, names in found.items()}

        return self._ask("rows in", run_ids, read, frozenset)

    # --- one run's answer ---------------------------------------------------------------------------

    def run(self, run_id: str) -> dict[str, Any]:
        """:meth:`runs` of one run: :class:`~fmbench.errors.NotFoundError` when there is no such run."""
        found = self.runs([run_id])[run_id]
        if found is None:
            raise NotFoundError(f"no run {run_id!r}")
        return found

    def has(self, gate: str, run_id: str) -> bool:
        """Whether the run has any rows in :data:`GATES`' (or :data:`LINKED_REPLAY`'s) ``gate``."""
        return gate in self.rows_in([run_id])[run_id]

    # --- reading in batches -------------------------------------------------------------------------

    def _ask(
        self, question: str, run_ids: Sequence[str], read: Callable[[list[str]], dict[str, T]],
        empty: Callable[[], Any] = list,
    ) -> dict[str, T]:
        """``read``'s answer for each of ``run_ids``, read for the runs not yet asked about (for every run, in a
        build); a run ``read`` has no rows for gets ``empty()``."""
        known = self._answers.setdefault(question, {})
        missing = [r for r in dict.fromkeys(run_ids) if r not in known]
        if missing:
            batch = sorted({*self._every_run_ids(), *missing}) if self.every_run else missing
            found = read(batch)
            for run_id in batch:
                known[run_id] = found.get(run_id, empty())
        return {r: known[r] for r in run_ids}

    def _every_run_ids(self) -> list[str]:
        if self._every is None:
            self._every = [r for (r,) in self.con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
        return self._every

    def _is_every_run(self, batch: list[str]) -> bool:
        return self.every_run and len(batch) == len(self._every_run_ids())

    def _where(self, batch: list[str], column: str = "run_id") -> str:
        """The condition that picks the rows of ``batch``'s runs: none for every run (DuckDB reads a whole table
        quicker than it tests each of its rows against a list)."""
        return "TRUE" if self._is_every_run(batch) else f"list_contains(?, {column})"

    def _params(self, batch: list[str]) -> list[Any]:
        return [] if self._is_every_run(batch) else [batch]

    def _has_table(self, name: str) -> bool:
        return self.con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name]
        ).fetchone() != (0,)

    @staticmethod
    def _by_run(found: list[dict[str, Any]], *, keep_id: bool = False, single: bool = False) -> dict[str, Any]:
        """Rows grouped by their run id, in order (``keep_id``: each row keeps its ``run_id``; ``single``: one
        row a run)."""
        out: dict[str, Any] = {}
        for row in found:
            run_id = row["run_id"] if keep_id else row.pop("run_id")
            if single:
                out.setdefault(run_id, row)
            else:
                out.setdefault(run_id, []).append(row)
        return out
