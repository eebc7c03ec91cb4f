"""Reading the build's own pickled records (regression steps, comparisons) without trusting them.

A site folder can come from elsewhere (a repository's published site), so the
records a build keeps beside its manifest are read with an unpickler that makes
fmbench's own public dataclasses, dates and plain data, and nothing else: a
tampered file can call nothing but a dataclass's field-by-field constructor (a
class with a constructor of its own, such as one that starts processes or
opens files, is refused like any function).
"""

from __future__ import annotations

import dataclasses
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
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        if (module == "fmbench" or module.startswith("fmbench.")) and not name.startswith("_"):
            found = super().find_class(module, name)
            if isinstance(found, type) and dataclasses.is_dataclass(found):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not part of {self.what}")


def loads(data: bytes, what: str) -> Any:
    """Unpickle ``data``, refusing anything but fmbench's dataclasses and plain data (``what``: for the message)."""
    return _Unpickler(data, what).load()
