"""Reader filters (OS build, device, route, suite, revision, verdict): parsing and SQL.

The same six filters work on the static site (a script hides rows by their
``data-f-*`` attributes) and in ``serve`` (the query runs in DuckDB with bound
parameters). Values are validated before they reach a query.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import duckdb

from fmbench.errors import FilterError
from fmbench.runfile import vocabulary as vocab
from fmbench.views.blocks import FilterField, FilterForm, Option

# name -> (label, SQL expression over the runs table aliased r)
FIELDS: dict[str, tuple[str, str]] = {
    "os_build": ("OS build", "r.os_build"),
    "device": ("Device", "coalesce(r.hardware_model, r.device_name)"),
    "route": ("Route", "r.route"),
    "suite": ("Suite", "r.suite"),
    "revision": ("Revision", "coalesce(r.revision_id, 'unknown')"),
    "verdict": ("Verdict", "r.verdict"),
}
_CLOSED: dict[str, frozenset[str]] = {"verdict": frozenset({"publishable", "exploratory", "invalid"})}
_VALUE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ,._()+-]{0,79}$")


@dataclass(frozen=True)
class Filters:
    values: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def none(cls) -> Filters:
        return cls({})

    @classmethod
    def parse(
        cls, params: Mapping[str, str], allowed: Iterable[str] = FIELDS,
        closed: Mapping[str, Collection[str]] | None = None,
    ) -> Filters:
        """Validate query parameters: an unknown field or a malformed value is a :class:`FilterError`.

        ``closed``: the values each field with a closed set takes (:func:`closed_values`; ``None``: the verdict's
        only); a value outside its set is refused with the set named."""
        allowed = set(allowed)
        closed = _CLOSED if closed is None else closed
        values: dict[str, str] = {}
        for key, raw in params.items():
            if key not in FIELDS or key not in allowed:
                raise FilterError(f"unknown filter {key!r}; filter by one of: {', '.join(sorted(allowed))}")
            value = raw.strip()
            if not value:
                continue
            if not _VALUE.match(value):
                raise FilterError(f"filter {key}: {value[:40]!r} is not a value fmbench stores")
            if key in closed and value not in closed[key]:
                raise FilterError(f"filter {key}: {value!r} is not one of {', '.join(sorted(closed[key]))}")
            values[key] = value
        return cls(values)

    def where(self) -> tuple[str, list[Any]]:
        """``AND``-joined conditions over ``runs r`` and their bound parameters ("TRUE" when empty)."""
        clauses = []
        params: list[Any] = []
        for key, value in self.values.items():
            clauses.append(f"{FIELDS[key][1]} = ?")
            params.append(value)
        return (" AND ".join(clauses) or "TRUE"), params

    def query_string(self) -> str:

        return urlencode(sorted(self.values.items()))

    def __bool__(self) -> bool:
        return bool(self.values)


def closed_values(con: duckdb.DuckDBPyConnection) -> dict[str, frozenset[str]]:
    """The values the closed filters take: the verdicts, and each route and suite the run format names or a run
    in the database holds (a value the format does not name yet is kept as data, so it can be filtered by)."""
    found = dict(_CLOSED)
    for name, known in (("route", vocab.ROUTES), ("suite", vocab.SUITES)):
        held = {v for (v,) in con.execute(f"SELECT DISTINCT {FIELDS[name][1]} FROM runs r WHERE {FIELDS[name][1]} IS NOT NULL").fetchall()}
        found[name] = frozenset(known) | held
    return found


def run_attrs(row: Mapping[str, Any]) -> dict[str, str | None]:
    """The ``data-f-*`` attributes of a row about one run."""
    return {
        "os_build": row.get("os_build"),
        "device": row.get("hardware_model") or row.get("device_name"),
        "route": row.get("route"),
        "suite": row.get("suite"),
        "revision": row.get("revision_id") or "unknown",
        "verdict": row.get("verdict"),
    }


def _label(name: str, value: str, devices: Mapping[str, str]) -> str:
    if name == "device":
        label = devices.get(value)
        return f"{label} ({value})" if label and label != value else value
    if name == "route":
        return vocab.label("route", value) or value
    if name == "suite":
        return vocab.label("suite", value) or value
    if name == "verdict":
        return value.capitalize()
    return value


def filter_form(
    con: duckdb.DuckDBPyConnection,
    action: str,
    filters: Filters,
    *,
    fields: Iterable[str] = FIELDS,
    scope: tuple[str, list[Any]] = ("TRUE", []),
    noun: str = "runs",
) -> FilterForm:
    """The form with the values present in the database (within ``scope``) as options.

    A device is labelled with its name within the scope (the first in order, when
    its runs name it differently), so the form reads only the runs in scope.
    """
    scope_sql, scope_params = scope
    devices = dict(
        con.execute(
            "SELECT coalesce(r.hardware_model, r.device_name), min(r.device_name) FROM runs r "
            f"WHERE {scope_sql} GROUP BY 1",
            scope_params,
        ).fetchall()
    )
    out = []
    for name in fields:
        label, expr = FIELDS[name]
        values = [
            v
            for (v,) in con.execute(
                f"SELECT DISTINCT {expr} AS v FROM runs r WHERE {scope_sql} AND {expr} IS NOT NULL ORDER BY v",
                scope_params,
            ).fetchall()
        ]
        out.append(
            FilterField(
                name=name,
                label=label,
                options=[Option(v, _label(name, v, devices)) for v in values],
                selected=filters.values.get(name, ""),
            )
        )
    return FilterForm(action=action, fields=out, noun=noun)
