"""Numbers as Apple's formatters print them: decimal half-to-even rounding, CLDR separators, byte counts."""

from __future__ import annotations

import pytest

from fmbench.runfile.formats import AppleNumbers, swift_double

EN = AppleNumbers("en_US")
DE = AppleNumbers("de_DE")
NBSP = "\u00a0"
"""CLDR's German percent pattern puts a no-break space before the sign, as ICU (and so Apple) does."""


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.2875, "28.8%"),  # 100 × 0.2875 is 28.7499… in binary; the decimal 28.75 rounds half to even
        (0.0125, "1.2%"),  # 1.25 -> 1.2 (2 is even)
        (0.0375, "3.8%"),  # 3.75 -> 3.8 (7 is odd)
        (0.933, "93.3%"),
        (0, "0.0%"),
        (1, "100.0%"),
        (12.5, "1,250.0%"),
    ],
)
def test_percent_rounds_the_shortest_decimal_half_to_even(value: float, expected: str) -> None:
    assert EN.percent(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.0125, "0.012s"),  # Python's f"{0.0125:.3f}" gives 0.013 from the binary value
        (0.0135, "0.014s"),  # and 0.013 here
        (0.412, "0.412s"),
        (1234.5675, "1,234.568s"),
        (None, "n/a"),
    ],
)
def test_seconds_have_three_decimals_and_no_space_before_the_unit(value: float | None, expected: str) -> None:
    assert EN.seconds(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(41.275, "41.28"), (1234.565, "1,234.56"), (41.27, "41.27"), (1250, "1,250.00"), (None, "n/a")],
)
def test_numbers_have_two_decimals_with_grouping(value: float | None, expected: str) -> None:
    assert EN.number(value) == expected


@pytest.mark.parametrize(
    ("byte_count", "expected"),
    [
        (0, "Zero KB"),
        (1, "1 byte"),
        (2, "2 bytes"),
        (1023, "1,023 bytes"),
        (1024, "1 KB"),
        (1535, "1 KB"),  # 1.499 KB
        (1536, "2 KB"),  # 1.5 KB: no fraction digits for KB, half to even
        (1048575, "1,024 KB"),  # the unit follows the raw count, below 1,024 KB
        (1048576, "1 MB"),
        (231936000, "221.2 MB"),
        (1073741823, "1,024 MB"),
        (1073741824, "1 GB"),
        (1672478720, "1.56 GB"),
        (1610612736, "1.5 GB"),  # trailing fraction zeros dropped
        (34359738368, "32 GB"),
        (1099511627776, "1 TB"),
        (1649267441664, "1.5 TB"),
        (1125899906842624, "1 PB"),
        (1672478720.9, "1.56 GB"),  # a summary's maximum is a double: truncated to whole bytes
        (None, "unknown"),
    ],
)
def test_memory_follows_the_byte_count_formatter_memory_style(byte_count: float | None, expected: str) -> None:
    assert EN.memory(byte_count) == expected


def test_german_locale_uses_decimal_commas_grouping_dots_and_a_spaced_percent_sign() -> None:
    assert DE.percent(0.9333333333333332) == f"93,3{NBSP}%"
    assert DE.percent(0.2875) == f"28,8{NBSP}%"
    assert DE.seconds(0.412) == "0,412s"
    assert DE.number(1250) == "1.250,00"
    assert DE.memory(1672478720) == "1,56 GB"
    assert DE.memory(1023) == "1.023 bytes"


@pytest.mark.parametrize(
    ("identifier", "expected"),
    [
        ("de_DE@rg=chzzzz", f"50,0{NBSP}%"),  # Apple's keywords are ignored
        ("fr_FR", f"50,0{NBSP}%"),
        ("de_XX", f"50,0{NBSP}%"),  # an unknown region falls back to the language
        ("xx_YY", "50.0%"),  # a locale CLDR does not know: en_US, as every published run
        (None, "50.0%"),
    ],
)
def test_an_apple_locale_identifier_is_read_as_cldr_knows_it(identifier: str | None, expected: str) -> None:
    assert AppleNumbers(identifier).percent(0.5) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.5, "1.5"),
        (2.0, "2.0"),
        (2, "2.0"),  # the runner's encoder writes the double 2.0 as 2
        (0.1, "0.1"),
        (-3.25, "-3.25"),
        (123456.0, "123456.0"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (2.0**53, "9007199254740992.0"),
        (2.0**53 + 2, "9.007199254740994e+15"),  # Swift goes exponential above 2^53 (Python only from 1e16)
        (1e300, "1e+300"),
        (0.0, "0.0"),
    ],
)
def test_a_double_prints_as_swift_prints_it(value: float, expected: str) -> None:
    assert swift_double(value) == expected
