"""The one place that keeps credentials out of what fmbench prints or publishes.

A location a user gives (``--parquet s3://KEY:SECRET@bucket/p``, ``--site-url``, a database path) may carry a
secret: the user part of a URL (``user:password@``, or a token as the user name) or a signed query string
(``X-Amz-Signature=…``, ``token=…``). Every message that names such a location goes through :func:`redact`,
which masks the secret and keeps the rest (the scheme, the host, the path) so the message still says which
location it means; the command line's :func:`fmbench.terminal.user_error` passes every error through it too.

An address fmbench writes into every page (``site_url``, ``--base-url``) is checked by :func:`address_problem`:
one holding a user or password, a space or a control character is refused, never published.

A library's own error (botocore's, fsspec's) can arrive with a Python traceback written into its text;
:func:`library_message` keeps its last line (the exception itself), on one line and redacted.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

MASK = "***"

_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#@\s]*)@")
"""``scheme://userinfo@``: everything between ``//`` and the first ``@`` before the path."""
_SECRET_PARAMETER = re.compile(
    r"(?P<name>[?&;](?:[A-Za-z0-9_.-]*(?:signature|token|secret|password|passwd|credential|apikey|api_key|"
    r"access_key|accesskey|sig|auth)[A-Za-z0-9_.-]*))=(?P<value>[^&#\s]*)",
    re.IGNORECASE,
)
_TRACEBACK_START = "Traceback (most recent call last):"
_FRAME = re.compile(r"^\s+(File \"|\^|~)")
_SQL_PLACE = re.compile(r"^LINE \d+:")
_SPACE = re.compile(r"\s+")
_SPACE_OR_CONTROL = re.compile(r"[\x00-\x20\x7f-\x9f\s\ud800-\udfff]")
"""Spaces (Unicode's too), C0 and C1 controls, and the lone surrogates a byte that is not UTF-8 becomes."""


def redact(text: object) -> str:
    """``text`` with the user part of every URL in it and every secret-looking query value masked."""
    out = _USERINFO.sub(lambda m: f"{m.group('scheme')}{MASK}@", str(text))
    return _SECRET_PARAMETER.sub(lambda m: f"{m.group('name')}={MASK}", out)


def has_credentials(location: str) -> bool:
    """Whether ``location`` (a URL) names a user or password before its host."""
    try:
        parts = urlsplit(location)
    except ValueError:
        return "@" in location.split("/", 3)[2] if location.count("/") >= 2 else False
    return "@" in parts.netloc


def library_message(error: BaseException | str) -> str:
    """A library's error as one redacted line: an embedded traceback is left out (its last line, the
    exception, is kept), and line breaks and runs of space become one space."""
    text = str(error)
    if _TRACEBACK_START in text:
        before, _, after = text.partition(_TRACEBACK_START)
        lines = [line for line in after.splitlines() if line.strip() and not _FRAME.match(line)]
        # A frame's source line follows its "File" line indented: keep only unindented lines (the exception).
        kept = [line for line in lines if not line.startswith((" ", "\t")) and not _SQL_PLACE.match(line)]
        text = before + " ".join(kept)
    return redact(_SPACE.sub(" ", text).strip())


def address_problem(value: str) -> str | None:
    """Why ``value`` cannot be a published address (written into every page's links and the feed), or ``None``:
    a space, a line break or a control character breaks the links (or forges markup), and a user or password
    would be published. The value itself is never repeated."""
    if _SPACE_OR_CONTROL.search(value):
        return "expected a URL without spaces, line breaks or control characters"
    if has_credentials(value):
        return "expected a URL without a user name or password (user:secret@)"
    return None
