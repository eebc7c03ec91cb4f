"""The build's kept results (comparisons, regression steps) as JSON, read back as nothing but the classes named.

A records folder can come from elsewhere (a restored CI cache, a copied
project), so what the caches keep is data, never code: each of fmbench's frozen
dataclasses is written as a JSON object of its fields with its class's name
under ``"@"``, and a reader is given the classes it may make (:class:`Codec`).
Reading calls nothing but those classes' field-by-field constructors; a name it
was not given, a field a class does not have, or anything else unexpected is a
:class:`ValueError`, and the caller works the entry out again.

What JSON lacks is tagged: a tuple (``{"@t": [...]}``), a date and time
(``{"@dt": "..."}``, ISO 8601), a float that is not finite (``{"@f": "nan"}``).
Floats are written with their shortest exact repr, so what is read back is the
same value, bit for bit, as what was written.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable
from datetime import date, datetime
from typing import Any

_NOT_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class Codec:
    """Writes and reads values made of ``classes`` (dataclasses), tuples, lists, string-keyed dicts, dates and plain
    JSON values."""

    def __init__(self, classes: Iterable[type]) -> None:
        self.classes: dict[str, type] = {}
        self._fields: dict[type, tuple[str, ...]] = {}
        for cls in classes:
            if not dataclasses.is_dataclass(cls):
                raise TypeError(f"{cls.__name__} is not a dataclass")
            self.classes[cls.__name__] = cls
            self._fields[cls] = tuple(f.name for f in dataclasses.fields(cls) if f.init)

    # --- writing ---------------------------------------------------------------------------------

    def _plain(self, value: Any) -> Any:
        if value is None or isinstance(value, (str, bool, int)):
            return value
        if isinstance(value, float):
            if math.isfinite(value):
                return value
            return {"@f": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
        names = self._fields.get(type(value))
        if names is not None:
            out: dict[str, Any] = {"@": type(value).__name__}
            for name in names:
                out[name] = self._plain(getattr(value, name))
            return out
        if isinstance(value, tuple):
            return {"@t": [self._plain(v) for v in value]}
        if isinstance(value, list):
            return [self._plain(v) for v in value]
        if isinstance(value, dict):
            if not all(isinstance(k, str) and not k.startswith("@") for k in value):
                raise TypeError("a kept dict has plain string keys only")
            return {k: self._plain(v) for k, v in value.items()}
        if isinstance(value, datetime):
            return {"@dt": value.isoformat()}
        if isinstance(value, date):
            return {"@date": value.isoformat()}
        raise TypeError(f"{type(value).__name__} is not kept by this cache")

    def dumps(self, value: Any) -> str:
        """``value`` as JSON text (strict ASCII JSON: no NaN literal, any lone surrogate of a run file escaped)."""
        return json.dumps(self._plain(value), allow_nan=False, separators=(",", ":"))

    # --- reading ---------------------------------------------------------------------------------

    def _hook(self, doc: dict[str, Any]) -> Any:
        tags = [k for k in doc if k.startswith("@")]
        if not tags:
            return doc
        if tags != ["@"] and len(doc) != 1:
            raise ValueError("a tagged value has one tag")
        if "@" in doc:
            cls = self.classes.get(doc["@"]) if isinstance(doc["@"], str) else None
            if cls is None:
                raise ValueError(f"{doc['@']!r} is not a class this cache keeps")
            names = self._fields[cls]
            given = {k: v for k, v in doc.items() if k != "@"}
            if set(given) != set(names):
                raise ValueError(f"not the fields of {cls.__name__}")
            return cls(**given)
        (tag, value), = doc.items()
        if tag == "@t" and isinstance(value, list):
            return tuple(value)
        if tag == "@dt" and isinstance(value, str):
            return datetime.fromisoformat(value)
        if tag == "@date" and isinstance(value, str):
            return date.fromisoformat(value)
        if tag == "@f" and value in _NOT_FINITE:
            return _NOT_FINITE[value]
        raise ValueError(f"{tag!r} is not a tag this cache writes")

    def loads(self, text: str | bytes) -> Any:
        """What :meth:`dumps` wrote; :class:`ValueError` for anything else."""
        try:
            return json.loads(text, object_hook=self._hook, parse_constant=_refuse)
        except (TypeError, RecursionError, UnicodeDecodeError) as exc:
            raise ValueError(str(exc)) from None


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")
