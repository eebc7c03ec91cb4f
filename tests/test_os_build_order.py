"""OS builds are placed in version order (major, train, build number, suffix), never by when they were measured."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from fmbench.analysis.os_builds import BuildVersion, build_sort_key, in_version_order, parse_build


def test_a_build_string_is_read_as_major_train_number_and_suffix() -> None:
    assert parse_build("26A5353q") == BuildVersion(26, "A", 353, 5, "q")
    assert parse_build("25B78") == BuildVersion(25, "B", 78, 0, "")
    assert parse_build("Version 26.0") is None
    assert parse_build("") is None


def test_builds_sort_by_major_then_train_then_number_then_suffix() -> None:
    expected = ["25B78", "26A5353q", "26A5378f", "26B5012a", "26B5013b", "27A100"]
    assert in_version_order(reversed(expected)) == expected
    assert in_version_order(["26A5353b", "26A5353", "26A5353a"]) == ["26A5353", "26A5353a", "26A5353b"]


def test_version_order_is_numeric_not_text_order() -> None:
    # As text "9" sorts after "10" and "B" after "A" whatever the numbers say.
    assert in_version_order(["26A99", "26A100", "9Z1"]) == ["9Z1", "26A99", "26A100"]


def test_a_train_release_comes_after_its_seed_builds() -> None:
    # 24A5264n is the 264th build of the train, a developer seed; 24A335 is the release.
    assert in_version_order(["24A335", "24A5264n", "24B5024e", "24A5327a"]) == ["24A5264n", "24A5327a", "24A335", "24B5024e"]


def test_version_order_ignores_the_date_a_build_was_first_measured() -> None:
    first_measured = {"26B5012a": "2026-07-01", "26A5378f": "2026-07-02", "26A5353q": "2026-07-03"}
    by_date = sorted(first_measured, key=first_measured.__getitem__)
    assert by_date == ["26B5012a", "26A5378f", "26A5353q"]
    assert in_version_order(by_date) == ["26A5353q", "26A5378f", "26B5012a"]


def test_unparseable_builds_come_last_by_their_text_and_duplicates_once() -> None:
    assert in_version_order(["zeta", None, "26A1", "alpha", "26A1"]) == ["26A1", None, "alpha", "zeta"]
    assert build_sort_key("26A1") < build_sort_key("alpha")


@given(st.lists(st.from_regex(r"2[4-7][A-F](5[0-9]{3}|[0-9]{1,3})[a-z]?", fullmatch=True), max_size=12), st.randoms())
def test_version_order_does_not_depend_on_the_order_builds_arrive_in(builds: list[str], rnd: random.Random) -> None:
    shuffled = list(builds)
    rnd.shuffle(shuffled)
    ordered = in_version_order(builds)
    assert in_version_order(shuffled) == ordered == in_version_order(ordered)
    versions = [parse_build(b) for b in ordered]
    assert all(v is not None for v in versions)
    majors = [v.major for v in versions if v is not None]
    assert majors == sorted(majors)
