"""Reading the build's own pickled records (regression steps, comparisons) without trusting them.

A site folder can come from elsewhere (a repository's published site), so the
records a build keeps beside its manifest are read with an unpickler that makes
fmbench's own public classes, dates and plain data, and nothing else: a
tampered file cannot call anything.
"""

from __future__ import annotations

import io
import pickle
from typing import Any

_ALLOWED = {
    ("datetime", "datetime"), ("datetime", "date"), ("datetime", "timezone"), ("datetime", "timedelta"),
    ("copyreg", "_reconstructor"), ("builtins", "object"),
}


class _Unpickler(pickle.Unpickler):
    def __init__(self, data: bytes, what: str) -> None:
        super().__init__(io.BytesIO(data))
        self.what = what

    def find_class(self, module: str, name: str) -> Any:
        if ((module == "fmbench" or module.startswith("fmbench.")) and not name.startswith("_")) or (module, name) in _ALLOWED:
            found = super().find_class(module, name)
            if isinstance(found, type) or (module, name) == ("copyreg", "_reconstructor"):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not part of {self.what}")


def loads(data: bytes, what: str) -> Any:
    """Unpickle ``data``, refusing anything but fmbench's classes and plain data (``what``: for the message)."""
    return _Unpickler(data, what).load()
