"""The data migration that keeps originals stored raw gzipped.

Every database before schema migration 6 kept each run file's own bytes in ``sources.content``
(``encoding = 'identity'``). They read back the same as gzipped rows, but they keep the database larger
and make every build gzip them again for the site. ``fmbench migrate`` keeps them gzipped, as an ingest
now stores a file (:func:`fmbench.storage.originals.stored_form`), all in one transaction. A row whose bytes no
longer hash to its SHA-256 is left as it is, so that ``fmbench verify`` still names it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import duckdb

from fmbench.storage.db import has_column
from fmbench.storage.originals import STORED_ENCODING, stored_form


def raw_original_count(con: duckdb.DuckDBPyConnection) -> int:
    """How many stored originals are kept raw (every one, before schema migration 6)."""
    if not has_column(con, "sources", "sha256"):
        return 0
    where = "encoding = 'identity'" if has_column(con, "sources", "encoding") else "TRUE"
    row = con.execute(f"SELECT count(*) FROM sources WHERE {where}").fetchone()
    return int(row[0]) if row else 0


@dataclass(frozen=True)
class Gzipped:
    """What :func:`gzip_raw_originals` did."""

    files: int
    """Originals now kept gzipped."""
    before: int
    """Their bytes as they were stored."""
    after: int
    """Their bytes now."""
    left_raw: int
    """Rows left as they were: their bytes no longer hash to their SHA-256 (``fmbench verify`` names them)."""

    def __str__(self) -> str:
        mib = 2**20
        text = f"{self.files} file(s), {self.before / mib:,.1f} MiB stored as {self.after / mib:,.1f} MiB"
        if self.left_raw:
            text += f"; {self.left_raw} left as stored, their bytes not their SHA-256's (see `fmbench verify`)"
        return text


def gzip_raw_originals(con: duckdb.DuckDBPyConnection) -> Gzipped:
    """Keep every original stored raw gzipped, in one transaction; one file at a time is held in memory."""
    if not has_column(con, "sources", "encoding"):
        return Gzipped(0, 0, 0, 0)  # schema migration 6 comes first
    keys = [row[0] for row in con.execute(
        "SELECT sha256 FROM sources WHERE encoding = 'identity' ORDER BY sha256"
    ).fetchall()]
    if not keys:
        return Gzipped(0, 0, 0, 0)
    files = before = after = left = 0
    con.execute("BEGIN TRANSACTION")
    try:
        for sha in keys:
            row = con.execute("SELECT content FROM sources WHERE sha256 = ?", [sha]).fetchone()
            raw = bytes(row[0]) if row is not None else b""
            if row is None or hashlib.sha256(raw).hexdigest() != sha:
                left += 1
                continue
            stored = stored_form(raw)
            con.execute(
                "UPDATE sources SET content = ?, encoding = ? WHERE sha256 = ?", [stored, STORED_ENCODING, sha]
            )
            files, before, after = files + 1, before + len(raw), after + len(stored)
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
    return Gzipped(files, before, after, left)
