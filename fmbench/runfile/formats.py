"""Numbers printed the way Apple's formatters print them, in the locale a run recorded.

The runner formats its Markdown report with Foundation in its own process's
locale (``environment.localeIdentifier``). Apple's formatters round the
*decimal* value of a double half to even, and that decimal value is the
shortest form that reads back as the same double (Python's ``repr``), not its
exact binary expansion: ``0.2875`` is ``28.8%`` although ``f"{28.75:.1f}"``
gives ``28.7``. Every number here therefore goes through
``Decimal(repr(x))`` and ``ROUND_HALF_EVEN``; separators, grouping, the percent
pattern and digits come from CLDR through Babel, as Apple's come from ICU.

Byte counts follow ``ByteCountFormatter`` in its memory style: binary
multiples, a unit chosen by the raw count (below 1,024 bytes, below 1,024 KB,
…), no fraction digits up to KB, at most one for MB and two from GB up,
trailing zeros dropped, and ``Zero KB`` for nothing. The unit words stay in
English: Foundation's translations of them are not CLDR data.
"""

from __future__ import annotations

import copy
from decimal import ROUND_HALF_EVEN, Decimal
from functools import lru_cache

from babel import Locale, UnknownLocaleError
from babel.numbers import NumberPattern, UnsupportedNumberingSystemError, parse_pattern

DEFAULT_LOCALE = "en_US"
"""The locale of every published run so far; used when a file records none, or one CLDR does not know."""

_MEMORY_UNITS = ("KB", "MB", "GB", "TB", "PB", "EB")
_MEMORY_FRACTION_DIGITS = {"KB": 0, "MB": 1}
"""Adaptive precision: none for bytes and KB, one for MB, two from GB up."""


def decimal_of(value: float | int) -> Decimal:
    """The decimal a double stands for: its shortest round-tripping form, never its binary expansion."""
    if isinstance(value, int):
        return Decimal(value)
    return Decimal(repr(float(value)))


def round_half_even(value: Decimal, places: int) -> Decimal:
    return value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN)


@lru_cache(maxsize=64)
def cldr_locale(identifier: str | None) -> Locale:
    """The CLDR locale for an Apple locale identifier (``en_US``, ``de_DE``, ``de_DE@rg=chzzzz``).

    Apple's keywords after ``@`` and an unknown region fall back to the
    language; an identifier CLDR does not know at all, or none, to ``en_US``.
    """
    if identifier:
        base = identifier.split("@", 1)[0].replace("-", "_")
        candidates = [base, base.split("_", 1)[0]]
        for candidate in candidates:
            try:
                return Locale.parse(candidate)
            except (UnknownLocaleError, ValueError, TypeError):
                continue
    return Locale.parse(DEFAULT_LOCALE)


class AppleNumbers:
    """The report's number formats for one locale."""

    def __init__(self, identifier: str | None) -> None:
        self.locale = cldr_locale(identifier)
        self._decimal = self._pattern(self.locale.decimal_formats[None].pattern)
        percent = self._pattern(self.locale.percent_formats[None].pattern)
        percent.scale = 0  # scaled by 100 here, in decimal, before rounding
        self._percent = percent

    @staticmethod
    def _pattern(text: str) -> NumberPattern:
        return copy.copy(parse_pattern(text))

    def _apply(self, pattern: NumberPattern, value: Decimal, min_frac: int, max_frac: int) -> str:
        pattern = copy.copy(pattern)
        pattern.frac_prec = (min_frac, max_frac)
        try:
            return pattern.apply(value, self.locale, numbering_system="default")
        except UnsupportedNumberingSystemError:
            return pattern.apply(value, self.locale)

    def fixed(self, value: Decimal, places: int, *, min_places: int | None = None) -> str:
        """A decimal number with grouping, rounded half to even to ``places`` fraction digits."""
        rounded = round_half_even(value, places)
        return self._apply(self._decimal, rounded, places if min_places is None else min_places, places)

    def percent(self, value: float) -> str:
        """A rate as a percentage with one decimal: ``93.3%`` (``93,3 %`` in German)."""
        scaled = round_half_even(decimal_of(value).scaleb(2), 1)
        return self._apply(self._percent, scaled, 1, 1)

    def seconds(self, value: float | None) -> str:
        """Three decimals and ``s``: ``0.412s``; ``n/a`` when absent."""
        if value is None:
            return "n/a"
        return self.fixed(decimal_of(value), 3) + "s"

    def number(self, value: float | None) -> str:
        """Two decimals with grouping: ``1,250.00``; ``n/a`` when absent."""
        if value is None:
            return "n/a"
        return self.fixed(decimal_of(value), 2)

    def memory(self, byte_count: float | int | None) -> str:
        """``ByteCountFormatter`` in memory style: ``1.56 GB``, ``221.2 MB``, ``Zero KB``; ``unknown`` when absent."""
        if byte_count is None:
            return "unknown"
        count = int(byte_count)  # the runner converts a double to Int64: toward zero
        if count == 0:
            return "Zero KB"
        if abs(count) == 1:
            return f"{self.fixed(Decimal(count), 0)} byte"
        if abs(count) < 1024:
            return f"{self.fixed(Decimal(count), 0)} bytes"
        unit_index = 0
        while unit_index < len(_MEMORY_UNITS) - 1 and abs(count) >= 1024 ** (unit_index + 2):
            unit_index += 1
        unit = _MEMORY_UNITS[unit_index]
        scaled = decimal_of(count / 1024 ** (unit_index + 1))
        places = _MEMORY_FRACTION_DIGITS.get(unit, 2)
        return f"{self.fixed(scaled, places, min_places=0)} {unit}"


def swift_double(value: float) -> str:
    """A double as Swift's ``String(_:)`` writes it: ``1.5``, ``2.0``, ``1e-05``, ``1e+16``.

    The shortest round-tripping digits; exponential notation when the value is
    below 0.0001 or above 2⁵³, otherwise positional with at least one fraction digit.
    """
    number = float(value)
    if number != number:
        return "nan"
    if number in (float("inf"), float("-inf")):
        return "inf" if number > 0 else "-inf"
    if number == 0:
        return "-0.0" if str(number).startswith("-") else "0.0"
    sign, digits, exponent = Decimal(repr(number)).normalize().as_tuple()
    assert isinstance(exponent, int)
    text_digits = "".join(map(str, digits))
    point = len(text_digits) + exponent  # value = 0.<digits> × 10^point
    minus = "-" if sign else ""
    if point < -3 or abs(number) > 2.0**53:
        mantissa = text_digits[0] + ("." + text_digits[1:] if len(text_digits) > 1 else "")
        power = point - 1
        return f"{minus}{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"
    if point <= 0:
        return f"{minus}0.{'0' * -point}{text_digits}"
    if point < len(text_digits):
        return f"{minus}{text_digits[:point]}.{text_digits[point:]}"
    return f"{minus}{text_digits}{'0' * (point - len(text_digits))}.0"
