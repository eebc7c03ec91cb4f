"""Original run files: how the database stores them and how the site carries them.

The database keeps every run file it ingested, byte for byte, in ``sources.content``; its SHA-256 is the
row's key. ``sources.encoding`` says how the bytes are kept:

- ``gzip`` (every file ingested since schema migration 6): the file gzipped by :func:`gzip_original`, the
  very bytes the site carries under the default ``gzip`` originals policy. The ingest compresses each file
  once, in its worker, instead of DuckDB compressing it at every checkpoint and the build gzipping it again
  for every site; the stored column is about a tenth of the files' size, so reading one original no longer
  scans hundreds of megabytes.
- ``identity``: the file's own bytes, as every database before migration 6 stored them. Such rows are read
  as they are and gzipped by the build when a site carries them gzipped: the same bytes either way.

Whatever the encoding, :func:`original_bytes` gives back the file exactly as it was ingested.
"""

from __future__ import annotations

from zlib_ng import gzip_ng

from fmbench.errors import DatabaseError

GZIP_LEVEL = 7
"""Measured on the 40 generated runs of 1,000 trials (137 MiB, benchmarks/site_size.py): zlib-ng's level 7 makes
0.075 of them in 1.33 times level 5's time, which made 0.083 (level 8: 0.072 in 2.5 times; level 9: 0.075 in 2
times; level 1: about twice as fast for 1.3 to 1.7 times the size). The originals are the largest part of a site
that copies them; the ingest of those 40 files took as long as with level 5 (4.53 s against 4.60 s, best of two on
2 cores), level 8's 13% longer."""

STORED_ENCODING = "gzip"
"""How the ingest stores a new file."""

ENCODINGS = ("gzip", "identity")


def gzip_original(content: bytes) -> bytes:
    """An original run file gzipped, the same bytes for the same file (no name or time in the header; any gzip
    reader, the browser's ``DecompressionStream`` or ``gzip -d``, gives the file back)."""
    return gzip_ng.compress(content, compresslevel=GZIP_LEVEL, mtime=0)


def stored_form(content: bytes) -> bytes:
    """What the database keeps of a file it ingests now (``sources.content`` with :data:`STORED_ENCODING`)."""
    return gzip_original(content)


def _known(encoding: str, where: str) -> None:
    if encoding not in ENCODINGS:
        raise DatabaseError(
            f"{where}: the stored file is kept as {encoding!r}, an encoding this fmbench does not know; "
            "upgrade fmbench to read it"
        )


def original_bytes(stored: bytes | memoryview, encoding: str, where: str) -> bytes:
    """The run file exactly as it was ingested, from its stored form.

    ``where`` names the file in an error: a stored gzip that does not decompress raises
    :class:`~fmbench.errors.DatabaseError` (``fmbench verify`` reports such a row).
    """
    _known(encoding, where)
    if encoding == "identity":
        return bytes(stored)
    try:
        return gzip_ng.decompress(bytes(stored))
    except (OSError, EOFError, ValueError) as exc:  # gzip_ng raises BadGzipFile (an OSError) or EOFError
        raise DatabaseError(
            f"{where}: the stored file does not decompress ({exc}); ingest the file again"
        ) from None


def gzipped_original(stored: bytes | memoryview, encoding: str, where: str) -> bytes:
    """The run file as the site's ``gzip`` policy carries it: the stored bytes when kept gzipped, else
    :func:`gzip_original` of them."""
    _known(encoding, where)
    return bytes(stored) if encoding == "gzip" else gzip_original(bytes(stored))
